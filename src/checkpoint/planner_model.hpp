#pragma once
// The memory model of a checkpointed step (Note [Checkpoint memory model] in planner.cpp) and
// the recompute cost the planner minimises, shared by the model (planner.cpp) and the dynamic
// program (planner_dp.cpp).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "tapegrad/nn/checkpoint_sequential.hpp"

namespace tg::nn::planner {

using Segment = CheckpointPlan::Segment;

/// Memory state at a boundary b: bytes kept by layers < b, and whether x_b is among them.
struct State {
    int64_t kept = 0;
    bool top_counted = true;
};
struct Step {
    int64_t peak;  // largest live bytes of the events
    State next;
};

/// What recomputing costs: measured time (nanoseconds of the profile's forward_seconds) first,
/// then layers. Integers, so that equal plans compare equal whatever the order of the sums.
struct Cost {
    int64_t ns = 0, layers = 0;
    Cost operator+(const Cost& o) const { return {ns + o.ns, layers + o.layers}; }
    bool operator<(const Cost& o) const { return ns != o.ns ? ns < o.ns : layers < o.layers; }
};

/// The model of Note [Checkpoint memory model] over one profile. With workspace=false every
/// transient (forward/backward peaks, gradient buffers) is zero: the saved-activation model.
class Model {
public:
    Model(const SequentialProfile& p, bool workspace);
    size_t n() const { return p_.layers.size(); }
    int64_t ob(size_t j) const { return j == 0 ? 0 : p_.layers[j - 1].out_bytes; }
    int64_t dy(size_t j) const { return ws_ ? ob(j) : 0; }
    /// x_j alive as the input of the layer running forward (workspace, not saved).
    int64_t live(size_t j) const { return ws_ ? ob(j) : 0; }
    /// Recomputing layers [b, e) once.
    Cost cost(size_t b, size_t e) const { return {ns_[e] - ns_[b], int64_t(e) - int64_t(b)}; }

    /// Layer i run plainly from state s. top: in the outermost chain, whose output x_n the
    /// caller holds (not kept again by layer n-1). fwd_extra: bytes alive during the forward
    /// events only (the incoming gradient dy_e of an enclosing recomputation).
    Step plain(size_t i, State s, bool top, int64_t fwd_extra) const;
    /// The unrecorded forward of a checkpointed segment [b, e), relative to kept(< b) + x_b.
    int64_t forward_local(size_t b, size_t e) const;
    /// Its backward: the recomputation, run with `inner` (empty: plainly), and the backward of
    /// what that recorded, relative to kept(< b) + x_b; dy_e is alive during the recomputation.
    int64_t backward_local(size_t b, size_t e, const std::vector<Segment>& inner) const;
    /// A checkpointed segment from state s given its two local peaks.
    Step checkpointed(size_t b, State s, int64_t fwd_extra, int64_t fwd_local,
                      int64_t bwd_local) const {
        const int64_t B = s.kept + (s.top_counted ? 0 : ob(b));
        return {std::max(fwd_extra + B + fwd_local, B + bwd_local), State{B, false}};
    }
    /// The events of running `segs` (consecutive, from their first layer) from state s.
    Step run(const std::vector<Segment>& segs, State s, bool top, int64_t fwd_extra) const;

    /// The caller's output x_n: alive from the end of the forward through the whole backward
    /// (`auto out = net(x); loss(out).backward();` holds it), so it is added to every event.
    /// Plus kLossSlack: the scalar loss and its gradient (up to 64 B each).
    int64_t held() const;
    int64_t final_kept(State s) const { return s.kept + held(); }
    /// Predicted peak of a plan.
    int64_t simulate(const std::vector<Segment>& segs) const;

private:
    const SequentialProfile& p_;
    bool ws_;
    std::vector<int64_t> ns_;  // prefix sums of the layers' forward nanoseconds
};

/// The cheapest plan (in Cost) whose predicted peak fits `budget`, with at most `levels` levels
/// of checkpoints (0: any; 1: today's single level); empty segments if none fits. With
/// min_cost=false only feasibility is sought (any fitting plan).
struct Solution {
    bool ok = false;
    Cost cost;
    std::vector<Segment> segments;
};
class Solver {
public:
    Solver(const Model& m, int levels);
    ~Solver();
    Solution solve(int64_t budget, bool min_cost);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace tg::nn::planner
