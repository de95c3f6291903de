#pragma once
/// tg::nn::functional's convolutions of 1 and 3 dims, transposed convolutions, pools beyond
/// functional.hpp's 2-D ones, unpooling, fractional pooling, fold/unfold, pixel (un)shuffle,
/// grid_sample and affine_grid, with LibTorch's *FuncOptions (included by functional.hpp):
///     F::max_pool3d(x, F::MaxPool3dFuncOptions(2).stride(1)),
///     F::grid_sample(x, grid, F::GridSampleFuncOptions().mode(tg::kNearest))
#include <cstddef>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/functional.hpp"  // MaxPool2dFuncOptions (it includes this header last)
#include "tapegrad/nn/pooling_options.hpp"
#include "tapegrad/ops.hpp"
#pragma GCC visibility push(default)

namespace tg::nn::functional {

/// Conv{1,3}dFuncOptions (LibTorch's ConvFuncOptions<D>): padding a size or "same" / "valid".
template <size_t D>
struct ConvFuncOptions {
    TG_ARG(Tensor, bias) = {};
    TG_ARG(IntArg, stride) = 1;
    TG_ARG(IntArg, dilation) = 1;
    TG_ARG(int64_t, groups) = 1;

public:
    ConvFuncOptions& padding(IntArg v) { return padding_ = std::move(v), by_name_.reset(), *this; }
    ConvFuncOptions& padding(int64_t v) { return padding(IntArg(v)); }
    ConvFuncOptions& padding(const PaddingMode& m) { return by_name_ = m, *this; }
    const IntArg& padding() const { return padding_; }
    const std::optional<PaddingMode>& padding_by_name() const { return by_name_; }

private:
    IntArg padding_ = 0;
    std::optional<PaddingMode> by_name_;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv3dFuncOptions = ConvFuncOptions<3>;
inline Tensor conv1d(const Tensor& x, const Tensor& weight, const Conv1dFuncOptions& o = {}) {
    return o.padding_by_name()
               ? tg::conv1d(x, weight, o.bias(), o.stride(), *o.padding_by_name(), o.dilation(),
                            o.groups())
               : tg::conv1d(x, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
}
inline Tensor conv3d(const Tensor& x, const Tensor& weight, const Conv3dFuncOptions& o = {}) {
    return o.padding_by_name()
               ? tg::conv3d(x, weight, o.bias(), o.stride(), *o.padding_by_name(), o.dilation(),
                            o.groups())
               : tg::conv3d(x, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
}

/// ConvTranspose{1,2,3}dFuncOptions (LibTorch's ConvTransposeFuncOptions<D>).
template <size_t D>
struct ConvTransposeFuncOptions {
    TG_ARG(Tensor, bias) = {};
    TG_ARG(IntArg, stride) = 1;
    TG_ARG(IntArg, padding) = 0;
    TG_ARG(IntArg, output_padding) = 0;
    TG_ARG(int64_t, groups) = 1;
    TG_ARG(IntArg, dilation) = 1;
};
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;
#define TG_F_CONV_TRANSPOSE(N)                                                         \
    inline Tensor conv_transpose##N##d(const Tensor& x, const Tensor& weight,          \
                                       const ConvTranspose##N##dFuncOptions& o = {}) { \
        return tg::conv_transpose##N##d(x, weight, o.bias(), o.stride(), o.padding(),  \
                                        o.output_padding(), o.groups(), o.dilation()); \
    }
TG_F_CONV_TRANSPOSE(1)
TG_F_CONV_TRANSPOSE(2)
TG_F_CONV_TRANSPOSE(3)
#undef TG_F_CONV_TRANSPOSE

// ---- pools: the modules' options (nn/pooling_options.hpp)
using MaxPool1dFuncOptions = MaxPool1dOptions;
using MaxPool3dFuncOptions = MaxPool3dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
using AvgPool3dFuncOptions = AvgPool3dOptions;
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
using AdaptiveAvgPool3dFuncOptions = AdaptiveAvgPool3dOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptiveMaxPool3dOptions;
using LPPool1dFuncOptions = LPPool1dOptions;
using LPPool2dFuncOptions = LPPool2dOptions;
using MaxUnpool1dFuncOptions = MaxUnpoolFuncOptions<1>;
using MaxUnpool2dFuncOptions = MaxUnpoolFuncOptions<2>;
using MaxUnpool3dFuncOptions = MaxUnpoolFuncOptions<3>;
using FractionalMaxPool2dFuncOptions = FractionalMaxPool2dOptions;
using FractionalMaxPool3dFuncOptions = FractionalMaxPool3dOptions;
using FoldFuncOptions = FoldOptions;
using UnfoldFuncOptions = UnfoldOptions;
using PixelShuffleFuncOptions = PixelShuffleOptions;
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;

#define TG_F_MAX_POOL(N)                                                                      \
    inline std::tuple<Tensor, Tensor> max_pool##N##d_with_indices(                            \
        const Tensor& x, const MaxPool##N##dFuncOptions& o) {                                 \
        auto r = tg::max_pool##N##d_with_indices(x, o.kernel_size(), o.stride(), o.padding(), \
                                                 o.dilation(), o.ceil_mode());                \
        return {r.first, r.second};                                                           \
    }
TG_F_MAX_POOL(1)
TG_F_MAX_POOL(2)
TG_F_MAX_POOL(3)
#undef TG_F_MAX_POOL
inline Tensor max_pool1d(const Tensor& x, const MaxPool1dFuncOptions& o) {
    return std::get<0>(max_pool1d_with_indices(x, o));
}
inline Tensor max_pool3d(const Tensor& x, const MaxPool3dFuncOptions& o) {
    return std::get<0>(max_pool3d_with_indices(x, o));
}
inline Tensor avg_pool1d(const Tensor& x, const AvgPool1dFuncOptions& o) {
    return tg::avg_pool1d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                          o.count_include_pad());
}
inline Tensor avg_pool3d(const Tensor& x, const AvgPool3dFuncOptions& o) {
    return tg::avg_pool3d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                          o.count_include_pad(), o.divisor_override());
}
inline Tensor adaptive_avg_pool1d(const Tensor& x, const AdaptiveAvgPool1dFuncOptions& o) {
    return tg::adaptive_avg_pool1d(x, o.output_size());
}
inline Tensor adaptive_avg_pool3d(const Tensor& x, const AdaptiveAvgPool3dFuncOptions& o) {
    return tg::adaptive_avg_pool3d(x, o.output_size());
}
#define TG_F_ADAPTIVE_MAX(N)                                                           \
    inline std::tuple<Tensor, Tensor> adaptive_max_pool##N##d_with_indices(            \
        const Tensor& x, const AdaptiveMaxPool##N##dFuncOptions& o) {                  \
        auto r = tg::adaptive_max_pool##N##d(x, o.output_size());                      \
        return {r.first, r.second};                                                    \
    }                                                                                  \
    inline Tensor adaptive_max_pool##N##d(const Tensor& x,                             \
                                          const AdaptiveMaxPool##N##dFuncOptions& o) { \
        return tg::adaptive_max_pool##N##d(x, o.output_size()).first;                  \
    }
TG_F_ADAPTIVE_MAX(1)
TG_F_ADAPTIVE_MAX(2)
TG_F_ADAPTIVE_MAX(3)
#undef TG_F_ADAPTIVE_MAX
inline Tensor lp_pool1d(const Tensor& x, const LPPool1dFuncOptions& o) {
    return tg::lp_pool1d(x, o.norm_type(), o.kernel_size(), o.stride(), o.ceil_mode());
}
inline Tensor lp_pool2d(const Tensor& x, const LPPool2dFuncOptions& o) {
    return tg::lp_pool2d(x, o.norm_type(), o.kernel_size(), o.stride(), o.ceil_mode());
}
#define TG_F_MAX_UNPOOL(N)                                                                \
    inline Tensor max_unpool##N##d(const Tensor& x, const Tensor& indices,                \
                                   const MaxUnpool##N##dFuncOptions& o) {                 \
        return tg::max_unpool##N##d(x, indices, o.kernel_size(), o.stride(), o.padding(), \
                                    o.output_size());                                     \
    }
TG_F_MAX_UNPOOL(1)
TG_F_MAX_UNPOOL(2)
TG_F_MAX_UNPOOL(3)
#undef TG_F_MAX_UNPOOL
#define TG_F_FRACTIONAL(N)                                                                 \
    inline std::tuple<Tensor, Tensor> fractional_max_pool##N##d_with_indices(              \
        const Tensor& x, const FractionalMaxPool##N##dFuncOptions& o) {                    \
        auto r = tg::fractional_max_pool##N##d(                                            \
            x, o.kernel_size(), o.output_size().value_or(IntArg(std::vector<int64_t>{})),  \
            o.output_ratio().value_or(std::vector<double>{}), o._random_samples());        \
        return {r.first, r.second};                                                        \
    }                                                                                      \
    inline Tensor fractional_max_pool##N##d(const Tensor& x,                               \
                                            const FractionalMaxPool##N##dFuncOptions& o) { \
        return std::get<0>(fractional_max_pool##N##d_with_indices(x, o));                  \
    }
TG_F_FRACTIONAL(2)
TG_F_FRACTIONAL(3)
#undef TG_F_FRACTIONAL

// ---- fold, pixel shuffle, sampling
inline Tensor fold(const Tensor& x, const FoldFuncOptions& o) {
    return tg::fold(x, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}
inline Tensor unfold(const Tensor& x, const UnfoldFuncOptions& o) {
    return tg::unfold(x, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}
inline Tensor pixel_shuffle(const Tensor& x, const PixelShuffleFuncOptions& o) {
    return tg::pixel_shuffle(x, o.upscale_factor());
}
inline Tensor pixel_unshuffle(const Tensor& x, const PixelUnshuffleFuncOptions& o) {
    return tg::pixel_unshuffle(x, o.downscale_factor());
}
/// F::grid_sample's options: mode kBilinear / kNearest (kBicubic too: ATen's, not LibTorch
/// 1.13's C++ option), padding_mode kZeros / kBorder / kReflection, align_corners (unset: false).
struct GridSampleFuncOptions {
    TG_ARG(InterpolateMode, mode) = kBilinear;
    TG_ARG(GridPadding, padding_mode) = kZeros;
    TG_ARG(std::optional<bool>, align_corners) = std::nullopt;
};
inline Tensor grid_sample(const Tensor& input, const Tensor& grid,
                          const GridSampleFuncOptions& o = {}) {
    return tg::grid_sample(input, grid, o.mode(), o.padding_mode(), o.align_corners());
}
inline Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size,
                          bool align_corners = false) {
    return tg::affine_grid(theta, size, align_corners);
}

}  // namespace tg::nn::functional

#pragma GCC visibility pop
