#pragma once
/// The 3-D convolution and the 1-D and 3-D transposed convolutions (ops.hpp includes this
/// header): the same three bilinear ops as conv2d (Note [Convolution as three bilinear ops] in
/// src/ops/conv_gemm.cpp) over windows with a depth axis, or conv_transpose2d over [N,C,1,L].
#include <cstdint>

#include "tapegrad/spatial.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// y[n,o] = Σ_c w[o,c] ⋆ x[n,c] + b[o]: x [N,C,D,H,W], w [O,C/groups,kd,kh,kw], b [O] or
/// undefined; stride, padding and dilation one value or three.  dx = the gather of wᵀ·dy,
/// dw = Σ_n dy·unfold(x)ᵀ, db = Σ dy (as conv2d's)
Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b = {}, const IntArg& stride = 1,
              const IntArg& padding = 0, const IntArg& dilation = 1, int64_t groups = 1);
/// conv3d with padding "same" (stride 1; the odd padding at the end) or "valid" (none)
Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& padding, const IntArg& dilation = 1, int64_t groups = 1);
/// conv3d with one padding for every dim (so that a literal 0 picks no string overload)
Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation = 1, int64_t groups = 1);
/// The adjoint of conv1d in its input: x [N,C_in,L], w [C_in,C_out/groups,k], b [C_out];
/// output (L-1)·stride - 2·padding + dilation·(k-1) + output_padding + 1 (conv_transpose2d over
/// [N,C,1,L]).  gradients as conv_transpose2d's
Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const Tensor& b = {},
                        const IntArg& stride = 1, const IntArg& padding = 0,
                        const IntArg& output_padding = 0, int64_t groups = 1,
                        const IntArg& dilation = 1);
/// The adjoint of conv3d in its input: x [N,C_in,D,H,W], w [C_in,C_out/groups,kd,kh,kw],
/// b [C_out]; each output size as conv_transpose1d's.  dx = conv3d(dy, w), dw = conv3d's weight
/// gradient with the roles exchanged, db = Σ dy
Tensor conv_transpose3d(const Tensor& x, const Tensor& w, const Tensor& b = {},
                        const IntArg& stride = 1, const IntArg& padding = 0,
                        const IntArg& output_padding = 0, int64_t groups = 1,
                        const IntArg& dilation = 1);

}  // namespace tg

#pragma GCC visibility pop
