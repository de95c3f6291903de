#pragma once
/// MultiheadAttention, TransformerEncoderLayer and TransformerDecoderLayer with LibTorch's
/// options (and PyTorch's batch_first and norm_first; the stacks and nn::Transformer are in
/// transformer_coder.hpp):
///     tg::nn::MultiheadAttention mha(tg::nn::MultiheadAttentionOptions(256, 4).batch_first(true));
///     auto [y, w] = mha->forward(x, x, x, {}, /*need_weights=*/false, {}, true,
///     /*is_causal=*/true); tg::nn::TransformerEncoderLayer
///     block(tg::nn::TransformerEncoderLayerOptions(256, 4)
///         .dim_feedforward(1024).activation(tg::kGELU).norm_first(true).batch_first(true));
/// The attention itself is tg::scaled_dot_product_attention: one node saving O(T) per head.
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <tuple>
#include <type_traits>

#include "tapegrad/arg.hpp"
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

/// A transformer layer's feed-forward activation, as LibTorch's activation_t: tg::kReLU,
/// tg::kGELU or any function of a tensor (a lambda, a std::function).
class TransformerActivation {
public:
    TransformerActivation(Activation a = Activation::ReLU) : kind_(a) {}  // NOLINT: implicit
    template <class F,
              class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, TransformerActivation> &&
                                       std::is_invocable_r_v<Tensor, F&, const Tensor&>>>
    TransformerActivation(F f) : fn_(std::move(f)) {}  // NOLINT: implicit, as LibTorch's variant
    /// The activation applied to x.
    Tensor operator()(const Tensor& x) const;
    /// Whether it is a function (rather than kReLU or kGELU).
    bool is_function() const { return bool(fn_); }
    bool operator==(Activation a) const { return !fn_ && kind_ == a; }
    bool operator!=(Activation a) const { return !(*this == a); }

private:
    Activation kind_ = Activation::ReLU;
    std::function<Tensor(const Tensor&)> fn_;
};

/// LibTorch's TransformerEncoderLayerOptions (d_model, nhead, dim_feedforward 2048, dropout 0.1,
/// activation kReLU) and PyTorch's layer_norm_eps (1e-5), batch_first and norm_first (false),
/// which LibTorch's C++ layer lacks.
struct TransformerEncoderLayerOptions {
    TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)  // NOLINT: implicit
        : d_model_(d_model), nhead_(nhead) {}
    TG_ARG(int64_t, d_model);
    TG_ARG(int64_t, nhead);
    TG_ARG(int64_t, dim_feedforward) = 2048;
    TG_ARG(double, dropout) = 0.1;
    TG_ARG(TransformerActivation, activation) = kReLU;
    TG_ARG(double, layer_norm_eps) = 1e-5;
    /// Inputs and outputs [N, T, E] instead of [T, N, E].
    TG_ARG(bool, batch_first) = false;
    /// Pre-norm (x + f(norm(x))) instead of post-norm (norm(x + f(x))).
    TG_ARG(bool, norm_first) = false;
};

class TransformerEncoderLayerImpl : public Module {
public:
    using Options = TransformerEncoderLayerOptions;
    /// Registers self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2 in
    /// LibTorch's order (so their initial weights are LibTorch's after the same manual_seed).
    explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
    TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
        : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
    /// Self-attention then the feed-forward block, each with dropout and a residual, normalised
    /// after (or, with norm_first, before) each; masks as MultiheadAttention's.
    Tensor forward(const Tensor& src, const Tensor& src_mask,
                   const Tensor& src_key_padding_mask = {}, bool is_causal = false);
    /// forward(src) with no masks (so the layer fits Sequential, ModuleList and checkpoints).
    Tensor forward(const Tensor& src) override;
    /// Re-initialises the attention, linear and norm parameters, as LibTorch's.
    void reset_parameters();
    TransformerEncoderLayerOptions options;  // public, as LibTorch's
    /// "TransformerEncoderLayerImpl" and its children, as LibTorch prints it.
    void pretty_print(std::ostream& os) const override;

    MultiheadAttention self_attn{nullptr};
    Linear linear1{nullptr}, linear2{nullptr};
    Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
    LayerNorm norm1{nullptr}, norm2{nullptr};
};
TG_MODULE(TransformerEncoderLayer);

/// LibTorch's TransformerDecoderLayerOptions, with the encoder layer's PyTorch extensions.
struct TransformerDecoderLayerOptions {
    TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead)
        : d_model_(d_model), nhead_(nhead) {}
    TG_ARG(int64_t, d_model);
    TG_ARG(int64_t, nhead);
    TG_ARG(int64_t, dim_feedforward) = 2048;
    TG_ARG(double, dropout) = 0.1;
    TG_ARG(TransformerActivation, activation) = kReLU;
    TG_ARG(double, layer_norm_eps) = 1e-5;
    TG_ARG(bool, batch_first) = false;
    TG_ARG(bool, norm_first) = false;
};

class TransformerDecoderLayerImpl : public Module {
public:
    using Options = TransformerDecoderLayerOptions;
    /// Registers self_attn, multihead_attn, linear1, dropout, linear2, norm1..3, dropout1..3 in
    /// LibTorch 1.13's order (its initial weights after the same manual_seed).
    explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);
    TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
        : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
    /// Self-attention over tgt [T, N, E] (tgt_mask, tgt_key_padding_mask), attention to memory
    /// [S, N, E] (memory_mask, memory_key_padding_mask), then the feed-forward block, each with
    /// dropout and a residual and normalised after (or, with norm_first, before) it; masks as
    /// MultiheadAttention's (floating attn masks: a bool one throws dtype_error, Note
    /// [LibTorch's MultiheadAttention masks]). The is_causal flags are PyTorch's.
    Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                   const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                   const Tensor& memory_key_padding_mask = {}, bool tgt_is_causal = false,
                   bool memory_is_causal = false);
    using Module::forward;
    void reset_parameters();
    TransformerDecoderLayerOptions options;  // public, as LibTorch's
    /// "TransformerDecoderLayerImpl" and its children, as LibTorch prints it.
    void pretty_print(std::ostream& os) const override;

    MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
    Linear linear1{nullptr}, linear2{nullptr};
    Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};
    LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
};
TG_MODULE(TransformerDecoderLayer);

namespace functional {
/// LibTorch's MultiheadAttentionForwardFuncOptions: the weights of a multi-head attention and
/// its settings (training true, need_weights true, average_attn_weights true).
struct MultiheadAttentionForwardFuncOptions {
    MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check, int64_t num_heads,
                                         Tensor in_proj_weight, Tensor in_proj_bias, Tensor bias_k,
                                         Tensor bias_v, bool add_zero_attn, double dropout_p,
                                         Tensor out_proj_weight, Tensor out_proj_bias)
        : embed_dim_to_check_(embed_dim_to_check),
          num_heads_(num_heads),
          in_proj_weight_(std::move(in_proj_weight)),
          in_proj_bias_(std::move(in_proj_bias)),
          bias_k_(std::move(bias_k)),
          bias_v_(std::move(bias_v)),
          add_zero_attn_(add_zero_attn),
          dropout_p_(dropout_p),
          out_proj_weight_(std::move(out_proj_weight)),
          out_proj_bias_(std::move(out_proj_bias)) {}
    TG_ARG(int64_t, embed_dim_to_check);
    TG_ARG(int64_t, num_heads);
    TG_ARG(Tensor, in_proj_weight);
    TG_ARG(Tensor, in_proj_bias);
    TG_ARG(Tensor, bias_k);
    TG_ARG(Tensor, bias_v);
    TG_ARG(bool, add_zero_attn);
    TG_ARG(double, dropout_p);
    TG_ARG(Tensor, out_proj_weight);
    TG_ARG(Tensor, out_proj_bias);
    TG_ARG(bool, training) = true;
    TG_ARG(Tensor, key_padding_mask) = {};
    TG_ARG(bool, need_weights) = true;
    TG_ARG(Tensor, attn_mask) = {};
    TG_ARG(bool, use_separate_proj_weight) = false;
    TG_ARG(Tensor, q_proj_weight) = {};
    TG_ARG(Tensor, k_proj_weight) = {};
    TG_ARG(Tensor, v_proj_weight) = {};
    TG_ARG(Tensor, static_k) = {};
    TG_ARG(Tensor, static_v) = {};
    TG_ARG(bool, average_attn_weights) = true;
};
/// The attention nn::MultiheadAttention computes, from the options' weights: query [L, N, E],
/// key [S, N, kdim], value [S, N, vdim] -> (output [L, N, E], weights [N, L, S] averaged over
/// heads, [N, H, L, S] otherwise, undefined without need_weights); masks as the module's
/// (floating attn_mask, bool key_padding_mask); static_k / static_v [N·H, S', E/H] replace the
/// projected keys / values. value_error when embed_dim_to_check is not query's E.
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options);
}  // namespace functional

}  // namespace tg::nn

#pragma GCC visibility pop
