#pragma once
// Type promotion inside the ops (Note [Type promotion] in tapegrad/promotion.hpp): operands
// converted to the dtype an op computes in, and Scalars as values of a dtype.
#include <utility>

#include "tapegrad/ops.hpp"

namespace tg::promote {

/// a and b converted to result_type(a, b) (recorded conversions: gradients convert back).
std::pair<Tensor, Tensor> both(const Tensor& a, const Tensor& b);
/// As both(), but an integral or bool result type becomes float32 (true division).
std::pair<Tensor, Tensor> both_floating(const Tensor& a, const Tensor& b);
/// x converted to d (recorded).
Tensor to(const Tensor& x, Dtype d);
/// x as a floating tensor: integral and bool tensors become float32 (LibTorch's exp, sqrt, sin,
/// ... of an integer tensor), floating ones stay.
Tensor floating(const Tensor& x);
/// s as a value of dtype d, converted as a kernel converts (Note [Conversions]: an integer wraps
/// into a narrower type, a float rounds into float16), for the kernels' double parameters.
double value_in(Dtype d, Scalar s);
/// s as a value of dtype d, checked as LibTorch's fill_, full, masked_fill and clamp check it:
/// value_error naming op when d cannot hold it ("full: value 300 cannot be converted to type
/// uint8 without overflow").
double checked_in(Dtype d, Scalar s, const char* op);
/// A 0-dim tensor of o's dtype and device holding s converted as value_in() converts it, exact
/// for int64 (not through a double).
Tensor scalar_tensor(Scalar s, const TensorOptions& o);
/// Throws dtype_error naming op unless a result of dtype `result` may be written into self.
void check_can_cast(const char* op, Dtype result, const Tensor& self);

}  // namespace tg::promote
