#pragma once
/// Comparisons and logic: bool tensors (kBool, one byte per element), as LibTorch's. None of
/// these is differentiable. A bool operand of arithmetic converts to the other operand's dtype
/// (mask * x); other ops take numbers and refuse bool with dtype_error (convert with .to()).
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

// ---- comparisons, elementwise with broadcasting. Number operands must have one dtype; a bool
// operand compares as 0/1. Against a Scalar, an int64 or bool tensor compares exactly (x < 1.5
// holds for x = 1), a floating one at its own precision, as PyTorch does.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar s);
Tensor ne(const Tensor& a, Scalar s);
Tensor gt(const Tensor& a, Scalar s);
Tensor lt(const Tensor& a, Scalar s);
Tensor ge(const Tensor& a, Scalar s);
Tensor le(const Tensor& a, Scalar s);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar s);
Tensor operator!=(const Tensor& a, Scalar s);
Tensor operator>(const Tensor& a, Scalar s);
Tensor operator<(const Tensor& a, Scalar s);
Tensor operator>=(const Tensor& a, Scalar s);
Tensor operator<=(const Tensor& a, Scalar s);

// ---- logic on any dtype (nonzero, NaN included, is true), with broadcasting
Tensor logical_not(const Tensor& x);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
/// ~m, m & n, m | n, m ^ n on bool tensors (LibTorch's bitwise ops, which on bool are the
/// logical ones); other dtypes throw dtype_error.
Tensor operator~(const Tensor& m);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);

// ---- reductions to bool: whether any (all) element is nonzero; any of an empty tensor is
// false, all is true.
Tensor any(const Tensor& x);
Tensor all(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);

// ---- closeness, as LibTorch's (src/ops/closeness.cpp)
/// |a - b| <= atol + |rtol·b| elementwise with broadcasting, or a == b (equal infinities are
/// close), or both NaN with equal_nan; in a's dtype (integers in float32, LibTorch's default
/// dtype), bool. dtype_error unless a and b have one dtype ("isclose: float64 did not match
/// float32"), value_error for a negative rtol or atol.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);
/// isclose(...).all(), read back to the host.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
/// Whether a and b have the same sizes (no broadcasting) and equal values (NaN equals nothing);
/// of two dtypes, the values are compared, as LibTorch's equal.
bool equal(const Tensor& a, const Tensor& b);

// ---- masks to indices (these read the mask back to the host, as PyTorch does)
/// The indices of the nonzero elements, int64 [n, x.dim()], in row-major order.
Tensor nonzero(const Tensor& x);
/// The elements of x where mask (broadcast together) is nonzero, 1-D in row-major order;
/// dx = the selected gradients scattered back (zero elsewhere).
Tensor masked_select(const Tensor& x, const Tensor& mask);

}  // namespace tg

#pragma GCC visibility pop
