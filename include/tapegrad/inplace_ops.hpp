#pragma once
/// LibTorch's in-place functions of the pointwise ops (tg::relu_(x), as torch::relu_), a few
/// more pointwise ops, and the index-writing ops in LibTorch's form (ops.hpp includes this
/// header; the methods are in tensor_methods.hpp). One `///` line each: forward, then the
/// vector-Jacobian product. The in-place forms are the out-of-place op written into x
/// (tensor_methods.hpp says how they record and throw).
#include <cstdint>
#include <optional>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

Tensor& relu_(Tensor& x);
Tensor& sigmoid_(Tensor& x);
Tensor& tanh_(Tensor& x);
Tensor& exp_(Tensor& x);
Tensor& log_(Tensor& x);
Tensor& sqrt_(Tensor& x);
Tensor& rsqrt_(Tensor& x);
Tensor& abs_(Tensor& x);
Tensor& neg_(Tensor& x);
Tensor& floor_(Tensor& x);
Tensor& ceil_(Tensor& x);
Tensor& round_(Tensor& x);
Tensor& trunc_(Tensor& x);
Tensor& frac_(Tensor& x);
Tensor& reciprocal_(Tensor& x);
Tensor& sin_(Tensor& x);
Tensor& cos_(Tensor& x);
Tensor& log1p_(Tensor& x);
Tensor& expm1_(Tensor& x);
Tensor& clamp_(Tensor& x, std::optional<Scalar> lo, std::optional<Scalar> hi = std::nullopt);
Tensor& clamp_min_(Tensor& x, Scalar lo);
Tensor& clamp_max_(Tensor& x, Scalar hi);

/// y = 1/x (floating; integers become float32);  dx = -dy·y²
Tensor reciprocal(const Tensor& x);
/// y = x - trunc(x);  dx = dy
Tensor frac(const Tensor& x);
/// y = self + value·t1·t2 (broadcast);  dself = dy, dt1 = dy·value·t2, dt2 = dy·value·t1
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
/// y = self + value·t1/t2 (floating);  dself = dy, dt1 = dy·value/t2, dt2 = -dy·value·t1/t2²
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, Scalar value = 1);
/// y = self + weight·(end - self) (floating);  dself = dy·(1 - weight), dend = dy·weight
Tensor lerp(const Tensor& self, const Tensor& end, Scalar weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);

/// self with alpha·source's slices added at index along dim (LibTorch's form; ops.hpp's
/// index_add(x, shape, dim, index) adds into zeros);  dself = dy, dsource =
/// alpha·index_select(dy, dim, index)
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);
/// self with the slices at index along dim set to value;  dself = dy, zero in those slices
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
/// self with source's slices written at index along dim (value_error for an index repeated:
/// which write wins is undefined in LibTorch);  dself = dy outside them, dsource =
/// index_select(dy, dim, index)
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
/// self with y[index[i][j]][j] = src[i][j] (dim 0; index no larger than src, and than self but
/// along dim; value_error for a position written twice, as index_copy);  dself = dy outside the
/// written positions, dsrc = gather(dy, dim, index)
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
/// self with value written at the positions index names (repeats allowed)
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
/// self with src added at index along dim (LibTorch's form; ops.hpp's scatter_add(x, shape, dim,
/// index) adds into zeros);  dself = dy, dsrc = gather(dy, dim, index)
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);

}  // namespace tg

#pragma GCC visibility pop
