#include "tapegrad/nn/dropout.hpp"

#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options) : Module("Dropout"), options_(options) {
    const double p = options.p();
    if (!(p >= 0 && p < 1))
        throw value_error("Dropout(" + std::to_string(p) + "): p must be in [0, 1)");
}

Tensor DropoutImpl::forward(const Tensor& x) {
    if (const auto& g = options_.generator())
        return dropout(x, options_.p(), is_training(), *g);
    return dropout(x, options_.p(), is_training());
}

void DropoutImpl::pretty_print(std::ostream& os) const {
    os << "Dropout(p=" << options_.p() << ")";
}

}  // namespace tg::nn
