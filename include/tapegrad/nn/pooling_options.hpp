#pragma once
/// The options of the pooling and spatial modules, as LibTorch's templates over the number of
/// spatial dims D (MaxPool3dOptions = MaxPoolOptions<3>, ...), shared by the modules
/// (nn/pooling.hpp, nn/spatial.hpp) and their functional forms (nn/functional_pooling.hpp). A
/// size argument is an IntArg: one value for every dim, or D of them.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/spatial.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// MaxPool{1,2,3}d's options: stride {} means kernel_size, as LibTorch's default.
template <size_t D>
struct MaxPoolOptions {
    MaxPoolOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
    MaxPoolOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}            // NOLINT
    MaxPoolOptions(std::initializer_list<int64_t> k) : kernel_size_(k) {}         // NOLINT
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, stride) = std::vector<int64_t>{};
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(IntArg, dilation) = 1;
    TG_ARG(bool, ceil_mode) = false;
};
using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;

/// AvgPool{1,2,3}d's options (divisor_override: 2-D and 3-D, as LibTorch's).
template <size_t D>
struct AvgPoolOptions {
    AvgPoolOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
    AvgPoolOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}            // NOLINT
    AvgPoolOptions(std::initializer_list<int64_t> k) : kernel_size_(k) {}         // NOLINT
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, stride) = std::vector<int64_t>{};
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(bool, ceil_mode) = false;
    TG_ARG(bool, count_include_pad) = true;
    TG_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;

/// AdaptiveAvgPool{1,2,3}d's and AdaptiveMaxPool{1,2,3}d's options: the output size, one value
/// or D (LibTorch's optional "None" elements, keeping an input size, are not taken).
template <size_t D>
struct AdaptivePoolOptions {
    AdaptivePoolOptions(IntArg output_size) : output_size_(std::move(output_size)) {}  // NOLINT
    AdaptivePoolOptions(int64_t output_size) : output_size_(output_size) {}            // NOLINT
    AdaptivePoolOptions(std::initializer_list<int64_t> s) : output_size_(s) {}         // NOLINT
    TG_ARG(IntArg, output_size);
};
template <size_t D>
using AdaptiveAvgPoolOptions = AdaptivePoolOptions<D>;
template <size_t D>
using AdaptiveMaxPoolOptions = AdaptivePoolOptions<D>;
using AdaptiveAvgPool1dOptions = AdaptivePoolOptions<1>;
using AdaptiveAvgPool2dOptions = AdaptivePoolOptions<2>;
using AdaptiveAvgPool3dOptions = AdaptivePoolOptions<3>;
using AdaptiveMaxPool1dOptions = AdaptivePoolOptions<1>;
using AdaptiveMaxPool2dOptions = AdaptivePoolOptions<2>;
using AdaptiveMaxPool3dOptions = AdaptivePoolOptions<3>;

/// LPPool{1,2}d's options: y = (Σ over each window of x^norm_type)^(1/norm_type).
template <size_t D>
struct LPPoolOptions {
    LPPoolOptions(double norm_type, IntArg kernel_size)
        : norm_type_(norm_type), kernel_size_(std::move(kernel_size)) {}
    LPPoolOptions(double norm_type, std::initializer_list<int64_t> k)
        : norm_type_(norm_type), kernel_size_(k) {}
    TG_ARG(double, norm_type);
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, stride) = std::vector<int64_t>{};
    TG_ARG(bool, ceil_mode) = false;
};
using LPPool1dOptions = LPPoolOptions<1>;
using LPPool2dOptions = LPPoolOptions<2>;

/// MaxUnpool{1,2,3}d's options (the max pool whose indices it takes).
template <size_t D>
struct MaxUnpoolOptions {
    MaxUnpoolOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
    MaxUnpoolOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}            // NOLINT
    MaxUnpoolOptions(std::initializer_list<int64_t> k) : kernel_size_(k) {}         // NOLINT
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, stride) = std::vector<int64_t>{};
    TG_ARG(IntArg, padding) = 0;
};
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;

/// F::max_unpool{1,2,3}d's options: the module's and the output size (the spatial dims, or with
/// N and C too), by default computed from kernel_size, stride and padding.
template <size_t D>
struct MaxUnpoolFuncOptions {
    MaxUnpoolFuncOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
    MaxUnpoolFuncOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}            // NOLINT
    MaxUnpoolFuncOptions(std::initializer_list<int64_t> k) : kernel_size_(k) {}         // NOLINT
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, stride) = std::vector<int64_t>{};
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(std::optional<std::vector<int64_t>>, output_size) = std::nullopt;
};

/// FractionalMaxPool{2,3}d's options: output_size or output_ratio (one of them), and
/// _random_samples [N, C, D] in [0, 1) (drawn with uniform_ when undefined).
template <size_t D>
struct FractionalMaxPoolOptions {
    FractionalMaxPoolOptions(IntArg kernel_size)  // NOLINT
        : kernel_size_(std::move(kernel_size)) {}
    FractionalMaxPoolOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}     // NOLINT
    FractionalMaxPoolOptions(std::initializer_list<int64_t> k) : kernel_size_(k) {}  // NOLINT
    FractionalMaxPoolOptions& output_size(IntArg v) { return output_size_ = std::move(v), *this; }
    FractionalMaxPoolOptions& output_size(std::initializer_list<int64_t> v) {
        return output_size_ = IntArg(v), *this;
    }
    const std::optional<IntArg>& output_size() const { return output_size_; }
    /// One ratio for every dim, or D of them, each in (0, 1).
    FractionalMaxPoolOptions& output_ratio(double r) {
        return output_ratio_ = std::vector<double>{r}, *this;
    }
    FractionalMaxPoolOptions& output_ratio(std::vector<double> r) {
        return output_ratio_ = std::move(r), *this;
    }
    const std::optional<std::vector<double>>& output_ratio() const { return output_ratio_; }
    TG_ARG(IntArg, kernel_size);
    TG_ARG(Tensor, _random_samples) = {};

private:
    std::optional<IntArg> output_size_;
    std::optional<std::vector<double>> output_ratio_;
};
using FractionalMaxPool2dOptions = FractionalMaxPoolOptions<2>;
using FractionalMaxPool3dOptions = FractionalMaxPoolOptions<3>;

/// Fold's options (F::fold's too): the output's spatial size and the windows, 2-D.
struct FoldOptions {
    FoldOptions(IntArg output_size, IntArg kernel_size)
        : output_size_(std::move(output_size)), kernel_size_(std::move(kernel_size)) {}
    TG_ARG(IntArg, output_size);
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, dilation) = 1;
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(IntArg, stride) = 1;
};

/// Unfold's options (F::unfold's too): the windows, 2-D.
struct UnfoldOptions {
    UnfoldOptions(IntArg kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
    UnfoldOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}            // NOLINT
    UnfoldOptions(std::initializer_list<int64_t> k) : kernel_size_(k) {}         // NOLINT
    TG_ARG(IntArg, kernel_size);
    TG_ARG(IntArg, dilation) = 1;
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(IntArg, stride) = 1;
};

/// PixelShuffle's and PixelUnshuffle's options.
struct PixelShuffleOptions {
    PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
    TG_ARG(int64_t, upscale_factor);
};
struct PixelUnshuffleOptions {
    PixelUnshuffleOptions(int64_t downscale_factor)  // NOLINT
        : downscale_factor_(downscale_factor) {}
    TG_ARG(int64_t, downscale_factor);
};

}  // namespace tg::nn

#pragma GCC visibility pop
