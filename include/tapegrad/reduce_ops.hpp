#pragma once
/// More of LibTorch's reductions (ops.hpp includes this header; methods in tensor_methods.hpp):
/// products, order statistics and counts. One `///` line each: forward, then the vector-Jacobian
/// product. Integer and bool inputs multiply in int64, as LibTorch's; `dtype` converts x first.
#include <cstdint>
#include <optional>
#include <tuple>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// y = Π x over all elements (1 when empty);  dx = dy·Π_{j≠i} x_j (exact with zeros in x)
Tensor prod(const Tensor& x, std::optional<Dtype> dtype = std::nullopt);
/// y = Π x along dim;  dx as above, along dim
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false,
            std::optional<Dtype> dtype = std::nullopt);
/// y_i = Π_{j <= i} x_j along dim;  dx_i = Σ_{k >= i} dy_k·Π_{j <= k, j ≠ i} x_j
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<Dtype> dtype = std::nullopt);
/// The lower median of all elements (the ((n-1)/2)-th smallest; NaN if any is NaN);  dx = dy
/// shared evenly by the elements equal to y, as max(x)
Tensor median(const Tensor& x);
/// (values, int64 indices) of the lower median along dim (a row with a NaN gives its first
/// NaN);  values = gather(x, dim, indices), so dx = dy at the indices
std::tuple<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
/// (values, int64 indices) of the k-th smallest (k from 1, NaN above every number) along dim;
/// dx as median's
std::tuple<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
/// Counts of each value of a 1-D non-negative integer tensor, max(max(x) + 1, minlength) of
/// them: int64, or the sums of weights (float32 weights give float32, any other float64).
/// Not differentiable.
Tensor bincount(const Tensor& x, const Tensor& weights = {}, int64_t minlength = 0);

}  // namespace tg

#pragma GCC visibility pop
