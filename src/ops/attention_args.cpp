// The arguments of scaled_dot_product_attention: their checks and the sizes of the call
// (ops/attention.cpp holds the op).
#include <cmath>
#include <string>

#include "ops/attention.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/error.hpp"

namespace tg::attention {

namespace {

std::string shapes(const Tensor& q, const Tensor& k, const Tensor& v) {
    return "query " + shape_str(q.sizes()) + ", key " + shape_str(k.sizes()) + ", value " +
           shape_str(v.sizes());
}

}  // namespace

Shape with_last(const Geo& g, int64_t a, int64_t b) {
    Shape s = g.lead;
    s.push_back(a);
    s.push_back(b);
    return s;
}

Geo check_and_size(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double p,
                   bool causal, std::optional<double> scale) {
    if (!q.defined() || !k.defined() || !v.defined())
        throw value_error(std::string(kOp) + ": undefined query, key or value");
    runtime::check_float_kernels(kOp, q);
    runtime::check_same(kOp, q, k);
    runtime::check_same(kOp, q, v);
    const std::string what = shapes(q, k, v);
    if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim())
        throw shape_error(std::string(kOp) + ": " + what +
                          ": expected tensors [..., T, E] with the same number of dims (>= 2)");
    Geo g;
    g.lead.assign(q.sizes().begin(), q.sizes().end() - 2);
    for (size_t d = 0; d < g.lead.size(); ++d)
        if (k.size(int64_t(d)) != g.lead[d] || v.size(int64_t(d)) != g.lead[d])
            throw shape_error(std::string(kOp) + ": " + what + ": batch dims differ");
    g.L = q.size(-2);
    g.S = k.size(-2);
    g.E = q.size(-1);
    g.Ev = v.size(-1);
    if (k.size(-1) != g.E)
        throw shape_error(std::string(kOp) + ": " + what + ": query and key embed dims " +
                          std::to_string(g.E) + " != " + std::to_string(k.size(-1)));
    if (v.size(-2) != g.S)
        throw shape_error(std::string(kOp) + ": " + what + ": key and value lengths " +
                          std::to_string(g.S) + " != " + std::to_string(v.size(-2)));
    g.BH = 1;
    for (int64_t d : g.lead)
        g.BH *= d;
    if (!(p >= 0 && p < 1))
        throw value_error(std::string(kOp) + ": dropout_p " + runtime::scalar_str(p) +
                          " is not in [0, 1)");
    g.p = p;
    if (scale && !std::isfinite(*scale))
        throw value_error(std::string(kOp) + ": scale " + runtime::scalar_str(*scale) +
                          " is not finite");
    g.scale = scale ? *scale : (g.E > 0 ? 1 / std::sqrt(double(g.E)) : 1.0);
    g.causal = causal;
    if (mask.defined()) {
        if (mask.device() != q.device())
            throw device_error(std::string(kOp) + ": attn_mask on " + mask.device().str() +
                               ", query on " + q.device().str());
        if (is_floating(mask.dtype()) && mask.dtype() != q.dtype())
            throw dtype_error(std::string(kOp) + ": attn_mask is " + dtype_name(mask.dtype()) +
                              ", query " + dtype_name(q.dtype()) +
                              " (a floating mask must match; a bool mask selects)");
        const Shape target = with_last(g, g.L, g.S);
        bool ok = mask.dim() <= int64_t(target.size());
        for (int64_t d = 1; ok && d <= mask.dim(); ++d) {
            const int64_t ms = mask.size(-d), ts = target[target.size() - size_t(d)];
            ok = ms == ts || ms == 1;
        }
        if (!ok)
            throw shape_error(std::string(kOp) + ": attn_mask " + shape_str(mask.sizes()) +
                              " does not broadcast to " + shape_str(target) + " (" + what + ")");
    }
    // blocks of rows whose scores stay in cache (about 64 KiB of floats); causal blocks are
    // smaller, as the triangle they skip grows with the number of blocks
    const int64_t rows = std::max<int64_t>(16, 16384 / std::max<int64_t>(g.S, 1));
    g.block = std::max<int64_t>(1, std::min({g.L, rows, causal ? int64_t(64) : g.L}));
    return g;
}

}  // namespace tg::attention
