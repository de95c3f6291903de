#pragma once
// Argument checks several ops share, so the same mistake gets the same message everywhere.
#include "tapegrad/ops.hpp"

namespace tg::checks {

/// t is defined; else a value_error "op: undefined tensor".
void defined(const char* op, const Tensor& t);

/// a and b, the arguments a_name and b_name of op, have one dtype; else a dtype_error
/// "op: self (float32 [3]) and source (float64 [3]) must have the same scalar type" (LibTorch's
/// words). b undefined is a value_error "op: undefined source".
void same_dtype(const char* op, const char* a_name, const Tensor& a, const char* b_name,
                const Tensor& b);

/// t, the argument `what` of op, on the device of the input x; else a device_error
/// "op: what on opencl:0, input on cpu".
void same_device(const char* op, const char* what, const Tensor& t, const Tensor& x);

/// t, the argument `what` of op, broadcasts to target without growing it; else a shape_error
/// "op: what [3] cannot be broadcast to the <target_name> [2,4]".
void broadcasts_to(const char* op, const char* what, const Tensor& t, const Shape& target,
                   const char* target_name);

/// t, the argument `what` of op, is a bool tensor, as LibTorch requires of conditions and masks
/// (an integer or float one throws there too: PyTorch 2's rule; 1.13 still took uint8); else a
/// dtype_error "op: what must be a bool tensor, got float32 [3] (compare it: t != 0)".
void is_bool(const char* op, const char* what, const Tensor& t);

}  // namespace tg::checks
