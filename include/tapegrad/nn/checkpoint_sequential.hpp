#pragma once
/// Checkpointed Sequential: √n segments (as torch.utils.checkpoint.checkpoint_sequential) and a
/// memory-budget planner that picks the segments itself (docs/checkpointing.md).
///
///     // √n segments, each run through tg::checkpoint except the last
///     tg::Tensor y = tg::nn::checkpoint_sequential(net, 0, x);
///     // the least recompute time (measured per layer) whose step fits in 64 MB of activations
///     // and workspace
///     auto plan = tg::nn::plan_checkpoints(net, x, tg::MemoryBudget{64 << 20});
///     std::cout << plan;                          // boundaries, predicted peak, recompute time
///     tg::Tensor y2 = tg::nn::checkpoint_sequential(net, plan, x);
///
/// The same for a ModuleList of blocks (each called through Module::operator()), or for any
/// chain of one-tensor functions with the parameters they use (Stage), e.g. causal transformer
/// blocks whose forward takes more than the input:
///     std::vector<tg::nn::Stage> stages;
///     for (auto& b : *blocks)
///         stages.push_back({b->label(), [b](const tg::Tensor& h) { return as_block(b)(h, true);
///         }});
///     auto plan = tg::nn::plan_checkpoints(stages, blocks->parameters(), h0, budget);
///     tg::Tensor h = tg::nn::checkpoint_stages(stages, plan, h0);
///
/// What the budget bounds: the bytes a training step allocates above what is live when it
/// starts (parameters, their allocated gradients, optimizer state, the input): saved
/// activations, kept segment boundaries, recomputed segments and the transient gradient buffers
/// of backward. It is measured as tg::memory::stats().peak_bytes after reset_peak() minus
/// current_bytes at the start of the step, with gradients allocated (zero_grad(false)).
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/nn/sequential.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// A byte budget for what a training step may allocate (see the header comment).
struct MemoryBudget {
    int64_t bytes = 0;
};

namespace nn {

/// One link of a chain the planner segments: its name (in profiles and reports) and a function
/// of one tensor. A Sequential's or ModuleList's stages are its modules (stages()).
struct Stage {
    std::string name;
    std::function<Tensor(const Tensor&)> fn;
};
/// Each module of `list` as a Stage: named by its label, called through Module::operator().
std::vector<Stage> stages(const ModuleListImpl& list);

/// What one layer of a Sequential costs, measured once on an example input.
struct LayerProfile {
    std::string name;            // the module's label ("Linear[0]")
    int64_t out_bytes = 0;       // bytes of its output (the next segment boundary)
    bool saves_input = false;    // its backward keeps its input alive
    bool saves_output = false;   // its backward keeps its output alive
    int64_t saved_bytes = 0;     // other bytes its backward keeps (parameters excluded)
    int64_t forward_peak = 0;    // peak above the live input during a recorded forward
    int64_t nograd_peak = 0;     // the same, unrecorded (a checkpointed forward)
    int64_t backward_peak = 0;   // peak above everything live when its backward starts
    double forward_seconds = 0;  // median time of an unrecorded forward (what recomputing costs)
};

/// Per-layer profile of a Sequential on one input: the planner's data.
struct SequentialProfile {
    std::vector<LayerProfile> layers;
    int64_t input_bytes = 0;
    /// Saved-activation bytes of an un-checkpointed forward (each buffer once, parameters and
    /// the input excluded).
    int64_t saved_bytes_total() const;
};

/// A segmentation of a Sequential: half-open layer ranges, each run plainly or checkpointed. A
/// checkpointed segment may have a plan of its own (`inner`, segments of [begin, end)) for its
/// recomputation in backward: nested (multi-level) checkpointing, which keeps fewer boundaries
/// alive at once for more recomputation.
struct CheckpointPlan {
    struct Segment {
        size_t begin = 0, end = 0;  // layers [begin, end)
        bool checkpointed = false;
        std::vector<Segment> inner;  // checkpointed: how it is recomputed (empty: plainly)
        Segment() = default;
        Segment(size_t b, size_t e, bool ckpt, std::vector<Segment> in = {})
            : begin(b), end(e), checkpointed(ckpt), inner(std::move(in)) {}
    };
    std::vector<Segment> segments;
    int64_t budget_bytes = 0;                // the budget it was planned for (0: none)
    int64_t predicted_peak_bytes = 0;        // predicted step peak above the starting live bytes
    int64_t predicted_saved_bytes = 0;       // peak of kept + recomputed saved activations alone
    int64_t unplanned_peak_bytes = 0;        // predicted step peak without checkpointing
    int64_t recomputed_layers = 0;           // extra forward cost: layer runs beyond the first
    double predicted_recompute_seconds = 0;  // the same in the profile's forward_seconds
    double forward_seconds = 0;              // one forward of every layer (the profile's sum)
    size_t num_layers = 0;
    /// Extra forward cost as a fraction of one forward, counted in layers.
    double recompute_fraction() const;
    /// Layer indices where a segment starts (the boundaries of the outermost level).
    std::vector<size_t> boundaries() const;
    /// Levels of checkpoints: 0 none, 1 single-level, 2 when a segment has an inner plan, ...
    int levels() const;
};
std::ostream& operator<<(std::ostream& os, const CheckpointPlan& plan);

/// Runs seq on input in `segments` equal segments (0: round(√n)), each through tg::checkpoint
/// except the last, which runs plainly as in PyTorch (its activations are needed first in
/// backward, so checkpointing it would only recompute it at once). Gradients are bit-identical
/// to seq->forward(input), Dropout included. Throws value_error unless
/// 0 <= segments <= seq->size(). use_reentrant=false runs the segments through the non-reentrant
/// checkpoint (tg::checkpoint), which does not run a segment's last layer again (an MLP's √n step
/// is about 5% faster); the planner's predictions model the reentrant one.
Tensor checkpoint_sequential(const Sequential& seq, int64_t segments, const Tensor& input,
                             bool use_reentrant = true);

/// Runs seq on input following `plan` (from plan_checkpoints or sqrt_plan; a segment with an inner
/// plan runs it inside its checkpoint); throws value_error if the plan (or an inner plan) does
/// not cover its layers. The plan's predictions are for use_reentrant=true.
Tensor checkpoint_sequential(const Sequential& seq, const CheckpointPlan& plan, const Tensor& input,
                             bool use_reentrant = true);

/// plan_checkpoints(seq, input, budget) then runs the plan. Profiling costs about one extra
/// forward and backward per call: in a training loop make the plan once and pass it instead.
Tensor checkpoint_sequential(const Sequential& seq, const Tensor& input, MemoryBudget budget);

/// Runs each layer of seq once on the example input (recorded and unrecorded, then backward)
/// and measures what it saves and allocates, with the allocator statistics. Parameters'
/// gradients and the random generator are left as they were.
SequentialProfile profile_sequential(const Sequential& seq, const Tensor& example_input);

/// The plan with the least recompute time (the profile's forward_seconds of the recomputed
/// layers, counted once per recomputation; ties: the fewest) whose predicted step peak fits the
/// budget, with at most `levels` levels of checkpoints (0: any; 1: single-level segments). An
/// exact dynamic program (docs/checkpointing.md): a nested plan is returned only where it is
/// cheaper or the only one that fits, so it is never worse than the single-level plan. Throws
/// value_error naming the smallest feasible budget if none fits.
CheckpointPlan plan_checkpoints(const SequentialProfile& profile, MemoryBudget budget,
                                int levels = 0);
/// The smallest budget plan_checkpoints accepts for this profile with at most `levels` levels.
int64_t min_checkpoint_budget(const SequentialProfile& profile, int levels = 0);
/// profile_sequential then plan_checkpoints.
CheckpointPlan plan_checkpoints(const Sequential& seq, const Tensor& example_input,
                                MemoryBudget budget);

/// The same over any chain: `params` are the parameters the stages use (their gradients are
/// allocated while profiling, as in a step, and their buffers are not counted as saved).
SequentialProfile profile_stages(const std::vector<Stage>& stages,
                                 const std::vector<Tensor>& params, const Tensor& example_input);
CheckpointPlan plan_checkpoints(const std::vector<Stage>& stages, const std::vector<Tensor>& params,
                                const Tensor& example_input, MemoryBudget budget);
/// Runs the stages on input following `plan`, or in `segments` equal segments (0: round(√n)),
/// as checkpoint_sequential does for a Sequential.
Tensor checkpoint_stages(const std::vector<Stage>& stages, const CheckpointPlan& plan,
                         const Tensor& input, bool use_reentrant = true);
Tensor checkpoint_stages(const std::vector<Stage>& stages, int64_t segments, const Tensor& input,
                         bool use_reentrant = true);
/// A ModuleList of blocks, as a Sequential: its modules are the stages.
SequentialProfile profile_sequential(const ModuleList& blocks, const Tensor& example_input);
CheckpointPlan plan_checkpoints(const ModuleList& blocks, const Tensor& example_input,
                                MemoryBudget budget);
Tensor checkpoint_sequential(const ModuleList& blocks, const CheckpointPlan& plan,
                             const Tensor& input, bool use_reentrant = true);
Tensor checkpoint_sequential(const ModuleList& blocks, int64_t segments, const Tensor& input,
                             bool use_reentrant = true);

/// The plan checkpoint_sequential(seq, segments, x) runs (0: round(√n)), with its prediction.
CheckpointPlan sqrt_plan(const SequentialProfile& profile, int64_t segments = 0);
/// Fills in the predictions (peak, saved peak, cost) of a plan's segments from a profile.
CheckpointPlan predict(const SequentialProfile& profile, CheckpointPlan plan);

}  // namespace nn
}  // namespace tg

#pragma GCC visibility pop
