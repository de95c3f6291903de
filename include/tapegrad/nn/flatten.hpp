#pragma once
/// Flatten joins dims start..end into one ([N,1,28,28] -> [N,784] with the defaults); Unflatten
/// splits one dim into several ([N,784] -> [N,1,28,28] with Unflatten(1, {1, 28, 28})).
#include <cstdint>
#include <ostream>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's FlattenOptions: start_dim (1), end_dim (-1).
struct FlattenOptions {
    TG_ARG(int64_t, start_dim) = 1;
    TG_ARG(int64_t, end_dim) = -1;
};

class FlattenImpl : public Module {
public:
    using Options = FlattenOptions;
    explicit FlattenImpl(const FlattenOptions& o = {}) : Module("Flatten"), options(o) {}
    FlattenImpl(int64_t start_dim, int64_t end_dim = -1)
        : FlattenImpl(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
    /// tg::flatten(x, start_dim, end_dim).
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;
    FlattenOptions options;  // public, as LibTorch's
};
TG_MODULE(Flatten);

/// LibTorch's UnflattenOptions(dim, sizes) (its named-dimension form is not offered: tapegrad has
/// no named tensors).
struct UnflattenOptions {
    UnflattenOptions(int64_t dim, std::vector<int64_t> sizes)
        : dim_(dim), sizes_(std::move(sizes)) {}
    TG_ARG(int64_t, dim);
    TG_ARG(std::vector<int64_t>, sizes);
};

class UnflattenImpl : public Module {
public:
    using Options = UnflattenOptions;
    explicit UnflattenImpl(UnflattenOptions options);
    UnflattenImpl(int64_t dim, std::vector<int64_t> sizes)
        : UnflattenImpl(UnflattenOptions(dim, std::move(sizes))) {}
    /// x viewed with dim split into sizes (one of them may be -1: inferred), as LibTorch's
    /// x.unflatten(dim, sizes); shape_error unless the sizes multiply to x.size(dim).
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;
    UnflattenOptions options;  // public, as LibTorch's
};
TG_MODULE(Unflatten);

}  // namespace tg::nn

#pragma GCC visibility pop
