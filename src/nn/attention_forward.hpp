#pragma once
// Multi-head attention's forward from explicit weights, shared by nn::MultiheadAttention and
// F::multi_head_attention_forward (src/nn/attention_forward.cpp).
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>

#include "tapegrad/tensor.hpp"

namespace tg::nn::detail {

struct AttentionArgs {
    std::string label;  // names the module or function in errors
    int64_t E = 0, H = 1, kdim = 0, vdim = 0;
    bool batch_first = false, add_zero_attn = false;
    double dropout_p = 0;  // 0 unless training
    /// in_proj_weight [3E, E] (or q/k/v_proj_weight), in_proj_bias [3E] or undefined, bias_k and
    /// bias_v [1, 1, E] or undefined; static_k / static_v [N·H, S, E/H] replace the projected
    /// keys / values (F::multi_head_attention_forward's).
    Tensor in_proj_weight, in_proj_bias, q_proj_weight, k_proj_weight, v_proj_weight, bias_k,
        bias_v, static_k, static_v;
    /// The output projection: out_proj when given (the module's Linear), else
    /// linear(x, out_proj_weight, out_proj_bias).
    std::function<Tensor(const Tensor&)> out_proj;
    Tensor out_proj_weight, out_proj_bias;
};

/// MultiheadAttention's forward (its header says what it takes and returns).
std::tuple<Tensor, Tensor> attention_forward(const AttentionArgs& a, const Tensor& query,
                                             const Tensor& key, const Tensor& value,
                                             const Tensor& key_padding_mask, bool need_weights,
                                             const Tensor& attn_mask, bool average_attn_weights,
                                             bool is_causal);

}  // namespace tg::nn::detail
