#pragma once
// How ops record themselves (DESIGN.md §4): an op computes its output, then, if any input
// requires grad and GradMode is on, calls record() with its backward lambda. The lambda's
// capture list is exactly what the op saves for backward.
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/pool.hpp"
#include "tapegrad/autograd.hpp"

namespace tg::autograd::detail {

/// Next tape position (Note [Tape order] in engine.cpp).
uint64_t next_seq();
/// The AccumulateGrad node of a leaf that requires grad (created on first use).
std::shared_ptr<Node> grad_accumulator(const Tensor& leaf);
/// Anomaly mode: throws if t holds NaN/Inf, naming the op (forward) and scope.
void check_forward_anomaly(const char* op, const Tensor& t);
/// The node whose backward is running on this thread (for Saved::get under create_graph).
Node* current_node();

/// A tensor saved for backward. Inputs are kept as they are; outputs are kept as a detached
/// alias (an output that held its own grad_fn would be a cycle) and re-attached to the node
/// when a create_graph backward needs them. Either way the storage version is checked when the
/// backward reads it (Note [Version counter] in saved.cpp).
/// Every Saved that holds an activation counts its buffer in memory::Stats::saved_bytes (Note
/// [Activation memory] in saved.cpp).
struct Frame;  // a non-reentrant checkpoint (Note [Recomputed saved tensors] in recompute.cpp)

class Saved {
public:
    Saved() = default;
    /// is_output: t is the op's output. intermediate: t is a buffer the op made for its backward
    /// (a mask, a softmax); otherwise t is one of the op's inputs.
    Saved(const Tensor& t, bool is_output, bool intermediate = false);
    Saved(const Saved& o);
    Saved(Saved&& o) noexcept;
    Saved& operator=(Saved o) noexcept;
    ~Saved();
    /// The saved tensor; throws autograd_error if it was modified in place since it was saved.
    Tensor get() const;
    bool defined() const { return t_.defined() || frame_ != nullptr; }

private:
    friend bool frame_claims(Saved& s, const Tensor& t, bool is_output, bool intermediate);
    void hold();
    Tensor t_;
    uint32_t version_ = 0;
    uint32_t output_nr_ = 0;
    bool is_output_ = false;
    bool counted_ = false;          // t_ is activation memory (not a leaf the op was given)
    std::shared_ptr<Frame> frame_;  // set: a non-reentrant checkpoint keeps t_ as entry slot_
    uint32_t slot_ = 0;
};
inline Saved save(const Tensor& t) {
    return Saved(t, false);
}
inline Saved save_output(const Tensor& t) {
    return Saved(t, true);
}
/// Saves a buffer the op computed for its backward alone (not an input or output).
inline Saved save_intermediate(const Tensor& t) {
    return Saved(t, false, true);
}

/// Note [Recomputed saved tensors] in recompute.cpp: inside a non-reentrant checkpoint, a Saved
/// of an activation is taken over by the checkpoint's frame, which keeps it only while something
/// else does and recomputes it when the backward asks for it. frame_claims is called by every
/// Saved of an activation; true means *s is the frame's (or, while recomputing, left empty).
bool frame_claims(Saved& s, const Tensor& t, bool is_output, bool intermediate);
Tensor frame_get(Frame& f, uint32_t slot);
void frame_ref(Frame& f, uint32_t slot);
void frame_unref(Frame& f, uint32_t slot);
/// The inputs a checkpoint saved, as the leaves of its recomputation: detached, and requiring
/// grad where the originals did (both checkpoint forms).
std::vector<Tensor> replay_inputs(const std::vector<Saved>& saved);
/// tg::checkpoint(fn, inputs, /*use_reentrant=*/false), with grad mode on.
std::vector<Tensor> checkpoint_nonreentrant(
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& inputs);
/// Forgets the SavedInfo of Saved objects whose node was never recorded (an aborted op).
void discard_pending_saved();

/// Note [Checkpoint probe]: checkpoint() runs its function unrecorded but must know which
/// tensors that require grad (parameters, captured tensors) were used inside, so that its output
/// requires grad and its node has an edge to each (Note [Checkpoint edges] in checkpoint.cpp).
bool probe_active();
void probe_note(std::initializer_list<const Tensor*> inputs);

inline bool should_record(std::initializer_list<const Tensor*> inputs) {
    if (!GradMode::is_enabled()) {
        if (probe_active())
            probe_note(inputs);
        return false;
    }
    for (const Tensor* t : inputs)
        if (t->defined() && t->requires_grad())
            return true;
    return false;
}

/// The node of one op: F maps output gradients to input gradients.
template <class F>
struct FnNode final : Node {
    std::optional<F> fn;
    explicit FnNode(F&& f) : fn(std::move(f)) {}
    Grads apply(Grads&& dys) override {
        if constexpr (std::is_invocable_v<F&, const Tensor&, const Node&>)
            return (*fn)(dys[0], *this);
        else if constexpr (std::is_invocable_v<F&, const Tensor&>)
            return (*fn)(dys[0]);
        else
            return (*fn)(dys, *this);
    }
    void release() override {
        fn.reset();
        saved_.clear();
        released_ = true;
    }
};

/// Whether input i of n needs a gradient: it has an edge, and in autograd::grad the pass goes
/// that way (Note [Pruned gradients] in engine.cpp).
bool needs(const Node& n, size_t i);
/// The recorded shape of input i of n.
inline const Shape& in_shape(const Node& n, size_t i) {
    return n.inputs_[i].sizes;
}

/// The .grad() of the leaf behind input i of n if the running backward lets the op add the
/// input's gradient into it directly (and then return an undefined gradient for it); else an
/// undefined tensor. Note [Gradient accumulated in place] in engine.cpp.
Tensor grad_buffer(const Node& n, size_t i);

/// backward() that takes its roots and gradients over and drops them once queued (Note [Roots
/// released] in engine.cpp); retain_graph is create_graph.
void backward_owned(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads, bool create_graph);

/// autograd::grad that takes its roots and gradients over, allows unused inputs and does not
/// run the graph below an input (Note [Checkpoint edges] in checkpoint.cpp); retain_graph is
/// create_graph.
std::vector<Tensor> grad_owned(std::vector<Tensor>&& roots, const std::vector<Tensor>& inputs,
                               std::vector<Tensor>&& grads, bool create_graph);

/// Whether the running pass is a backward() that accumulates into the leaves' .grad() (not
/// autograd::grad, not create_graph): Note [Gradient accumulated in place] in engine.cpp.
bool into_grad_pass();

/// Hands the SavedInfo of the Saved objects built since the last call to n (Saved's constructor
/// notes them; record() runs right after the closure that holds them is built).
void take_saved(Node& n);

/// Fills edges and input metadata of n from inputs.
void connect(Node& n, std::initializer_list<const Tensor*> inputs);
void connect(Node& n, const std::vector<Tensor>& inputs);
/// Makes `out` the output `nr` of node n.
void set_history(Tensor& out, const std::shared_ptr<Node>& n, uint32_t nr);

/// Records a single-output op. Call only when should_record(inputs) is true.
template <class F>
void record(const char* name, std::initializer_list<const Tensor*> inputs, Tensor& out, F&& fn) {
    auto n = tg::detail::make_pooled<FnNode<std::decay_t<F>>>(std::forward<F>(fn));
    n->name_ = name;
    connect(*n, inputs);
    take_saved(*n);
    set_history(out, n, 0);
    check_forward_anomaly(name, out);
}

/// Records an op over a list of inputs (cat, stack, checkpoint) with several outputs.
template <class F>
void record_list(const char* name, const std::vector<Tensor>& inputs, std::vector<Tensor*> outs,
                 F&& fn) {
    auto n = tg::detail::make_pooled<FnNode<std::decay_t<F>>>(std::forward<F>(fn));
    n->name_ = name;
    n->num_outputs_ = uint32_t(outs.size());
    connect(*n, inputs);
    take_saved(*n);
    for (uint32_t i = 0; i < outs.size(); ++i) {
        set_history(*outs[i], n, i);
        check_forward_anomaly(name, *outs[i]);
    }
}

}  // namespace tg::autograd::detail

namespace tg {
using autograd::detail::grad_buffer;
using autograd::detail::in_shape;
using autograd::detail::needs;
using autograd::detail::record;
using autograd::detail::save;
using autograd::detail::save_intermediate;
using autograd::detail::save_output;
using autograd::detail::Saved;
using autograd::detail::should_record;
}  // namespace tg
