#include "tapegrad/nn/activation_more.hpp"

#include <cmath>
#include <string>

#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace {
/// The module's name and shape in an error: "ELU: input [2,3]".
std::string where_of(const Module& m, const Tensor& x) {
    return m.label() + ": input " + (x.defined() ? shape_str(x.sizes()) : "undefined");
}
/// x itself, defined, or a value_error naming the module.
const Tensor& defined(const Module& m, const Tensor& x) {
    if (!x.defined())
        throw value_error(where_of(m, x));
    return x;
}
}  // namespace

void ELUImpl::reset() {
    if (!std::isfinite(options.alpha()))
        throw value_error("ELU: alpha " + std::to_string(options.alpha()) + " is not finite");
    if (options.inplace() && options.alpha() < 0)
        throw value_error("ELU(alpha=" + std::to_string(options.alpha()) +
                          ", inplace=true): an in-place elu needs alpha >= 0");
}
Tensor ELUImpl::forward(const Tensor& x) {
    Tensor in = defined(*this, x);
    return options.inplace() ? elu_(in, options.alpha()) : elu(in, options.alpha());
}
void ELUImpl::pretty_print(std::ostream& os) const {
    os << "ELU(alpha=" << options.alpha() << (options.inplace() ? ", inplace=true)" : ")");
}

void SELUImpl::reset() {}
Tensor SELUImpl::forward(const Tensor& x) {
    Tensor in = defined(*this, x);
    return options.inplace() ? selu_(in) : selu(in);
}
void SELUImpl::pretty_print(std::ostream& os) const {
    os << (options.inplace() ? "SELU(inplace=true)" : "SELU()");
}

void CELUImpl::reset() {
    const double a = options.alpha();
    if (!std::isfinite(a) || a == 0)
        throw value_error("CELU: alpha " + std::to_string(a) + " must be finite and nonzero");
    if (options.inplace() && a < 0)
        throw value_error("CELU(alpha=" + std::to_string(a) +
                          ", inplace=true): an in-place celu needs alpha > 0");
}
Tensor CELUImpl::forward(const Tensor& x) {
    Tensor in = defined(*this, x);
    return options.inplace() ? celu_(in, options.alpha()) : celu(in, options.alpha());
}
void CELUImpl::pretty_print(std::ostream& os) const {
    os << "CELU(alpha=" << options.alpha() << (options.inplace() ? ", inplace=true)" : ")");
}

void HardtanhImpl::reset() {
    if (!(options.max_val() > options.min_val()))
        throw value_error("Hardtanh: max_val " + std::to_string(options.max_val()) +
                          " must be greater than min_val " + std::to_string(options.min_val()));
}
Tensor HardtanhImpl::forward(const Tensor& x) {
    Tensor in = defined(*this, x);
    return options.inplace() ? hardtanh_(in, options.min_val(), options.max_val())
                             : hardtanh(in, options.min_val(), options.max_val());
}
void HardtanhImpl::pretty_print(std::ostream& os) const {
    os << "Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val()
       << (options.inplace() ? ", inplace=true)" : ")");
}

void ReLU6Impl::reset() {}
Tensor ReLU6Impl::forward(const Tensor& x) {
    Tensor in = defined(*this, x);
    return options.inplace() ? relu6_(in) : relu6(in);
}
void ReLU6Impl::pretty_print(std::ostream& os) const {
    os << (options.inplace() ? "ReLU6(inplace=true)" : "ReLU6()");
}

void HardshrinkImpl::reset() {}
Tensor HardshrinkImpl::forward(const Tensor& x) {
    return hardshrink(defined(*this, x), options.lambda());
}
void HardshrinkImpl::pretty_print(std::ostream& os) const {
    os << "Hardshrink(" << options.lambda() << ")";
}

void SoftshrinkImpl::reset() {
    if (!(options.lambda() >= 0))
        throw value_error("Softshrink: lambda must be >= 0, got " +
                          std::to_string(options.lambda()));
}
Tensor SoftshrinkImpl::forward(const Tensor& x) {
    return softshrink(defined(*this, x), options.lambda());
}
void SoftshrinkImpl::pretty_print(std::ostream& os) const {
    os << "Softshrink(" << options.lambda() << ")";
}

void SoftplusImpl::reset() {}
Tensor SoftplusImpl::forward(const Tensor& x) {
    return softplus(defined(*this, x), options.beta(), options.threshold());
}
void SoftplusImpl::pretty_print(std::ostream& os) const {
    os << "Softplus(beta=" << options.beta() << ", threshold=" << options.threshold() << ")";
}

void GLUImpl::reset() {}
Tensor GLUImpl::forward(const Tensor& x) {
    return glu(defined(*this, x), options.dim());
}
void GLUImpl::pretty_print(std::ostream& os) const {
    os << "GLU(dim=" << options.dim() << ")";
}

Tensor ThresholdImpl::forward(const Tensor& x) {
    Tensor in = defined(*this, x);
    return options.inplace() ? threshold_(in, options.threshold(), options.value())
                             : threshold(in, options.threshold(), options.value());
}
void ThresholdImpl::pretty_print(std::ostream& os) const {
    os << "Threshold(threshold=" << options.threshold() << ", value=" << options.value()
       << (options.inplace() ? ", inplace=true)" : ")");
}

void RReLUImpl::reset() {
    if (!(options.lower() <= options.upper()) || !std::isfinite(options.lower()) ||
        !std::isfinite(options.upper()))
        throw value_error("RReLU: lower " + std::to_string(options.lower()) + " and upper " +
                          std::to_string(options.upper()) + " must be finite, lower <= upper");
}
Tensor RReLUImpl::forward(const Tensor& x) {
    Tensor in = defined(*this, x);
    return options.inplace() ? rrelu_(in, options.lower(), options.upper(), is_training())
                             : rrelu(in, options.lower(), options.upper(), is_training());
}
void RReLUImpl::pretty_print(std::ostream& os) const {
    os << "RReLU(lower=" << options.lower() << ", upper=" << options.upper()
       << (options.inplace() ? ", inplace=true)" : ")");
}

void SoftminImpl::reset() {}
Tensor SoftminImpl::forward(const Tensor& x) {
    return softmax(-defined(*this, x), options.dim());
}
void SoftminImpl::pretty_print(std::ostream& os) const {
    os << "Softmin(dim=" << options.dim() << ")";
}

Tensor SiLUImpl::forward(const Tensor& x) {
    return silu(defined(*this, x));
}
Tensor MishImpl::forward(const Tensor& x) {
    return mish(defined(*this, x));
}
Tensor TanhshrinkImpl::forward(const Tensor& x) {
    const Tensor& in = defined(*this, x);
    return in - tanh(in);
}
Tensor SoftsignImpl::forward(const Tensor& x) {
    const Tensor& in = defined(*this, x);
    return in / (abs(in) + 1);
}
Tensor LogSigmoidImpl::forward(const Tensor& x) {
    return log_sigmoid(defined(*this, x));
}
Tensor Softmax2dImpl::forward(const Tensor& x) {
    if (!x.defined() || (x.dim() != 3 && x.dim() != 4))
        throw shape_error(where_of(*this, x) + ": Softmax2d requires a 3D or 4D tensor");
    return softmax(x, -3);
}

PReLUImpl::PReLUImpl(const PReLUOptions& o) : Module("PReLU"), options(o) {
    if (o.num_parameters() < 1)
        throw value_error("PReLU: num_parameters " + std::to_string(o.num_parameters()) +
                          " must be >= 1");
    if (!std::isfinite(o.init()))
        throw value_error("PReLU: init " + std::to_string(o.init()) + " is not finite");
    weight = register_parameter("weight", full({o.num_parameters()}, o.init()));
}
void PReLUImpl::reset() {
    NoGradGuard g;
    weight.fill_(options.init());
}
Tensor PReLUImpl::forward(const Tensor& x) {
    return prelu(defined(*this, x), weight);
}
void PReLUImpl::pretty_print(std::ostream& os) const {
    os << "PReLU(num_parameters=" << options.num_parameters() << ")";
}

}  // namespace tg::nn
