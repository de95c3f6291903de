#pragma once
/// Checkpointed recomputation: keep only a segment's inputs, recompute the rest in backward.
#include <functional>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

using CheckpointFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Runs fn(inputs) without recording and keeps only the inputs and the random state (the
/// thread's default generator and every tg::Generator fn draws from). In backward,
/// fn runs again on detached inputs with recording on (so dropout draws the same masks) and
/// its private subgraph is backpropagated: parameters used inside fn are leaves and their
/// grad() accumulates exactly as without checkpointing. autograd::grad differentiates through
/// it with respect to its inputs, the parameters used inside fn and tensors fn captured, and
/// leaves every .grad() alone. Under NoGradGuard it is a plain call. Outputs require grad if any
/// input or any tensor that requires grad used by fn does.
///
/// use_reentrant=false (PyTorch's non-reentrant checkpoint): fn runs once, recorded, but the
/// graph keeps none of its activations; the backward recomputes them when it first needs one,
/// reusing those still alive and stopping once it has what it needs (so the last op of a
/// segment, whose result is the segment's output, is not run again). Gradients are
/// bit-identical to the plain graph's. create_graph through it throws (Note [Recomputed saved
/// tensors] in src/checkpoint/recompute.cpp).
std::vector<Tensor> checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                               bool use_reentrant = true);
/// Single-output form.
Tensor checkpoint(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                  const std::vector<Tensor>& inputs, bool use_reentrant = true);

}  // namespace tg

#pragma GCC visibility pop
