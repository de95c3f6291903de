#pragma once
/// Gradient utilities, as torch::nn::utils.
#include <initializer_list>
#include <limits>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::nn::utils {

/// Scales the gradients of `parameters` in place so that their total norm is at most max_norm,
/// as LibTorch's: total = the norm_type-norm of the per-gradient norms (p = inf: the largest
/// |g|; p = 0: the number of gradients, as LibTorch 1.13 and 2 compute it), coef =
/// min(max_norm / (total + 1e-6), 1), g *= coef. Returns the total norm before clipping as a
/// double (0 when no parameter has a gradient), which reads it back from the device, as
/// LibTorch's does. With error_if_nonfinite, a NaN or infinite total throws tg::error (LibTorch's
/// message) before anything is scaled. value_error unless max_norm >= 0 and norm_type >= 0
/// (LibTorch would flip the gradients' signs, or compute a negative-order "norm").
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// The two halves of clip_grad_norm_ without the read back, so that a step stays on its device
/// (PyTorch's Python names): the total norm of `tensors` (the gradients themselves) as a 0-dim
/// tensor of the first one's dtype and device, computed as clip_grad_norm_ computes it (an
/// undefined tensor when `tensors` is empty)...
Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type = 2.0,
                      bool error_if_nonfinite = false);
/// ...and the scaling by min(max_norm / (total_norm + 1e-6), 1) of every defined gradient of
/// `parameters`.
void clip_grads_with_norm_(const std::vector<Tensor>& parameters, double max_norm,
                           const Tensor& total_norm);

/// Clamps every gradient element of `parameters` into [-clip_value, clip_value], in place;
/// throws value_error unless clip_value >= 0 (LibTorch's clamp would give every element
/// -clip_value).
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

/// +infinity, for clip_grad_norm_(params, max_norm, utils::inf).
constexpr double inf = std::numeric_limits<double>::infinity();

}  // namespace tg::nn::utils

#pragma GCC visibility pop
