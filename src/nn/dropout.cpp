#include "tapegrad/nn/dropout.hpp"

#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace {
void check_p(const char* layer, double p, bool one_allowed = false) {
    if (!(p >= 0 && (one_allowed ? p <= 1 : p < 1)))
        throw value_error(std::string(layer) + "(" + std::to_string(p) + "): p must be in [0, 1" +
                          (one_allowed ? "]" : ")"));
}

/// The in-place form: y written into x, x returned (LibTorch's inplace=true); nothing to write
/// when y is x (not training, p = 0), which LibTorch returns as it is.
Tensor into(const Tensor& x, const Tensor& y) {
    if (y.impl() == x.impl())
        return x;
    Tensor out = x;
    out.copy_(y);
    return out;
}

/// feature_dropout of a batched (dim == batched) or unbatched (batched - 1) input, as LibTorch's
/// _dropoutNd_helper (which unsqueezes any other dim count; here a shape_error).
Tensor feature_dropout_nd(const std::string& who, const Tensor& x, double p, bool train,
                          const std::optional<Generator>& g, int64_t batched, const char* shapes) {
    if (!x.defined() || (x.dim() != batched && x.dim() != batched - 1))
        throw shape_error(who + ": expected a " + shapes + " input, got " +
                          (x.defined() ? shape_str(x.sizes()) : std::string("undefined")));
    const bool is_batched = x.dim() == batched;
    const Tensor in = is_batched ? x : unsqueeze(x, 0);
    Tensor y = g ? feature_dropout(in, p, train, *g) : feature_dropout(in, p, train);
    return is_batched ? y : squeeze(y, 0);
}

const char* const k2d = "3-D [C,H,W] or 4-D [N,C,H,W]";
const char* const k3d = "4-D [C,D,H,W] or 5-D [N,C,D,H,W]";

void print_dropout(std::ostream& os, const char* name, const DropoutOptions& o) {
    os << name << "(p=" << o.p() << ", inplace=" << (o.inplace() ? "true" : "false") << ")";
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
    print_dropout(os, "Dropout", options);
}

Dropout2dImpl::Dropout2dImpl(const DropoutOptions& opts) : Module("Dropout2d"), options(opts) {
    check_p("Dropout2d", options.p());
}

Tensor Dropout2dImpl::forward(const Tensor& x) {
    const Tensor y =
        feature_dropout_nd(label(), x, options.p(), is_training(), options.generator(), 4, k2d);
    return options.inplace() ? into(x, y) : y;
}

void Dropout2dImpl::pretty_print(std::ostream& os) const {
    print_dropout(os, "Dropout2d", options);
}

Dropout3dImpl::Dropout3dImpl(const DropoutOptions& opts) : Module("Dropout3d"), options(opts) {
    check_p("Dropout3d", options.p(), true);
}

Tensor Dropout3dImpl::forward(const Tensor& x) {
    const Tensor y =
        feature_dropout_nd(label(), x, options.p(), is_training(), options.generator(), 5, k3d);
    return options.inplace() ? into(x, y) : y;
}

void Dropout3dImpl::pretty_print(std::ostream& os) const {
    print_dropout(os, "Dropout3d", options);
}

AlphaDropoutImpl::AlphaDropoutImpl(const DropoutOptions& opts)
    : Module("AlphaDropout"), options(opts) {
    check_p("AlphaDropout", options.p(), true);
}

Tensor AlphaDropoutImpl::forward(const Tensor& x) {
    const auto& g = options.generator();
    return g ? alpha_dropout(x, options.p(), is_training(), *g)
             : alpha_dropout(x, options.p(), is_training());
}

void AlphaDropoutImpl::pretty_print(std::ostream& os) const {
    print_dropout(os, "AlphaDropout", options);
}

FeatureAlphaDropoutImpl::FeatureAlphaDropoutImpl(const DropoutOptions& opts)
    : Module("FeatureAlphaDropout"), options(opts) {
    check_p("FeatureAlphaDropout", options.p(), true);
}

Tensor FeatureAlphaDropoutImpl::forward(const Tensor& x) {
    const auto& g = options.generator();
    return g ? feature_alpha_dropout(x, options.p(), is_training(), *g)
             : feature_alpha_dropout(x, options.p(), is_training());
}

void FeatureAlphaDropoutImpl::pretty_print(std::ostream& os) const {
    print_dropout(os, "FeatureAlphaDropout", options);
}

namespace functional {

namespace {
void check_func_p(const char* fn, double p) {
    if (!(p >= 0 && p <= 1))
        throw value_error(std::string(fn) +
                          ": dropout probability has to be between 0 and 1, "
                          "but got " +
                          std::to_string(p));
}
}  // namespace

Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& o) {
    check_func_p("F::dropout2d", o.p());
    const Tensor y = feature_dropout_nd("F::dropout2d", input, o.p(), o.training(), {}, 4, k2d);
    return o.inplace() ? into(input, y) : y;
}

Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& o) {
    check_func_p("F::dropout3d", o.p());
    const Tensor y = feature_dropout_nd("F::dropout3d", input, o.p(), o.training(), {}, 5, k3d);
    return o.inplace() ? into(input, y) : y;
}

Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& o) {
    const Tensor y = tg::alpha_dropout(input, o.p(), o.training());
    return o.inplace() ? into(input, y) : y;
}

Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& o) {
    const Tensor y = tg::feature_alpha_dropout(input, o.p(), o.training());
    return o.inplace() ? into(input, y) : y;
}

}  // namespace functional

}  // namespace tg::nn
