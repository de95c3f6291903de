// nn::FullyShardedDataParallel's state: flat units, the gather before forward, and the
// reduce-scatters launched while backward runs.
#include <algorithm>
#include <string>
#include <utility>

#include "distributed/comm_thread.hpp"
#include "distributed/fsdp.hpp"
#include "distributed/reducer.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

// Note [Sharded parameters]: the parameters that require grad are cut into units, as DDP cuts
// its buckets (Note [Gradient buckets] in reducer.cpp: modules in reverse order, about
// bucket_cap_mb each, one dtype and device per unit). A unit's parameters are copied into one
// flat buffer, padded with zeros to a multiple S·N of the world size N, and each module
// parameter is made a view of its place in the buffer (its TensorImpl is repointed, as
// LibTorch's set_data does, so every handle the module and its layers hold sees the buffer).
// Rank r's shard is the view flat[r·S, (r+1)·S): a leaf that requires grad, handed to the user's
// optimizer by parameters(). The optimizer therefore keeps state for S elements only and its
// in-place update writes straight into this rank's slice of the module's parameters, with no
// copy; the other ranks' slices are all-gathered into the buffer before the next forward (or
// gather_parameters()). This needs nothing from the optimizer: any tg::optim optimizer works,
// its state is sharded because its parameters are.
//
// Gradients: at the first forward of an accumulation window the module's gradients become
// zeroed views of each unit's gradient buffer (S·N elements), so backward accumulates into it in
// place. A post-accumulate hook on every parameter tells when backward has finished its
// gradient; when a unit's last parameter is done, one reduce-scatter of its buffer into an
// S-element gradient for the shard is posted to the communication thread and runs while
// backward goes on with earlier layers. Units are launched strictly in unit order, so every rank
// posts the same collectives in the same order; when backward ends (autograd::queue_callback)
// the rest are launched (a parameter without a gradient on this rank contributes zeros), all are
// waited for and the shards' sums divided by N, as DDP divides its sums. Stage 1 then
// all-gathers the averaged shards back into the buffers, so every rank keeps the full averaged
// gradients (ZeRO-1; a reduce-scatter and an all-gather move what one ring all-reduce moves) and
// the shard's gradient is the view of its slice; stage 2 keeps only the shard's gradient and
// frees the buffers and the module's gradients (ZeRO-2). Reduce-scatter rather than all-reduce
// in both stages: the shards' sums are then the same bits in either stage (and, with Open MPI,
// the bits of DDP's all-reduce: tests/test_fsdp_mpi.cpp). The next forward starts a new window,
// so the optimizer's zero_grad() only needs to clear the shards. Outside no_sync nothing is
// launched: the full gradients accumulate locally until the first synced backward.
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

Tensor view_in(const Tensor& buffer, const Tensor& p, int64_t at) {
    return buffer.narrow(0, at, p.numel()).view(p.sizes());
}

std::vector<Tensor> pieces_of(const Tensor& buffer, int64_t shard, int world) {
    std::vector<Tensor> out;
    for (int r = 0; r < world; ++r)
        out.push_back(buffer.narrow(0, r * shard, shard));
    return out;
}
}  // namespace

std::vector<std::vector<size_t>> FsdpState::build(int64_t cap,
                                                  const std::vector<std::vector<size_t>>& groups) {
    NoGradGuard no_grad;
    const int64_t world = group->size(), rank = group->rank();
    unit_of.assign(params.size(), 0);
    std::vector<std::vector<size_t>> of_group;
    for (const std::vector<size_t>& members : groups) {
        of_group.emplace_back();
        int64_t bytes = 0;
        for (size_t j : members) {
            const Tensor& p = params[j];
            const int64_t nb = p.numel() * int64_t(element_size(p.dtype()));
            bool fresh_unit = of_group.back().empty() || bytes + nb > cap;
            if (!fresh_unit) {
                const Tensor& q = params[units.back().params.front()];
                fresh_unit = q.dtype() != p.dtype() || q.device() != p.device();
            }
            if (fresh_unit) {
                units.emplace_back();
                of_group.back().push_back(units.size() - 1);
                bytes = 0;
            }
            Unit& u = units.back();
            u.offsets.push_back(
                u.params.empty() ? 0 : u.offsets.back() + params[u.params.back()].numel());
            u.params.push_back(j);
            unit_of[j] = units.size() - 1;
            bytes += nb;
        }
    }
    for (size_t k = 0; k < units.size(); ++k) {
        Unit& u = units[k];
        const Tensor& first = params[u.params.front()];
        const TensorOptions opts = TensorOptions(first.dtype()).device(first.device());
        const int64_t numel = u.offsets.back() + params[u.params.back()].numel();
        u.shard = std::max<int64_t>(1, (numel + world - 1) / world);
        u.flat = tg::zeros({u.shard * world}, opts);
        for (size_t i = 0; i < u.params.size(); ++i)
            repoint(params[u.params[i]], u.flat, u.offsets[i]);
        u.mine = u.flat.narrow(0, rank * u.shard, u.shard);
        if (stage == 3) {  // only the shard stays, in its own buffer
            u.mine = u.mine.clone();
            u.hollow = tg::empty({0}, opts);
            u.hollow.impl()->storage->grad_leaf.store(true, std::memory_order_relaxed);
            release(k);
        }
        u.mine.requires_grad_(true);
    }
    ready.assign(params.size(), 0);
    return of_group;
}

void FsdpState::on_ready(size_t i) {
    if (!sync && stage < 3)  // stage 3 frees a unit once its gradients are done, synced or not
        return;
    if (!armed)
        arm();
    Unit& u = units[unit_of[i]];
    if (ready[i]) {
        if (pass_sync && u.launched)
            throw distributed_error(
                "FullyShardedDataParallel: parameter '" + names[i] +
                "' received a gradient after its unit was reduce-scattered in this backward pass "
                "(it is used both inside and outside a recomputed checkpoint, or by a second "
                "backward inside the first)");
        return;
    }
    ready[i] = 1;
    if (--u.pending != 0)
        return;
    if (stage == 3)
        release(unit_of[i]);
    if (pass_sync)
        while (next < units.size() && units[next].pending == 0)
            launch(units[next++]);
}

void FsdpState::arm() {
    armed = true;
    pass_sync = sync;
    next = 0;
    std::fill(ready.begin(), ready.end(), 0);
    for (Unit& u : units) {
        u.pending = u.params.size();
        u.launched = false;
        u.work.reset();
    }
    std::weak_ptr<FsdpState> weak = shared_from_this();
    autograd::queue_callback([weak] {
        if (auto s = weak.lock())
            s->finish();
    });
}

void FsdpState::launch(Unit& u) {
    NoGradGuard no_grad;
    const TensorOptions opts = TensorOptions(u.mine.dtype()).device(u.mine.device());
    if (!u.grads.defined())  // stage 3, or a forward that did not go through the wrapper
        u.grads = tg::zeros({u.shard * group->size()}, opts);
    for (size_t k = 0; k < u.params.size(); ++k) {  // gradients that are not the buffer's views
        const Tensor& p = params[u.params[k]];
        const Tensor g = p.grad();
        Tensor v = view_in(u.grads, p, u.offsets[k]);
        if (!g.defined())
            v.zero_();
        else if (g.impl()->storage != u.grads.impl()->storage ||
                 g.storage_offset() != u.grads.storage_offset() + u.offsets[k])
            v.copy_(g);
        if (stage == 3)  // copied: the full gradient is not kept
            p.set_grad(Tensor());
    }
    u.shard_grad = tg::empty({u.shard}, opts);
    u.work = group->reduce_scatter(u.shard_grad, pieces_of(u.grads, u.shard, group->size()));
    u.launched = true;
    ++stats.reduce_scatters;
    if (stage == 1)
        chain_gather(u);
    if (stage == 3) {
        note_full_bytes();
        drain(false);
    }
}

void FsdpState::finish() {
    if (!armed)
        return;
    for (size_t k = 0; k < units.size(); ++k)  // stage 3: units with a parameter left unused
        release(k);
    if (!pass_sync) {  // stage 3 inside no_sync: the full gradients accumulate locally
        armed = false;
        return;
    }
    while (next < units.size())
        launch(units[next++]);
    armed = false;
    const int world = group->size();
    for (Unit& u : units) {
        // first: the division, done, no longer touches shard_grad; then the gather
        for (auto& [what, w] : u.chained)
            wait_for(w, what);
        if (u.work)  // stage 3 may have waited for it already (drain)
            wait_for(u.work, "reduce-scatter");
    }
    NoGradGuard no_grad;
    std::vector<std::shared_ptr<distributed::Work>> works;
    for (Unit& u : units) {
        u.work.reset();
        const bool chained = !u.chained.empty();  // divided and gathered back already
        u.chained.clear();
        if (!chained)
            u.shard_grad.div_(double(world));
        if (stage == 1) {  // ZeRO-1: every rank keeps the full averaged gradients
            auto pieces = pieces_of(u.grads, u.shard, world);
            if (!chained) {
                works.push_back(group->all_gather(pieces, u.shard_grad));
                ++stats.all_gathers;
            }
            u.mine.set_grad(pieces[size_t(group->rank())]);
        } else {  // ZeRO-2 and 3: only the shard's gradient stays
            u.mine.set_grad(u.shard_grad);
            for (size_t j : u.params)
                params[j].set_grad(Tensor());
            u.grads = Tensor();
        }
        u.shard_grad = Tensor();
    }
    for (auto& w : works)
        wait_for(w, "all-gather");
    fresh = true;
    dirty = true;
    ++stats.syncs;
}

void FsdpState::recover() {
    if (!armed)
        return;
    armed = false;
    for (Unit& u : units) {
        for (auto& c : u.chained)  // before the reduce-scatter's write-back, as in finish()
            c.second->wait();
        if (u.work)
            u.work->wait();
        u.work.reset();
        u.chained.clear();
    }
}

void FsdpState::wait_for(const std::shared_ptr<distributed::Work>& w, const char* what) {
    const double t0 = distributed::detail::steady_seconds();
    w->wait();
    const double t1 = distributed::detail::steady_seconds();
    stats.exposed_seconds += t1 - t0;
    stats.comm_seconds += w->ended_at() - w->started_at();
    stats.last.push_back({what, w->started_at(), w->ended_at(), t0, t1});
}

void FsdpState::chain_gather(Unit& u) {
    // Note [Sharded parameters]: the communication thread runs its tasks in the order they were
    // posted, so a task posted now runs once the reduce-scatter has written the shard's sums, and
    // an all-gather posted after it sends the averaged shard. A CPU tensor of an MPI group only:
    // another device's collectives stage their input when posted, before the sums exist. The
    // division bumps shard_grad's version counter on that thread: the reduce-scatter's wait
    // (which bumps it too, on this thread) must come after the division's.
    if (!u.mine.device().is_cpu() || group->backend() != "mpi")
        return;
    auto divided = std::make_shared<distributed::detail::TaskWork>(std::function<void()>());
    distributed::detail::comm_thread().post(
        [g = u.shard_grad, world = group->size()]() mutable {
            NoGradGuard no_grad;
            g.div_(double(world));  // as finish() divides: the same bits
        },
        divided);
    u.chained.emplace_back("divide", std::move(divided));
    u.chained.emplace_back(
        "all-gather", group->all_gather(pieces_of(u.grads, u.shard, group->size()), u.shard_grad));
    ++stats.all_gathers;
}

void FsdpState::prepare() {
    recover();
    for (size_t k = 0; k < units.size(); ++k)  // stage 3: gather_parameters()'s copies may be stale
        release(k);
    for (const Unit& u : units)  // Note [Sharded parameters]: they must stay the units' views
        for (size_t j : u.params)
            if (params[j].impl()->storage != (u.gathered ? u.flat : u.hollow).impl()->storage)
                throw value_error("FullyShardedDataParallel: parameter '" + names[j] +
                                  "' no longer lives in its unit (the module was converted or "
                                  "the parameter replaced after wrapping); convert the model "
                                  "before wrapping it");
    if (stage == 3)  // gathered unit by unit as the forward reaches them
        return;
    post_gathers();  // waited for by the forward, a unit before its first use (await)
    if (!GradMode::is_enabled() || !fresh)
        return;
    NoGradGuard no_grad;
    for (Unit& u : units) {
        if (u.grads.defined())
            u.grads.zero_();
        else
            u.grads =
                tg::zeros(u.flat.sizes(), TensorOptions(u.flat.dtype()).device(u.flat.device()));
        for (size_t k = 0; k < u.params.size(); ++k)
            params[u.params[k]].set_grad(view_in(u.grads, params[u.params[k]], u.offsets[k]));
    }
    fresh = false;
}

void FsdpState::gather() {
    if (stage == 3) {
        for (size_t k = 0; k < units.size(); ++k)
            gather_unit(k);
        return;
    }
    post_gathers();
    for (size_t k = 0; k < units.size(); ++k)
        await(k);
}

void FsdpState::post_gathers() {
    for (size_t k = 0; k < units.size(); ++k)  // a forward that threw may have left some
        await(k);
    if (!dirty)
        return;
    NoGradGuard no_grad;
    // the last unit holds the first modules (Note [Sharded parameters]): posted first
    for (size_t k = units.size(); k-- > 0;) {
        Unit& u = units[k];
        u.fetch = group->all_gather(pieces_of(u.flat, u.shard, group->size()), u.mine.detach());
        ++stats.all_gathers;
    }
    dirty = false;
}

void FsdpState::await(size_t k) {
    Unit& u = units[k];
    if (stage < 3 && u.fetch) {
        wait_for(u.fetch, "all-gather");
        u.fetch.reset();
    }
}

}  // namespace tg::nn
