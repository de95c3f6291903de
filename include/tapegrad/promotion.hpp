#pragma once
/// Type promotion, as LibTorch's (torch::result_type, torch::can_cast; promote_types is in
/// dtype.hpp): the dtype in which a binary op computes and that its result has. Included by
/// tensor.hpp.
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// Note [Type promotion]: operands in three tiers, each tier promoted within itself: tensors
/// with dims, 0-dim tensors, then Scalars (a floating Scalar counts as float32, the default
/// dtype; an integral one as int64; a bool as bool). A lower tier changes the result only when it
/// is of a higher kind (bool < integral < floating), or when the higher tier is bool: uint8 [3]
/// + int64 [] is uint8, uint8 [3] + 2 is uint8, uint8 [3] * 2.0 is float32, float16 [3] * 2.0 is
/// float16, bool [3] + 1 is int64, int32 [3] + int64 [3] is int64.
Dtype result_type(const Tensor& a, const Tensor& b);
Dtype result_type(const Tensor& a, Scalar s);
Dtype result_type(Scalar s, const Tensor& a);
Dtype result_type(Scalar a, Scalar b);
/// Whether an in-place op may write a value of dtype `from` into a tensor of dtype `to`: not a
/// floating value into an integral tensor, nor a number into a bool one (x.mul_(0.5) on an int
/// tensor throws dtype_error, as in LibTorch).
constexpr bool can_cast(Dtype from, Dtype to) {
    if (is_floating(from) && is_integral(to))
        return false;
    return from == Dtype::Bool || to != Dtype::Bool;
}

}  // namespace tg

#pragma GCC visibility pop
