#include "tapegrad/nn/transformer.hpp"

#include <string>

#include "nn/attention_forward.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

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
    detail::AttentionArgs a;
    a.label = label();
    a.E = options.embed_dim(), a.H = options.num_heads();
    a.kdim = options.kdim(), a.vdim = options.vdim();
    a.batch_first = options.batch_first(), a.add_zero_attn = options.add_zero_attn();
    a.dropout_p = is_training() ? options.dropout() : 0.0;
    a.in_proj_weight = in_proj_weight, a.in_proj_bias = in_proj_bias;
    a.q_proj_weight = q_proj_weight, a.k_proj_weight = k_proj_weight;
    a.v_proj_weight = v_proj_weight, a.bias_k = bias_k, a.bias_v = bias_v;
    a.out_proj = [this](const Tensor& x) { return out_proj(x); };
    return detail::attention_forward(a, query, key, value, key_padding_mask, need_weights,
                                     attn_mask, average_attn_weights, is_causal);
}

namespace functional {
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& o) {
    nn::detail::AttentionArgs a;
    a.label = "F::multi_head_attention_forward";
    a.E = o.embed_dim_to_check(), a.H = o.num_heads();
    if (query.defined() && query.dim() == 3 && query.size(2) != a.E)
        throw value_error(a.label + ": embed_dim_to_check " + std::to_string(a.E) + " but query " +
                          shape_str(query.sizes()) + " has " + std::to_string(query.size(2)) +
                          " features");
    if (a.E <= 0 || a.H <= 0 || a.E % a.H != 0)
        throw value_error(a.label + ": num_heads " + std::to_string(a.H) +
                          " must be positive and divide embed_dim " + std::to_string(a.E));
    const bool separate = o.use_separate_proj_weight();
    for (const Tensor* w : {&o.q_proj_weight(), &o.k_proj_weight(), &o.v_proj_weight()})
        if (separate && (!w->defined() || w->dim() != 2))
            throw value_error(a.label +
                              ": use_separate_proj_weight needs q_proj_weight, "
                              "k_proj_weight and v_proj_weight, 2-D");
    if (!separate &&
        (!o.in_proj_weight().defined() || o.in_proj_weight().sizes() != Shape{3 * a.E, a.E}))
        throw shape_error(a.label + ": in_proj_weight must be [" + std::to_string(3 * a.E) + ", " +
                          std::to_string(a.E) + "]");
    if (o.bias_k().defined() != o.bias_v().defined())
        throw value_error(a.label + ": bias_k and bias_v must be given together");
    a.kdim = separate ? o.k_proj_weight().size(1) : a.E;
    a.vdim = separate ? o.v_proj_weight().size(1) : a.E;
    a.add_zero_attn = o.add_zero_attn();
    a.dropout_p = o.training() ? o.dropout_p() : 0.0;
    if (!(a.dropout_p >= 0 && a.dropout_p < 1))
        throw value_error(a.label + ": dropout_p must be in [0, 1)");
    if (!separate)
        a.in_proj_weight = o.in_proj_weight();
    else
        a.q_proj_weight = o.q_proj_weight(), a.k_proj_weight = o.k_proj_weight(),
        a.v_proj_weight = o.v_proj_weight();
    a.in_proj_bias = o.in_proj_bias(), a.bias_k = o.bias_k(), a.bias_v = o.bias_v();
    a.static_k = o.static_k(), a.static_v = o.static_v();
    a.out_proj_weight = o.out_proj_weight(), a.out_proj_bias = o.out_proj_bias();
    return nn::detail::attention_forward(a, query, key, value, o.key_padding_mask(),
                                         o.need_weights(), o.attn_mask(), o.average_attn_weights(),
                                         false);
}
}  // namespace functional

void MultiheadAttentionImpl::pretty_print(std::ostream& os) const {
    os << "MultiheadAttention";  // LibTorch's MultiheadAttention prints its name alone
}

}  // namespace tg::nn
