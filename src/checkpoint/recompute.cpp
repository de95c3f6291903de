// The non-reentrant checkpoint: tg::checkpoint(fn, inputs, /*use_reentrant=*/false).
//
// Note [Recomputed saved tensors]: fn runs once, recorded, so the graph is the plain one (its
// edges, hooks and autograd::grad work as without checkpointing). While it runs, the checkpoint's
// Frame is the installed saved-tensor hook (Note [Saved tensor hooks] in autograd/hooks.hpp):
// every Saved of an activation becomes a handle to an entry of the frame, which keeps only a weak
// reference to the buffer and its geometry. The activations are freed as soon as nothing else uses
// them; the frame holds fn's inputs. When a backward reads an entry:
//   - if its buffer is still alive at the version it was saved at, that buffer is used, and
//     nothing is recomputed. The frame makes sure of it for fn's outputs: an entry that is one
//     of them is kept from the end of the forward (it is alive then anyway, and the op that
//     saved it is the first of the segment to run backward);
//   - otherwise fn runs again, recorded, on the saved inputs and the saved random state. Each
//     Saved of an activation that this run makes is matched to the entry of the same number
//     (the runs make the same Saved in the same order), and the entries still needed are
//     filled. The run stops early once the last needed entry is filled (as PyTorch's
//     non-reentrant checkpoint does): a segment whose last op keeps nothing that is gone (a
//     Linear keeps its input, a Tanh its output, which is the segment's output) is recomputed
//     without that op, so √n checkpointing of an MLP skips one GEMM per segment.
// An entry's value is held until the last Saved that stands for it (they share its handle) is
// gone: its node has run.
// The run's own nodes keep none of the activations and are dropped when it ends.
// Limits: a create_graph backward through it throws (the recomputed values carry the recompute
// run's history, not the graph's), and so does a recomputation that does not make the entries.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_set>

#include "autograd/hooks.hpp"
#include "autograd/record.hpp"
#include "checkpoint/recomputing.hpp"
#include "checkpoint/replay.hpp"
#include "core/random.hpp"

namespace tg::checkpointing {

namespace {

using autograd::detail::PackedSaved;
using autograd::detail::Saved;
using autograd::detail::SavedHooks;
using autograd::detail::SavedHooksDisabled;
using autograd::detail::SavedHooksScope;
using autograd::detail::SavedKind;

struct StopRecompute {};

struct Frame final : SavedHooks, std::enable_shared_from_this<Frame> {
    CheckpointFn fn;
    std::vector<Saved> inputs;                         // held strongly, version-checked
    std::unordered_set<const Storage*> input_storage;  // their buffers: not entries
    tg::detail::RandomState rng;  // Note [Replaying random state] in core/random.cpp
    struct Entry {
        std::weak_ptr<Storage> storage;
        Shape sizes, strides;
        int64_t offset = 0;
        Dtype dtype = Dtype::Float32;
        uint32_t version = 0;
        SavedKind kind = SavedKind::Input;
        size_t group = 0;            // the first entry of the same buffer at the same version
        size_t next = SIZE_MAX;      // the group's next entry (SIZE_MAX: none)
        bool held = false;           // a Saved still stands for it (its handle is alive)
        std::optional<Saved> value;  // the buffer, while a Saved needs it
    };
    std::vector<Entry> entries;
    // forward: the last entry of each buffer (by control block, so a freed buffer's address
    // reused by another is not mistaken for it)
    std::map<std::weak_ptr<Storage>, size_t, std::owner_less<std::weak_ptr<Storage>>> last;
    // a recomputation in progress: the entry the next Saved of an activation matches, and the
    // last one it must reach
    bool recomputing = false;
    size_t next = 0, stop_at = 0;

    std::shared_ptr<PackedSaved> pack(const Tensor& t, SavedKind kind) override;
    Tensor get(uint32_t slot);
};

/// What a Saved made in fn's forward holds: its entry of the frame.
struct EntryHandle final : PackedSaved {
    std::shared_ptr<Frame> frame;
    uint32_t slot;
    EntryHandle(std::shared_ptr<Frame> f, uint32_t s) : frame(std::move(f)), slot(s) {
        frame->entries[slot].held = true;
    }
    ~EntryHandle() override {
        Frame::Entry& e = frame->entries[slot];
        e.held = false;
        e.value.reset();
    }
    Tensor unpack() override { return frame->get(slot); }
};

/// What a Saved made by a recomputation holds: nothing (that run's nodes never run backward).
struct Dropped final : PackedSaved {
    Tensor unpack() override {
        throw autograd_error("checkpoint: a recomputation's own graph was run backward");
    }
};

/// e's view of the buffer st.
Tensor view_of(const Frame::Entry& e, std::shared_ptr<Storage> st) {
    auto impl = tg::detail::make_pooled<TensorImpl>();
    impl->storage = std::move(st);
    impl->sizes = e.sizes;
    impl->strides = e.strides;
    impl->offset = e.offset;
    impl->dtype = e.dtype;
    return Tensor(std::move(impl));
}

/// The entry's buffer if it is alive at the version it was saved at, else null.
std::shared_ptr<Storage> alive(const Frame::Entry& e) {
    std::shared_ptr<Storage> st = e.storage.lock();
    return st && st->version == e.version ? st : nullptr;
}

bool needed(const Frame::Entry& e) {
    return e.held && !e.value && !alive(e);
}

/// Runs fn again and fills the entries still needed (Note [Recomputed saved tensors]). A buffer
/// saved by several ops (a tanh output the next linear saves as its input) is filled when its
/// first entry is made, so the run stops before the op that saved it last.
void recompute(Frame& f) {
    size_t stop_at = 0;
    bool any = false;
    for (size_t i = 0; i < f.entries.size(); ++i)
        if (needed(f.entries[i]))
            stop_at = std::max(stop_at, f.entries[i].group), any = true;
    if (!any)
        return;
    const std::vector<Tensor> xs = replay_inputs(f.inputs);
    tg::detail::ReplayRandom replay(f.rng);
    f.recomputing = true;
    f.next = 0;
    f.stop_at = stop_at;
    struct Done {
        Frame& f;
        ~Done() { f.recomputing = false; }
    } done{f};
    try {
        SavedHooksScope hooks(f);
        RecomputeScope again;  // Note [Side effects of a recomputation]
        AutoGradMode on(true);
        f.fn(xs);
    } catch (const StopRecompute&) {
        autograd::detail::discard_pending_saved();  // the aborted op's node was never recorded
    } catch (...) {
        autograd::detail::discard_pending_saved();
        throw;
    }
}

std::shared_ptr<PackedSaved> Frame::pack(const Tensor& t, SavedKind kind) {
    if (input_storage.count(t.impl()->storage.get()))
        return nullptr;  // the frame holds it anyway
    if (!recomputing) {
        Entry e;
        e.storage = t.impl()->storage;
        e.sizes = t.sizes();
        e.strides = t.strides();
        e.offset = t.storage_offset();
        e.dtype = t.dtype();
        e.version = t._version();
        e.kind = kind;
        e.group = entries.size();
        auto at = last.find(e.storage);
        if (at != last.end() && entries[at->second].version == e.version) {
            e.group = entries[at->second].group;
            entries[at->second].next = entries.size();
        }
        last[e.storage] = entries.size();
        entries.push_back(std::move(e));
        return std::make_shared<EntryHandle>(shared_from_this(), uint32_t(entries.size() - 1));
    }
    const size_t i = next++;
    if (i < entries.size() && entries[i].group == i) {
        // the first entry of its buffer: fill every entry of the buffer still needed
        for (size_t j = i; j != SIZE_MAX; j = entries[j].next) {
            Entry& e = entries[j];
            const bool same_view =
                e.sizes == t.sizes() && e.strides == t.strides() && e.offset == t.storage_offset();
            if (needed(e))
                e.value.emplace(same_view ? t : view_of(e, t.impl()->storage), e.kind);
        }
    }
    if (i >= stop_at)
        throw StopRecompute{};
    static const std::shared_ptr<PackedSaved> dropped = std::make_shared<Dropped>();
    return dropped;  // the recomputation's own node keeps nothing
}

Tensor Frame::get(uint32_t slot) {
    if (GradMode::is_enabled())
        throw autograd_error(
            "checkpoint(use_reentrant=false) does not support create_graph: its recomputed "
            "tensors carry the recomputation's history; use the reentrant checkpoint");
    Entry& e = entries[slot];
    if (!e.value) {
        if (std::shared_ptr<Storage> st = alive(e))
            e.value.emplace(view_of(e, std::move(st)), e.kind);
        else
            recompute(*this);
    }
    if (!e.value)
        throw autograd_error("checkpoint: recomputing fn did not make saved tensor #" +
                             std::to_string(slot) + " of shape " + shape_str(e.sizes) +
                             ": fn must compute the same when it runs again");
    return e.value->get();
}

}  // namespace

std::vector<Tensor> checkpoint_nonreentrant(const CheckpointFn& fn,
                                            const std::vector<Tensor>& inputs) {
    // Under a MemoryBudget the budget keeps fn's activations (as it would the innermost saved-
    // tensor hooks): it evicts and recomputes them op by op, where a frame would recompute the
    // whole segment at once, outside the budget. The graph is the plain one either way.
    if (autograd::detail::budget_slot())
        return fn(inputs);
    auto f = std::make_shared<Frame>();
    f->checkpoint_frame = true;
    f->fn = fn;
    {
        SavedHooksDisabled plain;  // an enclosing checkpoint's frame does not take them
        for (const Tensor& x : inputs) {
            f->inputs.push_back(autograd::detail::save(x));
            if (x.defined())
                f->input_storage.insert(x.impl()->storage.get());
        }
    }
    std::vector<Tensor> outs;
    {
        tg::detail::RecordRandom record(f->rng);  // Dropout must draw the same masks
        SavedHooksScope hooks(*f);
        outs = fn(inputs);
    }
    // fn's outputs are alive now, so the entries that are an output are kept with them: the
    // backward of the op that saved it comes first, usually after the consumers of the output
    // (the next segment, whose frame then goes) have dropped it
    SavedHooksDisabled plain;
    for (const Tensor& o : outs) {
        if (!o.defined())
            continue;
        const std::shared_ptr<Storage>& st = o.impl()->storage;
        for (Frame::Entry& e : f->entries)
            if (!e.storage.owner_before(st) && !st.owner_before(e.storage) &&
                e.version == st->version && !e.value)
                e.value.emplace(view_of(e, st), e.kind);
    }
    return outs;
}

}  // namespace tg::checkpointing
