// Convolutions: conv2d, conv1d (as conv2d over [N,C,1,L]) and conv_transpose2d: their
// arguments checked and turned into a geometry, then one of the three bilinear ops of
// conv_gemm.cpp.
#include <string>
#include <vector>

#include "ops/conv_gemm.hpp"
#include "runtime/dispatch.hpp"

namespace tg {

using conv::ConvGeom;
using conv::Kind;
using conv::pair_of;

IntArg::IntArg(int64_t v) : v_{v} {}
IntArg::IntArg(std::initializer_list<int64_t> v) : v_(v) {}
IntArg::IntArg(std::vector<int64_t> v) : v_(std::move(v)) {}

std::pair<int64_t, int64_t> conv::pair_of(const char* op, const char* what, const IntArg& v,
                                          int64_t fallback_h, int64_t fallback_w) {
    const std::vector<int64_t>& s = v.values();
    if (s.empty())
        return {fallback_h, fallback_w};
    if (s.size() == 1)
        return {s[0], s[0]};
    if (s.size() == 2)
        return {s[0], s[1]};
    throw shape_error(std::string(op) + ": " + what + " has " + std::to_string(s.size()) +
                      " values: expected 1 or 2");
}

namespace {

std::string shapes(const Tensor& x, const Tensor& w) {
    return shape_str(x.sizes()) + ", weight " + shape_str(w.sizes());
}

/// Checks what every convolution needs of x, w and b: defined, one device and floating dtype,
/// x and w 4-D.
void check_inputs(const char* op, const Tensor& x, const Tensor& w, const Tensor& b) {
    if (!x.defined() || !w.defined())
        throw value_error(std::string(op) + ": undefined input or weight");
    runtime::check_same(op, x, w);
    runtime::check_float_kernels(op, x);
    if (b.defined())
        runtime::check_same(op, x, b);
    if (x.dim() != 4 || w.dim() != 4)
        throw shape_error(std::string(op) + ": input " + shapes(x, w) +
                          ": expected a 4-D input [N,C,H,W] and a 4-D weight");
}

/// Every size product a convolution forms stays in range (Note [Checked sizes]).
void check_sizes(const ConvGeom& g, const char* op) {
    const int64_t s[] = {g.N, g.C, g.taps(), g.positions(), g.H, g.W};
    (void)checked_prod(s, 4, op);
    (void)checked_prod(s + 1, 5, op);
    const int64_t y[] = {g.N, g.O, g.positions()};
    (void)checked_prod(y, 3, op);
}

/// The geometry of conv2d(x, w) with padding ph/pw at the top/left and the output size from
/// the total paddings th/tw.
ConvGeom conv_geom(const char* op, const Tensor& x, const Tensor& w, const Tensor& b,
                   std::pair<int64_t, int64_t> s, std::pair<int64_t, int64_t> p,
                   std::pair<int64_t, int64_t> total, std::pair<int64_t, int64_t> d,
                   int64_t groups) {
    check_inputs(op, x, w, b);
    ConvGeom g{};
    g.N = x.size(0), g.C = x.size(1), g.H = x.size(2), g.W = x.size(3);
    g.O = w.size(0), g.kh = w.size(2), g.kw = w.size(3), g.groups = groups;
    g.sh = s.first, g.sw = s.second, g.ph = p.first, g.pw = p.second;
    g.dh = d.first, g.dw = d.second;
    const std::string where = std::string(op) + ": input " + shapes(x, w);
    if (groups <= 0 || g.C % groups != 0 || g.O % groups != 0)
        throw shape_error(where + ": groups " + std::to_string(groups) + " must divide the " +
                          std::to_string(g.C) + " input and " + std::to_string(g.O) +
                          " output channels");
    if (w.size(1) != g.C / groups)
        throw shape_error(where + ": expected weight [O, " + std::to_string(g.C / groups) +
                          ", kh, kw] for " + std::to_string(g.C) + " input channels in " +
                          std::to_string(groups) + " groups");
    if (g.sh <= 0 || g.sw <= 0 || g.dh <= 0 || g.dw <= 0 || g.ph < 0 || g.pw < 0 ||
        total.first < 0 || total.second < 0)
        throw value_error(where + ": stride and dilation must be positive and padding >= 0");
    if (g.kh <= 0 || g.kw <= 0)
        throw shape_error(where + ": empty kernel");
    const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
    if (g.H + total.first < eh || g.W + total.second < ew)
        throw shape_error(where + ": the kernel (" + std::to_string(eh) + "x" + std::to_string(ew) +
                          " dilated) is larger than the padded input (" +
                          std::to_string(g.H + total.first) + "x" +
                          std::to_string(g.W + total.second) + ")");
    g.oh = conv::out_size(g.H, g.kh, g.sh, total.first, g.dh);
    g.ow = conv::out_size(g.W, g.kw, g.sw, total.second, g.dw);
    if (b.defined() && (b.dim() != 1 || b.size(0) != g.O))
        throw shape_error(where + ": bias " + shape_str(b.sizes()) + ", expected [" +
                          std::to_string(g.O) + "]");
    // every size product stays in range (Note [Checked sizes])
    check_sizes(g, op);
    return g;
}

Tensor add_bias(Tensor y, const Tensor& b) {
    return b.defined() ? y + b.reshape({1, b.size(0), 1, 1}) : y;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const IntArg& padding, const IntArg& dilation, int64_t groups) {
    const auto p = pair_of("conv2d", "padding", padding, 0, 0);
    const ConvGeom g = conv_geom("conv2d", x, w, b, pair_of("conv2d", "stride", stride, 1, 1), p,
                                 {2 * p.first, 2 * p.second},
                                 pair_of("conv2d", "dilation", dilation, 1, 1), groups);
    return conv::apply(Kind::Forward, x, w, g, b);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& mode, const IntArg& dilation, int64_t groups) {
    const std::string& padding = mode.name();
    if (padding == "valid")
        return conv2d(x, w, b, stride, IntArg(0), dilation, groups);
    if (padding != "same")
        throw value_error("conv2d: padding \"" + padding + "\": expected \"same\" or \"valid\"");
    const auto s = pair_of("conv2d", "stride", stride, 1, 1);
    const auto d = pair_of("conv2d", "dilation", dilation, 1, 1);
    if (s.first != 1 || s.second != 1)
        throw value_error("conv2d: padding \"same\" needs stride 1");
    check_inputs("conv2d", x, w, b);
    // total padding d·(k-1), the odd one more at the bottom/right (as PyTorch)
    const int64_t th = d.first * (w.size(2) - 1), tw = d.second * (w.size(3) - 1);
    const ConvGeom g = conv_geom("conv2d", x, w, b, s, {th / 2, tw / 2}, {th, tw}, d, groups);
    return conv::apply(Kind::Forward, x, w, g, b);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation, int64_t groups) {
    return conv2d(x, w, b, stride, IntArg(padding), dilation, groups);
}

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation, int64_t groups) {
    return conv1d(x, w, b, stride, IntArg(padding), dilation, groups);
}

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const IntArg& padding, const IntArg& dilation, int64_t groups) {
    if (!x.defined() || !w.defined() || x.dim() != 3 || w.dim() != 3)
        throw shape_error("conv1d: input " + (x.defined() ? shape_str(x.sizes()) : "undefined") +
                          ", weight " + (w.defined() ? shape_str(w.sizes()) : "undefined") +
                          ": expected a 3-D input [N,C,L] and a 3-D weight [O,C/groups,k]");
    auto one = [](const IntArg& a, int64_t none) {
        const auto& v = a.values();
        return IntArg({1, v.empty() ? none : v[0]});
    };
    for (const IntArg* a : {&stride, &padding, &dilation})
        if (a->values().size() > 1)
            throw shape_error("conv1d: stride, padding and dilation take one value each");
    IntArg pad = padding.values().empty() ? IntArg({0, 0}) : IntArg({0, padding.values()[0]});
    return conv2d(x.unsqueeze(2), w.unsqueeze(2), b, one(stride, 1), pad, one(dilation, 1), groups)
        .squeeze(2);
}

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& mode, const IntArg& dilation, int64_t groups) {
    if (!x.defined() || !w.defined() || x.dim() != 3 || w.dim() != 3)
        throw shape_error("conv1d: expected a 3-D input [N,C,L] and a 3-D weight [O,C/groups,k]");
    for (const IntArg* a : {&stride, &dilation})
        if (a->values().size() > 1)
            throw shape_error("conv1d: stride and dilation take one value each");
    const int64_t s = stride.values().empty() ? 1 : stride.values()[0];
    const int64_t d = dilation.values().empty() ? 1 : dilation.values()[0];
    return conv2d(x.unsqueeze(2), w.unsqueeze(2), b, {1, s}, mode, {1, d}, groups).squeeze(2);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
                        const IntArg& padding, const IntArg& output_padding, int64_t groups,
                        const IntArg& dilation) {
    const char* op = "conv_transpose2d";
    check_inputs(op, x, w, b);
    const auto s = pair_of(op, "stride", stride, 1, 1), p = pair_of(op, "padding", padding, 0, 0);
    const auto d = pair_of(op, "dilation", dilation, 1, 1);
    const auto op_ = pair_of(op, "output_padding", output_padding, 0, 0);
    if (op_.first < 0 || op_.second < 0 || (op_.first >= s.first && op_.first >= d.first) ||
        (op_.second >= s.second && op_.second >= d.second))
        throw value_error(std::string(op) + ": input " + shapes(x, w) +
                          ": output_padding must be >= 0 and smaller than stride or dilation");
    if (groups <= 0 || w.size(0) % groups != 0)
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": groups " +
                          std::to_string(groups) + " must divide the weight's " +
                          std::to_string(w.size(0)) + " input channels");
    if (x.size(1) != w.size(0))
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": input has " +
                          std::to_string(x.size(1)) + " channels, weight expects " +
                          std::to_string(w.size(0)));
    if (s.first <= 0 || s.second <= 0 || d.first <= 0 || d.second <= 0 || p.first < 0 ||
        p.second < 0)
        throw value_error(std::string(op) + ": input " + shapes(x, w) +
                          ": stride and dilation must be positive and padding >= 0");
    // the convolution this one transposes: its input has the size computed here, its output x
    const int64_t H =
        (x.size(2) - 1) * s.first - 2 * p.first + d.first * (w.size(2) - 1) + op_.first + 1;
    const int64_t W =
        (x.size(3) - 1) * s.second - 2 * p.second + d.second * (w.size(3) - 1) + op_.second + 1;
    if (H <= 0 || W <= 0)
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": the output would be " +
                          std::to_string(H) + "x" + std::to_string(W));
    ConvGeom g{};
    g.N = x.size(0), g.C = w.size(1) * groups, g.H = H, g.W = W;
    g.O = w.size(0), g.kh = w.size(2), g.kw = w.size(3), g.groups = groups;
    g.sh = s.first, g.sw = s.second, g.ph = p.first, g.pw = p.second;
    g.dh = d.first, g.dw = d.second, g.oh = x.size(2), g.ow = x.size(3);
    if (b.defined() && (b.dim() != 1 || b.size(0) != g.C))
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": bias " +
                          shape_str(b.sizes()) + ", expected [" + std::to_string(g.C) + "]");
    check_sizes(g, op);
    return add_bias(conv::apply(Kind::Input, x, w, g), b);
}

}  // namespace tg
