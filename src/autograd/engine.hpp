#pragma once
// The backward passes (engine.cpp, grad.cpp), as the rest of autograd and the checkpoint call
// them from inside a running pass.
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

/// backward() that takes its roots and gradients over and drops them once queued (Note [Roots
/// released] in engine.cpp); retain_graph is create_graph.
void backward_owned(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads, bool create_graph);

/// autograd::grad that takes its roots and gradients over, allows unused inputs and does not run
/// the graph below an input (Note [Checkpoint edges] in checkpoint/checkpoint.cpp); retain_graph
/// is create_graph.
std::vector<Tensor> grad_owned(std::vector<Tensor>&& roots, const std::vector<Tensor>& inputs,
                               std::vector<Tensor>&& grads, bool create_graph);

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

}  // namespace tg::autograd::detail
