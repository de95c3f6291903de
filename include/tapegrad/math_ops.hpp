#pragma once
/// The rest of LibTorch's elementwise math (ops.hpp includes this header; ops.hpp has exp, log,
/// sqrt, sin, cos, ...): one kernel each (kernels.def) on every backend; integer tensors give
/// float32, as LibTorch's. One `///` line each: forward, then the vector-Jacobian product. The
/// in-place forms write the result into x (tensor_methods.hpp says how they record and throw).
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// y = tan x;  dx = dy·(1 + y²)
Tensor tan(const Tensor& x);
/// y = sinh x;  dx = dy·cosh x
Tensor sinh(const Tensor& x);
/// y = cosh x;  dx = dy·sinh x
Tensor cosh(const Tensor& x);
/// y = asin x (NaN outside [-1, 1]);  dx = dy/√(1 - x²)
Tensor asin(const Tensor& x);
/// y = acos x;  dx = -dy/√(1 - x²)
Tensor acos(const Tensor& x);
/// y = atan x;  dx = dy/(1 + x²)
Tensor atan(const Tensor& x);
/// y = log₂ x;  dx = dy/(x·ln 2)
Tensor log2(const Tensor& x);
/// y = log₁₀ x;  dx = dy/(x·ln 10)
Tensor log10(const Tensor& x);
/// y = 2ˣ;  dx = dy·y·ln 2
Tensor exp2(const Tensor& x);
/// y = erf x;  dx = dy·2/√π·e^(-x²)
Tensor erf(const Tensor& x);
/// y = erfc x = 1 - erf x, accurate for large x;  dx = -dy·2/√π·e^(-x²)
Tensor erfc(const Tensor& x);
/// y = atan2(a, b), the angle of (b, a) in [-π, π] (broadcast; integers give float32);
/// da = dy·b/(a² + b²), db = -dy·a/(a² + b²)
Tensor atan2(const Tensor& a, const Tensor& b);
/// y = √(a² + b²) without overflow (broadcast; floating inputs only);  da = dy·a/y, db = dy·b/y
Tensor hypot(const Tensor& a, const Tensor& b);
Tensor& atan2_(Tensor& a, const Tensor& b);
Tensor& hypot_(Tensor& a, const Tensor& b);
Tensor& tan_(Tensor& x);
Tensor& sinh_(Tensor& x);
Tensor& cosh_(Tensor& x);
Tensor& asin_(Tensor& x);
Tensor& acos_(Tensor& x);
Tensor& atan_(Tensor& x);
Tensor& log2_(Tensor& x);
Tensor& log10_(Tensor& x);
Tensor& exp2_(Tensor& x);
Tensor& erf_(Tensor& x);
Tensor& erfc_(Tensor& x);

}  // namespace tg

#pragma GCC visibility pop
