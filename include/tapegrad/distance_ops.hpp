#pragma once
/// Products and distances of two inputs, as LibTorch's torch::bilinear, cosine_similarity,
/// pairwise_distance and pdist (ops.hpp includes this header; src/ops/distance.cpp). All are
/// differentiable, twice where LibTorch is; inputs must be floating (dtype_error otherwise).
#include <cstdint>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// y[..., o] = Σ_ij x1[..., i]·w[o, i, j]·x2[..., j] + b[o]: x1 [..., in1] and x2 [..., in2]
/// with the same leading dims, w [out, in1, in2], b [out] or undefined (composed of a GEMM and a
/// batched product).
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& w, const Tensor& b = {});
/// Σ (x1 / max(‖x1‖, eps))·(x2 / max(‖x2‖, eps)) over dim, x1 and x2 broadcast together; the
/// gradient of each clamped norm n is x/n (LibTorch 1.13's, which clamps in place under no_grad).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
/// ‖x1 - x2 + eps‖_p over the last dim of the broadcast inputs (p = 0 counts the nonzero
/// differences, ±inf takes the largest / smallest |difference|); LibTorch's norm backward.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6,
                         bool keepdim = false);
/// ‖x[i] - x[j]‖_p for every pair of rows i < j of x [N, M], in row-major order of (i, j):
/// [N(N-1)/2]; p >= 0 (value_error otherwise); the gradient of a zero distance is 0.
Tensor pdist(const Tensor& x, double p = 2);

}  // namespace tg

#pragma GCC visibility pop
