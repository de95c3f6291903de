#include "tapegrad/nn/functional_activation.hpp"

#include <cmath>
#include <string>
#include <tuple>

namespace tg::nn::functional {

Tensor leaky_relu(Tensor x, const LeakyReLUFuncOptions& o) {
    if (o.inplace() && o.negative_slope() < 0)
        throw value_error("leaky_relu: negative_slope " + std::to_string(o.negative_slope()) +
                          " with inplace=true: an in-place leaky_relu needs a slope >= 0");
    return detail::maybe_into(x, tg::leaky_relu(x, o.negative_slope()), o.inplace());
}

Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& o) {
    if (!logits.defined())
        throw value_error("gumbel_softmax: undefined logits");
    if (!(o.tau() > 0) || std::isinf(o.tau()))
        throw value_error("gumbel_softmax: tau " + std::to_string(o.tau()) +
                          " must be finite and > 0, for logits " + shape_str(logits.sizes()));
    Tensor e = empty_like(logits);
    e.exponential_();
    const Tensor gumbels = (logits - log(e)) / o.tau();  // ~ Gumbel(logits, tau)
    const Tensor y_soft = softmax(gumbels, o.dim());
    if (!o.hard())
        return y_soft;
    const int64_t d = wrap_dim(o.dim(), logits.dim(), "gumbel_softmax");
    Tensor index = std::get<1>(max(y_soft.detach(), d, true));
    const Tensor y_hard =
        scatter_add(ones(index.sizes(), logits.options()), logits.sizes(), d, index);
    return y_hard - y_soft.detach() + y_soft;
}

}  // namespace tg::nn::functional
