#pragma once
// The part of nn::FullyShardedDataParallel that runs inside forward and backward: flat units,
// shards, readiness and the reductions (Note [Sharded parameters] in fsdp_state.cpp).
#include <memory>
#include <string>
#include <vector>

#include "tapegrad/nn/fully_sharded_data_parallel.hpp"

namespace tg::nn {

struct Unit {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // in elements of flat
    int64_t shard = 0;             // S: elements per rank
    Tensor flat;                   // the parameters, S·N elements
    Tensor grads;                  // the full gradients, S·N (undefined when freed)
    Tensor mine;                   // flat[r·S, (r+1)·S): this rank's shard, for the optimizer
    Tensor shard_grad;             // the reduce-scatter's output in this pass
    size_t pending = 0;            // parameters not ready yet in this pass
    bool launched = false;
    std::shared_ptr<distributed::Work> work;
};

struct FsdpState : std::enable_shared_from_this<FsdpState> {
    std::shared_ptr<distributed::ProcessGroup> group;
    int stage = 1;
    std::vector<std::string> names;
    std::vector<Tensor> params;
    std::vector<size_t> unit_of;
    std::vector<Unit> units;
    std::vector<char> ready;
    bool sync = true;    // false inside no_sync()
    bool armed = false;  // a backward pass is under way: hooks have fired, finish() is queued
    bool fresh = true;   // the next forward starts an accumulation window
    bool dirty = false;  // a sync happened since the last gather: the shards may have changed
    bool broadcast_buffers = true;
    size_t next = 0;  // the next unit to launch
    FullyShardedDataParallelStats stats;

    /// Flattens params into units of about cap bytes (bucket order) and makes the module's
    /// parameters views of them.
    void build(int64_t cap);
    /// Post-accumulate hook of parameter i.
    void on_ready(size_t i);
    /// Before a forward: a pass that threw is cleaned up, the shards are gathered if a step may
    /// have changed them, and a new window's gradients become zeroed views of the units' buffers.
    void prepare();
    /// All-gathers every unit's shards into its flat buffer, if dirty.
    void gather();
    /// Waits for the collectives a backward that threw left in flight.
    void recover();

private:
    void arm();
    void launch(Unit& u);
    void finish();
};

}  // namespace tg::nn
