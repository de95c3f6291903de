#pragma once
/// The losses (ops.hpp includes this header): reduction is mean (the default), sum or none,
/// as LibTorch's. Forward and backward of each are in src/ops/loss.cpp and loss_more.cpp.
#include <cstdint>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

// ---- losses; reduction is "mean" (default), "sum" or "none"
/// In ATen's numbering (None 0, Mean 1, Sum 2), so that a value-initialised reduction ({}) means
/// None, as LibTorch's int64_t reduction argument does.
enum class Reduction { None, Mean, Sum };
/// LibTorch's spellings of the reductions (torch::kMean, kSum, kNone)
constexpr Reduction kMean = Reduction::Mean, kSum = Reduction::Sum, kNone = Reduction::None;
/// mean((x - y)²) (composed)
Tensor mse_loss(const Tensor& x, const Tensor& y, Reduction r = Reduction::Mean);
/// mean(|x - y|) (composed)
Tensor l1_loss(const Tensor& x, const Tensor& y, Reduction r = Reduction::Mean);
/// -logp[i, label_i] averaged over rows; logp:[N,C] log-probabilities, labels:[N] int64 (composed)
Tensor nll_loss(const Tensor& logp, const Tensor& labels, Reduction r = Reduction::Mean);
/// nll_loss(log_softmax(logits, 1), labels) as one node;  dlogits = (softmax - onehot) * dy / N
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction r = Reduction::Mean);
/// LibTorch's options of nll_loss and cross_entropy (src/ops/loss_more.cpp): class weights [C],
/// labels equal to ignore_index count for nothing (a mean divides by the summed weights of the
/// samples that count), and label smoothing mixes in the uniform target, as PyTorch 1.13 does.
Tensor nll_loss(const Tensor& logp, const Tensor& labels, Reduction r, const Tensor& weight,
                int64_t ignore_index = -100);
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, Reduction r, const Tensor& weight,
                     int64_t ignore_index = -100, double label_smoothing = 0);
/// The same in ATen's argument order, as LibTorch programs call them:
/// torch::nll_loss(output, target, /*weight=*/{}, torch::Reduction::Sum).
Tensor nll_loss(const Tensor& logp, const Tensor& labels, const Tensor& weight,
                Reduction r = Reduction::Mean, int64_t ignore_index = -100);
Tensor cross_entropy_loss(const Tensor& logits, const Tensor& labels, const Tensor& weight = {},
                          Reduction r = Reduction::Mean, int64_t ignore_index = -100,
                          double label_smoothing = 0);
/// 0.5 z²/beta where z = |x - y| < beta, else z - beta/2 (beta = 0: l1_loss)
Tensor smooth_l1_loss(const Tensor& x, const Tensor& y, Reduction r = Reduction::Mean,
                      double beta = 1);
/// 0.5 z² where z = |x - y| < delta, else delta (z - delta/2)
Tensor huber_loss(const Tensor& x, const Tensor& y, Reduction r = Reduction::Mean,
                  double delta = 1);
/// target (log target - logp) (0 where target is 0); log_target: exp(target) (target - logp).
/// Mean is over every element, as PyTorch's default.
Tensor kl_div(const Tensor& logp, const Tensor& target, Reduction r = Reduction::Mean,
              bool log_target = false);
/// -w (t log p + (1 - t) log(1 - p)), the logs clamped at -100 as in PyTorch
Tensor binary_cross_entropy(const Tensor& p, const Tensor& t, const Tensor& weight = {},
                            Reduction r = Reduction::Mean);
/// max(x,0) - x*y + log(1 + e^-|x|) (stable);  dx = dy * (sigmoid(x) - y)
Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& y,
                                        Reduction r = Reduction::Mean);

}  // namespace tg

#pragma GCC visibility pop
