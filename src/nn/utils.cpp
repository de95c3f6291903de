#include "tapegrad/nn/utils.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn::utils {

namespace {
void check_norm_type(double norm_type) {
    if (!(norm_type >= 0))
        throw value_error("clip_grad_norm_: norm_type must be >= 0, got " +
                          std::to_string(norm_type));
}
void check_max_norm(double max_norm) {
    if (!(max_norm >= 0))  // a negative max_norm would flip every gradient's sign
        throw value_error("clip_grad_norm_: max_norm must be >= 0, got " +
                          std::to_string(max_norm));
}
std::vector<Tensor> grads_of(const std::vector<Tensor>& parameters) {
    std::vector<Tensor> grads;
    for (const Tensor& p : parameters) {
        Tensor g = p.defined() ? p.grad() : Tensor();
        if (g.defined())
            grads.push_back(g);
    }
    return grads;
}
}  // namespace

// As LibTorch: one norm per gradient (in its dtype), then the norm of those norms; the clip
// coefficient stays a 0-dim device tensor, broadcast into each gradient.
Tensor get_total_norm(const std::vector<Tensor>& tensors, double norm_type,
                      bool error_if_nonfinite) {
    check_norm_type(norm_type);
    if (tensors.empty())
        return {};
    NoGradGuard guard;
    const TensorOptions opts = tensors.front().options();
    Tensor total;
    if (norm_type == 0) {
        total = full({}, double(tensors.size()), opts);
    } else {
        std::vector<Tensor> norms;
        for (const Tensor& g : tensors) {
            Tensor n = std::isinf(norm_type) ? abs(g.detach()).max() : norm(g.detach(), norm_type);
            norms.push_back(n.dtype() == opts.dtype() && n.device() == opts.device() ? n
                                                                                     : n.to(opts));
        }
        if (norms.size() == 1)
            total = norms.front();
        else
            total = std::isinf(norm_type) ? stack(norms).max() : norm(stack(norms), norm_type);
    }
    if (error_if_nonfinite) {
        const double t = total.item<double>();
        if (!std::isfinite(t)) {
            std::ostringstream os;
            os << "The total norm of order " << norm_type << " for gradients from `parameters` "
               << "is non-finite, so it cannot be clipped. To disable this error and scale the "
               << "gradients with the non-finite norm anyway, set `error_if_nonfinite=false`";
            throw error(os.str());
        }
    }
    return total;
}

void clip_grads_with_norm_(const std::vector<Tensor>& parameters, double max_norm,
                           const Tensor& total_norm) {
    check_max_norm(max_norm);
    const std::vector<Tensor> grads = grads_of(parameters);
    if (grads.empty())
        return;
    if (!total_norm.defined())
        throw value_error("clip_grads_with_norm_: undefined total_norm");
    NoGradGuard guard;
    // coef = min(max_norm / (total + 1e-6), 1), a 0-dim tensor broadcast into each gradient
    const Tensor coef = clamp_max(rdiv(max_norm, total_norm.detach() + 1e-6), 1.0);
    for (const Tensor& g0 : grads) {
        Tensor g = g0;
        if (coef.dtype() == g.dtype() && coef.device() == g.device())
            g.mul_(coef);
        else
            g.mul_(coef.to(g.options()));
    }
}

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
    check_norm_type(norm_type);
    check_max_norm(max_norm);
    const std::vector<Tensor> grads = grads_of(parameters);
    if (grads.empty())
        return 0.0;
    const Tensor total = get_total_norm(grads, norm_type, error_if_nonfinite);
    clip_grads_with_norm_(parameters, max_norm, total);
    return total.item<double>();
}

double clip_grad_norm_(std::initializer_list<Tensor> parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
    return clip_grad_norm_(std::vector<Tensor>(parameters), max_norm, norm_type,
                           error_if_nonfinite);
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
    return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
    if (!(clip_value >= 0))
        throw value_error("clip_grad_value_: clip_value must be >= 0, got " +
                          std::to_string(clip_value));
    NoGradGuard guard;
    for (Tensor g : grads_of(parameters))
        g.copy_(clamp(g, -clip_value, clip_value));
}

void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value) {
    clip_grad_value_(std::vector<Tensor>(parameters), clip_value);
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
    clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace tg::nn::utils
