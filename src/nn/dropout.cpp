#include "tapegrad/nn/dropout.hpp"

#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

DropoutImpl::DropoutImpl(double p) : Module("Dropout"), p_(p) {
    if (!(p >= 0 && p < 1))
        throw value_error("Dropout(" + std::to_string(p) + "): p must be in [0, 1)");
}

Tensor DropoutImpl::forward(const Tensor& x) {
    return dropout(x, p_, is_training());
}

void DropoutImpl::pretty_print(std::ostream& os) const {
    os << "Dropout(p=" << p_ << ")";
}

}  // namespace tg::nn
