#include "tapegrad/nn/linear.hpp"

#include <cmath>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

LinearImpl::LinearImpl(const LinearOptions& o)
    : Module("Linear"), options(o), in_(o.in_features()), out_(o.out_features()) {
    if (in_ < 0 || out_ < 0)
        throw shape_error("Linear(" + std::to_string(in_) + ", " + std::to_string(out_) +
                          "): feature counts must be >= 0");
    weight = register_parameter("weight", empty({out_, in_}));
    if (o.bias())
        bias = register_parameter("bias", empty({out_}));
    reset_parameters();
}

LinearImpl::LinearImpl(int64_t in_features, int64_t out_features, bool has_bias)
    : LinearImpl(LinearOptions(in_features, out_features).bias(has_bias)) {}

void LinearImpl::reset_parameters() {
    init::kaiming_uniform_(weight, std::sqrt(5.0));  // nothing to draw when in_ or out_ is 0
    if (bias.defined()) {
        // PyTorch's bound: 0 without inputs (the bias is then zero: the output is the bias)
        const double bound = in_ > 0 ? 1.0 / std::sqrt(double(in_)) : 0.0;
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

namespace tg::nn {

BilinearImpl::BilinearImpl(const BilinearOptions& o) : Module("Bilinear"), options(o) {
    const int64_t in1 = o.in1_features(), in2 = o.in2_features(), out = o.out_features();
    auto where = [&] {
        return "Bilinear(" + std::to_string(in1) + ", " + std::to_string(in2) + ", " +
               std::to_string(out) + ")";
    };
    if (in1 < 0 || in2 < 0 || out < 0)
        throw shape_error(where() + ": feature counts must be >= 0");
    if (in1 == 0)
        throw value_error(where() +
                          ": in1_features must be positive (the initialisation bound "
                          "is 1/sqrt(in1_features))");
    weight = register_parameter("weight", empty({out, in1, in2}));
    if (o.bias())
        bias = register_parameter("bias", empty({out}));
    reset_parameters();
}

void BilinearImpl::reset_parameters() {
    const double bound = 1.0 / std::sqrt(double(weight.size(1)));
    init::uniform_(weight, -bound, bound);
    if (bias.defined())
        init::uniform_(bias, -bound, bound);
}

Tensor BilinearImpl::forward(const Tensor& x1, const Tensor& x2) {
    if (x1.defined() && x2.defined() &&
        (x1.dtype() != weight.dtype() || x2.dtype() != weight.dtype()))
        throw dtype_error(label() + ": inputs " + dtype_name(x1.dtype()) + " and " +
                          dtype_name(x2.dtype()) + ", layer has " + dtype_name(weight.dtype()));
    return bilinear(x1, x2, weight, bias);
}

void BilinearImpl::pretty_print(std::ostream& os) const {
    os << "Bilinear(in1_features=" << options.in1_features()
       << ", in2_features=" << options.in2_features() << ", out_features=" << options.out_features()
       << ", bias=" << (bias.defined() ? "true" : "false") << ")";
}

namespace functional {
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const Tensor& bias) {
    return tg::bilinear(input1, input2, weight, bias);
}
}  // namespace functional

}  // namespace tg::nn
