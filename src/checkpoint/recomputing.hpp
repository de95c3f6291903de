#pragma once
// Whether the calling thread is running a forward again: the one question ops with side effects
// ask the checkpoint layer (Note [Side effects of a recomputation]).
namespace tg::checkpointing {

// Note [Side effects of a recomputation]: a checkpoint runs its function twice (both forms
// recompute in backward what the first run did not keep), and checkpoint_sequential's planner
// runs each layer twice more to measure it. Outputs come out the same (the random state is
// replayed), but an op that also writes state of its own, as batch_norm updates its running
// statistics and BatchNorm counts its batches, would write it once per run. So every such extra
// run is marked, and those ops write their state only in a run that is not marked: the running
// statistics after forward and backward are those of the plain graph (PyTorch updates them
// twice). What a marked run computes does not depend on the mark.

/// Whether this thread is inside a run that repeats or rehearses a forward whose side effects
/// happen once elsewhere: a checkpoint's recomputation or a profiling run of
/// nn::profile_sequential.
bool recomputing();

/// Marks the calling thread as recomputing for its scope; scopes nest.
class RecomputeScope {
public:
    RecomputeScope();
    ~RecomputeScope();
    RecomputeScope(const RecomputeScope&) = delete;
    RecomputeScope& operator=(const RecomputeScope&) = delete;

private:
    bool prev_;
};

}  // namespace tg::checkpointing
