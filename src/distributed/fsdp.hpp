#pragma once
// The part of nn::FullyShardedDataParallel that runs inside forward and backward: flat units,
// shards, readiness and the reductions (Note [Sharded parameters] in fsdp_state.cpp).
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/hooks.hpp"
#include "tapegrad/nn/fully_sharded_data_parallel.hpp"

namespace tg::nn {

struct Unit {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // in elements of flat
    int64_t shard = 0;             // S: elements per rank
    Tensor flat;                   // the parameters, S·N elements (stage 3: while gathered)
    Tensor hollow;                 // stage 3: the empty buffer the parameters point at when freed
    bool gathered = true;          // flat holds the full parameters (stages 1, 2: always)
    Tensor grads;                  // the full gradients, S·N (undefined when freed)
    Tensor mine;  // this rank's shard, for the optimizer: flat[r·S, (r+1)·S), stage 3 a copy
    Tensor shard_grad;   // the reduce-scatter's output in this pass
    size_t pending = 0;  // parameters not ready yet in this pass
    bool launched = false;
    std::shared_ptr<distributed::Work> work;
    Tensor fetched;  // stage 3: the buffer a prefetch all-gathers into, until gather_unit
    std::shared_ptr<distributed::Work> fetch;  // the parameters' all-gather in flight
    // stage 1: the division and the all-gather posted after work, each with what it is
    std::vector<std::pair<const char*, std::shared_ptr<distributed::Work>>> chained;
};

class SequentialImpl;

/// A module the wrapper runs itself, in order (fsdp_wrap.cpp), and its dotted path.
struct UnitStep {
    std::string path;
    std::shared_ptr<Module> module;
};

struct FsdpState : std::enable_shared_from_this<FsdpState> {
    std::shared_ptr<distributed::ProcessGroup> group;
    int stage = 1;
    std::vector<std::string> names;
    std::vector<Tensor> params;
    std::vector<size_t> unit_of;
    std::vector<Unit> units;
    std::vector<char> ready;
    std::vector<UnitStep> steps;  // what forward runs with stage 3 or checkpoint (fsdp_wrap.cpp)
    std::vector<std::vector<size_t>> child_units;  // the units each step's parameters live in
    // Note [Units the model calls]: stage 3's selected modules that a parent's forward calls
    std::vector<UnitStep> called;
    std::vector<std::vector<size_t>> called_units;  // their units
    std::vector<std::vector<size_t>> unit_order;    // steps' and called units' in forward order
    std::shared_ptr<module_detail::CallHooks> call_hooks;  // fsdp_called.cpp
    struct CallState {
        int depth = 0;         // its calls under way (enter - exit)
        bool entered = false;  // entered in this forward (the probe's check)
        bool opened = false;   // the outermost call gathered its units (its exit releases them)
    };
    std::vector<CallState> calls;  // one per called module
    bool in_forward = false;       // the wrapper's forward is running
    bool probing = false;          // the first forward, every unit gathered (fsdp_called.cpp)
    bool probed = false;
    std::shared_ptr<autograd::detail::SavedHooks> pack_units;  // stage 3 (fsdp_stage3.cpp)
    bool sync = true;                                          // false inside no_sync()
    bool armed = false;      // a backward pass is under way: hooks have fired, finish() is queued
    bool pass_sync = false;  // the armed pass reduces (sync was on when it was armed)
    bool fresh = true;       // the next forward starts an accumulation window
    bool dirty = false;      // a sync happened since the last gather: the shards may have changed
    bool broadcast_buffers = true;
    bool checkpoint = false;  // each unit's forward under tg::checkpoint
    size_t next = 0;          // the next unit to launch
    FullyShardedDataParallelStats stats;

    /// Flattens each group of params (indices into params) into units of about cap bytes, a
    /// fresh unit at each group, and makes the module's parameters views of them; returns the
    /// units of each group. Stage 3 then frees the full parameters (keeping the shards).
    std::vector<std::vector<size_t>> build(int64_t cap,
                                           const std::vector<std::vector<size_t>>& groups);
    /// Post-accumulate hook of parameter i.
    void on_ready(size_t i);
    /// Stage 3 (Note [Sharded parameters, stage 3] in fsdp_stage3.cpp): runs fn with the units
    /// gathered, the parameters it saves for backward packed as handles, and frees them after.
    Tensor run_units(const std::vector<size_t>& ids, const std::function<Tensor()>& fn);
    /// Runs child on x as one unit (ids: its units at stage 3), under tg::checkpoint if set.
    Tensor run_child(const std::shared_ptr<Module>& child, const std::vector<size_t>& ids,
                     const Tensor& x);
    /// Stage 3: all-gathers unit k's shards into a new flat buffer the parameters point at.
    void gather_unit(size_t k);
    /// Stage 3: posts unit k's all-gather, not waited for (gather_unit takes it over).
    void prefetch(size_t k);
    /// Stage 3: prefetches the units of the child that runs after the one unit k belongs to, in
    /// forward order (or in backward's, the child before it).
    void prefetch_after(size_t k, bool forward);
    /// Stage 3: drops unit k's full parameters (the parameters point at an empty buffer).
    void release(size_t k);
    /// Stage 3: frees the full gradient buffers whose reduce-scatter has completed (block: waits
    /// for every one launched).
    void drain(bool block);
    /// Stage 3: the bytes of gathered parameters and full gradient buffers held now.
    void note_full_bytes();
    /// Stage 3, from a packed parameter's unpack in backward: unit k gathered for this pass.
    Tensor regather(size_t k);
    /// Before a forward: a pass that threw is cleaned up, the shards are gathered if a step may
    /// have changed them, and a new window's gradients become zeroed views of the units' buffers.
    void prepare();
    /// All-gathers every unit's shards into its flat buffer, if dirty, and waits.
    void gather();
    /// Stages 1 and 2: posts gather()'s all-gathers (if dirty), the first modules' unit first.
    void post_gathers();
    /// Stages 1 and 2: waits for unit k's all-gather posted by post_gathers, if any.
    void await(size_t k);
    /// Waits for the collectives a backward that threw left in flight.
    void recover();
    /// w->wait(), counted in stats' comm_seconds and exposed_seconds and listed in stats.last.
    void wait_for(const std::shared_ptr<distributed::Work>& w, const char* what);

private:
    void arm();
    void launch(Unit& u);
    /// Stage 1: posts the division of u's reduce-scattered shard and its all-gather back into
    /// u.grads right after the reduce-scatter, so they overlap the rest of backward.
    void chain_gather(Unit& u);
    void finish();
};

/// m as a plain Sequential (not a subclass, whose forward may differ), or null.
SequentialImpl* as_sequential(Module& m);

/// The modules forward runs one after the other: the root for a module that is not a Sequential,
/// else its children, a child the policy does not select opened when it is a plain Sequential
/// holding a selected module. A selected module no step is or holds goes to called (the
/// outermost ones only), or is a value_error when called is null.
std::vector<UnitStep> unit_steps(const std::shared_ptr<Module>& root, const WrapPolicy& policy,
                                 std::vector<UnitStep>* called);

/// Stage 3's groups of parameters (indices into s.params) in forward order: each step's own
/// (without the called units inside it), then those of the called units inside it; slot says
/// which each is ({false, step} or {true, called}). value_error for a parameter two units share.
struct UnitGroups {
    std::vector<std::vector<size_t>> groups;
    std::vector<std::pair<bool, size_t>> slot;
};
UnitGroups unit_groups(const std::vector<UnitStep>& steps, const std::vector<UnitStep>& called,
                       const FsdpState& s);

/// Stage 3 (fsdp_called.cpp): hooks on the called modules, gathering each around its calls.
void install_call_hooks(FsdpState& s);
/// Stage 3: the wrapper's first forward with called units: every unit gathered, and
/// value_error (after releasing them) for a called module the forward did not call through
/// operator(). Later forwards run fn as is.
Tensor probe_forward(FsdpState& s, const std::function<Tensor()>& fn);

/// Stages 1 and 2: the units each step's parameters live in (forward waits for their gather).
std::vector<std::vector<size_t>> step_units(const FsdpState& s);

}  // namespace tg::nn
