#pragma once
/// More of LibTorch's numeric ops (ops.hpp includes this header; methods in tensor_methods.hpp):
/// std, the floating-point predicates and nan_to_num, count_nonzero, vector products, einsum, diag
/// and trace, clip and sgn. One `///` line each: forward, then the vector-Jacobian product.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// sqrt(var(x, ...)) with var's overloads (std(x, 1) is dim 1, as LibTorch's C++ overload);
/// dx = dy·(x - mean)/((n - unbiased)·std)
Tensor std(const Tensor& x, bool unbiased = true);
Tensor std(const Tensor& x, const std::vector<int64_t>& dims, bool unbiased = true,
           bool keepdim = false);
Tensor std(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased = true,
           bool keepdim = false);
Tensor std(const Tensor& x, int dim);
/// bool: x is NaN / ±inf / neither (integer and bool tensors: false / false / true)
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
/// x with NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite values
/// unless given);  dx = dy where x was finite, else 0
Tensor nan_to_num(const Tensor& x, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
Tensor& nan_to_num_(Tensor& x, std::optional<double> nan = std::nullopt,
                    std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt);
/// int64: how many elements are not zero, over dims (all when empty / nullopt)
Tensor count_nonzero(const Tensor& x, const std::vector<int64_t>& dims);
Tensor count_nonzero(const Tensor& x, std::optional<int64_t> dim = std::nullopt);
/// Σ aᵢbᵢ of two 1-D tensors of one size and dtype;  da = dy·b, db = dy·a
Tensor dot(const Tensor& a, const Tensor& b);
/// A·v for a 2-D A and a 1-D v;  dA = dy vᵀ, dv = Aᵀ dy
Tensor mv(const Tensor& a, const Tensor& v);
/// a bᵀ of two 1-D tensors ([n] x [m] -> [n,m]); ger is its old name;  da = dy·b, db = dyᵀ·a
Tensor outer(const Tensor& a, const Tensor& b);
Tensor ger(const Tensor& a, const Tensor& b);
/// The sum of products the subscripts say ("ij,jk->ik", "bij,bjk->bik", "ii->i", "ij->", "i,j->ij";
/// without "->" the output is the letters seen once, sorted; "..." for leading dims), lowered to
/// diagonal views, permute, reshape, mul, sum and bmm as LibTorch's;  gradients through those
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
/// 1-D x: the square matrix with x on its diagonal-th diagonal; 2-D x: that diagonal, 1-D
Tensor diag(const Tensor& x, int64_t diagonal = 0);
/// The sum of a matrix's main diagonal (integers in int64)
Tensor trace(const Tensor& x);
/// clamp's and sign's other names
Tensor clip(const Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt);
Tensor& clip_(Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt);
Tensor sgn(const Tensor& x);

}  // namespace tg

#pragma GCC visibility pop
