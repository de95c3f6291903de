#pragma once
/// Pixel (un)shuffle, grid_sample and affine_grid (ops.hpp includes this header): composed of
/// reshape/permute and of gather, so they record and run on every device as those do
/// (src/ops/sampling.cpp).
#include <cstdint>
#include <optional>
#include <vector>

#include "tapegrad/resampling.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// x [*, C·r², H, W] -> [*, C, H·r, W·r]: element (c·r² + i·r + j, h, w) moves to (c, h·r + i,
/// w·r + j), r = upscale_factor.  dx = pixel_unshuffle(dy, r)
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor);
/// The inverse: x [*, C, H·r, W·r] -> [*, C·r², H, W], r = downscale_factor.  dx =
/// pixel_shuffle(dy, r)
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor);

/// grid_sample's padding modes, as LibTorch spells them: tg::kZeros (padding reads 0),
/// tg::kBorder (the edge value), tg::kReflection (mirrored at the borders).
enum class GridPadMode { Zeros, Border, Reflection };
constexpr GridPadMode kBorder = GridPadMode::Border, kReflection = GridPadMode::Reflection;
class GridPadding {
public:
    GridPadding(GridPadMode m) : m_(m) {}  // NOLINT: implicit
    /// tg::kZeros (a PadMode, as for convolutions); another PadMode throws value_error when used.
    GridPadding(PadMode m) : m_(m == PadMode::Constant ? GridPadMode::Zeros : GridPadMode(-1)) {}
    GridPadMode mode() const { return m_; }

private:
    GridPadMode m_;
};

/// y[n, c, p] = input[n, c] sampled at grid[n, p] (x, y(, z) in [-1, 1] across the width,
/// height (and depth)): input [N, C, H, W] with grid [N, Ho, Wo, 2], or [N, C, D, H, W] with
/// grid [N, Do, Ho, Wo, 3]. mode kBilinear (trilinear for 5-D), kNearest (half to even) or
/// kBicubic (4-D; A = -0.75); padding_mode kZeros, kBorder or kReflection; align_corners: ±1
/// are the corner elements' centres (else their outer edges), as LibTorch 1.13.  Composed of
/// gathers: d input adds dy back to the elements read, weighted; d grid through the weights
/// (zero for kNearest, as LibTorch's)
Tensor grid_sample(const Tensor& input, const Tensor& grid, InterpolateMode mode = kBilinear,
                   GridPadding padding_mode = kZeros, std::optional<bool> align_corners = {});
/// The sampling grid of the affine maps theta: [N, 2, 3] with size {N, C, H, W} -> [N, H, W, 2],
/// or [N, 3, 4] with size {N, C, D, H, W} -> [N, D, H, W, 3]: each point (x, y(, z), 1) of a
/// linspace over [-1, 1] (scaled by (n-1)/n without align_corners) times thetaᵀ.  dtheta =
/// baseᵀ·dy (a bmm)
Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size,
                   bool align_corners = false);

}  // namespace tg

#pragma GCC visibility pop
