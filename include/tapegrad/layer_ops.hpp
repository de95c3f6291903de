#pragma once
/// The ops behind the layers (ops.hpp includes this header): batch, group, layer and RMS
/// normalisation, embeddings, scaled dot-product attention and dropout. One `///` line each, as
/// in ops.hpp: forward, then the vector-Jacobian product of its backward.
#include <cstdint>
#include <optional>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

// ---- normalisation: x [N,C,*] ([N,C], [N,C,L], [N,C,H,W], ...), weight and bias [C] or
// undefined; one node each, saving x, the statistics and the weight. With xhat = (x - mean)·invstd,
// invstd = 1/√(var + eps) and the sums and means over each statistic's elements:
/// y = xhat·w + b, the statistics over every dim but 1: the batch's when training (the biased
/// variance; running_mean and running_var, when defined, become (1-momentum)·r + momentum·s in
/// place, with the unbiased variance), else running_mean and running_var, which must be defined.
/// dx = invstd·(dy·w - mean(dy·w) - xhat·mean(dy·w·xhat)) (training), invstd·w·dy (not);
/// dw = Σ dy·xhat, db = Σ dy. Not differentiable in the running statistics.
/// ATen's order and arity, no defaults: tapegrad's old order no longer compiles (cudnn ignored).
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled);
/// y = xhat·w + b, the statistics of each sample over each of num_groups groups of C/num_groups
/// channels (and every spatial dim);  dx, dw, db as batch_norm's, per group (cudnn ignored)
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5, bool cudnn_enabled = true);

// ---- transformers: embeddings, row normalisation, attention
/// y = weight[indices]: weight [V,D], indices int64 of any shape -> indices.shape + [D];
/// dweight = index_add(dy rows, indices): each row gathers the rows of its token (the CPU sorts
/// the tokens; the same bits for any thread count). ATen's arguments: the padding_idx row gets
/// no gradient, and a negative padding_idx means none (F::embedding and nn::Embedding count a
/// negative one from the end, as LibTorch's do); scale_grad_by_freq divides each row's gradient
/// by its token's count in indices; sparse gradients are refused (value_error).
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
/// y = (x - mean)·rstd·w + b over the last dims of x (normalized_shape; w, b of that shape or
/// undefined), rstd = 1/√(var + eps), biased variance; one node saving x, w, mean and rstd.
/// dx = rstd·(g - mean(g) - xhat·mean(g·xhat)), g = dy·w;  dw = Σ dy·xhat, db = Σ dy
/// (cudnn_enable: ATen's last argument, ignored)
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5, bool cudnn_enable = true);
/// y = x·rstd·w over the last dims, rstd = 1/√(mean(x²) + eps) (eps: the dtype's epsilon by
/// default, as PyTorch). dx = rstd·(g - xhat·mean(g·xhat)), g = dy·w;  dw = Σ dy·xhat
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                std::optional<double> eps = std::nullopt);
/// y = dropout(softmax(scale·q·kᵀ + mask))·v: q [..., L, E], k [..., S, E], v [..., S, Ev] with
/// the same leading dims; attn_mask broadcasts to [..., L, S]: floating (added; differentiable)
/// or bool (true = may attend, as PyTorch's; int64 nonzero too); is_causal: query i attends keys
/// j <= i (with attn_mask too, both apply: PyTorch refuses the pair); scale defaults to 1/√E;
/// dropout_p applies to the probabilities: LibTorch's mask, bernoulli(1 - dropout_p) over all
/// [..., L, S] of them (Note [Dropout masks] in src/ops/activation.cpp).
/// One node saving q, k, v and each row's log-sum-exp (O(L) per head, not O(L·S)): backward
/// recomputes the probabilities a block of rows at a time (Note [Attention that saves O(T)]).
/// dv = Pᵀ·dy, dS = P∘(dy·vᵀ - rowsum(P∘dy·vᵀ)), dq = scale·dS·k, dk = scale·dSᵀ·q
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);
/// As above, the dropout mask drawn from `generator`.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, const Generator& generator);

// ---- random ops used by layers
/// Zeroes each element with probability p and scales the rest by 1/(1-p) when train is true;
/// dx = dy * mask / (1-p). The mask is LibTorch's (bernoulli_(1 - p) of x's shape and dtype,
/// Note [Dropout masks] in src/ops/activation.cpp), from the thread's default generator or g.
Tensor dropout(const Tensor& x, double p, bool train);
Tensor dropout(const Tensor& x, double p, bool train, const Generator& g);
/// Dropout of whole feature maps (nn::Dropout2d): zeroes each slice x[n][c] of x [N,C,*] with
/// probability p and scales the rest by 1/(1-p) when train is true; dx = dy * mask / (1-p).
Tensor feature_dropout(const Tensor& x, double p, bool train);
Tensor feature_dropout(const Tensor& x, double p, bool train, const Generator& g);

}  // namespace tg

#pragma GCC visibility pop
