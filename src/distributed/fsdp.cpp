// nn::FullyShardedDataParallel, ZeRO stages 1 and 2: flat parameter units, shards for the
// optimizer, gradients all-reduced (stage 1) or reduce-scattered (stage 2) when backward ends.
#include <cmath>
#include <string>
#include <utility>

#include "distributed/reducer.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/nn/fully_sharded_data_parallel.hpp"
#include "tapegrad/nn/utils.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

// Note [Sharded parameters]: the parameters that require grad are cut into units (one per dtype
// and device, in registration order); a unit's parameters are copied into one flat buffer,
// padded with zeros to a multiple S·N of the world size N, and each module parameter is made a
// view of its place in the buffer (its TensorImpl is repointed, as LibTorch's set_data does, so
// every handle the module and its layers hold sees the buffer). Rank r's shard is the view
// flat[r·S, (r+1)·S): a leaf that requires grad, handed to the user's optimizer by parameters().
// The optimizer therefore keeps state for S elements only and its in-place update writes
// straight into this rank's slice of the module's parameters, with no copy; the other ranks'
// slices are all-gathered into the buffer before the next forward (or gather_parameters()).
// This needs nothing from the optimizer: any tg::optim optimizer works, its state is sharded
// because its parameters are.
//
// Gradients: at the first forward of an accumulation window the module's gradients become
// zeroed views of the unit's gradient buffer (S·N elements), so backward accumulates into it in
// place. A post-accumulate hook on every parameter queues, once per backward pass, the end-of-
// pass callback (outside no_sync), which reduce-scatters each unit's buffer into an S-element
// gradient for the shard and divides it by N, as DDP divides its sums. Stage 1 then all-gathers
// the averaged shards back into the buffer, so every rank keeps the full averaged gradients (as
// in ZeRO-1; one reduce-scatter and one all-gather move what one ring all-reduce moves) and the
// shard's gradient is the view of its slice; stage 2 keeps only the shard's gradient and frees
// the buffer and the module's gradients (ZeRO-2). Reduce-scatter rather than all-reduce in both
// stages: the shards' sums are then the same bits in either stage and, for DDP's small buckets,
// the same bits as DDP's all-reduce (tests/test_fsdp_mpi.cpp). The next
// forward starts a new window, so the optimizer's zero_grad() only needs to clear the shards.
struct Unit {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;
    int64_t shard = 0;  // S: elements per rank
    Tensor flat, grads, mine;
};

struct FsdpState : std::enable_shared_from_this<FsdpState> {
    std::shared_ptr<distributed::ProcessGroup> group;
    int stage = 1;
    std::vector<std::string> names;
    std::vector<Tensor> params;
    std::vector<Unit> units;
    bool sync = true;    // false inside no_sync()
    bool armed = false;  // a backward pass queued finish()
    bool fresh = true;   // the next forward starts an accumulation window
    bool dirty = false;  // a sync happened since the last gather: the shards may have changed
    bool broadcast_buffers = true;
    FullyShardedDataParallelStats stats;

    void on_ready() {
        if (!sync || armed)
            return;
        armed = true;
        std::weak_ptr<FsdpState> weak = shared_from_this();
        autograd::queue_callback([weak] {
            if (auto s = weak.lock())
                s->finish();
        });
    }

    Tensor view_of(const Tensor& flat, const Unit& u, size_t k) const {
        const Tensor& p = params[u.params[k]];
        return flat.narrow(0, u.offsets[k], p.numel()).view(p.sizes());
    }

    void prepare() {
        armed = false;  // a backward that threw: its callback was dropped
        gather();
        if (!GradMode::is_enabled() || !fresh)
            return;
        NoGradGuard no_grad;
        for (Unit& u : units) {
            if (u.grads.defined())
                u.grads.zero_();
            else
                u.grads = tg::zeros(u.flat.sizes(),
                                    TensorOptions(u.flat.dtype()).device(u.flat.device()));
            for (size_t k = 0; k < u.params.size(); ++k)
                params[u.params[k]].set_grad(view_of(u.grads, u, k));
        }
        fresh = false;
    }

    void gather() {
        if (!dirty)
            return;
        NoGradGuard no_grad;
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (Unit& u : units) {
            std::vector<Tensor> outs;
            for (int r = 0; r < group->size(); ++r)
                outs.push_back(u.flat.narrow(0, r * u.shard, u.shard));
            works.push_back(group->all_gather(outs, u.mine.detach()));
            ++stats.all_gathers;
        }
        for (auto& w : works)
            w->wait();
        dirty = false;
    }

    void finish() {
        if (!armed)
            return;
        armed = false;
        NoGradGuard no_grad;
        const int world = group->size(), rank = group->rank();
        std::vector<std::shared_ptr<distributed::Work>> works;
        std::vector<Tensor> shard_grads;
        for (Unit& u : units) {
            if (!u.grads.defined())  // backward of a forward that did not go through the wrapper
                u.grads = tg::zeros(u.flat.sizes(),
                                    TensorOptions(u.flat.dtype()).device(u.flat.device()));
            for (size_t k = 0; k < u.params.size(); ++k) {  // gradients replaced by the user
                const Tensor& p = params[u.params[k]];
                const Tensor g = p.grad();
                Tensor v = view_of(u.grads, u, k);
                if (!g.defined())
                    v.zero_();
                else if (g.impl()->storage != u.grads.impl()->storage ||
                         g.storage_offset() != u.grads.storage_offset() + u.offsets[k])
                    v.copy_(g);
            }
            std::vector<Tensor> pieces;
            for (int r = 0; r < world; ++r)
                pieces.push_back(u.grads.narrow(0, r * u.shard, u.shard));
            Tensor g = tg::empty({u.shard}, TensorOptions(u.flat.dtype()).device(u.flat.device()));
            works.push_back(group->reduce_scatter(g, pieces));
            ++stats.reduce_scatters;
            shard_grads.push_back(g);
        }
        for (auto& w : works)
            w->wait();
        works.clear();
        for (size_t i = 0; i < units.size(); ++i) {
            Unit& u = units[i];
            shard_grads[i].div_(double(world));
            if (stage == 1) {  // ZeRO-1: every rank keeps the full averaged gradients
                std::vector<Tensor> pieces;
                for (int r = 0; r < world; ++r)
                    pieces.push_back(u.grads.narrow(0, r * u.shard, u.shard));
                works.push_back(group->all_gather(pieces, shard_grads[i]));
                ++stats.all_gathers;
                u.mine.set_grad(pieces[size_t(rank)]);
            } else {  // ZeRO-2: only the shard's gradient stays
                u.mine.set_grad(shard_grads[i]);
                for (size_t j : u.params)
                    params[j].set_grad(Tensor());
                u.grads = Tensor();
            }
        }
        for (auto& w : works)
            w->wait();
        fresh = true;
        dirty = true;
        ++stats.syncs;
    }
};

namespace {
/// Makes p a view of flat at element offset `at` (holding p's values), as LibTorch's set_data.
void repoint(const Tensor& p, const Tensor& flat, int64_t at) {
    flat.narrow(0, at, p.numel()).view(p.sizes()).copy_(p.detach());
    TensorImpl* i = p.impl();
    i->storage = flat.impl()->storage;
    i->offset = flat.impl()->offset + at;
    i->strides = contiguous_strides(i->sizes);
    i->storage->grad_leaf.store(true, std::memory_order_relaxed);
}
}  // namespace

FullyShardedDataParallel::FullyShardedDataParallel(std::shared_ptr<Module> module,
                                                   ShardingOptions options)
    : module_(std::move(module)), state_(std::make_shared<FsdpState>()) {
    if (!module_)
        throw value_error("FullyShardedDataParallel: the module is null");
    if (options.stage() != 1 && options.stage() != 2)
        throw value_error("FullyShardedDataParallel: stage " + std::to_string(options.stage()) +
                          " is not supported (1: optimizer state sharded, 2: gradients too; "
                          "stage 3 is not implemented yet)");
    FsdpState& s = *state_;
    s.stage = options.stage();
    s.broadcast_buffers = options.broadcast_buffers();
    s.group = options.process_group() ? options.process_group() : distributed::default_group();
    std::vector<std::string> lines;
    for (auto& [name, p] : module_->named_parameters()) {
        lines.push_back(name + " " + shape_str(p.sizes()) + " " + dtype_name(p.dtype()));
        if (!p.requires_grad())
            continue;
        s.names.push_back(name);
        s.params.push_back(p);
    }
    check_same_parameters(*s.group, lines);
    NoGradGuard no_grad;
    {  // every rank starts from rank 0's parameters and buffers
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (const Tensor& p : module_->parameters())
            works.push_back(s.group->broadcast(p, 0));
        for (const Tensor& b : module_->buffers())
            works.push_back(s.group->broadcast(b, 0));
        for (auto& w : works)
            w->wait();
    }
    const int64_t world = s.group->size(), rank = s.group->rank();
    std::vector<int64_t> numels;
    for (size_t j = 0; j < s.params.size(); ++j) {  // Note [Sharded parameters]
        const Tensor& p = s.params[j];
        size_t u = 0;
        while (u < s.units.size() && (s.params[s.units[u].params[0]].dtype() != p.dtype() ||
                                      s.params[s.units[u].params[0]].device() != p.device()))
            ++u;
        if (u == s.units.size()) {
            s.units.emplace_back();
            numels.push_back(0);
        }
        s.units[u].params.push_back(j);
        s.units[u].offsets.push_back(numels[u]);
        numels[u] += p.numel();
    }
    for (size_t u = 0; u < s.units.size(); ++u) {
        Unit& unit = s.units[u];
        const Tensor& first = s.params[unit.params[0]];
        unit.shard = std::max<int64_t>(1, (numels[u] + world - 1) / world);
        unit.flat =
            tg::zeros({unit.shard * world}, TensorOptions(first.dtype()).device(first.device()));
        for (size_t k = 0; k < unit.params.size(); ++k)
            repoint(s.params[unit.params[k]], unit.flat, unit.offsets[k]);
        unit.mine = unit.flat.narrow(0, rank * unit.shard, unit.shard);
        unit.mine.requires_grad_(true);
    }
    std::weak_ptr<FsdpState> weak = state_;
    for (const Tensor& p : s.params)
        p.register_post_accumulate_grad_hook([weak](const Tensor&) {
            if (auto st = weak.lock())
                st->on_ready();
        });
}

FullyShardedDataParallel::~FullyShardedDataParallel() = default;

Tensor FullyShardedDataParallel::forward(const Tensor& x) {
    FsdpState& s = *state_;
    s.prepare();
    if (s.broadcast_buffers && s.group->size() > 1 && !module_->buffers().empty()) {
        NoGradGuard no_grad;
        std::vector<std::shared_ptr<distributed::Work>> works;
        for (const Tensor& b : module_->buffers())
            works.push_back(s.group->broadcast(b, 0));
        for (auto& w : works)
            w->wait();
    }
    return (*module_)(x);
}

std::vector<Tensor> FullyShardedDataParallel::parameters() const {
    std::vector<Tensor> out;
    for (const Unit& u : state_->units)
        out.push_back(u.mine);
    return out;
}

std::vector<Tensor> FullyShardedDataParallel::full_parameters() const {
    return module_->parameters();
}

void FullyShardedDataParallel::gather_parameters() {
    state_->gather();
}

double FullyShardedDataParallel::clip_grad_norm_(double max_norm, double norm_type) {
    FsdpState& s = *state_;
    std::vector<Tensor> shards, grads;
    for (const Unit& u : s.units)
        if (u.mine.grad().defined()) {
            shards.push_back(u.mine);
            grads.push_back(u.mine.grad());
        }
    Tensor total;
    if (s.stage == 1) {
        // every rank holds the full averaged gradients: the norm nn::utils computes, exactly
        std::vector<Tensor> full;
        for (const Tensor& p : s.params)
            if (p.grad().defined())
                full.push_back(p.grad());
        total = utils::get_total_norm(full, norm_type);
    } else {
        if (norm_type == 0)
            throw value_error(
                "FullyShardedDataParallel::clip_grad_norm_: norm_type 0 is not "
                "supported at stage 2 (the gradients are sharded)");
        // this rank's part (sum of |g|^p, or the max for inf), all-reduced
        const bool is_max = std::isinf(norm_type);
        double local = 0;
        for (const Tensor& g : grads) {
            const double n = utils::get_total_norm({g}, norm_type).item<double>();
            local = is_max ? std::max(local, n) : local + std::pow(n, norm_type);
        }
        Tensor t = tg::full({1}, local, kFloat64);
        s.group->all_reduce(t, is_max ? distributed::ReduceOp::Max : distributed::ReduceOp::Sum)
            ->wait();
        double sum = t.item<double>();
        if (!is_max)
            sum = std::pow(sum, 1.0 / norm_type);
        if (!grads.empty())
            total = tg::full({}, sum, TensorOptions(grads[0].dtype()).device(grads[0].device()));
    }
    if (!total.defined())
        return 0;
    if (!shards.empty())
        utils::clip_grads_with_norm_(shards, max_norm, total);
    return total.item<double>();
}

FullyShardedDataParallel::NoSync::NoSync(std::shared_ptr<FsdpState> s) : state_(std::move(s)) {
    prev_ = state_->sync;
    state_->sync = false;
}
FullyShardedDataParallel::NoSync::NoSync(NoSync&& o) noexcept
    : state_(std::move(o.state_)), prev_(o.prev_) {}
FullyShardedDataParallel::NoSync::~NoSync() {
    if (state_)
        state_->sync = prev_;
}

FullyShardedDataParallel::NoSync FullyShardedDataParallel::no_sync() {
    return NoSync(state_);
}

int FullyShardedDataParallel::stage() const {
    return state_->stage;
}

FullyShardedDataParallelStats FullyShardedDataParallel::stats() const {
    return state_->stats;
}

}  // namespace tg::nn
