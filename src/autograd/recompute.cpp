// The non-reentrant checkpoint: tg::checkpoint(fn, inputs, /*use_reentrant=*/false).
//
// Note [Recomputed saved tensors]: fn runs once, recorded, so the graph is the plain one (its
// edges, hooks and autograd::grad work as without checkpointing). While it runs, every Saved of
// an activation (Note [Activation memory] in saved.cpp) is taken over by the checkpoint's Frame:
// the Saved becomes an entry number, and the frame keeps only a weak reference to the buffer
// and its geometry. The activations are freed as soon as nothing else uses them; the frame
// holds fn's inputs. When a backward reads an entry:
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
// An entry's value is held until the last Saved that stands for it is gone (its node has run).
// The run's own nodes keep none of the activations and are dropped when it ends.
// Limits: a create_graph backward through it throws (the recomputed values carry the recompute
// run's history, not the graph's), and so does a recomputation that does not make the entries.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_set>

#include "autograd/record.hpp"
#include "core/random.hpp"
#include "tapegrad/checkpoint.hpp"

namespace tg::autograd::detail {

struct Frame : std::enable_shared_from_this<Frame> {
    CheckpointFn fn;
    std::vector<Saved> inputs;                         // held strongly, version-checked
    std::unordered_set<const Storage*> input_storage;  // their buffers: not entries
    std::mt19937_64 rng;
    struct Entry {
        std::weak_ptr<Storage> storage;
        Shape sizes, strides;
        int64_t offset = 0;
        Dtype dtype = Dtype::Float32;
        uint32_t version = 0;
        bool is_output = false, intermediate = false;
        size_t group = 0;            // the first entry of the same buffer at the same version
        size_t next = SIZE_MAX;      // the group's next entry (SIZE_MAX: none)
        uint32_t refs = 0;           // Saved objects standing for it
        std::optional<Saved> value;  // the buffer, while a Saved needs it
    };
    std::vector<Entry> entries;
    // forward: the last entry of each buffer (by control block, so a freed buffer's address
    // reused by another is not mistaken for it)
    std::map<std::weak_ptr<Storage>, size_t, std::owner_less<std::weak_ptr<Storage>>> last;
};

namespace {

struct StopRecompute {};

/// What Saved objects made on this thread belong to: the frame of the innermost checkpoint
/// running fn (forward), or a recomputation filling a frame's entries.
struct Context {
    Frame* frame;
    bool recompute;
    size_t next = 0;  // recompute: the entry the next Saved of an activation matches
    size_t stop_at = 0;
};
thread_local std::vector<Context> t_contexts;
thread_local int t_suspended = 0;  // > 0: Saved objects are plain (the frame's own values)

struct Suspend {
    Suspend() { ++t_suspended; }
    ~Suspend() { --t_suspended; }
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
    return e.refs > 0 && !e.value && !alive(e);
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
    tg::detail::ReplayGenerator replay(f.rng);
    t_contexts.push_back({&f, true, 0, stop_at});
    try {
        AutoGradMode on(true);
        f.fn(xs);
    } catch (const StopRecompute&) {
        discard_pending_saved();  // the aborted op's node was never recorded
    } catch (...) {
        discard_pending_saved();
        t_contexts.pop_back();
        throw;
    }
    t_contexts.pop_back();
}

}  // namespace

bool frame_claims(Saved& s, const Tensor& t, bool is_output, bool intermediate) {
    if (t_contexts.empty() || t_suspended > 0)
        return false;
    Context& c = t_contexts.back();
    Frame& f = *c.frame;
    if (f.input_storage.count(t.impl()->storage.get()))
        return false;  // the frame holds it anyway
    if (!c.recompute) {
        Frame::Entry e;
        e.storage = t.impl()->storage;
        e.sizes = t.sizes();
        e.strides = t.strides();
        e.offset = t.storage_offset();
        e.dtype = t.dtype();
        e.version = t._version();
        e.is_output = is_output;
        e.intermediate = intermediate;
        e.refs = 1;
        e.group = f.entries.size();
        auto at = f.last.find(e.storage);
        if (at != f.last.end() && f.entries[at->second].version == e.version) {
            e.group = f.entries[at->second].group;
            f.entries[at->second].next = f.entries.size();
        }
        f.last[e.storage] = f.entries.size();
        f.entries.push_back(std::move(e));
        s.slot_ = uint32_t(f.entries.size() - 1);
        s.frame_ = f.shared_from_this();
        return true;
    }
    const size_t i = c.next++;
    if (i < f.entries.size() && f.entries[i].group == i) {
        // the first entry of its buffer: fill every entry of the buffer still needed
        Suspend plain;
        for (size_t j = i; j != SIZE_MAX; j = f.entries[j].next) {
            Frame::Entry& e = f.entries[j];
            const bool same_view =
                e.sizes == t.sizes() && e.strides == t.strides() && e.offset == t.storage_offset();
            if (needed(e))
                e.value.emplace(same_view ? t : view_of(e, t.impl()->storage), e.is_output,
                                e.intermediate);
        }
    }
    if (i >= c.stop_at)
        throw StopRecompute{};
    return true;  // the recomputation's own node keeps nothing
}

Tensor frame_get(Frame& f, uint32_t slot) {
    if (GradMode::is_enabled())
        throw autograd_error(
            "checkpoint(use_reentrant=false) does not support create_graph: its recomputed "
            "tensors carry the recomputation's history; use the reentrant checkpoint");
    Frame::Entry& e = f.entries[slot];
    if (!e.value) {
        if (std::shared_ptr<Storage> st = alive(e)) {
            Suspend plain;
            e.value.emplace(view_of(e, std::move(st)), e.is_output, e.intermediate);
        } else {
            recompute(f);
        }
    }
    if (!e.value)
        throw autograd_error("checkpoint: recomputing fn did not make saved tensor #" +
                             std::to_string(slot) + " of shape " + shape_str(e.sizes) +
                             ": fn must compute the same when it runs again");
    return e.value->get();
}

void frame_ref(Frame& f, uint32_t slot) {
    ++f.entries[slot].refs;
}

void frame_unref(Frame& f, uint32_t slot) {
    Frame::Entry& e = f.entries[slot];
    if (--e.refs == 0)
        e.value.reset();
}

std::vector<Tensor> checkpoint_nonreentrant(const CheckpointFn& fn,
                                            const std::vector<Tensor>& inputs) {
    auto f = std::make_shared<Frame>();
    f->fn = fn;
    f->rng = tg::detail::generator();  // Dropout must draw the same masks
    {
        Suspend plain;
        for (const Tensor& x : inputs) {
            f->inputs.push_back(save(x));
            if (x.defined())
                f->input_storage.insert(x.impl()->storage.get());
        }
    }
    t_contexts.push_back({f.get(), false});
    std::vector<Tensor> outs;
    try {
        outs = fn(inputs);
    } catch (...) {
        t_contexts.pop_back();
        throw;
    }
    t_contexts.pop_back();
    // fn's outputs are alive now, so the entries that are an output are kept with them: the
    // backward of the op that saved it comes first, usually after the consumers of the output
    // (the next segment, whose frame then goes) have dropped it
    Suspend plain;
    for (const Tensor& o : outs) {
        if (!o.defined())
            continue;
        const std::shared_ptr<Storage>& st = o.impl()->storage;
        for (Frame::Entry& e : f->entries)
            if (!e.storage.owner_before(st) && !st.owner_before(e.storage) &&
                e.version == st->version && !e.value)
                e.value.emplace(view_of(e, st), e.is_output, e.intermediate);
    }
    return outs;
}

}  // namespace tg::autograd::detail
