#pragma once
/// pad (F::pad's four modes) and interpolate (F::interpolate's modes): ops that rebuild the
/// trailing dims of a tensor from its elements (ops.hpp includes this header). Both are composed
/// of cat, narrow and index_select (src/ops/pad.cpp, src/ops/interpolate.cpp), so they record
/// and run on every device as those do.
#include <cstdint>
#include <optional>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// x padded with `value` (F::pad's constant mode): pad = {before, after} pairs from the last
/// dim backwards, negative ones cropping;  dx = the middle of dy
Tensor constant_pad_nd(const Tensor& x, const std::vector<int64_t>& pad, Scalar value = 0);
/// F::pad's modes, as LibTorch spells them (tg::kConstant, ...).
enum class PadMode { Constant, Reflect, Replicate, Circular };
constexpr PadMode kConstant = PadMode::Constant, kReflect = PadMode::Reflect,
                  kReplicate = PadMode::Replicate, kCircular = PadMode::Circular;
/// A convolution's padding_mode kZeros (LibTorch's name for zero padding there): kConstant.
constexpr PadMode kZeros = PadMode::Constant;
/// x padded as F::pad does: kConstant is constant_pad_nd; the others pad the last k = 1, 2 or 3
/// dims of a (k+1)- or (k+2)-dim x (pad has 2k entries, last dim first) by mirroring without
/// the edge (kReflect, each pad below the dim's size), repeating the edge (kReplicate) or
/// wrapping around (kCircular, each pad at most the size); negative pads crop.  One index_select
/// per padded dim, so dx adds dy back to the elements it copied.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pad, PadMode mode = kConstant,
           double value = 0);
/// F::interpolate's modes, as LibTorch spells them (tg::kNearest, ...).
enum class InterpolateMode { Nearest, Linear, Bilinear, Bicubic, Trilinear, Area, NearestExact };
constexpr InterpolateMode kNearest = InterpolateMode::Nearest, kLinear = InterpolateMode::Linear,
                          kBilinear = InterpolateMode::Bilinear,
                          kBicubic = InterpolateMode::Bicubic,
                          kTrilinear = InterpolateMode::Trilinear, kArea = InterpolateMode::Area,
                          kNearestExact = InterpolateMode::NearestExact;
/// x [N, C, d1 (, d2 (, d3))] resampled to `size` (or ⌊d·scale_factor⌋; give exactly one) as
/// F::interpolate does: kNearest takes input ⌊j·s⌋, kNearestExact ⌊(j+½)·s⌋, the linear modes
/// (kLinear 3-dim, kBilinear 4-dim, kTrilinear 5-dim input) mix the two neighbours of
/// (j+½)·s-½ (j·(n-1)/(m-1) with align_corners), s = 1/scale_factor or n/m; kArea averages
/// windows (adaptive_avg_pool2d; 3- and 4-dim inputs), kBicubic (4-dim) convolves four taps
/// with PyTorch's cubic kernel (A = -0.75), edges repeated.  Composed of
/// index_select per dim:  dx adds dy back to the sources, weighted.
Tensor interpolate(const Tensor& x, const std::vector<int64_t>& size,
                   const std::vector<double>& scale_factor, InterpolateMode mode = kNearest,
                   std::optional<bool> align_corners = std::nullopt);

}  // namespace tg

#pragma GCC visibility pop
