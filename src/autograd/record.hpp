#pragma once
// The op author's API (DESIGN.md §4): an op computes its output, then, if should_record says so,
// calls record() with its backward lambda. The lambda's capture list is exactly what the op saves
// for backward (save, save_output, save_intermediate); the lambda gets the output's gradient and
// its node, asks needs(n, i) before computing input i's gradient, and may write a gradient
// straight into a leaf's .grad() through a GradTarget (Note [Gradient accumulated in place]).
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/budget.hpp"
#include "autograd/graph.hpp"
#include "autograd/hooks.hpp"
#include "autograd/profile_events.hpp"
#include "autograd/saved.hpp"
#include "core/pool.hpp"
#include "tapegrad/autograd.hpp"

namespace tg::autograd::detail {

/// Whether an op given these inputs records: grad mode is on and one of them requires grad.
/// With grad mode off it tells an installed observer of its inputs (Note [Unrecorded uses]).
inline bool should_record(std::initializer_list<const Tensor*> inputs) {
    if (!GradMode::is_enabled()) {
        if (observing_unrecorded())
            note_unrecorded(inputs);
        return false;
    }
    for (const Tensor* t : inputs)
        if (t->defined() && t->requires_grad())
            return true;
    return false;
}

/// Whether input i of n needs a gradient: it has an edge, and in autograd::grad the pass goes
/// that way (Note [Pruned gradients] in engine.cpp).
bool needs(const Node& n, size_t i);
/// The recorded shape of input i of n.
inline const Shape& in_shape(const Node& n, size_t i) {
    return n.inputs_[i].sizes;
}

/// Where the backward of node n writes the gradient of input i (the shape, dtype and device it
/// was recorded with): the leaf's .grad() to add into (beta = 1) when the running pass allows it
/// (Note [Gradient accumulated in place] in graph.cpp), else a new buffer (beta = 0). Write with
/// beta, then return done() as the input's gradient. The only door to .grad() besides
/// AccumulateGrad.
class GradTarget {
public:
    GradTarget(const Node& n, size_t i);
    const Tensor& out() const { return out_; }
    double beta() const { return in_place_ ? 1 : 0; }
    /// How many rows of out() ([rows, row_elems], row-major) to compute at a time: all of them,
    /// unless the leaf asked for its gradient in chunks (Note [Gradient chunks] in hooks.hpp).
    int64_t chunk_rows(int64_t rows, int64_t row_elems) const;
    /// Rows [r0, r1) of out() are final: tells the leaf, if it asked.
    void rows_done(int64_t r0, int64_t r1, int64_t row_elems) const;
    /// The gradient to return: undefined when it was added into .grad() (whose version this
    /// bumps), else the new buffer.
    Tensor done();

private:
    Tensor out_;
    bool in_place_ = false;
    Node* accumulator_ = nullptr;  // the leaf's AccumulateGrad, when it has post-accumulate hooks
    std::shared_ptr<GradChunks> chunks_;  // when in place and the leaf asked for chunks
};

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

/// Records a single-output op. Call only when should_record(inputs) is true.
template <class F>
void record(const char* name, std::initializer_list<const Tensor*> inputs, Tensor& out, F&& fn) {
    auto n = tg::detail::make_pooled<FnNode<std::decay_t<F>>>(std::forward<F>(fn));
    n->name_ = name;
    connect(*n, inputs);
    take_saved(*n);
    set_history(out, n, 0);
    check_forward_anomaly(name, out);
    if (Budget* b = budget_slot())
        budget_recorded(*b, name, inputs, out);
    if (ProfileState* p = profile_slot())
        profile_forward(*p, name);
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
    if (Budget* b = budget_slot())
        budget_recorded_list(*b, name);
    if (ProfileState* p = profile_slot())
        profile_forward(*p, name);
}

/// Note [Node names]: Node::name() is PyTorch's name for a node, which depends on the call the
/// user made, not on the kernel that ran: x + 2.0 is AddBackward1, x.mean() is MeanBackward0
/// although tapegrad composes it as a sum and a mul. Nodes named after their op (add, exp) are
/// looked up in src/autograd/names.cpp; an overload sets its node's name with torch_name() right
/// after record(); a composed op names the node it returns with a ComposedName taken on entry,
/// which renames only a node recorded during the call (never an input's history).
inline void torch_name(const Tensor& y, const char* name) {
    if (Node* n = y.grad_fn().get())
        n->torch_name_ = name;
}
class ComposedName {
public:
    ComposedName() : since_(peek_seq()) {}
    /// y, its node (if recorded during this call) renamed to op and PyTorch's `torch`.
    Tensor operator()(Tensor y, const char* op, const char* torch) const {
        Node* n = y.defined() ? y.grad_fn().get() : nullptr;
        if (n && n->sequence_nr() >= since_) {
            n->name_ = op;
            n->torch_name_ = torch;
        }
        return y;
    }

private:
    uint64_t since_;
};

}  // namespace tg::autograd::detail

namespace tg {
using autograd::detail::ComposedName;
using autograd::detail::GradTarget;
using autograd::detail::in_shape;
using autograd::detail::needs;
using autograd::detail::recipe;
using autograd::detail::recipes_wanted;
using autograd::detail::record;
using autograd::detail::save;
using autograd::detail::save_intermediate;
using autograd::detail::save_output;
using autograd::detail::Saved;
using autograd::detail::should_record;
using autograd::detail::torch_name;
}  // namespace tg
