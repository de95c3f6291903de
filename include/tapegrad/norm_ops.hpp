#pragma once
/// More normalisation ops (ops.hpp includes this header; batch, group, layer and RMS norm are in
/// layer_ops.hpp): instance norm, local response norm and nn::CrossMapLRN2d's function. One
/// `///` line each: forward, then the vector-Jacobian product of its backward.
#include <cstdint>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// ATen's instance_norm: batch_norm of x [N,C,*] seen as [1, N·C, *] (each sample's channel its
/// own statistics), weight, bias and the running statistics [C] repeated N times; when defined,
/// running_mean and running_var become the mean over the N samples of their updated copies, as
/// ATen's. use_input_stats false normalises with the running statistics (which must be defined).
/// Gradients as batch_norm's, summed over the repeats. cudnn_enabled is ignored.
Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                     const Tensor& running_mean, const Tensor& running_var, bool use_input_stats,
                     double momentum, double eps, bool cudnn_enabled = false);
/// y = x / (k + alpha·mean of x² over a window of `size` channels)^beta, the window
/// [c - size/2, c + (size-1)/2] with zeros past the edges (counted in the mean), as LibTorch's
/// F::local_response_norm composes it; x [N,C,*] with at least 3 dims (composed)
Tensor local_response_norm(const Tensor& x, int64_t size, double alpha = 1e-4, double beta = 0.75,
                           double k = 1);
/// nn::CrossMapLRN2d's function, LibTorch's legacy (Lua Torch) algorithm on x [N,C,H,W], which
/// is not local_response_norm: scale_c = k + alpha/size · Σ x_j² over j <= min(c + p - 1, C - 1)
/// less j in [1, c - p] (p = (size-1)/2 + 1: channel 0 is never dropped from the running sum),
/// y = x·scale^-beta. Its backward is LibTorch's too (not the derivative of that forward):
/// dx_c = scale_c^-beta·dy_c - (2·alpha·beta/size)·x_c·Σ_j r_j over j in [c - q, c - q + size - 1],
/// r = dy·y/scale, q = size - (size-1)/2. Once differentiable, as LibTorch's (its double backward
/// throws autograd_error); for size 1 and 2, where LibTorch's backward throws, the window is
/// clipped to the channels.
Tensor cross_map_lrn2d(const Tensor& x, int64_t size, double alpha = 1e-4, double beta = 0.75,
                       int64_t k = 1);

}  // namespace tg

#pragma GCC visibility pop
