// autograd::grad: the gradients of outputs with respect to chosen inputs, returned instead of
// accumulated, computing only what those inputs need (Note [Pruned gradients] in engine.cpp).
#include <algorithm>
#include <unordered_set>

#include "autograd/engine.hpp"
#include "autograd/graph.hpp"

namespace tg::autograd {

namespace {

/// autograd::grad over owned outputs and gradients. With stop_at_inputs, the pass does not run
/// the nodes below an input: the gradient of an input is only what reaches it from the outputs
/// directly, not through another input (checkpoint's recomputation, Note [Checkpoint edges]).
std::vector<Tensor> grad_impl(std::vector<Tensor>&& outputs, const std::vector<Tensor>& inputs,
                              std::vector<Tensor>&& grad_outputs, bool retain_graph,
                              bool create_graph, bool allow_unused, bool stop_at_inputs) {
    detail::Capture cap;
    cap.results.resize(inputs.size());
    std::vector<std::shared_ptr<Node>> made;  // keeps accumulators made below alive for the call
    for (size_t i = 0; i < inputs.size(); ++i) {
        const Tensor& x = inputs[i];
        if (!x.requires_grad())
            throw autograd_error("autograd::grad: input " + std::to_string(i) + " (shape " +
                                 shape_str(x.sizes()) + ") does not require grad");
        // a leaf's accumulator is made now if need be: the output may be the leaf itself
        if (!x.grad_fn())
            made.push_back(detail::grad_accumulator(x));
        Node* n = x.grad_fn() ? x.grad_fn().get() : made.back().get();
        cap.at[n].push_back({x.grad_fn() ? x.output_nr() : 0u, i});
    }
    // A node runs only if some captured input lies below it (Note [Tape order] makes one pass
    // in increasing sequence number enough).
    std::vector<Node*> all;
    std::unordered_set<Node*> seen;
    std::vector<Node*> stack;
    for (const Tensor& o : outputs)
        if (o.requires_grad()) {
            Node* r = o.grad_fn() ? o.grad_fn().get() : detail::grad_accumulator(o).get();
            if (seen.insert(r).second)
                stack.push_back(r);
        }
    while (!stack.empty()) {
        Node* n = stack.back();
        stack.pop_back();
        all.push_back(n);
        if (stop_at_inputs && cap.at.count(n))
            continue;
        for (auto& e : n->next_)
            if (e.fn && seen.insert(e.fn.get()).second)
                stack.push_back(e.fn.get());
    }
    std::sort(all.begin(), all.end(), [](Node* a, Node* b) { return a->seq_ < b->seq_; });
    for (Node* n : all) {
        if (stop_at_inputs && cap.at.count(n))
            continue;
        for (auto& e : n->next_)
            if (e.fn && (cap.needed.count(e.fn.get()) || cap.at.count(e.fn.get()))) {
                cap.needed.insert(n);
                break;
            }
    }
    detail::run_pass(std::move(outputs), std::move(grad_outputs), retain_graph || create_graph,
                     create_graph, &cap, "autograd::grad");
    for (size_t i = 0; i < inputs.size(); ++i)
        if (!cap.results[i].defined() && !allow_unused)
            throw autograd_error("autograd::grad: input " + std::to_string(i) + " (shape " +
                                 shape_str(inputs[i].sizes()) +
                                 ") is not reachable from the outputs; pass allow_unused=true "
                                 "to get an undefined gradient instead");
    return cap.results;
}

}  // namespace

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph,
                         bool create_graph, bool allow_unused) {
    return grad_impl(std::vector<Tensor>(outputs), inputs, std::vector<Tensor>(grad_outputs),
                     retain_graph, create_graph, allow_unused, false);
}

std::vector<Tensor> detail::grad_owned(std::vector<Tensor>&& roots,
                                       const std::vector<Tensor>& inputs,
                                       std::vector<Tensor>&& grads, bool create_graph) {
    return grad_impl(std::move(roots), inputs, std::move(grads), create_graph, create_graph, true,
                     true);
}

}  // namespace tg::autograd
