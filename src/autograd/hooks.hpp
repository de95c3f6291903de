#pragma once
// The two hooks a checkpoint installs: into saving (Note [Saved tensor hooks]) and into the ops
// that run without recording (Note [Unrecorded uses]). Nothing else in autograd knows about
// checkpointing.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>

#include "tapegrad/tensor.hpp"

namespace tg::autograd::detail {

// Note [Saved tensor hooks]: while a SavedHooks is installed on a thread (SavedHooksScope; the
// innermost wins), every Saved of an activation (Note [Activation memory] in saved.cpp) made on
// that thread is offered to its pack() (every Saved, if it asks: all_saved). A non-null handle then
// stands for the tensor, and Saved::get() asks the handle for it (unpack). Copies of a Saved share
// the handle, so the handle lives exactly as long as something may still read the tensor. pack and
// unpack run with the hooks disabled, so what a hook saves for itself is plain. This is PyTorch's
// saved_tensors_hooks, which its non-reentrant checkpoint is built on too.
enum class SavedKind : uint8_t { Input, Output, Intermediate };

struct PackedSaved {
    virtual ~PackedSaved() = default;
    /// The tensor this handle stands for (the same values it had when packed).
    virtual Tensor unpack() = 0;
};

struct SavedHooks {
    virtual ~SavedHooks() = default;
    /// Offered every Saved, leaves too (the public hooks, as PyTorch's), not only activations.
    bool all_saved = false;
    /// A non-reentrant checkpoint's frame (a MemoryBudget is not made under one).
    bool checkpoint_frame = false;
    /// A handle that stands for t from now on, or null to save t as usual.
    virtual std::shared_ptr<PackedSaved> pack(const Tensor& t, SavedKind kind) = 0;
};

/// Installs hooks on this thread for its scope, enabled even inside a SavedHooksDisabled (a hook
/// that runs a function again, as a recomputation does, offers that run's Saved to itself).
class SavedHooksScope {
public:
    explicit SavedHooksScope(SavedHooks& hooks);
    ~SavedHooksScope();
    SavedHooksScope(const SavedHooksScope&) = delete;
    SavedHooksScope& operator=(const SavedHooksScope&) = delete;

private:
    SavedHooks* prev_;
    int prev_disabled_;
};

/// Disables the installed hooks for its scope: Saved objects made in it are plain.
class SavedHooksDisabled {
public:
    SavedHooksDisabled();
    ~SavedHooksDisabled();
    SavedHooksDisabled(const SavedHooksDisabled&) = delete;
    SavedHooksDisabled& operator=(const SavedHooksDisabled&) = delete;
};

/// The hooks the next Saved of an activation on this thread is offered to, or null.
SavedHooks* current_saved_hooks();

/// A hook that aborts an op by throwing from pack() after some of the op's Saved were made calls
/// this, so their saved_report entries are not given to the next op recorded.
void discard_pending_saved();

// Note [Unrecorded uses]: an op that does not record (grad mode off) still tells an installed
// UseObserver which of its inputs require grad. The reentrant checkpoint runs its function that
// way and must know the parameters and captured tensors it used (Note [Checkpoint edges] in
// checkpoint/checkpoint.cpp).
struct UseObserver {
    virtual ~UseObserver() = default;
    virtual void used(const Tensor& t) = 0;
};

/// Installs an observer on this thread for its scope (the innermost sees the uses).
class UseObserverScope {
public:
    explicit UseObserverScope(UseObserver& observer);
    ~UseObserverScope();
    UseObserverScope(const UseObserverScope&) = delete;
    UseObserverScope& operator=(const UseObserverScope&) = delete;

private:
    UseObserver* prev_;
};

/// Whether an observer is installed on this thread; note_unrecorded tells it of inputs.
bool observing_unrecorded();
void note_unrecorded(std::initializer_list<const Tensor*> inputs);

}  // namespace tg::autograd::detail

namespace tg {

// Note [Gradient chunks]: a leaf can ask to learn which parts of its gradient a backward pass has
// finished before the pass is done with it: data parallelism then all-reduces those parts while
// backward computes the rest (Note [Gradient buckets] in distributed/ddp.cpp). Only an op that
// adds a leaf's whole gradient in place in row blocks can tell (linear's dW = dyᵀ·x, through
// GradTarget::chunk_rows and rows_done), and only when that op is the leaf's only use in the
// pass, which the registrant must know (it checks the graph before backward). ready(begin, end)
// names elements of .grad() in its row-major order; the post-accumulate hooks still run at the
// end.
struct GradChunks {
    int64_t bytes = 0;  // the size of a block to aim for
    std::function<void(int64_t begin, int64_t end)> ready;
    /// Rows per block of a [rows, row_bytes] gradient: the one rule for what an op writes and
    /// what the registrant expects.
    static int64_t block_rows(int64_t bytes, int64_t rows, int64_t row_bytes) {
        return row_bytes <= 0 ? rows : std::clamp<int64_t>(bytes / row_bytes, 1, rows);
    }
};

}  // namespace tg
