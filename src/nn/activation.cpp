#include "tapegrad/nn/activation.hpp"

#include <cmath>
#include <string>

#include "tapegrad/ops.hpp"

namespace tg::nn {

LeakyReLUImpl::LeakyReLUImpl(double negative_slope)
    : Module("LeakyReLU"), negative_slope_(negative_slope) {
    if (!std::isfinite(negative_slope))
        throw value_error("LeakyReLU(" + std::to_string(negative_slope) +
                          "): negative_slope must be finite");
}

Tensor ReLUImpl::forward(const Tensor& x) {
    return relu(x);
}
Tensor TanhImpl::forward(const Tensor& x) {
    return tanh(x);
}
Tensor SigmoidImpl::forward(const Tensor& x) {
    return sigmoid(x);
}
Tensor GELUImpl::forward(const Tensor& x) {
    return gelu(x);
}
Tensor LeakyReLUImpl::forward(const Tensor& x) {
    return leaky_relu(x, negative_slope_);
}
Tensor SoftmaxImpl::forward(const Tensor& x) {
    return softmax(x, dim_);
}
Tensor LogSoftmaxImpl::forward(const Tensor& x) {
    return log_softmax(x, dim_);
}

void LeakyReLUImpl::pretty_print(std::ostream& os) const {
    os << "LeakyReLU(negative_slope=" << negative_slope_ << ")";
}
void SoftmaxImpl::pretty_print(std::ostream& os) const {
    os << "Softmax(dim=" << dim_ << ")";
}
void LogSoftmaxImpl::pretty_print(std::ostream& os) const {
    os << "LogSoftmax(dim=" << dim_ << ")";
}

}  // namespace tg::nn
