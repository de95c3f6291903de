// nn::FullyShardedDataParallel at stage 3: a unit's full parameters exist only while a forward
// or a backward uses them.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "distributed/fsdp.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/checkpoint.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

// Note [Sharded parameters, stage 3]: units are built as at stages 1 and 2 (Note [Sharded
// parameters]), one group of units per child of a Sequential (the children in reverse, so that
// backward finishes the units in their order) or one for any other module, and then only this
// rank's shard stays, in a buffer of its own that the optimizer updates. Between uses every
// parameter of a unit points at an empty buffer (its sizes unchanged: reading it then is an
// error of the caller, as reading a freed parameter in PyTorch's FSDP). The wrapper's forward
// runs the Sequential's children itself: before a child, its units are all-gathered into a new
// flat buffer and the parameters repointed into it (their TensorImpl, as repoint does); after
// the child they point at the empty buffer again and the flat buffer is dropped.
//
// Backward needs the parameters again. While a child runs, saved-tensor hooks (Note [Saved tensor
// hooks] in autograd/hooks.hpp, offered every Saved) replace a saved tensor that lives in a
// gathered unit's buffer (a parameter or a view of one, such as w.t() or a narrowed in_proj
// weight) by a handle holding the unit and the view's geometry, not the buffer; so the forward
// frees the buffer for real. The first unpack of a unit in a backward pass all-gathers it again
// (a collective, posted from the engine's thread in tape order, the same on every rank) and the
// handles return views of the new buffer. The parameters' post-accumulate hooks count the unit's
// gradients; when the last is done the unit is released (inside no_sync too), and the end of the
// pass releases whatever is left. The gradients are the engine's own tensors, not views of a
// unit buffer: a synced pass copies them into the unit's gradient buffer for the reduce-scatter
// and drops them, so a rank holds one unit's full gradients at a time, plus the shards.
namespace {
/// Makes p a view of flat at element offset at, without copying (the values are already there).
void attach(const Tensor& p, const Tensor& flat, int64_t at) {
    TensorImpl* i = p.impl();
    i->storage = flat.impl()->storage;
    i->offset = flat.impl()->offset + at;
    i->strides = contiguous_strides(i->sizes);
}

struct UnitSaved : autograd::detail::PackedSaved {
    std::weak_ptr<FsdpState> state;
    size_t unit = 0;
    Shape sizes, strides;
    int64_t offset = 0;  // from the start of the unit's flat buffer
    Tensor unpack() override {
        if (GradMode::is_enabled())  // create_graph: the handle's view has no history
            throw autograd_error(
                "FullyShardedDataParallel: stage 3 does not support create_graph (a double "
                "backward through a unit's parameters)");
        auto s = state.lock();
        if (!s)
            throw autograd_error(
                "FullyShardedDataParallel: backward needs a parameter of a stage-3 wrapper that "
                "no longer exists");
        Tensor flat = s->regather(unit);
        auto impl = std::make_shared<TensorImpl>(*flat.impl());
        impl->sizes = sizes;
        impl->strides = strides;
        impl->offset = flat.impl()->offset + offset;
        return Tensor(std::move(impl));
    }
};

struct PackUnits : autograd::detail::SavedHooks {
    std::weak_ptr<FsdpState> state;
    std::shared_ptr<autograd::detail::PackedSaved> pack(const Tensor& t,
                                                        autograd::detail::SavedKind) override {
        auto s = state.lock();
        if (!s)
            return nullptr;
        for (size_t k = 0; k < s->units.size(); ++k) {
            const Unit& u = s->units[k];
            if (!u.gathered || u.flat.impl()->storage != t.impl()->storage)
                continue;
            auto h = std::make_shared<UnitSaved>();
            h->state = s;
            h->unit = k;
            h->sizes = t.sizes();
            h->strides = t.strides();
            h->offset = t.storage_offset() - u.flat.storage_offset();
            return h;
        }
        return nullptr;
    }
};
}  // namespace

void FsdpState::prefetch(size_t k) {
    Unit& u = units[k];
    if (stage != 3 || u.gathered || u.fetch)
        return;
    NoGradGuard no_grad;
    const int world = group->size();
    u.fetched = tg::empty({u.shard * world}, TensorOptions(u.mine.dtype()).device(u.mine.device()));
    std::vector<Tensor> pieces;
    for (int r = 0; r < world; ++r)
        pieces.push_back(u.fetched.narrow(0, r * u.shard, u.shard));
    u.fetch = group->all_gather(pieces, u.mine.detach());
    ++stats.all_gathers;
    note_full_bytes();
}

void FsdpState::prefetch_after(size_t k, bool forward) {
    const auto& order = unit_order;  // the steps' and called modules' units in forward order
    for (size_t c = 0; c < order.size(); ++c) {
        if (std::find(order[c].begin(), order[c].end(), k) == order[c].end())
            continue;
        // the nearest child with parameters on that side
        for (size_t d = forward ? c + 1 : c; forward ? d < order.size() : d-- > 0;
             d += forward ? 1 : 0)
            if (!order[d].empty()) {
                for (size_t j : order[d])
                    prefetch(j);
                return;
            }
        return;
    }
}

void FsdpState::gather_unit(size_t k) {
    Unit& u = units[k];
    if (u.gathered)
        return;
    NoGradGuard no_grad;
    if (!u.fetch) {
        // the all-gather runs after the reduce-scatters posted before it (the communication
        // thread runs in order) and is waited for: waiting for them first costs nothing and
        // frees their buffers before this one is allocated
        drain(true);
        prefetch(k);
    }
    wait_for(u.fetch, "all-gather");
    u.fetch.reset();
    Tensor flat = std::move(u.fetched);
    u.fetched = Tensor();
    flat.impl()->storage->grad_leaf.store(true, std::memory_order_relaxed);
    for (size_t i = 0; i < u.params.size(); ++i)
        attach(params[u.params[i]], flat, u.offsets[i]);
    u.flat = std::move(flat);
    u.gathered = true;
    note_full_bytes();
}

void FsdpState::drain(bool block) {
    for (Unit& u : units)
        if (u.launched && u.work && (block || u.work->is_completed())) {
            wait_for(u.work, "reduce-scatter");
            u.work.reset();
            u.grads = Tensor();  // the reduce-scatter's input
        }
}

void FsdpState::note_full_bytes() {
    uint64_t bytes = 0;
    for (const Unit& u : units) {
        const uint64_t b =
            uint64_t(u.shard) * uint64_t(group->size()) * uint64_t(element_size(u.mine.dtype()));
        bytes += (u.gathered || u.fetched.defined() ? b : 0) + (u.grads.defined() ? b : 0);
    }
    stats.peak_full_bytes = std::max(stats.peak_full_bytes, bytes);
}

void FsdpState::release(size_t k) {
    Unit& u = units[k];
    if (u.fetch) {  // prefetched and not used (a forward that threw, a unit backward skipped)
        wait_for(u.fetch, "all-gather");
        u.fetch.reset();
        u.fetched = Tensor();
    }
    if (stage != 3 || !u.gathered)
        return;
    for (size_t j : u.params)
        attach(params[j], u.hollow, 0);
    u.flat = Tensor();
    u.gathered = false;
}

Tensor FsdpState::regather(size_t k) {
    if (!armed)
        arm();                 // the pass releases what it gathered when it ends
    if (!units[k].gathered) {  // the first use in this pass: the child before it is next
        gather_unit(k);
        prefetch_after(k, false);
    }
    return units[k].flat;
}

Tensor FsdpState::run_child(const std::shared_ptr<Module>& child, const std::vector<size_t>& ids,
                            const Tensor& x) {
    if (!checkpoint || !GradMode::is_enabled())
        return run_units(ids, [&] { return (*child)(x); });
    // Note [Sharded parameters, stage 3]: the recomputation in backward gathers the units again
    std::weak_ptr<FsdpState> weak = weak_from_this();
    auto fn = [weak, ids, child](const std::vector<Tensor>& in) -> Tensor {
        auto s = weak.lock();
        if (!s)
            throw autograd_error(
                "FullyShardedDataParallel: a checkpointed unit is recomputed after its wrapper "
                "was destroyed");
        if (s->stage < 3 || !GradMode::is_enabled())  // the forward: gathered by run_units
            return (*child)(in[0]);
        for (size_t k : ids)
            s->regather(k);
        autograd::detail::SavedHooksScope scope(*s->pack_units);
        return (*child)(in[0]);
    };
    return run_units(ids, [&] { return tg::checkpoint(fn, {x}); });
}

Tensor FsdpState::run_units(const std::vector<size_t>& ids, const std::function<Tensor()>& fn) {
    if (stage < 3) {  // Note [Sharded parameters]: the step's units gathered before it runs
        for (size_t k : ids)
            await(k);
        return fn();
    }
    if (!pack_units) {
        auto hooks = std::make_shared<PackUnits>();
        hooks->all_saved = true;
        hooks->state = weak_from_this();
        pack_units = std::move(hooks);
    }
    for (size_t k : ids)
        gather_unit(k);
    if (!ids.empty())  // Note [Sharded parameters, stage 3]: the next child's gather overlaps
        prefetch_after(ids.front(), true);
    Tensor y;
    try {
        if (GradMode::is_enabled()) {
            autograd::detail::SavedHooksScope scope(*pack_units);
            y = fn();
        } else {
            y = fn();
        }
    } catch (...) {
        for (size_t k : ids)
            release(k);
        throw;
    }
    for (size_t k : ids)
        release(k);
    return y;
}

}  // namespace tg::nn
