#pragma once
/// The pooling modules with LibTorch's options (nn/pooling_options.hpp), printing and numbers:
/// MaxPool, AvgPool, AdaptiveAvgPool and AdaptiveMaxPool of 1, 2 and 3 dims, LPPool1d/2d,
/// MaxUnpool1d/2d/3d and FractionalMaxPool2d/3d:
///     tg::nn::MaxPool3d(2), tg::nn::MaxPool2d(tg::nn::MaxPool2dOptions(3).stride(2).padding(1)),
///     tg::nn::AdaptiveAvgPool2d({1, 1}), tg::nn::FractionalMaxPool2d(
///         tg::nn::FractionalMaxPool2dOptions(3).output_ratio(0.5))
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/nn/pooling_options.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// MaxPool{1,2,3}d: tg::max_pool{1,2,3}d with the options.
template <size_t D>
class MaxPoolImpl : public Module {
public:
    using Options = MaxPoolOptions<D>;
    explicit MaxPoolImpl(const Options& options);
    Tensor forward(const Tensor& x) override;
    /// The output and the argmax indices (tg::max_pool{1,2,3}d_with_indices).
    std::pair<Tensor, Tensor> forward_with_indices(const Tensor& x);
    Options options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;
};

/// AvgPool{1,2,3}d: tg::avg_pool{1,2,3}d with the options.
template <size_t D>
class AvgPoolImpl : public Module {
public:
    using Options = AvgPoolOptions<D>;
    explicit AvgPoolImpl(const Options& options);
    Tensor forward(const Tensor& x) override;
    Options options;
    void pretty_print(std::ostream& os) const override;
};

/// AdaptiveAvgPool{1,2,3}d: tg::adaptive_avg_pool{1,2,3}d(x, output_size).
template <size_t D>
class AdaptiveAvgPoolImpl : public Module {
public:
    using Options = AdaptiveAvgPoolOptions<D>;
    explicit AdaptiveAvgPoolImpl(const Options& options);
    Tensor forward(const Tensor& x) override;
    Options options;
    void pretty_print(std::ostream& os) const override;
};

/// AdaptiveMaxPool{1,2,3}d: tg::adaptive_max_pool{1,2,3}d(x, output_size).
template <size_t D>
class AdaptiveMaxPoolImpl : public Module {
public:
    using Options = AdaptiveMaxPoolOptions<D>;
    explicit AdaptiveMaxPoolImpl(const Options& options);
    Tensor forward(const Tensor& x) override;
    std::pair<Tensor, Tensor> forward_with_indices(const Tensor& x);
    Options options;
    void pretty_print(std::ostream& os) const override;
};

/// LPPool{1,2}d: tg::lp_pool{1,2}d with the options.
template <size_t D>
class LPPoolImpl : public Module {
public:
    using Options = LPPoolOptions<D>;
    explicit LPPoolImpl(const Options& options);
    Tensor forward(const Tensor& x) override;
    Options options;
    void pretty_print(std::ostream& os) const override;
};

/// MaxUnpool{1,2,3}d: tg::max_unpool{1,2,3}d(x, indices) with the options.
template <size_t D>
class MaxUnpoolImpl : public Module {
public:
    using Options = MaxUnpoolOptions<D>;
    explicit MaxUnpoolImpl(const Options& options);
    Tensor forward(const Tensor& x, const Tensor& indices,
                   const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
    Options options;
    void pretty_print(std::ostream& os) const override;
};

/// FractionalMaxPool{2,3}d: tg::fractional_max_pool{2,3}d with the options (the random samples
/// drawn per call unless _random_samples is set).
template <size_t D>
class FractionalMaxPoolImpl : public Module {
public:
    using Options = FractionalMaxPoolOptions<D>;
    explicit FractionalMaxPoolImpl(const Options& options);
    Tensor forward(const Tensor& x) override;
    std::pair<Tensor, Tensor> forward_with_indices(const Tensor& x);
    Options options;
    void pretty_print(std::ostream& os) const override;
};

#define TG_POOL_MODULE(Name, Base, D)   \
    class Name##Impl : public Base<D> { \
    public:                             \
        using Base<D>::Base;            \
    };                                  \
    TG_MODULE(Name)
TG_POOL_MODULE(MaxPool1d, MaxPoolImpl, 1);
TG_POOL_MODULE(MaxPool2d, MaxPoolImpl, 2);
TG_POOL_MODULE(MaxPool3d, MaxPoolImpl, 3);
TG_POOL_MODULE(AvgPool1d, AvgPoolImpl, 1);
TG_POOL_MODULE(AvgPool2d, AvgPoolImpl, 2);
TG_POOL_MODULE(AvgPool3d, AvgPoolImpl, 3);
TG_POOL_MODULE(AdaptiveAvgPool1d, AdaptiveAvgPoolImpl, 1);
TG_POOL_MODULE(AdaptiveAvgPool2d, AdaptiveAvgPoolImpl, 2);
TG_POOL_MODULE(AdaptiveAvgPool3d, AdaptiveAvgPoolImpl, 3);
TG_POOL_MODULE(AdaptiveMaxPool1d, AdaptiveMaxPoolImpl, 1);
TG_POOL_MODULE(AdaptiveMaxPool2d, AdaptiveMaxPoolImpl, 2);
TG_POOL_MODULE(AdaptiveMaxPool3d, AdaptiveMaxPoolImpl, 3);
TG_POOL_MODULE(LPPool1d, LPPoolImpl, 1);
TG_POOL_MODULE(LPPool2d, LPPoolImpl, 2);
TG_POOL_MODULE(MaxUnpool1d, MaxUnpoolImpl, 1);
TG_POOL_MODULE(MaxUnpool2d, MaxUnpoolImpl, 2);
TG_POOL_MODULE(MaxUnpool3d, MaxUnpoolImpl, 3);
TG_POOL_MODULE(FractionalMaxPool2d, FractionalMaxPoolImpl, 2);
TG_POOL_MODULE(FractionalMaxPool3d, FractionalMaxPoolImpl, 3);
#undef TG_POOL_MODULE

}  // namespace tg::nn

#pragma GCC visibility pop
