#pragma once
/// Flatten: joins dims start..end into one ([N,1,28,28] -> [N,784] with the defaults).
#include <cstdint>
#include <ostream>

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
    explicit FlattenImpl(const FlattenOptions& options = {})
        : Module("Flatten"), start_(options.start_dim()), end_(options.end_dim()) {}
    FlattenImpl(int64_t start_dim, int64_t end_dim = -1)
        : FlattenImpl(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
    /// tg::flatten(x, start_dim, end_dim).
    Tensor forward(const Tensor& x) override;
    void pretty_print(std::ostream& os) const override;

private:
    int64_t start_, end_;
};
TG_MODULE(Flatten);

}  // namespace tg::nn

#pragma GCC visibility pop
