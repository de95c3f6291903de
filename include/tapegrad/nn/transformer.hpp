#pragma once
/// MultiheadAttention and TransformerEncoderLayer with LibTorch's options (and PyTorch's
/// batch_first and norm_first):
///     tg::nn::MultiheadAttention mha(tg::nn::MultiheadAttentionOptions(256, 4).batch_first(true));
///     auto [y, w] = mha->forward(x, x, x, {}, /*need_weights=*/false, {}, true,
///     /*is_causal=*/true); tg::nn::TransformerEncoderLayer
///     block(tg::nn::TransformerEncoderLayerOptions(256, 4)
///         .dim_feedforward(1024).activation(tg::kGELU).norm_first(true).batch_first(true));
/// The attention itself is tg::scaled_dot_product_attention: one node saving O(T) per head.
#include <cstdint>
#include <optional>
#include <ostream>
#include <tuple>

#include "tapegrad/nn/activation_kind.hpp"
#include "tapegrad/nn/dropout.hpp"
#include "tapegrad/nn/layer_norm.hpp"
#include "tapegrad/nn/linear.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

class MultiheadAttentionOptions {
public:
    MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
        : embed_dim_(embed_dim), num_heads_(num_heads) {}
    /// Dropout of the attention probabilities in training.
    MultiheadAttentionOptions& dropout(double v) { return dropout_ = v, *this; }
    MultiheadAttentionOptions& bias(bool v) { return bias_ = v, *this; }
    /// Inputs and outputs [N, L, E] instead of [L, N, E].
    MultiheadAttentionOptions& batch_first(bool v) { return batch_first_ = v, *this; }
    /// The last dims of key and value (embed_dim by default): other sizes project them with
    /// k_proj_weight [E, kdim] and v_proj_weight [E, vdim] (and q_proj_weight [E, E]).
    MultiheadAttentionOptions& kdim(int64_t v) { return kdim_ = v, *this; }
    MultiheadAttentionOptions& vdim(int64_t v) { return vdim_ = v, *this; }
    /// A learned key and value (bias_k, bias_v [1, 1, E]) appended to every sequence.
    MultiheadAttentionOptions& add_bias_kv(bool v) { return bias_kv_ = v, *this; }
    /// A zero key and value appended to every sequence (after add_bias_kv's).
    MultiheadAttentionOptions& add_zero_attn(bool v) { return zero_attn_ = v, *this; }
    int64_t embed_dim() const { return embed_dim_; }
    int64_t num_heads() const { return num_heads_; }
    double dropout() const { return dropout_; }
    bool bias() const { return bias_; }
    bool batch_first() const { return batch_first_; }
    int64_t kdim() const { return kdim_.value_or(embed_dim_); }
    int64_t vdim() const { return vdim_.value_or(embed_dim_); }
    bool add_bias_kv() const { return bias_kv_; }
    bool add_zero_attn() const { return zero_attn_; }

private:
    int64_t embed_dim_, num_heads_;
    std::optional<int64_t> kdim_, vdim_;
    double dropout_ = 0;
    bool bias_ = true, batch_first_ = false, bias_kv_ = false, zero_attn_ = false;
};

class MultiheadAttentionImpl : public Module {
public:
    using Options = MultiheadAttentionOptions;
    /// in_proj_weight [3E, E] (or q/k/v_proj_weight when kdim or vdim differ from E) ~
    /// xavier_uniform, in_proj_bias [3E] = 0, out_proj Linear(E, E) with bias 0, bias_k and
    /// bias_v ~ xavier_normal (LibTorch's initialisation). Throws value_error unless num_heads
    /// divides E and kdim, vdim are positive.
    explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
    MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
        : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
    /// query [L, N, E] (or [N, L, E] with batch_first), key [S, N, kdim] and value [S, N, vdim]:
    /// the attention
    /// output [L, N, E] and, with need_weights, the attention weights [N, L, S] (averaged over
    /// heads) or [N, H, L, S] (computed apart from the output, without dropout; undefined
    /// otherwise). key_padding_mask [N, S]: bool, true = padding (may NOT be attended). attn_mask
    /// [L, S] or [N·H, L, S]: floating, added to the scores (0 / -inf), as LibTorch's C++ module
    /// adds it; a bool or integer attn_mask throws dtype_error (LibTorch would add it: Note
    /// [LibTorch's MultiheadAttention masks] in src/nn/transformer.cpp).
    /// is_causal: query i attends keys j <= i (together with the masks; value_error with
    /// add_bias_kv or add_zero_attn: pass the mask as attn_mask).
    std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                       const Tensor& key_padding_mask = {},
                                       bool need_weights = true, const Tensor& attn_mask = {},
                                       bool average_attn_weights = true, bool is_causal = false);
    void reset_parameters();
    MultiheadAttentionOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

    Tensor in_proj_weight, in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, bias_k,
        bias_v;
    Linear out_proj{nullptr};
};
TG_MODULE(MultiheadAttention);

class TransformerEncoderLayerOptions {
public:
    TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)
        : d_model_(d_model), nhead_(nhead) {}
    TransformerEncoderLayerOptions& dim_feedforward(int64_t v) { return ff_ = v, *this; }
    TransformerEncoderLayerOptions& dropout(double v) { return dropout_ = v, *this; }
    TransformerEncoderLayerOptions& activation(Activation v) { return act_ = v, *this; }
    TransformerEncoderLayerOptions& layer_norm_eps(double v) { return eps_ = v, *this; }
    TransformerEncoderLayerOptions& batch_first(bool v) { return batch_first_ = v, *this; }
    /// Pre-norm (x + f(norm(x))) instead of post-norm (norm(x + f(x))).
    TransformerEncoderLayerOptions& norm_first(bool v) { return norm_first_ = v, *this; }
    int64_t d_model() const { return d_model_; }
    int64_t nhead() const { return nhead_; }
    int64_t dim_feedforward() const { return ff_; }
    double dropout() const { return dropout_; }
    Activation activation() const { return act_; }
    double layer_norm_eps() const { return eps_; }
    bool batch_first() const { return batch_first_; }
    bool norm_first() const { return norm_first_; }

private:
    int64_t d_model_, nhead_, ff_ = 2048;
    double dropout_ = 0.1, eps_ = 1e-5;
    Activation act_ = Activation::ReLU;
    bool batch_first_ = false, norm_first_ = false;
};

class TransformerEncoderLayerImpl : public Module {
public:
    using Options = TransformerEncoderLayerOptions;
    explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
    TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
        : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
    /// Self-attention then the feed-forward block, each with dropout and a residual, normalised
    /// after (or, with norm_first, before) each; masks as MultiheadAttention's.
    Tensor forward(const Tensor& src, const Tensor& src_mask,
                   const Tensor& src_key_padding_mask = {}, bool is_causal = false);
    /// forward(src) with no masks (so the layer fits Sequential, ModuleList and checkpoints).
    Tensor forward(const Tensor& src) override;
    TransformerEncoderLayerOptions options;  // public, as LibTorch's
    void pretty_print(std::ostream& os) const override;

    MultiheadAttention self_attn{nullptr};
    Linear linear1{nullptr}, linear2{nullptr};
    Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
    LayerNorm norm1{nullptr}, norm2{nullptr};
};
TG_MODULE(TransformerEncoderLayer);

}  // namespace tg::nn

#pragma GCC visibility pop
