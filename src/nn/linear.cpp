#include "tapegrad/nn/linear.hpp"

#include <cmath>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, bool has_bias)
    : Module("Linear"), in_(in_features), out_(out_features) {
    if (in_features <= 0 || out_features <= 0)
        throw shape_error("Linear(" + std::to_string(in_features) + ", " +
                          std::to_string(out_features) + "): feature counts must be positive");
    weight = register_parameter("weight", empty({out_, in_}));
    if (has_bias)
        bias = register_parameter("bias", empty({out_}));
    reset_parameters();
}

void LinearImpl::reset_parameters() {
    init::kaiming_uniform_(weight, std::sqrt(5.0));
    if (bias.defined()) {
        double bound = 1.0 / std::sqrt(double(in_));
        init::uniform_(bias, -bound, bound);
    }
}

Tensor LinearImpl::forward(const Tensor& x) {
    auto where = [&] {
        return "Linear(" + std::to_string(in_) + ", " + std::to_string(out_) + "): input " +
               shape_str(x.sizes());
    };
    if (!x.defined())
        throw value_error("Linear(" + std::to_string(in_) + ", " + std::to_string(out_) +
                          "): undefined input");
    if (x.dim() < 1 || x.sizes().back() != in_)
        throw shape_error(where() + ": expected last dim " + std::to_string(in_));
    if (x.dtype() != weight.dtype())
        throw dtype_error(where() + ": dtype " + dtype_name(x.dtype()) + ", layer has " +
                          dtype_name(weight.dtype()));
    if (x.device() != weight.device())
        throw device_error(where() + ": on " + x.device().str() + ", layer on " +
                           weight.device().str());
    if (x.dim() == 2)
        return linear(x, weight, bias);
    // [in] or [d0,...,dk,in]: fold the leading dims into one batch dim around the same node
    Shape out_shape(x.sizes().begin(), x.sizes().end() - 1);
    int64_t rows = numel_of(out_shape);
    out_shape.push_back(out_);
    return linear(x.reshape({rows, in_}), weight, bias).reshape(out_shape);
}

void LinearImpl::pretty_print(std::ostream& os) const {
    os << "Linear(in_features=" << in_ << ", out_features=" << out_
       << ", bias=" << (bias.defined() ? "true" : "false") << ")";
}

}  // namespace tg::nn
