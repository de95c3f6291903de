#pragma once
/// The pools of 1 and 3 spatial dims beside ops.hpp's 2-D ones, adaptive max pooling, LP
/// pooling, max unpooling and fractional max pooling (ops.hpp includes this header). Max and
/// average pools run the window kernels of the 2-D ones over windows with a depth axis
/// (src/ops/pool.cpp); every backward gathers (Note [Gathering adjoints]).
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tapegrad/spatial.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// y = the max of each window of x [N,C,L] or [C,L] (padding reads as -inf; NaN wins), stride
/// defaults to kernel_size;  dx = each element gathers dy of the windows whose argmax it is
Tensor max_pool1d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride = {},
                  const IntArg& padding = 0, const IntArg& dilation = 1, bool ceil_mode = false);
/// max_pool1d and the argmax of each window (int64, the position within its row)
std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& x, const IntArg& kernel_size,
                                                  const IntArg& stride = {},
                                                  const IntArg& padding = 0,
                                                  const IntArg& dilation = 1,
                                                  bool ceil_mode = false);
/// max_pool2d's over x [N,C,D,H,W] or [C,D,H,W]
Tensor max_pool3d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride = {},
                  const IntArg& padding = 0, const IntArg& dilation = 1, bool ceil_mode = false);
/// max_pool3d and the argmax of each window (int64, as (d·H + h)·W + w within its volume)
std::pair<Tensor, Tensor> max_pool3d_with_indices(const Tensor& x, const IntArg& kernel_size,
                                                  const IntArg& stride = {},
                                                  const IntArg& padding = 0,
                                                  const IntArg& dilation = 1,
                                                  bool ceil_mode = false);
/// y = the mean of each window of x [N,C,L] or [C,L] (count_include_pad: padding counts in the
/// divisor);  dx = each element gathers dy / divisor of the windows that cover it
Tensor avg_pool1d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride = {},
                  const IntArg& padding = 0, bool ceil_mode = false, bool count_include_pad = true);
/// avg_pool2d's over x [N,C,D,H,W] or [C,D,H,W]; divisor_override replaces every divisor
Tensor avg_pool3d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride = {},
                  const IntArg& padding = 0, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
/// avg_pool2d with divisor_override (LibTorch's last argument), which replaces every divisor
Tensor avg_pool2d(const Tensor& x, const IntArg& kernel_size, const IntArg& stride,
                  const IntArg& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override);
/// adaptive_avg_pool2d's over x [N,C,L] / [C,L] (one size) and [N,C,D,H,W] / [C,D,H,W] (one or
/// three sizes)
Tensor adaptive_avg_pool1d(const Tensor& x, const IntArg& output_size);
Tensor adaptive_avg_pool3d(const Tensor& x, const IntArg& output_size);
/// y = the max over the adaptive windows ([⌊i·n/o⌋, ⌈(i+1)·n/o⌉) per dim) and their argmax
/// (int64 within the plane);  dx = each element gathers dy of the windows whose argmax it is
std::pair<Tensor, Tensor> adaptive_max_pool1d(const Tensor& x, const IntArg& output_size);
std::pair<Tensor, Tensor> adaptive_max_pool2d(const Tensor& x, const IntArg& output_size);
std::pair<Tensor, Tensor> adaptive_max_pool3d(const Tensor& x, const IntArg& output_size);

/// y = (Σ over each window of x^p)^(1/p), p = norm_type, as LibTorch computes it: an average
/// pool of x^p (no padding) times the window size, sign(a)·relu(|a|), to the power 1/p; stride
/// defaults to kernel_size.  gradients through those ops
Tensor lp_pool1d(const Tensor& x, double norm_type, const IntArg& kernel_size,
                 const IntArg& stride = {}, bool ceil_mode = false);
Tensor lp_pool2d(const Tensor& x, double norm_type, const IntArg& kernel_size,
                 const IntArg& stride = {}, bool ceil_mode = false);
/// The inverse of a max pool: zeros [N, C, out...] with x written at its indices (flat within
/// each plane, as the max pools give them; where indices repeat the last one written stays, as
/// LibTorch's loop). out = (in - 1)·stride + kernel_size - 2·padding, or output_size (the
/// spatial dims, or N and C too; within a stride of that). Out-of-range indices throw
/// value_error.  dx = dy gathered at the indices (every element, as LibTorch's backward)
Tensor max_unpool1d(const Tensor& x, const Tensor& indices, const IntArg& kernel_size,
                    const IntArg& stride = {}, const IntArg& padding = 0,
                    const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
Tensor max_unpool2d(const Tensor& x, const Tensor& indices, const IntArg& kernel_size,
                    const IntArg& stride = {}, const IntArg& padding = 0,
                    const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
Tensor max_unpool3d(const Tensor& x, const Tensor& indices, const IntArg& kernel_size,
                    const IntArg& stride = {}, const IntArg& padding = 0,
                    const std::optional<std::vector<int64_t>>& output_size = std::nullopt);
/// Fractional max pooling (Graham): windows of kernel_size at pseudo-random starts, LibTorch's
/// intervals from random_samples [N, C, 2] (drawn as LibTorch draws them, rand of the input's
/// dtype, when undefined); output_size or output_ratio (⌊in·ratio⌋). Returns the maxima and
/// their flat indices.  dx = dy at each window's argmax (a gather's adjoint)
std::pair<Tensor, Tensor> fractional_max_pool2d(const Tensor& x, const IntArg& kernel_size,
                                                const IntArg& output_size,
                                                const std::vector<double>& output_ratio = {},
                                                const Tensor& random_samples = {});
/// As fractional_max_pool2d over [N, C, D, H, W]; random_samples [N, C, 3]
std::pair<Tensor, Tensor> fractional_max_pool3d(const Tensor& x, const IntArg& kernel_size,
                                                const IntArg& output_size,
                                                const std::vector<double>& output_ratio = {},
                                                const Tensor& random_samples = {});

}  // namespace tg

#pragma GCC visibility pop
