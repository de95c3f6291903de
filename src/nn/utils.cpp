#include "tapegrad/nn/utils.hpp"

#include <cmath>
#include <string>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type) {
    if (!(norm_type > 0))
        throw value_error("clip_grad_norm_: norm_type must be positive, got " +
                          std::to_string(norm_type));
    if (!(max_norm >= 0))  // a negative max_norm would flip every gradient's sign
        throw value_error("clip_grad_norm_: max_norm must be >= 0, got " +
                          std::to_string(max_norm));
    NoGradGuard guard;
    std::vector<Tensor> grads;
    for (auto& p : params) {
        Tensor g = p.grad();
        if (g.defined())
            grads.push_back(g);
    }
    if (grads.empty())
        return scalar_tensor(0.0);
    const TensorOptions opts = grads.front().options();
    const bool is_inf = std::isinf(norm_type);
    Tensor acc;  // 0-dim: Σ Σ|g|^p, or max |g|
    for (auto& g : grads) {
        Tensor part;
        if (is_inf)
            part = abs(g).max();
        else if (norm_type == 2)
            part = (g * g).sum();
        else if (norm_type == 1)
            part = abs(g).sum();
        else
            part = pow(abs(g), norm_type).sum();
        if (part.dtype() != opts.dtype() || part.device() != opts.device())
            part = part.to(opts);
        if (!acc.defined())
            acc = part;
        else if (is_inf)
            acc = maximum(acc, part);
        else
            acc.add_(part);
    }
    Tensor total = is_inf           ? acc
                   : norm_type == 1 ? acc
                   : norm_type == 2 ? sqrt(acc)
                                    : pow(acc, 1.0 / norm_type);
    // coef = min(max_norm / (total + 1e-6), 1), as a 0-dim tensor broadcast into each gradient
    Tensor coef = clamp_max(rdiv(max_norm, total + 1e-6), 1.0);
    for (auto& g : grads) {
        if (coef.dtype() == g.dtype() && coef.device() == g.device())
            g.mul_(coef);
        else
            g.mul_(coef.to(g.options()));
    }
    return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
    if (!(clip_value >= 0))
        throw value_error("clip_grad_value_: clip_value must be >= 0, got " +
                          std::to_string(clip_value));
    NoGradGuard guard;
    for (auto& p : params) {
        Tensor g = p.grad();
        if (g.defined())
            g.copy_(clamp(g, -clip_value, clip_value));
    }
}

}  // namespace tg::nn::utils
