#include "tapegrad/nn/layer_norm.hpp"

#include <string>

#include "nn/print_list.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace {
Shape checked_shape(const char* layer, const std::vector<int64_t>& s) {
    bool ok = !s.empty();
    for (int64_t d : s)
        ok = ok && d > 0;
    if (!ok)
        throw shape_error(std::string(layer) + ": normalized_shape " +
                          shape_str(Shape(s.begin(), s.end())) +
                          " must have at least one dim, all positive");
    return Shape(s.begin(), s.end());
}

}  // namespace

LayerNormImpl::LayerNormImpl(const LayerNormOptions& opts) : Module("LayerNorm"), options(opts) {
    const Shape s = checked_shape("LayerNorm", options.normalized_shape());
    if (!(options.eps() >= 0))
        throw value_error("LayerNorm: eps must be >= 0");
    if (options.elementwise_affine()) {
        weight = register_parameter("weight", empty(s));
        if (options.bias())
            bias = register_parameter("bias", empty(s));
    }
    reset_parameters();
}

void LayerNormImpl::reset_parameters() {
    NoGradGuard guard;
    if (weight.defined())
        weight.fill_(1);
    if (bias.defined())
        bias.zero_();
}

Tensor LayerNormImpl::forward(const Tensor& x) {
    const std::vector<int64_t>& s = options.normalized_shape();
    return layer_norm(x, Shape(s.begin(), s.end()), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
    os << "LayerNorm(";
    detail::print_list(os, options.normalized_shape());
    os << ", eps=" << options.eps()
       << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false") << ")";
}

RMSNormImpl::RMSNormImpl(const RMSNormOptions& opts) : Module("RMSNorm"), options(opts) {
    const Shape s = checked_shape("RMSNorm", options.normalized_shape());
    if (options.eps() && !(*options.eps() >= 0))
        throw value_error("RMSNorm: eps must be >= 0");
    if (options.elementwise_affine())
        weight = register_parameter("weight", empty(s));
    reset_parameters();
}

void RMSNormImpl::reset_parameters() {
    NoGradGuard guard;
    if (weight.defined())
        weight.fill_(1);
}

Tensor RMSNormImpl::forward(const Tensor& x) {
    const std::vector<int64_t>& s = options.normalized_shape();
    return rms_norm(x, Shape(s.begin(), s.end()), weight, options.eps());
}

void RMSNormImpl::pretty_print(std::ostream& os) const {
    os << "RMSNorm(";
    detail::print_list(os, options.normalized_shape());
    if (options.eps())
        os << ", eps=" << *options.eps();
    os << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false") << ")";
}

}  // namespace tg::nn
