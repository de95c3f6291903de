#pragma once
// The CPU glue of the fused normalisation kernels (Note [Fused normalisation kernels] in
// backend/cpu/norm_kernels.cpp) for batch_norm and group_norm (ops/norm.cpp): tensors in, the
// kernels on host pointers, or a device backend's twins (backend.hpp's PlaneNormOp). Only for
// what `takes` accepts; other tensors use the composed path.
#include <vector>

#include "autograd/record.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::norm_fused {

/// Whether the fused kernels serve x: float32 or float64, not empty, on the CPU or on a device
/// whose backend fuses_plane_norm() (OpenCL: backend.hpp's PlaneNormOp).
bool takes(const Tensor& x);

/// The mean and biased variance of x [N, C, *] per group (groups = 0: per channel, batch_norm;
/// else per sample and group of C / groups channels), as tensors of `stat` shape in x's dtype.
void moments(const Tensor& x, int64_t groups, const Shape& stat, Tensor& mean, Tensor& var);

/// y = (x - mean)·invstd·w + b per group (w, b [C] or undefined), as x·scale + shift; into `into`
/// when it is defined (a contiguous buffer of x's size).
Tensor affine(const Tensor& x, int64_t groups, const Tensor& mean, const Tensor& invstd,
              const Tensor& w, const Tensor& b, Tensor into = {});

/// The gradients {dx, dw, db} (as needed) without create_graph (Note [Normalisation layout] in
/// ops/norm.cpp); batch_stats: the statistics are this batch's.
Grads backward(const Tensor& dy, const Tensor& x, int64_t groups, const Tensor& mean,
               const Tensor& invstd, const Tensor& w, bool batch_stats, bool need_x, bool need_w,
               bool need_b);

}  // namespace tg::norm_fused
