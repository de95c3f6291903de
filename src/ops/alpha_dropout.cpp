// alpha_dropout and feature_alpha_dropout: LibTorch's draws and arithmetic (ATen's _dropout_impl
// with alpha_dropout), composed of recorded ops around a noise tensor that is a constant.
#include <cmath>
#include <string>

#include "runtime/dispatch.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/dropout_ops.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

Tensor alpha_dropout_with(const Tensor& x, double p, bool train, const Generator* g,
                          bool features) {
    const char* name = features ? "feature_alpha_dropout" : "alpha_dropout";
    if (!x.defined())
        throw value_error(std::string(name) + ": undefined input");
    if (!(p >= 0 && p <= 1))
        throw value_error(std::string(name) +
                          ": dropout probability has to be between 0 and 1, "
                          "but got " +
                          runtime::scalar_str(p));
    if (!train || p == 0 || x.numel() == 0)
        return x;
    runtime::check_float_kernels(name, x);
    if (p == 1)
        return x * zeros({}, x.options());
    if (features && x.dim() < 2)
        throw shape_error(std::string(name) + ": input " + shape_str(x.sizes()) +
                          " must have at least 2 dims [N,C,...] (feature dropout)");
    Shape noise_shape = x.sizes();
    if (features)
        for (size_t d = 2; d < noise_shape.size(); ++d)
            noise_shape[d] = 1;
    // Note [Alpha dropout]: LibTorch draws noise = bernoulli_(1 - p) (contiguous, x's dtype), then
    // b = (noise - 1)·(α·a) + α·a·p and noise·a, each a tensor op with a scalar in x's dtype, and
    // y = x·(noise·a) + b; the same ops in the same order give the same bits.
    Tensor noise = empty(noise_shape, x.options());
    {
        NoGradGuard guard;
        if (g)
            noise.bernoulli_(1 - p, *g);
        else
            noise.bernoulli_(1 - p);
    }
    constexpr double alpha = 1.7580993408473766;
    const double a = 1. / std::sqrt((alpha * alpha * p + 1) * (1 - p));
    Tensor b;
    {
        NoGradGuard guard;
        b = (noise - 1) * (alpha * a) + alpha * a * p;
        noise = noise * a;
    }
    return x * noise + b;
}

}  // namespace

Tensor alpha_dropout(const Tensor& x, double p, bool train) {
    return alpha_dropout_with(x, p, train, nullptr, false);
}
Tensor alpha_dropout(const Tensor& x, double p, bool train, const Generator& g) {
    return alpha_dropout_with(x, p, train, &g, false);
}
Tensor feature_alpha_dropout(const Tensor& x, double p, bool train) {
    return alpha_dropout_with(x, p, train, nullptr, true);
}
Tensor feature_alpha_dropout(const Tensor& x, double p, bool train, const Generator& g) {
    return alpha_dropout_with(x, p, train, &g, true);
}

}  // namespace tg
