// The backward pass: runs the nodes reachable from the roots in reverse tape order, checks and
// sums the gradients they return (DESIGN.md §2).
#include "autograd/engine.hpp"

#include <exception>
#include <queue>

#include "autograd/graph.hpp"
#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg::autograd {

// Note [Tape order]: every node takes its sequence number from one counter when it is recorded,
// after the nodes of its inputs exist. So an edge always points from a higher number to a lower
// one, and running nodes in decreasing sequence number is a topological order: when a node runs,
// every node that could still send it a gradient has already run. The engine needs no recursion
// and no dependency counting, only a max-heap of the nodes that have received a gradient.

// Note [Engine buffers]: a pass parks the gradients sent to a node in the node itself (its
// buffer_, one slot per output, summed as they arrive) until the node runs, and marks it queued_
// while it waits in the heap, so no map from nodes to gradients is needed. Both are the engine's
// alone (Node keeps them private to NodeScratch) and are cleared when the node runs or the pass
// ends with an exception.
namespace detail {
struct NodeScratch {
    static Grads& buffer(Node& n) { return n.buffer_; }
    static bool& queued(Node& n) { return n.queued_; }
};
}  // namespace detail

namespace {
using detail::Capture;
using detail::NodeScratch;
using detail::where_recorded;
thread_local Node* t_current_node = nullptr;
thread_local bool t_into_grad = false;            // the running pass accumulates into .grad()
thread_local const Capture* t_capture = nullptr;  // the running pass's, if it is a grad()
thread_local std::vector<Node*> t_in_place;       // Note [Post-accumulate hooks] in graph.cpp
thread_local int t_depth = 0;                     // passes running on this thread
thread_local std::vector<std::function<void()>> t_callbacks;  // autograd::queue_callback
}  // namespace

void detail::note_accumulated_in_place(Node* acc) {
    t_in_place.push_back(acc);
}

void queue_callback(std::function<void()> cb) {
    if (t_depth == 0)
        throw autograd_error("queue_callback: no backward pass is running on this thread");
    if (!cb)
        throw value_error("queue_callback: empty function");
    t_callbacks.push_back(std::move(cb));
}

Node* detail::current_node() {
    return t_current_node;
}

bool detail::into_grad_pass() {
    return t_into_grad;
}

// Note [Pruned gradients]: autograd::grad runs only the nodes from which one of its inputs can
// be reached, and an op's backward asks needs(n, i) before computing the gradient of input i, so
// it also skips the inputs that lead nowhere the pass is going: grad(loss, {x}) through a linear
// layer computes dx = dy·W and neither dW nor db, as PyTorch's engine does. In backward() every
// input with an edge is needed.
bool detail::needs(const Node& n, size_t i) {
    const Node* next = n.next_[i].fn.get();
    if (!next)
        return false;
    const Capture* c = t_capture;
    return !c || c->needed.count(const_cast<Node*>(next)) || c->at.count(const_cast<Node*>(next));
}

namespace {

// Raw pointers suffice: a queued node is kept alive by the edge that queued it, or by roots_.
struct HeapEntry {
    uint64_t seq;
    Node* node;
    bool operator<(const HeapEntry& o) const { return seq < o.seq; }
};

void accumulate_into(Node& target, uint32_t slot, Tensor&& g) {
    if (NodeScratch::buffer(target).empty())
        NodeScratch::buffer(target).resize(target.num_outputs_);
    Tensor& b = NodeScratch::buffer(target)[slot];
    b = b.defined() ? b + g : std::move(g);
}

void validate(const Node& n, Grads& dxs) {
    if (dxs.size() != n.next_.size())
        throw autograd_error(std::string("backward of '") + n.name_ + "' returned " +
                             std::to_string(dxs.size()) + " gradients, expected " +
                             std::to_string(n.next_.size()));
    for (size_t i = 0; i < dxs.size(); ++i) {
        if (!n.next_[i].fn || !dxs[i].defined())
            continue;
        const Tensor& g = dxs[i];
        detail::check_grad(g, n.inputs_[i], [&] {
            return std::string("backward of '") + n.name_ +
                   "' returned an invalid gradient for input " + std::to_string(i);
        });
        if (AnomalyMode::is_enabled() && !runtime::all_finite(g))
            throw autograd_error(std::string("anomaly detected: backward of '") + n.name_ +
                                 "' returned NaN or Inf in the gradient of input " +
                                 std::to_string(i) + " (" + where_recorded(n) + ")");
    }
}

/// Runs the hooks registered on the non-leaf outputs of n on the gradients it received; each
/// result replaces the gradient and is checked against it (Note [Checked gradients]: the
/// gradient a hook receives already has its tensor's shape, dtype and device).
void run_pre_hooks(const Node& n, Grads& dys) {
    for (size_t k = 0; k < n.pre_hooks_.size(); ++k) {
        const auto& [slot, hook] = n.pre_hooks_[k];
        if (slot >= dys.size() || !dys[slot].defined())
            continue;
        Tensor r = hook(dys[slot]);
        if (!r.defined())
            continue;
        detail::check_grad(r, detail::meta_of(dys[slot]), [&, slot = slot] {
            size_t nth = 0;  // the hook's place among those on the same tensor
            for (size_t j = 0; j < k; ++j)
                nth += n.pre_hooks_[j].first == slot;
            return "hook " + std::to_string(nth) + " of the tensor " +
                   shape_str(dys[slot].sizes()) + " (output " + std::to_string(slot) + " of '" +
                   n.name_ + "', " + where_recorded(n) + ") returned an invalid gradient";
        });
        dys[slot] = std::move(r);
    }
}

std::shared_ptr<Node> root_node(const Tensor& t, const char* who) {
    if (!t.requires_grad())
        throw autograd_error(std::string(who) +
                             ": tensor does not require grad and has no grad_fn (shape " +
                             shape_str(t.sizes()) + ")");
    return t.grad_fn() ? t.grad_fn() : detail::grad_accumulator(t);
}

/// Note [Roots released]: run owns its roots and gradients and drops them once they are queued,
/// so a caller that hands them over (checkpoint's recomputation) does not keep the incoming
/// gradient and the recomputed output alive through the whole pass.
void run(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads, bool retain, bool create,
         Capture* cap, const char* who) {
    if (!grads.empty() && grads.size() != roots.size())
        throw autograd_error(std::string(who) + ": got " + std::to_string(grads.size()) +
                             " gradients for " + std::to_string(roots.size()) + " outputs");
    std::priority_queue<HeapEntry> heap;
    std::vector<std::shared_ptr<Node>> root_nodes;
    struct Cleanup {  // an exception must not leave gradients parked in nodes
        std::priority_queue<HeapEntry>& h;
        ~Cleanup() {
            while (!h.empty()) {
                NodeScratch::buffer(*h.top().node).clear();
                NodeScratch::queued(*h.top().node) = false;
                h.pop();
            }
        }
    } cleanup{heap};
    for (size_t i = 0; i < roots.size(); ++i) {
        const Tensor& r = roots[i];
        Tensor g = i < grads.size() ? std::move(grads[i]) : Tensor();
        if (!g.defined()) {
            if (r.numel() != 1)
                throw autograd_error(std::string(who) +
                                     ": grad can be implicitly created only for scalar outputs, "
                                     "got shape " +
                                     shape_str(r.sizes()) + "; pass a gradient of that shape");
            g = ones_like(r);
        } else if (g.sizes() != r.sizes() || g.dtype() != r.dtype()) {
            throw autograd_error(std::string(who) + ": gradient " + shape_str(g.sizes()) + " " +
                                 dtype_name(g.dtype()) + " does not match output " +
                                 shape_str(r.sizes()) + " " + dtype_name(r.dtype()));
        } else if (g.device() != r.device()) {
            throw device_error(std::string(who) + ": gradient " + shape_str(g.sizes()) + " on " +
                               g.device().str() + " for output " + shape_str(r.sizes()) + " on " +
                               r.device().str() + ": tensors are on different devices");
        }
        std::shared_ptr<Node> n = root_node(r, who);
        accumulate_into(*n, r.grad_fn() ? r.output_nr() : 0, std::move(g));
        if (!NodeScratch::queued(*n)) {
            NodeScratch::queued(*n) = true;
            heap.push({n->seq_, n.get()});
        }
        root_nodes.push_back(std::move(n));
    }
    roots.clear();
    grads.clear();
    AutoGradMode mode(create);
    struct IntoGrad {  // Note [Gradient accumulated in place]; restored for nested passes
        bool prev = t_into_grad;
        ~IntoGrad() { t_into_grad = prev; }
    } into_grad;
    t_into_grad = cap == nullptr && !create;
    struct PassCapture {  // Note [Pruned gradients]; restored for nested passes
        const Capture* prev = t_capture;
        ~PassCapture() { t_capture = prev; }
    } pass_capture;
    t_capture = cap;
    Node* const prev_current = t_current_node;
    while (!heap.empty()) {
        Node* const n = heap.top().node;
        heap.pop();
        NodeScratch::queued(*n) = false;
        Grads dys = std::move(NodeScratch::buffer(*n));
        NodeScratch::buffer(*n).clear();
        run_pre_hooks(*n, dys);
        if (cap) {
            auto it = cap->at.find(n);
            if (it != cap->at.end())
                for (auto [slot, idx] : it->second)
                    cap->results[idx] = dys[slot];
            if (!cap->needed.count(n))
                continue;
        }
        if (n->released_)
            throw autograd_error(
                std::string("backward through '") + n->name_ +
                "' a second time: its saved tensors were freed by the first backward. Pass "
                "retain_graph=true to the first backward() or autograd::grad() to keep them");
        Grads dxs;
        t_current_node = n;
        t_in_place.clear();
        try {
            detail::ProfileNode timed(
                n->name_);  // Note [What the profile times] (tapegrad/profiler.hpp)
            dxs = n->apply(std::move(dys));
        } catch (const autograd_error& e) {
            t_current_node = prev_current;
            throw autograd_error(std::string("in backward of '") + n->name_ + "' (" +
                                 where_recorded(*n) + "): " + e.what());
        } catch (...) {
            t_current_node = prev_current;
            throw;
        }
        t_current_node = prev_current;
        for (Node* acc : t_in_place)  // Note [Post-accumulate hooks] in graph.cpp
            if (!NodeScratch::queued(*acc)) {
                NodeScratch::queued(*acc) = true;
                heap.push({acc->seq_, acc});
            }
        t_in_place.clear();
        if (!retain)
            n->release();
        if (dxs.empty() && n->next_.empty())
            continue;
        validate(*n, dxs);
        for (size_t i = 0; i < dxs.size(); ++i) {
            const Node::Edge& e = n->next_[i];
            if (!e.fn || !dxs[i].defined())
                continue;
            if (cap && !cap->needed.count(e.fn.get()) && !cap->at.count(e.fn.get()))
                continue;
            accumulate_into(*e.fn, e.input_nr, std::move(dxs[i]));
            if (!NodeScratch::queued(*e.fn)) {
                NodeScratch::queued(*e.fn) = true;
                heap.push({e.fn->seq_, e.fn.get()});
            }
        }
    }
}

/// run() inside the pass depth count: the outermost pass runs the queued callbacks when it ends
/// normally, and drops them when it throws (autograd::queue_callback).
void run_counted(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads, bool retain, bool create,
                 Capture* cap, const char* who) {
    struct Depth {
        Depth() { ++t_depth; }
        ~Depth() {
            if (--t_depth == 0 && std::uncaught_exceptions() > 0)
                t_callbacks.clear();
        }
    } depth;
    run(std::move(roots), std::move(grads), retain, create, cap, who);
    if (t_depth > 1)
        return;
    for (size_t i = 0; i < t_callbacks.size(); ++i) {  // a callback may queue another
        std::function<void()> cb = std::move(t_callbacks[i]);
        try {
            cb();
        } catch (...) {
            t_callbacks.clear();
            throw;
        }
    }
    t_callbacks.clear();
}

}  // namespace

void detail::throw_grad_mismatch(const std::string& what, const Tensor& g, const InputMeta& m) {
    throw autograd_error(what + ": got " + shape_str(g.sizes()) + " " + dtype_name(g.dtype()) +
                         " on " + g.device().str() + ", expected " + shape_str(m.sizes) + " " +
                         dtype_name(m.dtype) + " on " + m.device.str());
}

bool detail::has_aliased_elements(const Tensor& t) {
    for (size_t d = 0; d < t.sizes().size(); ++d)
        if (t.strides()[d] == 0 && t.sizes()[d] > 1)
            return true;
    return false;
}

void detail::run_pass(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads, bool retain,
                      bool create, Capture* cap, const char* who) {
    run_counted(std::move(roots), std::move(grads), retain, create, cap, who);
}

void detail::backward_owned(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads,
                            bool create_graph) {
    run_counted(std::move(roots), std::move(grads), create_graph, create_graph, nullptr,
                "backward");
}

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
              bool create_graph) {
    run_counted(std::vector<Tensor>(roots), std::vector<Tensor>(grads),
                retain_graph || create_graph, create_graph, nullptr, "backward");
}

}  // namespace tg::autograd

namespace tg {
void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
    autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}
}  // namespace tg
