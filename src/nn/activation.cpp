#include "tapegrad/nn/activation.hpp"

#include <cmath>
#include <string>

#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace {
/// The in-place form of an activation: y written into x, x returned (LibTorch's inplace=true).
Tensor into(const Tensor& x, const Tensor& y) {
    Tensor out = x;
    out.copy_(y);
    return out;
}
}  // namespace

Tensor ReLUImpl::forward(const Tensor& x) {
    return options.inplace() ? into(x, relu(x)) : relu(x);
}
Tensor TanhImpl::forward(const Tensor& x) {
    return tanh(x);
}
Tensor SigmoidImpl::forward(const Tensor& x) {
    return sigmoid(x);
}

GELUImpl::GELUImpl(const GELUOptions& o) : Module("GELU"), options(o) {
    if (o.approximate() != "none" && o.approximate() != "tanh")
        throw value_error("GELU: approximate \"" + o.approximate() +
                          "\": expected \"none\" or \"tanh\"");
}
Tensor GELUImpl::forward(const Tensor& x) {
    return gelu(x, options.approximate());
}

LeakyReLUImpl::LeakyReLUImpl(const LeakyReLUOptions& o) : Module("LeakyReLU"), options(o) {
    const double s = o.negative_slope();
    if (!std::isfinite(s))
        throw value_error("LeakyReLU(" + std::to_string(s) + "): negative_slope must be finite");
    if (o.inplace() && s < 0)
        throw value_error("LeakyReLU(" + std::to_string(s) +
                          ", inplace=true): an in-place leaky_relu needs negative_slope >= 0");
}
Tensor LeakyReLUImpl::forward(const Tensor& x) {
    Tensor y = leaky_relu(x, options.negative_slope());
    return options.inplace() ? into(x, y) : y;
}
Tensor SoftmaxImpl::forward(const Tensor& x) {
    return softmax(x, options.dim());
}
Tensor LogSoftmaxImpl::forward(const Tensor& x) {
    return log_softmax(x, options.dim());
}

void ReLUImpl::pretty_print(std::ostream& os) const {
    os << (options.inplace() ? "ReLU(inplace=true)" : "ReLU()");
}
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
    os << "LeakyReLU(negative_slope=" << options.negative_slope()
       << (options.inplace() ? ", inplace=true)" : ")");
}
void SoftmaxImpl::pretty_print(std::ostream& os) const {
    os << "Softmax(dim=" << options.dim() << ")";
}
void LogSoftmaxImpl::pretty_print(std::ostream& os) const {
    os << "LogSoftmax(dim=" << options.dim() << ")";
}

}  // namespace tg::nn
