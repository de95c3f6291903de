#include "tapegrad/nn/functional_module.hpp"

#include "tapegrad/error.hpp"

namespace tg::nn {

FunctionalImpl::FunctionalImpl(Function function)
    : Module("Functional"), function_(std::move(function)) {
    if (!function_)
        throw value_error("Functional: empty function");
}

Tensor FunctionalImpl::forward(const Tensor& x) {
    return function_(x);
}

void FunctionalImpl::pretty_print(std::ostream& os) const {
    os << "Functional()";
}

}  // namespace tg::nn
