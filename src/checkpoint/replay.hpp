#pragma once
// What the two checkpoint forms share (checkpoint.cpp, recompute.cpp).
#include <vector>

#include "autograd/saved.hpp"
#include "tapegrad/checkpoint.hpp"

namespace tg::checkpointing {

/// The inputs a checkpoint saved, as the leaves of its recomputation: detached, and requiring
/// grad where the originals did.
std::vector<Tensor> replay_inputs(const std::vector<autograd::detail::Saved>& saved);

/// tg::checkpoint(fn, inputs, /*use_reentrant=*/false), with grad mode on (recompute.cpp).
std::vector<Tensor> checkpoint_nonreentrant(const CheckpointFn& fn,
                                            const std::vector<Tensor>& inputs);

}  // namespace tg::checkpointing
