// scaled_dot_product_attention: one node that saves q, k, v and one number per query row.
//
// Note [Attention that saves O(T)]: with S = scale·q·kᵀ + mask, P = softmax(S) and y = P·v, the
// composed form keeps P ([T,T] per head) for backward. This node keeps only the row
// log-sum-exp lse = log Σ_j e^S (one value per query) and recomputes P = e^(S - lse) in
// backward, a block of query rows at a time (flash attention's idea, here with BLAS GEMMs):
//   dv   = Pᵀ·dy             dP = dy·vᵀ             dS = P ∘ (dP - rowsum(P ∘ dP))
//   dq   = scale·dS·k        dk = scale·dSᵀ·q       dmask = dS (a floating mask that requires grad)
// A block holds whole rows, so rowsum(P ∘ dP) needs neither y nor a second pass. The blocks of
// one (batch, head) run in order and write only that head's rows of dq, dk and dv, and the heads
// run side by side on the CPU threads (runtime::parallel_parts): no atomics, the same bits for
// any thread count. With is_causal a block of rows [i0, i1) reads keys [0, i1) only: the
// triangle above the diagonal is never computed.
//
// Dropout (of P, after the softmax) is LibTorch's: F::dropout of the [BH, L, S] probabilities,
// so the mask is bernoulli(1 - p) drawn over all BH·L·S of them in that order from the caller's
// generator (the masked and causally hidden entries included), then 1/(1 - p) in q's dtype. The
// forward draws it once as bits that every block reads; the node keeps the generator state it
// was drawn from (Note [Dropout masks] in ops/activation.cpp) and backward draws the bits again.
//
// With create_graph the same formulas are written with tapegrad's ops over whole [T,T] score
// matrices (P recomputed by softmax, so that it carries q's and k's history): double backward
// costs the composed form's memory.
#include "ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "core/distributions.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/random_fill.hpp"
#include "tapegrad/generator.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

using attention::check_and_size;
using attention::Geo;
using attention::kOp;
using attention::with_last;
using runtime::BinaryOp;
using runtime::UnaryOp;

/// Rows [r0, r0 + rows) of matrix `bh` of a contiguous [BH, n, cols] tensor, as [rows, cols].
Tensor rows_of(const Tensor& t, int64_t bh, int64_t n, int64_t r0, int64_t rows, int64_t cols) {
    return runtime::alias(t, {rows, cols}, {cols, 1}, t.storage_offset() + (bh * n + r0) * cols,
                          kOp);
}

/// The dropout mask's bits, drawn from e (Note [Dropout masks] in ops/activation.cpp).
std::shared_ptr<const std::vector<uint64_t>> drop_bits(const Geo& g, detail::Engine& e) {
    const int64_t n = g.BH * g.L * g.S;
    auto bits = std::make_shared<std::vector<uint64_t>>(size_t((n + 63) / 64));
    detail::bernoulli_bits(bits->data(), n, 1 - g.p, e);
    return bits;
}

/// The dropout mask (0 or 1/(1-p), as LibTorch's in q's dtype) of rows [i0, i0 + nb) and
/// columns [0, c) of matrix bh: [nb, c].
Tensor drop_mask(const Geo& g, int64_t bh, int64_t i0, int64_t nb, int64_t c, const Tensor& like) {
    Tensor m = runtime::empty({nb, c}, like.dtype(), like.device(), kOp);
    const double one = like.dtype() == kFloat32 ? double(1.0f / float(1 - g.p)) : 1 / (1 - g.p);
    const std::vector<uint64_t>& bits = *g.drop_bits;
    runtime::fill_host(m, [&](void* dst) {
        dispatch(like.dtype(), [&](auto tag) {
            using T = decltype(tag);
            T* o = static_cast<T*>(dst);
            for (int64_t r = 0; r < nb; ++r) {
                const int64_t first = (bh * g.L + i0 + r) * g.S;
                for (int64_t j = 0; j < c; ++j) {
                    const int64_t b = first + j;
                    o[r * c + j] = (bits[size_t(b / 64)] >> (b % 64)) & 1 ? T(one) : T(0);
                }
            }
        });
    });
    return m;
}

/// What the blocks read besides q, k and v: the additive mask (expanded to [lead..., L, S], with
/// each matrix's offset) and the causal triangle of one block (0 on and below the diagonal).
struct Bias {
    Tensor add;                // floating, [lead..., L, S] (strides may be 0), or undefined
    std::vector<int64_t> off;  // storage offset of matrix bh in `add`
    Tensor tri;                // [block, block], or undefined
};

Bias make_bias(const Geo& g, const Tensor& mask, const Tensor& like) {
    Bias b;
    NoGradGuard no_grad;
    if (mask.defined()) {
        Tensor m = mask.detach();
        if (!is_floating(m.dtype()))  // true (nonzero) = take part, as PyTorch's bool masks
            m = where(m.dtype() == kBool ? m : ne(m, 0.0), zeros({}, like.options()),
                      full({}, -std::numeric_limits<double>::infinity(), like.options()));
        Shape full_shape = g.lead;
        full_shape.push_back(g.L);
        full_shape.push_back(g.S);
        b.add = m.expand(full_shape);
        b.off.resize(size_t(g.BH));
        for (int64_t bh = 0; bh < g.BH; ++bh) {
            int64_t off = b.add.storage_offset(), rest = bh;
            for (int64_t d = int64_t(g.lead.size()) - 1; d >= 0; --d) {
                off += (rest % g.lead[size_t(d)]) * b.add.stride(d);
                rest /= g.lead[size_t(d)];
            }
            b.off[size_t(bh)] = off;
        }
    }
    if (g.causal) {
        const Tensor i = arange(g.block, like.options());
        b.tri = where(gt(i.reshape({1, g.block}), i.reshape({g.block, 1})),
                      full({}, -std::numeric_limits<double>::infinity(), like.options()),
                      zeros({}, like.options()));
    }
    return b;
}

/// S = scale·q·kᵀ + mask for rows [i0, i0 + nb) of matrix bh: [nb, c] (c = g.cols).
Tensor scores(const Geo& g, const Bias& b, const Tensor& q, const Tensor& k, int64_t bh, int64_t i0,
              int64_t nb) {
    const int64_t c = g.cols(i0, nb);
    Tensor s = runtime::empty({nb, c}, q.dtype(), q.device(), kOp);
    runtime::gemm(kOp, false, true, nb, c, g.E, g.scale, runtime::view(q, (bh * g.L + i0) * g.E),
                  g.E, runtime::view(k, bh * g.S * g.E), g.E, 0, s);
    if (b.add.defined()) {
        const int64_t rs = b.add.stride(-2), cs = b.add.stride(-1);
        runtime::binary_into(
            BinaryOp::add, s, s,
            runtime::alias(b.add, {nb, c}, {rs, cs}, b.off[size_t(bh)] + i0 * rs, kOp), kOp, 0, 0);
    }
    if (g.causal && i0 < c) {  // keys [i0, c): key i0 + j is masked for rows r < j
        const Tensor sd = runtime::alias(s, {nb, c - i0}, {c, 1}, s.storage_offset() + i0, kOp);
        runtime::binary_into(
            BinaryOp::add, sd, sd,
            runtime::alias(b.tri, {nb, c - i0}, {g.block, 1}, b.tri.storage_offset(), kOp), kOp, 0,
            0);
    }
    return s;
}

/// Forward of one matrix: y's and lse's rows of matrix bh, a block of queries at a time.
void forward_matrix(const Geo& g, const Bias& b, const Tensor& q, const Tensor& k, const Tensor& v,
                    const Tensor& y, const Tensor& lse, int64_t bh) {
    for (int64_t blk = 0; blk < g.blocks(); ++blk) {
        const int64_t i0 = blk * g.block, nb = std::min(g.block, g.L - i0), c = g.cols(i0, nb);
        Tensor s = scores(g, b, q, k, bh, i0, nb);
        const Tensor m = amax(s, {1}, true);  // [nb, 1]
        runtime::binary_into(BinaryOp::exp_sub, s, s, m, kOp, 0, 0);
        Tensor z = sum(s, {1}, true);
        runtime::binary_into(BinaryOp::div, s, s, z, kOp, 0, 0);  // P
        runtime::unary_into(UnaryOp::log, z, z, 0, 0);
        runtime::binary_into(BinaryOp::add, rows_of(lse, bh, g.L, i0, nb, 1), m, z, kOp, 0, 0);
        if (g.p > 0)
            runtime::binary_into(BinaryOp::mul, s, s, drop_mask(g, bh, i0, nb, c, s), kOp, 0, 0);
        runtime::gemm(kOp, false, false, nb, g.Ev, c, 1, runtime::view(s), c,
                      runtime::view(v, bh * g.S * g.Ev), g.Ev, 0,
                      rows_of(y, bh, g.L, i0, nb, g.Ev));
    }
}

/// The gradients a backward computes (undefined when not needed).
struct AttnGrads {
    Tensor dq, dk, dv, dmask;  // contiguous [BH, L, E], [BH, S, E], [BH, S, Ev], [BH, L, S]
};

/// Backward of one matrix (Note [Attention that saves O(T)]).
void backward_matrix(const Geo& g, const Bias& b, const Tensor& q, const Tensor& k, const Tensor& v,
                     const Tensor& lse, const Tensor& dy, const AttnGrads& o, int64_t bh) {
    const bool need_ds = o.dq.defined() || o.dk.defined() || o.dmask.defined();
    for (int64_t blk = 0; blk < g.blocks(); ++blk) {
        const int64_t i0 = blk * g.block, nb = std::min(g.block, g.L - i0), c = g.cols(i0, nb);
        if (c == 0)
            continue;
        Tensor s = scores(g, b, q, k, bh, i0, nb);
        runtime::binary_into(BinaryOp::exp_sub, s, s, rows_of(lse, bh, g.L, i0, nb, 1), kOp, 0,
                             0);  // P
        const Tensor mask = g.p > 0 ? drop_mask(g, bh, i0, nb, c, s) : Tensor();
        const backend::View dyb = runtime::view(dy, (bh * g.L + i0) * g.Ev);
        if (o.dv.defined()) {  // dv[:c] += (P∘mask)ᵀ·dy
            const Tensor pd = mask.defined() ? runtime::binary(BinaryOp::mul, s, mask, kOp) : s;
            runtime::gemm(kOp, true, false, c, g.Ev, nb, 1, runtime::view(pd), c, dyb, g.Ev, 1,
                          rows_of(o.dv, bh, g.S, 0, c, g.Ev));
        }
        if (!need_ds)
            continue;
        Tensor dp = runtime::empty({nb, c}, s.dtype(), s.device(), kOp);  // dy·vᵀ (∘ mask)
        runtime::gemm(kOp, false, true, nb, c, g.Ev, 1, dyb, g.Ev,
                      runtime::view(v, bh * g.S * g.Ev), g.Ev, 0, dp);
        if (mask.defined())
            runtime::binary_into(BinaryOp::mul, dp, dp, mask, kOp, 0, 0);
        const Tensor rowsum = sum(runtime::binary(BinaryOp::mul, s, dp, kOp), {1}, true);
        runtime::binary_into(BinaryOp::sub, dp, dp, rowsum, kOp, 0, 0);
        runtime::binary_into(BinaryOp::mul, dp, dp, s, kOp, 0, 0);  // dS
        if (o.dq.defined())
            runtime::gemm(kOp, false, false, nb, g.E, c, g.scale, runtime::view(dp), c,
                          runtime::view(k, bh * g.S * g.E), g.E, 0,
                          rows_of(o.dq, bh, g.L, i0, nb, g.E));
        if (o.dk.defined())
            runtime::gemm(kOp, true, false, c, g.E, nb, g.scale, runtime::view(dp), c,
                          runtime::view(q, (bh * g.L + i0) * g.E), g.E, 1,
                          rows_of(o.dk, bh, g.S, 0, c, g.E));
        if (o.dmask.defined())
            runtime::copy_into(
                runtime::alias(o.dmask, {nb, c}, {g.S, 1},
                               o.dmask.storage_offset() + (bh * g.L + i0) * g.S, kOp),
                dp);
    }
}

/// The tensor as [BH, n, m], contiguous.
Tensor as3(const Tensor& t, const Geo& g) {
    return t.detach().contiguous().reshape({g.BH, t.size(-2), t.size(-1)});
}

/// The whole dropout mask [BH, L, S] (create_graph's backward).
Tensor full_drop_mask(const Geo& g, const Tensor& like) {
    Tensor m = zeros({g.BH, g.L, g.S}, like.options());
    for (int64_t bh = 0; bh < g.BH; ++bh)
        for (int64_t blk = 0; blk < g.blocks(); ++blk) {
            const int64_t i0 = blk * g.block, nb = std::min(g.block, g.L - i0), c = g.cols(i0, nb);
            runtime::copy_into(runtime::alias(m, {nb, c}, {g.S, 1},
                                              m.storage_offset() + (bh * g.L + i0) * g.S, kOp),
                               drop_mask(g, bh, i0, nb, c, like));
        }
    return m;
}

/// The gradients written with tapegrad's ops, recorded (create_graph): P from softmax over the
/// whole score matrices, so that second derivatives reach q, k and a floating mask.
Grads backward_recorded(const Geo& g, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& mask, const Tensor& dy, const Node& n) {
    const Tensor q3 = q.reshape({g.BH, g.L, g.E}), k3 = k.reshape({g.BH, g.S, g.E}),
                 v3 = v.reshape({g.BH, g.S, g.Ev}), dy3 = dy.reshape({g.BH, g.L, g.Ev});
    Tensor s = matmul(q3, k3.transpose(1, 2)) * g.scale;
    const double inf = std::numeric_limits<double>::infinity();
    if (mask.defined()) {
        const Tensor m = is_floating(mask.dtype())
                             ? mask
                             : where(mask.dtype() == kBool ? mask : ne(mask, 0.0),
                                     zeros({}, q.options()), full({}, -inf, q.options()));
        s = s + m.expand(with_last(g, g.L, g.S)).reshape({g.BH, g.L, g.S});
    }
    if (g.causal) {
        const Tensor i = arange(g.L, q.options()).reshape({g.L, 1}),
                     j = arange(g.S, q.options()).reshape({1, g.S});
        s = s + where(gt(j, i), full({}, -inf, q.options()), zeros({}, q.options()));
    }
    const Tensor p = softmax(s, -1);
    const Tensor drop = g.p > 0 ? full_drop_mask(g, q) : Tensor();
    Grads out(n.inputs_.size());
    if (needs(n, 2))
        out[2] = matmul((drop.defined() ? p * drop : p).transpose(1, 2), dy3).reshape(v.sizes());
    if (!(needs(n, 0) || needs(n, 1) || (n.inputs_.size() > 3 && needs(n, 3))))
        return out;
    Tensor dp = matmul(dy3, v3.transpose(1, 2));
    if (drop.defined())
        dp = dp * drop;
    const Tensor ds = p * (dp - sum(p * dp, {2}, true));
    if (needs(n, 0))
        out[0] = (matmul(ds, k3) * g.scale).reshape(q.sizes());
    if (needs(n, 1))
        out[1] = (matmul(ds.transpose(1, 2), q3) * g.scale).reshape(k.sizes());
    if (n.inputs_.size() > 3 && needs(n, 3))
        out[3] = sum_to(ds.reshape(with_last(g, g.L, g.S)), mask.sizes());
    return out;
}

/// y [lead..., L, Ev] and the row log-sum-exps lse [BH, L], unrecorded (g with its dropout bits
/// when p > 0): the forward, and a MemoryBudget's recomputation of y.
Tensor forward(const Geo& g, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
               Tensor& lse) {
    const Tensor q3 = as3(q, g), k3 = as3(k, g), v3 = as3(v, g);
    Tensor y = runtime::empty({g.BH, g.L, g.Ev}, q.dtype(), q.device(), kOp);
    lse = runtime::empty({g.BH, g.L}, q.dtype(), q.device(), kOp);
    if (g.S == 0) {  // no keys: every row is an empty sum
        runtime::fill(y, 0);
        runtime::fill(lse, -std::numeric_limits<double>::infinity());
    } else if (g.L > 0 && g.BH > 0) {
        const Bias b = make_bias(g, mask, q);
        runtime::parallel_parts(q3, g.BH,
                                [&](int64_t bh) { forward_matrix(g, b, q3, k3, v3, y, lse, bh); });
    }
    return y.reshape(with_last(g, g.L, g.Ev));
}

/// g with its dropout mask's bits drawn again from the state the forward drew them from.
Geo redrawn(const Geo& kept) {
    Geo g = kept;
    if (g.p > 0) {
        detail::Engine e = *g.drop_from;
        g.drop_bits = drop_bits(g, e);
    }
    return g;
}

Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double p,
            bool causal, std::optional<double> scale, const Generator* gen) {
    Geo g = check_and_size(q, k, v, mask, p, causal, scale);
    if (g.p > 0) {  // the whole mask, drawn now from the caller's generator
        detail::Draw draw(gen);
        g.drop_from = std::make_shared<const detail::Engine>(draw.engine());
        g.drop_bits = drop_bits(g, draw.engine());
    }
    Tensor lse;
    Tensor y = forward(g, q, k, v, mask, lse);
    const bool mask_grad = mask.defined() && is_floating(mask.dtype());
    const Tensor none;
    if (!should_record({&q, &k, &v, mask_grad ? &mask : &none}))
        return y;
    Geo kept = g;
    kept.drop_bits.reset();  // backward draws the mask again (Note [Dropout masks])
    auto backward = [sq = save(q), sk = save(k), sv = save(v), sm = save(mask),
                     sl = save_intermediate(lse), kept](const Tensor& dy, const Node& n) {
        const Geo geo = redrawn(kept);
        const Tensor qq = sq.get(), kk = sk.get(), vv = sv.get(), mm = sm.get();
        if (GradMode::is_enabled())
            return backward_recorded(geo, qq, kk, vv, mm, dy, n);
        AttnGrads o;
        if (needs(n, 0))
            o.dq = runtime::empty({geo.BH, geo.L, geo.E}, qq.dtype(), qq.device(), kOp);
        if (needs(n, 1))
            o.dk = zeros({geo.BH, geo.S, geo.E}, qq.options());
        if (needs(n, 2))
            o.dv = zeros({geo.BH, geo.S, geo.Ev}, qq.options());
        if (n.inputs_.size() > 3 && needs(n, 3))
            o.dmask = zeros({geo.BH, geo.L, geo.S}, qq.options());
        if (o.dq.defined() && geo.S == 0)
            runtime::fill(o.dq, 0);
        if (geo.S > 0 && geo.L > 0 && geo.BH > 0) {
            const Tensor q3b = as3(qq, geo), k3b = as3(kk, geo), v3b = as3(vv, geo);
            const Tensor dy3 = dy.contiguous().reshape({geo.BH, geo.L, geo.Ev});
            const Tensor l = sl.get();
            const Bias b = make_bias(geo, mm, qq);
            runtime::parallel_parts(q3b, geo.BH, [&](int64_t bh) {
                backward_matrix(geo, b, q3b, k3b, v3b, l, dy3, o, bh);
            });
        }
        Grads out(n.inputs_.size());
        if (o.dq.defined())
            out[0] = o.dq.reshape(qq.sizes());
        if (o.dk.defined())
            out[1] = o.dk.reshape(kk.sizes());
        if (o.dv.defined())
            out[2] = o.dv.reshape(vv.sizes());
        if (o.dmask.defined())
            out[3] = sum_to(o.dmask.reshape(with_last(geo, geo.L, geo.S)), mm.sizes());
        return out;
    };
    if (mask_grad)
        record(kOp, {&q, &k, &v, &mask}, y, std::move(backward));
    else
        record(kOp, {&q, &k, &v}, y, std::move(backward));
    if (recipes_wanted())  // under a MemoryBudget: y again, with the same dropout mask
        recipe(y, [kept, m = mask_grad ? Tensor() : mask](const std::vector<Tensor>& xs) {
            Tensor lse_again;
            return forward(redrawn(kept), xs[0], xs[1], xs[2], xs.size() > 3 ? xs[3] : m,
                           lse_again);
        });
    return y;
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
    Tensor y = sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, nullptr);
    if (Trace* tr = trace_slot())
        tr->add("scaled_dot_product_attention", {&query, &key, &value, &attn_mask}, y,
                {{"dropout_p", dropout_p},
                 {"is_causal", is_causal},
                 {"scale", scale.value_or(0.0)},
                 {"has_scale", scale.has_value()}});
    return y;
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, const Generator& generator) {
    return sdpa(query, key, value, attn_mask, dropout_p, is_causal, scale, &generator);
}

}  // namespace tg
