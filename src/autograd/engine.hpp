#pragma once
// The backward passes (engine.cpp, grad.cpp), as the rest of autograd and the checkpoint call
// them from inside a running pass.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tapegrad/autograd.hpp"

namespace tg::autograd::detail {

/// The node whose backward is running on this thread (for Saved::get under create_graph).
Node* current_node();

/// Whether the running pass is a backward() that accumulates into the leaves' .grad() (not
/// autograd::grad, not create_graph): Note [Gradient accumulated in place] in graph.cpp.
bool into_grad_pass();

/// Queues acc (a leaf's AccumulateGrad, alive through an edge of the running node) in the
/// running pass after its gradient was added in place (Note [Post-accumulate hooks] in graph.cpp).
void note_accumulated_in_place(Node* acc);

/// backward() that takes its roots and gradients over and drops them once queued (Note [Roots
/// released] in engine.cpp); retain_graph is create_graph.
void backward_owned(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads, bool create_graph);

/// autograd::grad that takes its roots and gradients over, allows unused inputs and does not run
/// the graph below an input (Note [Checkpoint edges] in checkpoint/checkpoint.cpp); retain_graph
/// is create_graph.
std::vector<Tensor> grad_owned(std::vector<Tensor>&& roots, const std::vector<Tensor>& inputs,
                               std::vector<Tensor>&& grads, bool create_graph);

// Note [Checked gradients]: every gradient that reaches a node or a leaf's .grad() has the shape,
// dtype and device of the tensor it is the gradient of, so nothing downstream (an add into
// .grad(), an optimizer step) can broadcast or convert a wrong one silently. A gradient enters
// through one of four doors, and each calls check_grad: what a backward returns (the engine's
// validate), what a hook on a non-leaf returns (the engine loop), what a hook on a leaf returns
// (AccumulateGrad) and what set_grad() stores. A leaf's .grad() also never has two elements in
// one memory location (an expand() view): AccumulateGrad, zero_grad(false) and clip_grad_norm_
// write into it in place, and an in-place write through such a view adds or scales an element
// once per alias. set_grad() refuses such a view; AccumulateGrad stores a copy of one, as it does
// of a gradient something else can see (another leaf's .grad() would share it).

/// Whether g has the shape, dtype and device m describes (Note [Checked gradients]).
inline bool grad_matches(const Tensor& g, const InputMeta& m) {
    return g.sizes() == m.sizes && g.dtype() == m.dtype && g.device() == m.device;
}
/// Throws autograd_error "<what>: got [1] float32 on cpu, expected [1,3] float32 on cpu".
[[noreturn]] void throw_grad_mismatch(const std::string& what, const Tensor& g, const InputMeta& m);
/// The one check of a gradient against the tensor it belongs to (Note [Checked gradients]);
/// what() says where g came from and is called only to build the message.
template <class What>
void check_grad(const Tensor& g, const InputMeta& m, What&& what) {
    if (!grad_matches(g, m))
        throw_grad_mismatch(what(), g, m);
}
/// The shape, dtype and device of t: what its gradient must have.
inline InputMeta meta_of(const Tensor& t) {
    return {t.sizes(), t.dtype(), t.device()};
}
/// Whether two elements of t share one memory location (a stride-0 dim of size > 1, which only
/// expand() makes).
bool has_aliased_elements(const Tensor& t);

/// What autograd::grad captures (grad.cpp) while the engine runs (engine.cpp): the gradients
/// arriving at its inputs' nodes, and the nodes worth running (Note [Pruned gradients]).
struct Capture {
    // node -> (output slot, index into results)
    std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> at;
    std::unordered_set<Node*> needed;  // nodes to execute
    std::vector<Tensor> results;
};

/// Runs a pass from roots (Note [Tape order]): backward() when cap is null, else a grad() that
/// fills cap->results. Owns its roots and gradients (Note [Roots released]).
void run_pass(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads, bool retain, bool create,
              Capture* cap, const char* who);

/// An in-place op gave impl the history old_fn -> impl's grad_fn: its retain_grad() hook moves
/// with it (Note [Retained gradients] in tensor_grad.cpp).
void move_retained_grad(const std::shared_ptr<TensorImpl>& impl, Node* old_fn, uint32_t old_nr);

}  // namespace tg::autograd::detail
