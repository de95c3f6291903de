#include "tapegrad/nn/transformer.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace {

/// A mask as scaled_dot_product_attention reads it, from MultiheadAttention's convention (bool or
/// int64: true = may not attend; floating = added), viewed as `shape`.
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

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options)
    : Module("MultiheadAttention"), options_(options) {
    const int64_t E = options.embed_dim(), H = options.num_heads();
    if (E <= 0 || H <= 0 || E % H != 0)
        throw value_error("MultiheadAttention(" + std::to_string(E) + ", " + std::to_string(H) +
                          "): num_heads must be positive and divide embed_dim");
    if (!(options.dropout() >= 0 && options.dropout() < 1))
        throw value_error("MultiheadAttention: dropout must be in [0, 1)");
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
    if (options.bias())
        in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
    out_proj = register_module("out_proj", Linear(E, E, options.bias()));
    reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
    init::xavier_uniform_(in_proj_weight);
    NoGradGuard guard;
    if (in_proj_bias.defined())
        in_proj_bias.zero_();
    if (out_proj->bias().defined())
        out_proj->bias().zero_();
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights, bool is_causal) {
    const int64_t E = options_.embed_dim(), H = options_.num_heads(), Dh = E / H;
    const bool bf = options_.batch_first();
    for (const Tensor* t : {&query, &key, &value})
        if (!t->defined() || t->dim() != 3 || t->size(2) != E)
            throw shape_error(label() + ": query, key and value must be 3-D " +
                              (bf ? "[N, T, " : "[T, N, ") + std::to_string(E) + "], got " +
                              (t->defined() ? shape_str(t->sizes()) : "undefined"));
    const Tensor qb = bf ? query : query.transpose(0, 1), kb = bf ? key : key.transpose(0, 1),
                 vb = bf ? value : value.transpose(0, 1);
    const int64_t N = qb.size(0), L = qb.size(1), S = kb.size(1);
    if (kb.size(0) != N || vb.size(0) != N || vb.size(1) != S)
        throw shape_error(label() + ": query " + shape_str(query.sizes()) + ", key " +
                          shape_str(key.sizes()) + ", value " + shape_str(value.sizes()) +
                          ": batch sizes or key and value lengths differ");
    Tensor qp, kp, vp;
    if (query.impl() == key.impl() && key.impl() == value.impl()) {  // one GEMM for q, k and v
        const Tensor qkv = linear(qb, in_proj_weight, in_proj_bias);
        qp = qkv.narrow(2, 0, E), kp = qkv.narrow(2, E, E), vp = qkv.narrow(2, 2 * E, E);
    } else {
        auto proj = [&](const Tensor& x, int64_t i) {
            return linear(x, in_proj_weight.narrow(0, i * E, E),
                          in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, E) : Tensor());
        };
        qp = proj(qb, 0), kp = proj(kb, 1), vp = proj(vb, 2);
    }
    auto heads = [&](const Tensor& t, int64_t T) {  // [N, T, E] -> [N, H, T, Dh]
        return t.reshape({N, T, H, Dh}).permute({0, 2, 1, 3});
    };
    const Tensor qh = heads(qp, L), kh = heads(kp, S), vh = heads(vp, S);
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
    const Tensor mask =
        combine(sdpa_mask(attn_mask, attn_shape), sdpa_mask(key_padding_mask, {N, 1, 1, S}), qh);
    const double p = is_training() ? options_.dropout() : 0.0;
    const Tensor y = scaled_dot_product_attention(qh, kh, vh, mask, p, is_causal);
    Tensor out = out_proj(y.permute({0, 2, 1, 3}).reshape({N, L, E}));
    if (!bf)
        out = out.transpose(0, 1);
    Tensor weights;
    if (need_weights) {  // the composed probabilities, for those who look at them
        Tensor s = matmul(qh.reshape({N * H, L, Dh}), kh.reshape({N * H, S, Dh}).transpose(1, 2))
                       .reshape({N, H, L, S}) *
                   (1 / std::sqrt(double(Dh)));
        if (mask.defined())
            s = s + additive(mask, s);
        if (is_causal) {
            const Tensor i = arange(L, s.options()).reshape({L, 1}),
                         j = arange(S, s.options()).reshape({1, S});
            s = s + where(gt(j, i), full({}, -std::numeric_limits<double>::infinity(), s.options()),
                          zeros({}, s.options()));
        }
        weights = softmax(s, -1);
        if (average_attn_weights)
            weights = mean(weights, {1});
    }
    return {out, weights};
}

void MultiheadAttentionImpl::pretty_print(std::ostream& os) const {
    os << "MultiheadAttention(embed_dim=" << options_.embed_dim()
       << ", num_heads=" << options_.num_heads() << ", dropout=" << options_.dropout()
       << ", bias=" << (options_.bias() ? "true" : "false")
       << ", batch_first=" << (options_.batch_first() ? "true" : "false") << ")";
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(
    const TransformerEncoderLayerOptions& options)
    : Module("TransformerEncoderLayer"), options_(options) {
    const int64_t d = options.d_model(), ff = options.dim_feedforward();
    if (ff <= 0)
        throw value_error("TransformerEncoderLayer: dim_feedforward must be positive");
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
            linear2(dropout(options_.activation() == Activation::GELU ? gelu(h) : relu(h))));
    };
    if (options_.norm_first()) {
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
    os << "TransformerEncoderLayer(d_model=" << options_.d_model() << ", nhead=" << options_.nhead()
       << ", dim_feedforward=" << options_.dim_feedforward() << ", dropout=" << options_.dropout()
       << ", activation=" << (options_.activation() == Activation::GELU ? "gelu" : "relu")
       << ", norm_first=" << (options_.norm_first() ? "true" : "false") << ")";
}

}  // namespace tg::nn
