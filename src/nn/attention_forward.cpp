// Multi-head attention's forward (nn::MultiheadAttention and F::multi_head_attention_forward):
// the projections, LibTorch's masks, scaled_dot_product_attention (one node saving O(T) per
// head) and the attention weights, computed apart when asked for.
#include "nn/attention_forward.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/distributions.hpp"
#include "core/random.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/random_fill.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn::detail {

namespace {

/// A mask as scaled_dot_product_attention reads it, from MultiheadAttention's convention (bool:
/// true = may not attend; floating = added), viewed as `shape`.
Tensor sdpa_mask(const Tensor& m, const Shape& shape) {
    if (!m.defined())
        return m;
    const Tensor r = m.reshape(shape);
    return is_floating(m.dtype()) ? r : logical_not(r);
}

/// An sdpa mask as a floating one (0 where bool masks allow, -inf where they do not).
Tensor additive(const Tensor& m, const Tensor& like) {
    if (!m.defined() || is_floating(m.dtype()))
        return m;
    return where(m, zeros({}, like.options()),
                 full({}, -std::numeric_limits<double>::infinity(), like.options()));
}

/// Two sdpa masks as one: both allow (bool ones), else the sum of their additive forms.
Tensor combine(const Tensor& a, const Tensor& b, const Tensor& like) {
    if (!a.defined())
        return b;
    if (!b.defined())
        return a;
    if (!is_floating(a.dtype()) && !is_floating(b.dtype()))
        return logical_and(a, b);
    return additive(a, like) + additive(b, like);
}

}  // namespace

std::tuple<Tensor, Tensor> attention_forward(const AttentionArgs& a, const Tensor& query,
                                             const Tensor& key, const Tensor& value,
                                             const Tensor& key_padding_mask, bool need_weights,
                                             const Tensor& attn_mask, bool average_attn_weights,
                                             bool is_causal) {
    const int64_t E = a.E, H = a.H, Dh = E / H;
    const bool bf = a.batch_first;
    const std::string& label = a.label;
    const char* const kNames[3] = {"query", "key", "value"};
    const int64_t dims[3] = {E, a.kdim, a.vdim};
    const Tensor* inputs[3] = {&query, &key, &value};
    for (int i = 0; i < 3; ++i) {
        const Tensor& t = *inputs[i];
        if (!t.defined() || t.dim() != 3 || t.size(2) != dims[i])
            throw shape_error(label + ": " + kNames[i] + " must be 3-D " +
                              (bf ? "[N, T, " : "[T, N, ") + std::to_string(dims[i]) + "], got " +
                              (t.defined() ? shape_str(t.sizes()) : "undefined"));
    }
    const int64_t extra = int64_t(a.bias_k.defined()) + int64_t(a.add_zero_attn);
    if (is_causal && extra > 0)
        throw value_error(label + ": is_causal with add_bias_kv or add_zero_attn: pass the " +
                          "causal mask as attn_mask");
    // Note [LibTorch's MultiheadAttention masks]: LibTorch's C++ module adds attn_mask to the
    // scores whatever its dtype (a bool mask adds 1 where true and masks nothing, unlike Python)
    // and masked_fills key_padding_mask (bool only, in LibTorch 2). A ported program must not
    // get other numbers here, so the masks LibTorch would misread are refused.
    if (attn_mask.defined() && !is_floating(attn_mask.dtype()))
        throw dtype_error(label + ": attn_mask is " + dtype_name(attn_mask.dtype()) +
                          ": LibTorch's C++ MultiheadAttention adds attn_mask to the scores (a " +
                          "bool one adds 1 where true); pass a floating mask, 0 where a query may "
                          "attend and -inf where not");
    if (key_padding_mask.defined() && key_padding_mask.dtype() != kBool)
        throw dtype_error(label + ": key_padding_mask is " + dtype_name(key_padding_mask.dtype()) +
                          ": it must be bool, true where a key is padding (LibTorch fills those "
                          "scores with -inf)");
    const Tensor qb = bf ? query : query.transpose(0, 1), kb = bf ? key : key.transpose(0, 1),
                 vb = bf ? value : value.transpose(0, 1);
    const int64_t N = qb.size(0), L = qb.size(1);
    int64_t S = kb.size(1);
    if (kb.size(0) != N || vb.size(0) != N || vb.size(1) != S)
        throw shape_error(label + ": query " + shape_str(query.sizes()) + ", key " +
                          shape_str(key.sizes()) + ", value " + shape_str(value.sizes()) +
                          ": batch sizes or key and value lengths differ");
    Tensor qp, kp, vp;
    if (a.in_proj_weight.defined() && query.impl() == key.impl() && key.impl() == value.impl()) {
        const Tensor qkv = linear(qb, a.in_proj_weight, a.in_proj_bias);  // one GEMM for q, k, v
        qp = qkv.narrow(2, 0, E), kp = qkv.narrow(2, E, E), vp = qkv.narrow(2, 2 * E, E);
    } else {
        const Tensor* separate[3] = {&a.q_proj_weight, &a.k_proj_weight, &a.v_proj_weight};
        auto proj = [&](const Tensor& x, int64_t i) {
            return linear(
                x, a.in_proj_weight.defined() ? a.in_proj_weight.narrow(0, i * E, E) : *separate[i],
                a.in_proj_bias.defined() ? a.in_proj_bias.narrow(0, i * E, E) : Tensor());
        };
        qp = proj(qb, 0), kp = proj(kb, 1), vp = proj(vb, 2);
    }
    if (a.bias_k.defined()) {  // add_bias_kv: a learned key and value after every sequence
        kp = cat({kp, a.bias_k.expand({N, 1, E})}, 1);
        vp = cat({vp, a.bias_v.expand({N, 1, E})}, 1);
    }
    auto heads = [&](const Tensor& t, int64_t T) {  // [N, T, E] -> [N, H, T, Dh]
        return t.reshape({N, T, H, Dh}).permute({0, 2, 1, 3});
    };
    const int64_t biased = S + int64_t(a.bias_k.defined());
    Tensor qh = heads(qp, L);
    Tensor kh = heads(kp, biased), vh = heads(vp, biased);
    // F::multi_head_attention_forward's static_k / static_v [N·H, S', Dh] replace the keys and
    // values (then S is S'); LibTorch allows them without add_bias_kv only
    for (const Tensor* st : {&a.static_k, &a.static_v}) {
        if (!st->defined())
            continue;
        const char* which = st == &a.static_k ? "static_k" : "static_v";
        if (a.bias_k.defined())
            throw value_error(label + ": " + which + " with bias_k and bias_v (add_bias_kv)");
        if (st->dim() != 3 || st->size(0) != N * H || st->size(2) != Dh)
            throw shape_error(label + ": " + which + " " + shape_str(st->sizes()) + " must be [" +
                              std::to_string(N * H) + ", S, " + std::to_string(Dh) + "]");
        (st == &a.static_k ? kh : vh) = st->reshape({N, H, st->size(1), Dh});
    }
    if (kh.size(2) != vh.size(2))
        throw shape_error(label + ": static_k and static_v give " + std::to_string(kh.size(2)) +
                          " keys and " + std::to_string(vh.size(2)) + " values");
    S = a.static_k.defined() || a.static_v.defined() ? kh.size(2) : S;
    if (a.add_zero_attn) {  // and a zero key and value
        kh = cat({kh, zeros({N, H, 1, Dh}, kh.options())}, 2);
        vh = cat({vh, zeros({N, H, 1, Dh}, vh.options())}, 2);
    }
    const int64_t Sx = S + extra;  // the keys with add_bias_kv's and add_zero_attn's
    if (key_padding_mask.defined() && key_padding_mask.sizes() != Shape{N, S})
        throw shape_error(label + ": key_padding_mask " + shape_str(key_padding_mask.sizes()) +
                          " must be [" + std::to_string(N) + ", " + std::to_string(S) + "]");
    Shape attn_shape{L, S};
    if (attn_mask.defined() && attn_mask.dim() == 3)
        attn_shape = {N, H, L, S};
    if (attn_mask.defined() && attn_mask.numel() != numel_of(attn_shape))
        throw shape_error(label + ": attn_mask " + shape_str(attn_mask.sizes()) + " must be [" +
                          std::to_string(L) + ", " + std::to_string(S) + "] or [" +
                          std::to_string(N * H) + ", " + std::to_string(L) + ", " +
                          std::to_string(S) + "]");
    auto widen = [&](const Tensor& m, Shape shape) {  // the appended keys may be attended
        if (!m.defined() || extra == 0)
            return m.defined() ? m.reshape(shape) : m;
        return constant_pad_nd(m.reshape(shape), {0, extra}, 0);
    };
    Shape wide_shape = attn_shape;
    wide_shape.back() = Sx;
    const Tensor mask =
        combine(sdpa_mask(widen(attn_mask, attn_shape), wide_shape),
                sdpa_mask(widen(key_padding_mask, {N, 1, 1, S}), {N, 1, 1, Sx}), qh);
    const double p = a.dropout_p;
    tg::detail::Engine drawn_from;  // the state sdpa's dropout mask is drawn from
    if (need_weights && p > 0) {
        tg::detail::Draw draw(nullptr);
        drawn_from = draw.engine();
    }
    const Tensor joined = scaled_dot_product_attention(qh, kh, vh, mask, p, is_causal)
                              .permute({0, 2, 1, 3})
                              .reshape({N, L, E});
    // let go of q, k and v (Note [Letting go of intermediates] in nn/transformer_layer.cpp)
    if (!need_weights)
        qp = kp = vp = qh = kh = vh = Tensor();
    Tensor out =
        a.out_proj ? a.out_proj(joined) : linear(joined, a.out_proj_weight, a.out_proj_bias);
    if (!bf)
        out = out.transpose(0, 1);
    Tensor weights;
    if (need_weights) {  // the composed probabilities, for those who look at them
        Tensor s = matmul(qh.reshape({N * H, L, Dh}), kh.reshape({N * H, Sx, Dh}).transpose(1, 2))
                       .reshape({N, H, L, Sx}) *
                   (1 / std::sqrt(double(Dh)));
        if (mask.defined())
            s = s + additive(mask, s);
        if (is_causal) {
            const Tensor i = arange(L, s.options()).reshape({L, 1}),
                         j = arange(Sx, s.options()).reshape({1, Sx});
            s = s + where(gt(j, i), full({}, -std::numeric_limits<double>::infinity(), s.options()),
                          zeros({}, s.options()));
        }
        weights = softmax(s, -1);
        if (p > 0) {  // LibTorch returns them after dropout: sdpa's mask, drawn again
            Tensor m = runtime::empty(weights.sizes(), weights.dtype(), weights.device());
            const Dtype d = m.dtype();
            const double one = d == kFloat32 ? double(1.0f / float(1 - p)) : 1 / (1 - p);
            runtime::fill_random(
                m, drawn_from,
                [d, p, one](void* dst, int64_t n, bool, tg::detail::Engine& e) {
                    tg::detail::bernoulli(dst, d, n, 1 - p, one, e);
                },
                "MultiheadAttention");
            weights = weights * m;
        }
        if (average_attn_weights)
            weights = mean(weights, {1});
    }
    return {out, weights};
}

}  // namespace tg::nn::detail
