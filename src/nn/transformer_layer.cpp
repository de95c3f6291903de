// TransformerEncoderLayer and TransformerDecoderLayer, as LibTorch 1.13's (post-norm, the
// submodules registered and so initialised in its order), with PyTorch's pre-norm (norm_first),
// batch_first and layer_norm_eps. In training their dropouts draw in LibTorch's order: the
// attention's, then dropout1, ..., the feed-forward block's dropout, then the last one.
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/transformer.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

// Note [Letting go of intermediates]: a MemoryBudget (tapegrad/memory_budget.hpp) never evicts a
// tensor the caller holds, and a C++ temporary lives to the end of its full expression: written
// as f(g(h(x))), h's and g's outputs are held until f returns. The feed-forward blocks assign
// each step's result to one variable instead, so only the step's input and output are held
// (GELU's [.., 4d] input and output instead of the whole block's five results).

Tensor TransformerActivation::operator()(const Tensor& x) const {
    if (fn_)
        return fn_(x);
    return kind_ == Activation::GELU ? gelu(x) : relu(x);
}

namespace {
MultiheadAttention attention(int64_t d, int64_t nhead, double dropout, bool batch_first) {
    return MultiheadAttention(
        MultiheadAttentionOptions(d, nhead).dropout(dropout).batch_first(batch_first));
}
LayerNorm norm(int64_t d, double eps) {
    return LayerNorm(LayerNormOptions({d}).eps(eps));
}
void check_feedforward(const char* layer, int64_t ff, const TransformerActivation& activation) {
    if (ff <= 0)
        throw value_error(std::string(layer) + ": dim_feedforward " + std::to_string(ff) +
                          " must be positive");
    if (activation == Activation::Tanh)  // LibTorch's activation_t would not compile it
        throw value_error(std::string(layer) +
                          ": activation must be kReLU, kGELU or a function, not kTanh");
}
}  // namespace

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& opts)
    : Module("TransformerEncoderLayer"), options(opts) {
    const int64_t d = options.d_model(), ff = options.dim_feedforward();
    check_feedforward("TransformerEncoderLayer", ff, options.activation());
    self_attn = register_module(
        "self_attn", attention(d, options.nhead(), options.dropout(), options.batch_first()));
    linear1 = register_module("linear1", Linear(d, ff));
    dropout = register_module("dropout", Dropout(options.dropout()));
    linear2 = register_module("linear2", Linear(ff, d));
    norm1 = register_module("norm1", norm(d, options.layer_norm_eps()));
    norm2 = register_module("norm2", norm(d, options.layer_norm_eps()));
    dropout1 = register_module("dropout1", Dropout(options.dropout()));
    dropout2 = register_module("dropout2", Dropout(options.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
    self_attn->reset_parameters();
    linear1->reset_parameters();
    linear2->reset_parameters();
    norm1->reset_parameters();
    norm2->reset_parameters();
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
    auto attend = [&](const Tensor& x) {
        return dropout1(std::get<0>(
            self_attn(x, x, x, src_key_padding_mask, false, src_mask, true, is_causal)));
    };
    auto feed_forward = [&](const Tensor& x) {
        // step by step, each result let go of when the next is made (Note [Letting go of
        // intermediates])
        Tensor h = linear1(x);
        h = options.activation()(h);
        h = dropout(h);
        h = linear2(h);
        return dropout2(h);
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
    os << "TransformerEncoderLayerImpl";
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& opts)
    : Module("TransformerDecoderLayer"), options(opts) {
    const int64_t d = options.d_model(), ff = options.dim_feedforward();
    const double p = options.dropout(), eps = options.layer_norm_eps();
    check_feedforward("TransformerDecoderLayer", ff, options.activation());
    self_attn =
        register_module("self_attn", attention(d, options.nhead(), p, options.batch_first()));
    multihead_attn =
        register_module("multihead_attn", attention(d, options.nhead(), p, options.batch_first()));
    linear1 = register_module("linear1", Linear(d, ff));
    dropout = register_module("dropout", Dropout(p));
    linear2 = register_module("linear2", Linear(ff, d));
    norm1 = register_module("norm1", norm(d, eps));
    norm2 = register_module("norm2", norm(d, eps));
    norm3 = register_module("norm3", norm(d, eps));
    dropout1 = register_module("dropout1", Dropout(p));
    dropout2 = register_module("dropout2", Dropout(p));
    dropout3 = register_module("dropout3", Dropout(p));
}

void TransformerDecoderLayerImpl::reset_parameters() {
    self_attn->reset_parameters();
    norm1->reset_parameters();
    multihead_attn->reset_parameters();
    norm2->reset_parameters();
    linear1->reset_parameters();
    linear2->reset_parameters();
    norm3->reset_parameters();
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask,
                                            bool tgt_is_causal, bool memory_is_causal) {
    auto self_block = [&](const Tensor& x) {
        return dropout1(std::get<0>(
            self_attn(x, x, x, tgt_key_padding_mask, false, tgt_mask, true, tgt_is_causal)));
    };
    auto memory_block = [&](const Tensor& x) {
        return dropout2(std::get<0>(multihead_attn(x, memory, memory, memory_key_padding_mask,
                                                   false, memory_mask, true, memory_is_causal)));
    };
    auto feed_forward = [&](const Tensor& x) {  // step by step, as the encoder layer's
        Tensor h = linear1(x);
        h = options.activation()(h);
        h = dropout(h);
        h = linear2(h);
        return dropout3(h);
    };
    if (options.norm_first()) {
        Tensor x = tgt + self_block(norm1(tgt));
        x = x + memory_block(norm2(x));
        return x + feed_forward(norm3(x));
    }
    Tensor x = norm1(tgt + self_block(tgt));
    x = norm2(x + memory_block(x));
    return norm3(x + feed_forward(x));
}

void TransformerDecoderLayerImpl::pretty_print(std::ostream& os) const {
    os << "TransformerDecoderLayerImpl";
}

}  // namespace tg::nn
