#include "tapegrad/nn/transformer.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/distributions.hpp"
#include "core/random.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/random_fill.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

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

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& opts)
    : Module("MultiheadAttention"), options(opts) {
    const int64_t E = options.embed_dim(), H = options.num_heads();
    if (E <= 0 || H <= 0 || E % H != 0)
        throw value_error("MultiheadAttention(" + std::to_string(E) + ", " + std::to_string(H) +
                          "): num_heads must be positive and divide embed_dim");
    if (!(options.dropout() >= 0 && options.dropout() < 1))
        throw value_error("MultiheadAttention: dropout must be in [0, 1)");
    if (options.kdim() <= 0 || options.vdim() <= 0)
        throw value_error("MultiheadAttention: kdim " + std::to_string(options.kdim()) +
                          " and vdim " + std::to_string(options.vdim()) + " must be positive");
    if (options.kdim() == E && options.vdim() == E) {
        in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
    } else {
        q_proj_weight = register_parameter("q_proj_weight", empty({E, E}));
        k_proj_weight = register_parameter("k_proj_weight", empty({E, options.kdim()}));
        v_proj_weight = register_parameter("v_proj_weight", empty({E, options.vdim()}));
    }
    if (options.bias())
        in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
    if (options.add_bias_kv()) {
        bias_k = register_parameter("bias_k", empty({1, 1, E}));
        bias_v = register_parameter("bias_v", empty({1, 1, E}));
    }
    out_proj = register_module("out_proj", Linear(E, E, options.bias()));
    reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
    for (Tensor* w : {&in_proj_weight, &q_proj_weight, &k_proj_weight, &v_proj_weight})
        if (w->defined())
            init::xavier_uniform_(*w);
    for (Tensor* b : {&bias_k, &bias_v})
        if (b->defined())
            init::xavier_normal_(*b);
    NoGradGuard guard;
    if (in_proj_bias.defined())
        in_proj_bias.zero_();
    if (out_proj->bias.defined())
        out_proj->bias.zero_();
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights, bool is_causal) {
    const int64_t E = options.embed_dim(), H = options.num_heads(), Dh = E / H;
    const bool bf = options.batch_first();
    const char* const kNames[3] = {"query", "key", "value"};
    const int64_t dims[3] = {E, options.kdim(), options.vdim()};
    const Tensor* inputs[3] = {&query, &key, &value};
    for (int i = 0; i < 3; ++i) {
        const Tensor& t = *inputs[i];
        if (!t.defined() || t.dim() != 3 || t.size(2) != dims[i])
            throw shape_error(label() + ": " + kNames[i] + " must be 3-D " +
                              (bf ? "[N, T, " : "[T, N, ") + std::to_string(dims[i]) + "], got " +
                              (t.defined() ? shape_str(t.sizes()) : "undefined"));
    }
    const int64_t extra = int64_t(bias_k.defined()) + int64_t(options.add_zero_attn());
    if (is_causal && extra > 0)
        throw value_error(label() + ": is_causal with add_bias_kv or add_zero_attn: pass the " +
                          "causal mask as attn_mask");
    // Note [LibTorch's MultiheadAttention masks]: LibTorch's C++ module adds attn_mask to the
    // scores whatever its dtype (a bool mask adds 1 where true and masks nothing, unlike Python)
    // and masked_fills key_padding_mask (bool only, in LibTorch 2). A ported program must not
    // get other numbers here, so the masks LibTorch would misread are refused.
    if (attn_mask.defined() && !is_floating(attn_mask.dtype()))
        throw dtype_error(label() + ": attn_mask is " + dtype_name(attn_mask.dtype()) +
                          ": LibTorch's C++ MultiheadAttention adds attn_mask to the scores (a " +
                          "bool one adds 1 where true); pass a floating mask, 0 where a query may "
                          "attend and -inf where not");
    if (key_padding_mask.defined() && key_padding_mask.dtype() != kBool)
        throw dtype_error(label() + ": key_padding_mask is " +
                          dtype_name(key_padding_mask.dtype()) +
                          ": it must be bool, true where a key is padding (LibTorch fills those "
                          "scores with -inf)");
    const Tensor qb = bf ? query : query.transpose(0, 1), kb = bf ? key : key.transpose(0, 1),
                 vb = bf ? value : value.transpose(0, 1);
    const int64_t N = qb.size(0), L = qb.size(1), S = kb.size(1);
    if (kb.size(0) != N || vb.size(0) != N || vb.size(1) != S)
        throw shape_error(label() + ": query " + shape_str(query.sizes()) + ", key " +
                          shape_str(key.sizes()) + ", value " + shape_str(value.sizes()) +
                          ": batch sizes or key and value lengths differ");
    Tensor qp, kp, vp;
    if (in_proj_weight.defined() && query.impl() == key.impl() && key.impl() == value.impl()) {
        const Tensor qkv = linear(qb, in_proj_weight, in_proj_bias);  // one GEMM for q, k, v
        qp = qkv.narrow(2, 0, E), kp = qkv.narrow(2, E, E), vp = qkv.narrow(2, 2 * E, E);
    } else {
        const Tensor* separate[3] = {&q_proj_weight, &k_proj_weight, &v_proj_weight};
        auto proj = [&](const Tensor& x, int64_t i) {
            return linear(
                x, in_proj_weight.defined() ? in_proj_weight.narrow(0, i * E, E) : *separate[i],
                in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, E) : Tensor());
        };
        qp = proj(qb, 0), kp = proj(kb, 1), vp = proj(vb, 2);
    }
    if (bias_k.defined()) {  // add_bias_kv: a learned key and value after every sequence
        kp = cat({kp, bias_k.expand({N, 1, E})}, 1);
        vp = cat({vp, bias_v.expand({N, 1, E})}, 1);
    }
    if (options.add_zero_attn()) {  // and a zero one
        kp = cat({kp, zeros({N, 1, E}, kp.options())}, 1);
        vp = cat({vp, zeros({N, 1, E}, vp.options())}, 1);
    }
    auto heads = [&](const Tensor& t, int64_t T) {  // [N, T, E] -> [N, H, T, Dh]
        return t.reshape({N, T, H, Dh}).permute({0, 2, 1, 3});
    };
    const int64_t Sx = S + extra;  // the keys with add_bias_kv's and add_zero_attn's
    const Tensor qh = heads(qp, L), kh = heads(kp, Sx), vh = heads(vp, Sx);
    if (key_padding_mask.defined() && key_padding_mask.sizes() != Shape{N, S})
        throw shape_error(label() + ": key_padding_mask " + shape_str(key_padding_mask.sizes()) +
                          " must be [" + std::to_string(N) + ", " + std::to_string(S) + "]");
    Shape attn_shape{L, S};
    if (attn_mask.defined() && attn_mask.dim() == 3)
        attn_shape = {N, H, L, S};
    if (attn_mask.defined() && attn_mask.numel() != numel_of(attn_shape))
        throw shape_error(label() + ": attn_mask " + shape_str(attn_mask.sizes()) + " must be [" +
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
    const double p = is_training() ? options.dropout() : 0.0;
    detail::Engine drawn_from;  // the state sdpa's dropout mask is drawn from
    if (need_weights && p > 0) {
        detail::Draw draw(nullptr);
        drawn_from = draw.engine();
    }
    const Tensor y = scaled_dot_product_attention(qh, kh, vh, mask, p, is_causal);
    Tensor out = out_proj(y.permute({0, 2, 1, 3}).reshape({N, L, E}));
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
                [d, p, one](void* dst, int64_t n, bool, detail::Engine& e) {
                    detail::bernoulli(dst, d, n, 1 - p, one, e);
                },
                "MultiheadAttention");
            weights = weights * m;
        }
        if (average_attn_weights)
            weights = mean(weights, {1});
    }
    return {out, weights};
}

void MultiheadAttentionImpl::pretty_print(std::ostream& os) const {
    os << "MultiheadAttention(embed_dim=" << options.embed_dim()
       << ", num_heads=" << options.num_heads() << ", dropout=" << options.dropout()
       << ", bias=" << (options.bias() ? "true" : "false");
    if (options.kdim() != options.embed_dim() || options.vdim() != options.embed_dim())
        os << ", kdim=" << options.kdim() << ", vdim=" << options.vdim();
    if (options.add_bias_kv())
        os << ", add_bias_kv=true";
    if (options.add_zero_attn())
        os << ", add_zero_attn=true";
    os << ", batch_first=" << (options.batch_first() ? "true" : "false") << ")";
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& opts)
    : Module("TransformerEncoderLayer"), options(opts) {
    const int64_t d = options.d_model(), ff = options.dim_feedforward();
    if (ff <= 0)
        throw value_error("TransformerEncoderLayer: dim_feedforward must be positive");
    if (options.activation() == Activation::Tanh)  // LibTorch's variant would not compile it
        throw value_error("TransformerEncoderLayer: activation must be kReLU or kGELU, not kTanh");
    self_attn = register_module("self_attn",
                                MultiheadAttention(MultiheadAttentionOptions(d, options.nhead())
                                                       .dropout(options.dropout())
                                                       .batch_first(options.batch_first())));
    linear1 = register_module("linear1", Linear(d, ff));
    dropout = register_module("dropout", Dropout(options.dropout()));
    linear2 = register_module("linear2", Linear(ff, d));
    norm1 =
        register_module("norm1", LayerNorm(LayerNormOptions({d}).eps(options.layer_norm_eps())));
    norm2 =
        register_module("norm2", LayerNorm(LayerNormOptions({d}).eps(options.layer_norm_eps())));
    dropout1 = register_module("dropout1", Dropout(options.dropout()));
    dropout2 = register_module("dropout2", Dropout(options.dropout()));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
    auto attend = [&](const Tensor& x) {
        return dropout1(std::get<0>(
            self_attn(x, x, x, src_key_padding_mask, false, src_mask, true, is_causal)));
    };
    auto feed_forward = [&](const Tensor& x) {
        const Tensor h = linear1(x);
        return dropout2(
            linear2(dropout(options.activation() == Activation::GELU ? gelu(h) : relu(h))));
    };
    if (options.norm_first()) {
        const Tensor x = src + attend(norm1(src));
        return x + feed_forward(norm2(x));
    }
    const Tensor x = norm1(src + attend(src));
    return norm2(x + feed_forward(x));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src) {
    return forward(src, {}, {}, false);
}

void TransformerEncoderLayerImpl::pretty_print(std::ostream& os) const {
    os << "TransformerEncoderLayer(d_model=" << options.d_model() << ", nhead=" << options.nhead()
       << ", dim_feedforward=" << options.dim_feedforward() << ", dropout=" << options.dropout()
       << ", activation=" << (options.activation() == Activation::GELU ? "gelu" : "relu")
       << ", norm_first=" << (options.norm_first() ? "true" : "false") << ")";
}

}  // namespace tg::nn
