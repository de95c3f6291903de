#include "tapegrad/nn/dropout.hpp"

#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace {
void check_p(const char* layer, double p) {
    if (!(p >= 0 && p < 1))
        throw value_error(std::string(layer) + "(" + std::to_string(p) + "): p must be in [0, 1)");
}

/// The in-place form: y written into x, x returned (LibTorch's inplace=true).
Tensor into(const Tensor& x, const Tensor& y) {
    Tensor out = x;
    out.copy_(y);
    return out;
}
}  // namespace

DropoutImpl::DropoutImpl(const DropoutOptions& opts) : Module("Dropout"), options(opts) {
    check_p("Dropout", options.p());
}

Tensor DropoutImpl::forward(const Tensor& x) {
    const auto& g = options.generator();
    Tensor y =
        g ? dropout(x, options.p(), is_training(), *g) : dropout(x, options.p(), is_training());
    return options.inplace() ? into(x, y) : y;
}

void DropoutImpl::pretty_print(std::ostream& os) const {
    os << "Dropout(p=" << options.p() << ", inplace=" << (options.inplace() ? "true" : "false")
       << ")";
}

Dropout2dImpl::Dropout2dImpl(const DropoutOptions& opts) : Module("Dropout2d"), options(opts) {
    check_p("Dropout2d", options.p());
}

Tensor Dropout2dImpl::forward(const Tensor& x) {
    if (!x.defined() || (x.dim() != 3 && x.dim() != 4))
        throw shape_error(label() + ": expected a 3-D [C,H,W] or 4-D [N,C,H,W] input, got " +
                          (x.defined() ? shape_str(x.sizes()) : std::string("undefined")));
    const bool batched = x.dim() == 4;
    const Tensor in = batched ? x : unsqueeze(x, 0);
    const auto& g = options.generator();
    Tensor y = g ? feature_dropout(in, options.p(), is_training(), *g)
                 : feature_dropout(in, options.p(), is_training());
    y = batched ? y : squeeze(y, 0);
    return options.inplace() ? into(x, y) : y;
}

void Dropout2dImpl::pretty_print(std::ostream& os) const {
    os << "Dropout2d(p=" << options.p() << ", inplace=" << (options.inplace() ? "true" : "false")
       << ")";
}

}  // namespace tg::nn
