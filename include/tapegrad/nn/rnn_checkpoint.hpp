#pragma once
/// Time checkpointing of RNN, LSTM and GRU (docs/rnn.md): checkpoint_every(k) keeps the state
/// every k steps (rounded up to whole chunks of steps) and recomputes the steps in between in
/// backward, with the plain run's gradients bit for bit; the planner picks k under a byte budget:
///
///     auto plan = tg::nn::plan_checkpoints(lstm, x, tg::MemoryBudget{8 << 20});
///     std::cout << plan;                       // k, predicted bytes, recomputed fraction
///     lstm->options.checkpoint_every(plan.checkpoint_every);
#include <cstdint>
#include <ostream>

#include "tapegrad/nn/checkpoint_sequential.hpp"
#include "tapegrad/nn/rnn.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// A checkpoint interval for a recurrent module on an input, with its predicted cost. The bytes
/// are the activations of the recurrent layers alone (what their nodes keep for backward, and
/// the inputs of the layers after the first): not the module's input and outputs, and not the
/// transient gradient buffers of backward.
struct TimeCheckpointPlan {
    int64_t checkpoint_every = 0;       // for the module's options (0: keep every step)
    int64_t segment_steps = 0;          // the steps of a segment (k rounded up to whole chunks)
    int64_t steps = 0;                  // the input's time steps
    int64_t budget_bytes = 0;           // the budget it was planned for
    int64_t predicted_saved_bytes = 0;  // kept for backward (memory::Stats::saved_bytes)
    int64_t predicted_peak_bytes = 0;   // kept, plus the segment recomputed at a time
    int64_t plain_saved_bytes = 0;      // kept without checkpointing
    /// Extra forward cost: the steps recomputed in backward over the steps.
    double recompute_fraction = 0;
};
std::ostream& operator<<(std::ostream& os, const TimeCheckpointPlan& plan);

/// The plan for `module` on inputs shaped as `example_input` (its values are not read) in
/// training, with checkpoint_every = k, by the memory model of docs/rnn.md (0: no checkpointing).
TimeCheckpointPlan predict(const detail::RNNImplBase& module, const Tensor& example_input,
                           int64_t checkpoint_every, bool training = true);
/// The interval with the fewest recomputed steps whose predicted_peak_bytes fits the budget
/// (checkpoint_every 0 when everything fits). Throws value_error naming the smallest feasible
/// budget if none fits. The module's options are not changed.
TimeCheckpointPlan plan_checkpoints(const detail::RNNImplBase& module, const Tensor& example_input,
                                    MemoryBudget budget);

}  // namespace tg::nn

#pragma GCC visibility pop
