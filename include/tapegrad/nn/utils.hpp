#pragma once
/// Gradient utilities, as torch::nn::utils. They work with tensor ops only (no host loops over
/// elements, no device-to-host copies), so they run wherever the parameters live.
#include <limits>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::nn::utils {

/// Scales the gradients of `params` in place so that their total norm is at most max_norm.
/// total = (Σᵢ Σ |gᵢ|^p)^(1/p) over every defined gradient (p = norm_type; p = inf: max |g|),
/// coef = min(max_norm / (total + 1e-6), 1), gᵢ *= coef (always applied, as PyTorch, so no
/// host sync is needed). Returns the total norm before clipping, a 0-dim tensor of the first
/// gradient's dtype and device (0 when no parameter has a gradient). Throws value_error unless
/// max_norm >= 0 and norm_type > 0 (neither NaN).
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2);
/// Clamps every gradient element of `params` into [-clip_value, clip_value], in place; throws
/// value_error unless clip_value >= 0.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

/// +infinity, for clip_grad_norm_(params, max_norm, utils::inf).
constexpr double inf = std::numeric_limits<double>::infinity();

}  // namespace tg::nn::utils

#pragma GCC visibility pop
