#pragma once
/// Gradient accumulation over micro-batches: one optimizer step per global batch, with the loss
/// scaling done for you (docs/checkpointing.md).
///
///     tg::optim::SGD opt(model->parameters(), tg::optim::SGDOptions(0.1));
///     tg::optim::Accumulator acc(opt, 256);            // 256 samples per optimizer step
///     for (int k = 0; k < 8; ++k) {                     // 8 micro-batches of 32
///         tg::Tensor loss = tg::mse_loss(model(x[k]), y[k]);   // mean over the 32
///         acc.backward(loss, 32);                       // scaled by 32/256, graph freed
///     }
///     acc.step();                                       // opt.step(); opt.zero_grad()
///
/// The accumulated gradient equals the gradient of the same loss, with the same reduction, over
/// the whole global batch:
///   - Reduction::Mean: the micro-batch mean is scaled by n_micro / n_global, so the sum over
///     micro-batches is the mean over the global batch (not the mean of micro-batch means,
///     which differs when micro-batches have different sizes);
///   - Reduction::Sum: not scaled (a sum over micro-batches is the sum over the global batch);
///   - Reduction::None: an unreduced loss (first dim = n_micro, e.g. mse_loss's [n, k] or
///     cross_entropy's [n]) is summed and scaled to the mean over all entries of the global
///     batch: what Reduction::Mean over the whole batch gives.
/// Variable-length sequences: when each micro-batch's loss is a mean over its tokens (a
/// cross-entropy over [tokens, vocabulary]), count tokens, not sequences: pass the micro-batch's
/// token count as micro_batch and the step's total as global_batch. The accumulated gradient is
/// then the token mean over the whole batch, as one big batch gives; counting sequences would
/// weight the tokens of short sequences more.
/// Only one micro-batch's graph is alive at a time (each backward frees it), so the memory is
/// that of one micro-batch plus the gradients. Layers that couple the samples of a batch (batch
/// statistics) see micro-batches, not the global batch: accumulation is exact only for
/// per-sample models (tapegrad has no BatchNorm).
#include <cstdint>

#include "tapegrad/ops.hpp"
#include "tapegrad/optim/optimizer.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::optim {

class Accumulator {
public:
    /// Steps `optimizer` once every `global_batch` samples; throws value_error if global_batch < 1.
    /// set_to_none is passed to the optimizer's zero_grad after each step.
    Accumulator(Optimizer& optimizer, int64_t global_batch, bool set_to_none = true);

    /// Backpropagates `loss` of a micro-batch of `micro_batch` samples, scaled as described
    /// above. Throws (before any backward) value_error if micro_batch < 1, the loss is undefined
    /// or the samples would exceed the global batch (call step() first), shape_error if the loss
    /// is not a scalar (Mean, Sum) or not per-sample (None), autograd_error if it does not
    /// require grad.
    void backward(const Tensor& loss, int64_t micro_batch, Reduction reduction = Reduction::Mean);
    /// The optimizer step and zero_grad; throws tg::error unless exactly global_batch samples
    /// were backpropagated since the last step.
    void step();

    /// Samples backpropagated since the last step.
    int64_t samples_seen() const { return seen_; }
    int64_t global_batch() const { return global_; }
    /// Whether the global batch is complete (step() is due).
    bool ready() const { return seen_ == global_; }
    /// Optimizer steps taken through this accumulator.
    int64_t steps() const { return steps_; }

private:
    Optimizer& opt_;
    int64_t global_;
    bool set_to_none_;
    int64_t seen_ = 0;
    int64_t steps_ = 0;
};

}  // namespace tg::optim

#pragma GCC visibility pop
