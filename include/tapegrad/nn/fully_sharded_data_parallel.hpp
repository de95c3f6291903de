#pragma once
/// Sharded data parallel (ZeRO stages 1 to 3, issue 33): like DistributedDataParallel every rank
/// runs the whole model on its share of the batch, but the optimizer state (stage 1), after
/// backward the gradients too (stage 2), and between uses the parameters too (stage 3) are cut
/// in shards, one per rank.
///
///     tg::distributed::init(&argc, &argv);
///     auto model = tg::nn::FullyShardedDataParallel(make_model(),
///                                                   tg::nn::ShardingOptions().stage(2));
///     tg::optim::AdamW opt(model->parameters(), tg::optim::AdamWOptions(3e-4));  // shards
///     for (auto& batch : loader) {
///         opt.zero_grad();
///         loss(model->forward(batch.x), batch.y).backward();  // gradients reduce-scattered
///         model->clip_grad_norm_(1.0);                         // a norm over every shard
///         opt.step();                                          // updates this rank's shard
///     }                                // the next forward all-gathers the updated shards
///
/// Note [Sharded parameters] in src/distributed/fsdp_state.cpp says how the module's parameters,
/// the shards the optimizer sees and the gradients share memory. At stage 3 (Note [Sharded
/// parameters, stage 3] in src/distributed/fsdp_stage3.cpp) a unit is a child of a Sequential
/// (the whole module for any other module; ShardingOptions::wrap_policy opens nested
/// Sequentials): its parameters are all-gathered just before its forward (the next unit's
/// gather in flight meanwhile) and freed after it, gathered again when backward first needs them
/// (the unit before it prefetched) and freed once their gradients are done.
/// tapegrad/sharded_checkpoint.hpp saves and loads the shards.
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "tapegrad/distributed.hpp"
#include "tapegrad/nn/module.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// Which modules are units at stage 3 (PyTorch's ModuleWrapPolicy): true for a module that is
/// one. See ShardingOptions::wrap_policy.
using WrapPolicy = std::function<bool(const Module&)>;

/// A unit per module of type T (a holder such as Block, or its BlockImpl), as PyTorch's
/// ModuleWrapPolicy({Block}).
template <class T>
WrapPolicy wrap_each() {
    return [](const Module& m) {
        return dynamic_cast<const typename module_detail::Contained<T>::type*>(&m) != nullptr;
    };
}

/// A unit per module that holds at least min_num_params parameter elements outside the units
/// below it (PyTorch's size_based_auto_wrap_policy, bottom-up): a module's count is its own
/// parameters' elements plus those of each child that is not a unit itself. ModuleList and
/// ModuleDict are never units (they have no forward); their elements count for their parent.
/// A unit inside a unit is part of the outer one (PyTorch would nest them). value_error for
/// min_num_params < 1.
WrapPolicy wrap_size_based(int64_t min_num_params);

/// Options with chained setters. Defaults: stage 1, units of 25 MiB, buffers broadcast from rank
/// 0 at every forward, the default process group.
class ShardingOptions {
public:
    /// 1: optimizer state sharded; 2: gradients too; 3: parameters too (value_error otherwise,
    /// when the wrapper is built).
    ShardingOptions& stage(int s) {
        stage_ = s;
        return *this;
    }
    /// Parameter bytes per unit (MiB, > 0): a unit's gradients are reduce-scattered as soon as
    /// backward has finished them, so smaller units start communicating earlier. Stages 1 and 2
    /// only: stage 3's units are the children of a Sequential.
    ShardingOptions& bucket_cap_mb(double mb) {
        bucket_cap_mb_ = mb;
        return *this;
    }
    /// Copy rank 0's buffers (BatchNorm statistics) to every rank before each forward.
    ShardingOptions& broadcast_buffers(bool on) {
        broadcast_buffers_ = on;
        return *this;
    }
    /// Activation checkpointing per unit: each child of a Sequential (or the whole module) runs
    /// under tg::checkpoint, and at stage 3 its recomputation in backward gathers the unit again.
    /// The gradients are the same bits as without it.
    ShardingOptions& checkpoint(bool on) {
        checkpoint_ = on;
        return *this;
    }
    /// Stage 3's units (and checkpoint's), when the module is a Sequential: without a policy one
    /// per child; with one, a child the policy does not select that is itself a plain Sequential
    /// holding a selected module is opened and its children taken in its place, recursively. So
    /// nested Sequentials of blocks give a unit per block. A selected module that no chain of
    /// Sequentials from the top reaches (a block in a ModuleList that its parent's forward
    /// iterates) is a unit too at stage 3, gathered around each call of it through operator()
    /// (`block(x)`, `(*module)(x)`: Note [Units the model calls]); the step holding it keeps the
    /// rest of its parameters as a unit. The first forward checks that every such module was
    /// called so (value_error naming it if the forward called its ->forward() directly, which
    /// the wrapper cannot see). With checkpoint, or below stage 3, such a module is a
    /// value_error when the wrapper is built. Stages 1 and 2 cut their units by bucket_cap_mb and
    /// use the policy only with checkpoint.
    ShardingOptions& wrap_policy(WrapPolicy p) {
        wrap_policy_ = std::move(p);
        return *this;
    }
    ShardingOptions& process_group(std::shared_ptr<distributed::ProcessGroup> g) {
        group_ = std::move(g);
        return *this;
    }
    int stage() const { return stage_; }
    double bucket_cap_mb() const { return bucket_cap_mb_; }
    bool broadcast_buffers() const { return broadcast_buffers_; }
    bool checkpoint() const { return checkpoint_; }
    const std::shared_ptr<distributed::ProcessGroup>& process_group() const { return group_; }
    const WrapPolicy& wrap_policy() const { return wrap_policy_; }

private:
    int stage_ = 1;
    double bucket_cap_mb_ = 25;
    bool broadcast_buffers_ = true;
    bool checkpoint_ = false;
    std::shared_ptr<distributed::ProcessGroup> group_;
    WrapPolicy wrap_policy_;
};

/// A collective of the latest step as the wrapper saw it, in steady-clock seconds (the clock of
/// distributed::Work::started_at): what it was, when it ran on the communication thread, and
/// when the wrapper's thread waited for it (wait_to - wait_from is its exposed part).
struct ShardedCollectiveSpan {
    const char* what = "";  // "all-gather", "reduce-scatter" or "divide" (stage 1's averaging)
    double started = 0, ended = 0;
    double wait_from = 0, wait_to = 0;
};

/// What a FullyShardedDataParallel has communicated since it was made.
struct FullyShardedDataParallelStats {
    uint64_t syncs = 0;            // backward passes whose gradients were reduced
    uint64_t reduce_scatters = 0;  // gradients: one per unit per sync
    uint64_t all_gathers = 0;  // stage 1's averaged gradients, the parameters after a step (stage
                               // 3: a unit before its forward and again for its backward)
    uint64_t peak_full_bytes = 0;  // stage 3: the most bytes of gathered parameters and of full
                                   // gradient buffers awaiting their reduce-scatter held at once
    double comm_seconds = 0;       // how long the collectives the wrapper waited for ran on the
                                   // communication thread (steady clock)
    double exposed_seconds = 0;    // how long the wrapper's thread waited for them: the share of
                                   // comm_seconds not hidden behind compute
    std::vector<ShardedCollectiveSpan> last;  // the collectives waited for since the latest
                                              // forward began, in the order waited for
};

class FullyShardedDataParallel {
public:
    /// Wraps module: checks that every rank has the same parameters (distributed_error naming
    /// the first that differs), copies rank 0's parameters and buffers to every rank, flattens
    /// the parameters that require grad into units of about bucket_cap_mb (one dtype and device
    /// each, modules in reverse order as DDP's buckets), one buffer each
    /// (padded to a multiple of the world size) that the module's parameters become views of,
    /// and registers the hooks that reduce gradients. Stage 3 makes a unit of each child of a
    /// Sequential (opened as wrap_policy says; value_error for a parameter two units share) or of
    /// the whole module, and keeps only this rank's shard of it. Collective. value_error for a null
    /// module or a stage other than 1, 2 or 3.
    explicit FullyShardedDataParallel(std::shared_ptr<Module> module, ShardingOptions options = {});
    template <class Impl>
    explicit FullyShardedDataParallel(const ModuleHolder<Impl>& module,
                                      ShardingOptions options = {})
        : FullyShardedDataParallel(std::static_pointer_cast<Module>(module.ptr()),
                                   std::move(options)) {}
    ~FullyShardedDataParallel();
    FullyShardedDataParallel(const FullyShardedDataParallel&) = delete;
    FullyShardedDataParallel& operator=(const FullyShardedDataParallel&) = delete;

    /// For the spelling model->forward(x), model->parameters().
    FullyShardedDataParallel* operator->() { return this; }

    /// Gathers the shards updated since the last sync (all_gather, collective), broadcasts
    /// buffers if set, then runs the module. With grad mode on, the module's gradients become
    /// zeroed views of the unit's gradient buffer when a new accumulation starts (the first
    /// forward after a sync). Stage 3 runs a Sequential's children itself, each between the
    /// gather and the release of its unit (the whole module for any other module).
    Tensor forward(const Tensor& x);
    Tensor operator()(const Tensor& x) { return forward(x); }

    /// This rank's shards, one per unit: leaf tensors that require grad and alias the module's
    /// parameters' memory, for the optimizer. After a synced backward their gradients hold the
    /// average over the ranks of the shard's gradient.
    std::vector<Tensor> parameters() const;
    /// The module's full parameters (up to date after gather_parameters() or a forward; at stage
    /// 3 they hold no memory between uses, so read them only after gather_parameters()).
    std::vector<Tensor> full_parameters() const;
    /// All-gathers the shards if an optimizer step may have changed them since the last gather:
    /// forward() calls it; call it (on every rank) before reading or saving the full parameters.
    /// At stage 3 the gathered parameters stay until the next forward (or until this wrapper is
    /// destroyed, after which they stay for good).
    void gather_parameters();

    /// clip_grad_norm_ over the whole model, after a synced backward. Stage 1: the norm of the
    /// full averaged gradients every rank holds, computed as nn::utils::clip_grad_norm_ computes
    /// it (the same bits), and those gradients scaled. Stage 2: every rank's shard gradients'
    /// sum of |g|^p (max for inf) all-reduced, and the shards scaled; value_error for norm_type
    /// 0. Stage 3 as stage 2. Scaling is by min(max_norm / (norm + 1e-6), 1), as
    /// nn::utils::clip_grad_norm_ does. Returns the total norm. Collective.
    /// nn::utils::clip_grad_norm_(parameters(), ...) alone would see only this rank's shard.
    double clip_grad_norm_(double max_norm, double norm_type = 2.0);

    /// While it lives, backward only accumulates full gradients locally; the first backward after
    /// it reduces everything accumulated.
    class NoSync {
    public:
        ~NoSync();
        NoSync(NoSync&& o) noexcept;
        NoSync(const NoSync&) = delete;
        NoSync& operator=(const NoSync&) = delete;
        NoSync& operator=(NoSync&&) = delete;

    private:
        friend class FullyShardedDataParallel;
        explicit NoSync(std::shared_ptr<struct FsdpState> s);
        std::shared_ptr<struct FsdpState> state_;
        bool prev_ = true;
    };
    NoSync no_sync();

    const std::shared_ptr<Module>& module() const { return module_; }
    int stage() const;
    FullyShardedDataParallelStats stats() const;

private:
    friend struct FsdpAccess;  // tg::distributed::save_sharded and load_sharded
    std::shared_ptr<Module> module_;
    std::shared_ptr<struct FsdpState> state_;
};

}  // namespace tg::nn

#pragma GCC visibility pop
