#pragma once
/// The losses (ops.hpp includes this header): reduction is mean (the default), sum or none,
/// as LibTorch's. Forward and backward of each are in src/ops/loss.cpp, loss_more.cpp,
/// loss_margin.cpp and loss_ctc.cpp.
#include <cstdint>

#include "tapegrad/array_ref.hpp"
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

// ---- the rest of ATen's losses (issue 30), in ATen's argument order
/// LibTorch's kBatchMean, a reduction only kl_div (KLDivLoss, F::kl_div) takes: the summed loss
/// divided by the batch size. Another loss given it does not compile, as in LibTorch.
struct BatchMean {};
constexpr BatchMean kBatchMean{};
/// A kl_div reduction: kNone, kMean, kSum or kBatchMean.
class KLDivReduction {
public:
    KLDivReduction(Reduction r = kMean) : r_(r) {}  // NOLINT: implicit, as LibTorch's variant
    KLDivReduction(BatchMean) : r_(kSum), batch_mean_(true) {}  // NOLINT: implicit
    /// The reduction kl_div applies before the batch mean's division (kSum for kBatchMean).
    Reduction reduction() const { return r_; }
    bool batch_mean() const { return batch_mean_; }

private:
    Reduction r_;
    bool batch_mean_ = false;
};
/// log_input: eˣ - t·x, else x - t·log(x + eps); full adds Stirling's t·log t - t + ½·log(2πt)
/// where t > 1 (composed, as ATen's)
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true,
                        bool full = false, double eps = 1e-8, Reduction r = Reduction::Mean);
/// ATen's full form: w·((1 - t)·x + (1 + (pw - 1)·t)·(log(1 + e^-|x|) + max(-x, 0))), weight w
/// and pos_weight pw broadcast to x (either undefined: none)
Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& t, const Tensor& weight,
                                        const Tensor& pos_weight = {},
                                        Reduction r = Reduction::Mean);
/// 1 - cos(x1, x2) where target is 1, max(0, cos - margin) where it is -1 (0 elsewhere); x1, x2
/// [N,D] with target [N], or [D] with a 0-D target; cos = Σx1·x2 / √((Σx1² + 1e-12)(Σx2² + 1e-12))
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0, Reduction r = Reduction::Mean);
/// x where target != -1, plus max(0, margin - x) where target != 1
Tensor hinge_embedding_loss(const Tensor& x, const Tensor& target, double margin = 1,
                            Reduction r = Reduction::Mean);
/// max(0, -target·(x1 - x2) + margin); x1, x2 and target of one number of dims
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0, Reduction r = Reduction::Mean);
/// Σ_{j != y} w[y]·max(0, margin - x[y] + x[j])^p / C per sample: x [N,C] (or [C]), target
/// int64 [N] (or 0-D), p 1 or 2, weight [C] or undefined
Tensor multi_margin_loss(const Tensor& x, const Tensor& target, Scalar p = 1, Scalar margin = 1,
                         const Tensor& weight = {}, Reduction r = Reduction::Mean);
/// Σ_{j in J} Σ_{k not in J} max(0, 1 - x[j] + x[k]) / C per sample, J the classes of target
/// [N,C] (or [C]) int64 before its first -1
Tensor multilabel_margin_loss(const Tensor& x, const Tensor& target, Reduction r = Reduction::Mean);
/// -(t·log σ(x) + (1 - t)·log σ(-x))·w, summed over the classes (the last dim) / C, as LibTorch's
/// F::multilabel_soft_margin_loss
Tensor multilabel_soft_margin_loss(const Tensor& x, const Tensor& target, const Tensor& weight = {},
                                   Reduction r = Reduction::Mean);
/// log(1 + e^(-target·x))
Tensor soft_margin_loss(const Tensor& x, const Tensor& target, Reduction r = Reduction::Mean);
/// max(0, margin + d(a, p) - d(a, n)), d(u, v) = ‖u - v + eps‖_p over the last dim; swap: d(a, n)
/// is min(d(a, n), d(p, n))
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1, double p = 2, double eps = 1e-6, bool swap = false,
                           Reduction r = Reduction::Mean);
/// Connectionist temporal classification (ATen's ctc_loss): log_probs [T,N,C] (or [T,C]),
/// targets [N,S] padded or 1-D (the targets of every sample one after the other), input_lengths
/// and target_lengths [N] (or one each), blank a class. The loss of a sample is -log of the
/// summed probability of its alignments (the forward algorithm in log space, as LibTorch's CPU
/// kernel); zero_infinity turns infinite losses (and their gradients) into 0; kMean divides each
/// by its target length (at least 1) and averages. One node; its backward is LibTorch's (the
/// backward algorithm): dlog_probs = (e^log_probs - occupancy)·dy, which is the gradient through
/// a log_softmax in front of it. Once differentiable, as LibTorch's.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank = 0, Reduction r = Reduction::Mean,
                bool zero_infinity = false);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0, Reduction r = Reduction::Mean,
                bool zero_infinity = false);

}  // namespace tg

#pragma GCC visibility pop
