// batch_norm and group_norm on the fused CPU kernels (ops/norm_fused.hpp).
#include "ops/norm_fused.hpp"

#include <cmath>
#include <initializer_list>
#include <vector>

#include "backend/cpu/norm_kernels.hpp"
#include "ops/overwritable.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg::norm_fused {

namespace {

using backend::cpu::Planes;

Planes planes_of(const Tensor& x, int64_t groups) {
    Planes g;
    g.channels = x.size(1);
    g.planes = x.size(0) * g.channels;
    g.len = g.planes ? x.numel() / g.planes : 0;
    g.groups = groups;
    return g;
}

const void* host(const Tensor& t) {
    return static_cast<const char*>(t.impl()->storage->data) +
           size_t(t.impl()->offset) * element_size(t.dtype());
}
void* host_out(const Tensor& t) {
    return static_cast<char*>(t.impl()->storage->data) +
           size_t(t.impl()->offset) * element_size(t.dtype());
}

/// t's values (a small CPU tensor) as doubles, in order; empty when t is undefined.
std::vector<double> doubles(const Tensor& t) {
    if (!t.defined())
        return {};
    const Tensor c = runtime::converted(t.detach().contiguous(), kFloat64);
    const double* p = static_cast<const double*>(host(c));
    return std::vector<double>(p, p + c.numel());
}

Tensor from_doubles(const std::vector<double>& v, const Shape& shape, Dtype d) {
    Tensor t = runtime::empty(shape, kFloat64, Device(kCPU), "batch_norm");
    std::copy(v.begin(), v.end(), static_cast<double*>(host_out(t)));
    return runtime::converted(t, d);
}

/// The device's PlaneNormOp kernel (backend.hpp) over x's planes; operands contiguous, an
/// undefined tensor as an absent operand.
void run_device(backend::PlaneNormOp op, const Tensor& x, int64_t groups, bool batch_stats,
                std::initializer_list<Tensor> ts) {
    const Planes p = planes_of(x, groups);
    std::vector<Tensor> keep;  // the contiguous operands, alive until the kernels are queued
    std::vector<backend::View> v;
    for (const Tensor& t : ts) {
        keep.push_back(t.defined() ? t.contiguous() : t);
        v.push_back(t.defined() ? runtime::view(keep.back()) : backend::View{});
    }
    runtime::be(x).plane_norm(
        op, backend::PlaneNorm{p.planes, p.len, p.channels, groups, batch_stats}, v.data());
}

}  // namespace

bool takes(const Tensor& x) {
    return (x.dtype() == kFloat32 || x.dtype() == kFloat64) && x.numel() > 0 &&
           (x.device().is_cpu() || runtime::be(x).fuses_plane_norm());
}

void moments(const Tensor& x_in, int64_t groups, const Shape& stat, Tensor& mean, Tensor& var) {
    const Tensor x = x_in.contiguous();
    if (!x.device().is_cpu()) {
        mean = runtime::empty(stat, x.dtype(), x.device(), "batch_norm");
        var = runtime::empty(stat, x.dtype(), x.device(), "batch_norm");
        return run_device(backend::PlaneNormOp::Moments, x, groups, true, {mean, var, x});
    }
    const Planes g = planes_of(x, groups);
    const int64_t ng = g.group_count(), count = x.numel() / ng;
    std::vector<double> sums(size_t(g.planes)), m(size_t(ng), 0.0), v(size_t(ng), 0.0);
    backend::cpu::plane_sums(x.dtype(), host(x), g, nullptr, sums.data());
    for (int64_t p = 0; p < g.planes; ++p)  // in plane order: the same bits at any thread count
        m[size_t(g.group(p))] += sums[size_t(p)];
    for (double& e : m)
        e /= double(count);
    backend::cpu::plane_sums(x.dtype(), host(x), g, m.data(), sums.data());
    for (int64_t p = 0; p < g.planes; ++p)
        v[size_t(g.group(p))] += sums[size_t(p)];
    for (double& e : v)
        e /= double(count);
    mean = from_doubles(m, stat, x.dtype());
    var = from_doubles(v, stat, x.dtype());
}

Tensor affine(const Tensor& x_in, int64_t groups, const Tensor& mean, const Tensor& invstd,
              const Tensor& w, const Tensor& b, Tensor into) {
    const Tensor x = x_in.contiguous();
    if (!x.device().is_cpu()) {
        Tensor y = into.defined() ? into.view(x.sizes())
                                  : runtime::empty(x.sizes(), x.dtype(), x.device(), "batch_norm");
        run_device(backend::PlaneNormOp::Affine, x, groups, true,
                   {y, x, mean.detach(), invstd.detach(), w.defined() ? w.detach() : w,
                    b.defined() ? b.detach() : b});
        return y;
    }
    const Planes g = planes_of(x, groups);
    const std::vector<double> m = doubles(mean), is = doubles(invstd), wv = doubles(w),
                              bv = doubles(b);
    std::vector<double> scale(size_t(g.planes)), shift(size_t(g.planes));
    for (int64_t p = 0; p < g.planes; ++p) {
        const int64_t c = p % g.channels, k = g.group(p);
        scale[size_t(p)] = is[size_t(k)] * (wv.empty() ? 1.0 : wv[size_t(c)]);
        shift[size_t(p)] = (bv.empty() ? 0.0 : bv[size_t(c)]) - m[size_t(k)] * scale[size_t(p)];
    }
    Tensor y = into.defined() ? into.view(x.sizes())
                              : runtime::empty(x.sizes(), x.dtype(), x.device(), "batch_norm");
    backend::cpu::plane_affine(x.dtype(), host_out(y), host(x), g, scale.data(), shift.data());
    return y;
}

Grads backward(const Tensor& dy_in, const Tensor& x_in, int64_t groups, const Tensor& mean,
               const Tensor& invstd, const Tensor& w, bool batch_stats, bool need_x, bool need_w,
               bool need_b) {
    Grads out(3);
    const bool reuse = need_x && overwritable(dy_in, x_in);  // (before dy holds it twice)
    const Tensor x = x_in.contiguous(), dy = dy_in.contiguous();
    if (!x.device().is_cpu()) {
        if (need_x)
            out[0] = runtime::empty(x.sizes(), x.dtype(), x.device(), "batch_norm");
        for (size_t k = 1; k < 3; ++k)
            if (k == 1 ? need_w : need_b)
                out[k] = runtime::empty({x.size(1)}, x.dtype(), x.device(), "batch_norm");
        run_device(backend::PlaneNormOp::Backward, x, groups, batch_stats,
                   {out[0], out[1], out[2], dy, x, mean, invstd, w});
        return out;
    }
    const Planes g = planes_of(x, groups);
    const int64_t C = g.channels, ng = g.group_count(), count = x.numel() / ng;
    const std::vector<double> m = doubles(mean), is = doubles(invstd), wv = doubles(w);
    auto w_of = [&](int64_t p) { return wv.empty() ? 1.0 : wv[size_t(p % C)]; };
    const bool sums = need_w || need_b || batch_stats;
    std::vector<double> s1(size_t(g.planes)), s2(size_t(g.planes));
    if (sums)
        backend::cpu::plane_grad_sums(x.dtype(), host(dy), host(x), g, m.data(), s1.data(),
                                      s2.data());
    if (need_w || need_b) {
        std::vector<double> dw(size_t(C), 0.0), db(size_t(C), 0.0);
        for (int64_t p = 0; p < g.planes; ++p) {
            dw[size_t(p % C)] += s2[size_t(p)] * is[size_t(g.group(p))];
            db[size_t(p % C)] += s1[size_t(p)];
        }
        if (need_w)
            out[1] = from_doubles(dw, {C}, x.dtype());
        if (need_b)
            out[2] = from_doubles(db, {C}, x.dtype());
    }
    if (!need_x)
        return out;
    // dx = k·dy + a·(x - mean) + b: k = invstd·w, a = -invstd²·g2, b = -invstd·g1 with
    // g1 = Σ(dy·w)/M and g2 = Σ(dy·w·xhat)/M over the group
    std::vector<double> k(size_t(g.planes)), a, mm, bb;
    for (int64_t p = 0; p < g.planes; ++p)
        k[size_t(p)] = is[size_t(g.group(p))] * w_of(p);
    if (batch_stats) {
        std::vector<double> g1(size_t(ng), 0.0), g2(size_t(ng), 0.0);
        for (int64_t p = 0; p < g.planes; ++p) {
            const int64_t q = g.group(p);
            g1[size_t(q)] += s1[size_t(p)] * w_of(p);
            g2[size_t(q)] += s2[size_t(p)] * is[size_t(q)] * w_of(p);
        }
        a.resize(size_t(g.planes));
        mm.resize(size_t(g.planes));
        bb.resize(size_t(g.planes));
        for (int64_t p = 0; p < g.planes; ++p) {
            const size_t q = size_t(g.group(p));
            a[size_t(p)] = -is[q] * is[q] * g2[q] / double(count);
            mm[size_t(p)] = m[q];
            bb[size_t(p)] = -is[q] * g1[q] / double(count);
        }
    }
    // Note [Gradients written in place] in ops/overwritable.hpp: dx over dy when nobody else
    // holds dy (each element of dy is read before dx's is written, at the same index)
    Tensor dx = reuse ? dy : runtime::empty(x.sizes(), x.dtype(), x.device(), "batch_norm");
    backend::cpu::plane_grad_apply(x.dtype(), host_out(dx), host(dy), host(x), g, k.data(),
                                   batch_stats ? a.data() : nullptr, mm.data(), bb.data());
    if (reuse)
        runtime::mark_modified(dx);
    out[0] = dx;
    return out;
}

}  // namespace tg::norm_fused
