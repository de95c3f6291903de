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

std::vector<int64_t> conv::values_of(const char* op, const char* what, const IntArg& v, int nd,
                                     int64_t fallback) {
    const std::vector<int64_t>& s = v.values();
    if (s.empty())
        return std::vector<int64_t>(size_t(nd), fallback);
    if (s.size() == 1)
        return std::vector<int64_t>(size_t(nd), s[0]);
    if (s.size() == size_t(nd))
        return s;
    throw shape_error(std::string(op) + ": " + what + " has " + std::to_string(s.size()) +
                      " values: expected 1 or " + std::to_string(nd));
}

namespace {

std::string shapes(const Tensor& x, const Tensor& w) {
    return shape_str(x.sizes()) + ", weight " + shape_str(w.sizes());
}

/// "AxBxC" of three (or two) sizes.
std::string dims_str(const std::vector<int64_t>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "x" : "") + std::to_string(v[i]);
    return s;
}

/// Checks what every convolution needs of x, w and b: defined, one device and floating dtype,
/// x and w (nd+2)-D.
void check_inputs(const char* op, const Tensor& x, const Tensor& w, const Tensor& b, int nd) {
    if (!x.defined() || !w.defined())
        throw value_error(std::string(op) + ": undefined input or weight");
    runtime::check_same(op, x, w);
    runtime::check_float_kernels(op, x);
    if (b.defined())
        runtime::check_same(op, x, b);
    if (x.dim() != nd + 2 || w.dim() != nd + 2)
        throw shape_error(std::string(op) + ": input " + shapes(x, w) + ": expected a " +
                          std::to_string(nd + 2) + "-D input " +
                          (nd == 3 ? "[N,C,D,H,W]" : "[N,C,H,W]") + " and a " +
                          std::to_string(nd + 2) + "-D weight");
}

/// Every size product a convolution forms stays in range (Note [Checked sizes]).
void check_sizes(const ConvGeom& g, const char* op) {
    const int64_t s[] = {g.N, g.C, g.taps(), g.positions(), g.volume()};
    (void)checked_prod(s, 4, op);
    (void)checked_prod(s + 1, 4, op);
    (void)checked_prod(s, 2, op);
    const int64_t y[] = {g.N, g.O, g.positions()};
    (void)checked_prod(y, 3, op);
}

/// Sets axis a (0 depth, 1 rows, 2 columns) of g: input n, taps k, output o, stride s,
/// front padding p, dilation d.
void set_axis(ConvGeom& g, int a, int64_t n, int64_t k, int64_t o, int64_t s, int64_t p,
              int64_t d) {
    int64_t* f[3][6] = {{&g.T, &g.kt, &g.ot, &g.st, &g.pt, &g.dt},
                        {&g.H, &g.kh, &g.oh, &g.sh, &g.ph, &g.dh},
                        {&g.W, &g.kw, &g.ow, &g.sw, &g.pw, &g.dw}};
    *f[a][0] = n, *f[a][1] = k, *f[a][2] = o, *f[a][3] = s, *f[a][4] = p, *f[a][5] = d;
}

/// The geometry of an nd-D convolution of x with w, front paddings p and the output sizes from
/// the total paddings `total`.
ConvGeom conv_geom(const char* op, const Tensor& x, const Tensor& w, const Tensor& b, int nd,
                   const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                   const std::vector<int64_t>& total, const std::vector<int64_t>& d,
                   int64_t groups) {
    check_inputs(op, x, w, b, nd);
    ConvGeom g{};
    g.nd = nd;
    g.N = x.size(0), g.C = x.size(1), g.O = w.size(0), g.groups = groups;
    const std::string where = std::string(op) + ": input " + shapes(x, w);
    if (groups <= 0 || g.C % groups != 0 || g.O % groups != 0)
        throw shape_error(where + ": groups " + std::to_string(groups) + " must divide the " +
                          std::to_string(g.C) + " input and " + std::to_string(g.O) +
                          " output channels");
    if (w.size(1) != g.C / groups)
        throw shape_error(where + ": expected weight [O, " + std::to_string(g.C / groups) +
                          ", k...] for " + std::to_string(g.C) + " input channels in " +
                          std::to_string(groups) + " groups");
    std::vector<int64_t> extent, padded;
    for (int i = 0; i < nd; ++i) {
        const int64_t k = w.size(2 + i), n = x.size(2 + i);
        if (s[size_t(i)] <= 0 || d[size_t(i)] <= 0 || p[size_t(i)] < 0 || total[size_t(i)] < 0)
            throw value_error(where + ": stride and dilation must be positive and padding >= 0");
        if (k <= 0)
            throw shape_error(where + ": empty kernel");
        extent.push_back(d[size_t(i)] * (k - 1) + 1);
        padded.push_back(n + total[size_t(i)]);
    }
    for (int i = 0; i < nd; ++i)
        if (padded[size_t(i)] < extent[size_t(i)])
            throw shape_error(where + ": the kernel (" + dims_str(extent) +
                              " dilated) is larger than the padded input (" + dims_str(padded) +
                              ")");
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        const int64_t k = w.size(2 + i), n = x.size(2 + i);
        set_axis(g, i + 3 - nd, n, k, conv::out_size(n, k, s[u], total[u], d[u]), s[u], p[u], d[u]);
    }
    if (b.defined() && (b.dim() != 1 || b.size(0) != g.O))
        throw shape_error(where + ": bias " + shape_str(b.sizes()) + ", expected [" +
                          std::to_string(g.O) + "]");
    check_sizes(g, op);
    return g;
}

/// An nd-D convolution with paddings by value.
Tensor conv_nd(const char* op, int nd, const Tensor& x, const Tensor& w, const Tensor& b,
               const IntArg& stride, const IntArg& padding, const IntArg& dilation,
               int64_t groups) {
    const auto p = conv::values_of(op, "padding", padding, nd, 0);
    std::vector<int64_t> total;
    for (int64_t v : p)
        total.push_back(2 * v);
    const ConvGeom g = conv_geom(op, x, w, b, nd, conv::values_of(op, "stride", stride, nd, 1), p,
                                 total, conv::values_of(op, "dilation", dilation, nd, 1), groups);
    return conv::apply(Kind::Forward, x, w, g, b);
}

/// An nd-D convolution with padding "same" or "valid".
Tensor conv_nd(const char* op, int nd, const Tensor& x, const Tensor& w, const Tensor& b,
               const IntArg& stride, const PaddingMode& mode, const IntArg& dilation,
               int64_t groups) {
    const std::string& padding = mode.name();
    if (padding == "valid")
        return conv_nd(op, nd, x, w, b, stride, IntArg(0), dilation, groups);
    if (padding != "same")
        throw value_error(std::string(op) + ": padding \"" + padding +
                          "\": expected \"same\" or \"valid\"");
    const auto s = conv::values_of(op, "stride", stride, nd, 1);
    const auto d = conv::values_of(op, "dilation", dilation, nd, 1);
    for (int64_t v : s)
        if (v != 1)
            throw value_error(std::string(op) + ": padding \"same\" needs stride 1");
    check_inputs(op, x, w, b, nd);
    // total padding d·(k-1), the odd one more at the end (as PyTorch)
    std::vector<int64_t> total, front;
    for (int i = 0; i < nd; ++i) {
        total.push_back(d[size_t(i)] * (w.size(2 + i) - 1));
        front.push_back(total.back() / 2);
    }
    const ConvGeom g = conv_geom(op, x, w, b, nd, s, front, total, d, groups);
    return conv::apply(Kind::Forward, x, w, g, b);
}

Tensor add_bias(Tensor y, const Tensor& b, int nd) {
    if (!b.defined())
        return y;
    return nd == 3 ? y + b.reshape({1, b.size(0), 1, 1, 1}) : y + b.reshape({1, b.size(0), 1, 1});
}

/// An nd-D transposed convolution: Input of the convolution whose output x is.
Tensor conv_transpose_nd(const char* op, int nd, const Tensor& x, const Tensor& w, const Tensor& b,
                         const IntArg& stride, const IntArg& padding, const IntArg& output_padding,
                         int64_t groups, const IntArg& dilation) {
    check_inputs(op, x, w, b, nd);
    const auto s = conv::values_of(op, "stride", stride, nd, 1);
    const auto p = conv::values_of(op, "padding", padding, nd, 0);
    const auto d = conv::values_of(op, "dilation", dilation, nd, 1);
    const auto op_ = conv::values_of(op, "output_padding", output_padding, nd, 0);
    const std::string where = std::string(op) + ": input " + shapes(x, w);
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        if (op_[u] < 0 || (op_[u] >= s[u] && op_[u] >= d[u]))
            throw value_error(where +
                              ": output_padding must be >= 0 and smaller than stride or dilation");
    }
    if (groups <= 0 || w.size(0) % groups != 0)
        throw shape_error(where + ": groups " + std::to_string(groups) +
                          " must divide the weight's " + std::to_string(w.size(0)) +
                          " input channels");
    if (x.size(1) != w.size(0))
        throw shape_error(where + ": input has " + std::to_string(x.size(1)) +
                          " channels, weight expects " + std::to_string(w.size(0)));
    for (int i = 0; i < nd; ++i)
        if (s[size_t(i)] <= 0 || d[size_t(i)] <= 0 || p[size_t(i)] < 0)
            throw value_error(where + ": stride and dilation must be positive and padding >= 0");
    // the convolution this one transposes: its input has the size computed here, its output x
    std::vector<int64_t> out;
    bool empty = false;
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        out.push_back((x.size(2 + i) - 1) * s[u] - 2 * p[u] + d[u] * (w.size(2 + i) - 1) + op_[u] +
                      1);
        empty = empty || out.back() <= 0;
    }
    if (empty)
        throw shape_error(where + ": the output would be " + dims_str(out));
    ConvGeom g{};
    g.nd = nd;
    g.N = x.size(0), g.C = w.size(1) * groups, g.O = w.size(0), g.groups = groups;
    for (int i = 0; i < nd; ++i) {
        const size_t u = size_t(i);
        set_axis(g, i + 3 - nd, out[u], w.size(2 + i), x.size(2 + i), s[u], p[u], d[u]);
    }
    if (b.defined() && (b.dim() != 1 || b.size(0) != g.C))
        throw shape_error(where + ": bias " + shape_str(b.sizes()) + ", expected [" +
                          std::to_string(g.C) + "]");
    check_sizes(g, op);
    return add_bias(conv::apply(Kind::Input, x, w, g), b, nd);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const IntArg& padding, const IntArg& dilation, int64_t groups) {
    return conv_nd("conv2d", 2, x, w, b, stride, padding, dilation, groups);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& mode, const IntArg& dilation, int64_t groups) {
    return conv_nd("conv2d", 2, x, w, b, stride, mode, dilation, groups);
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation, int64_t groups) {
    return conv2d(x, w, b, stride, IntArg(padding), dilation, groups);
}

Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const IntArg& padding, const IntArg& dilation, int64_t groups) {
    return conv_nd("conv3d", 3, x, w, b, stride, padding, dilation, groups);
}

Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              const PaddingMode& mode, const IntArg& dilation, int64_t groups) {
    return conv_nd("conv3d", 3, x, w, b, stride, mode, dilation, groups);
}

Tensor conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
              int64_t padding, const IntArg& dilation, int64_t groups) {
    return conv3d(x, w, b, stride, IntArg(padding), dilation, groups);
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
    return conv_transpose_nd("conv_transpose2d", 2, x, w, b, stride, padding, output_padding,
                             groups, dilation);
}

Tensor conv_transpose3d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
                        const IntArg& padding, const IntArg& output_padding, int64_t groups,
                        const IntArg& dilation) {
    return conv_transpose_nd("conv_transpose3d", 3, x, w, b, stride, padding, output_padding,
                             groups, dilation);
}

Tensor conv_transpose1d(const Tensor& x, const Tensor& w, const Tensor& b, const IntArg& stride,
                        const IntArg& padding, const IntArg& output_padding, int64_t groups,
                        const IntArg& dilation) {
    const char* op = "conv_transpose1d";
    if (!x.defined() || !w.defined() || x.dim() != 3 || w.dim() != 3)
        throw shape_error(std::string(op) + ": input " +
                          (x.defined() ? shape_str(x.sizes()) : "undefined") + ", weight " +
                          (w.defined() ? shape_str(w.sizes()) : "undefined") +
                          ": expected a 3-D input [N,C,L] and a 3-D weight [C,O/groups,k]");
    auto one = [op](const IntArg& a, const char* what, int64_t h) {
        const auto v = conv::values_of(op, what, a, 1, h == 1 ? 1 : 0);
        return IntArg({h, v[0]});
    };
    return conv_transpose_nd(op, 2, x.unsqueeze(2), w.unsqueeze(2), b, one(stride, "stride", 1),
                             one(padding, "padding", 0), one(output_padding, "output_padding", 0),
                             groups, one(dilation, "dilation", 1))
        .squeeze(2);
}

}  // namespace tg
