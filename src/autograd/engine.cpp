// The autograd engine: modes, graph bookkeeping and the backward pass.
#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
thread_local bool t_anomaly = false;
thread_local std::string t_scope;
thread_local Node* t_current_node = nullptr;
thread_local bool t_into_grad = false;  // the running pass accumulates into leaves' .grad()
std::atomic<uint64_t> g_seq{1};
}  // namespace

namespace {
thread_local bool t_grad_mode = true;
}
bool GradMode::is_enabled() {
    return t_grad_mode;
}
void GradMode::set_enabled(bool on) {
    t_grad_mode = on;
}

namespace autograd {

AnomalyMode::AnomalyMode() : prev_(t_anomaly) {
    t_anomaly = true;
}
AnomalyMode::~AnomalyMode() {
    t_anomaly = prev_;
}
bool AnomalyMode::is_enabled() {
    return t_anomaly;
}

RecordScope::RecordScope(std::string name) : prev_len_(t_scope.size()) {
    if (!t_scope.empty())
        t_scope += '.';
    t_scope += name;
}
RecordScope::~RecordScope() {
    t_scope.resize(prev_len_);
}
const std::string& RecordScope::current() {
    return t_scope;
}

namespace detail {

// Note [Tape order]: every node takes its sequence number from one counter when it is recorded,
// after the nodes of its inputs exist. So an edge always points from a higher number to a lower
// one, and running nodes in decreasing sequence number is a topological order: when a node runs,
// every node that could still send it a gradient has already run. The engine needs no recursion
// and no dependency counting, only a max-heap of the nodes that have received a gradient.
uint64_t next_seq() {
    return g_seq.fetch_add(1, std::memory_order_relaxed);
}

Node* current_node() {
    return t_current_node;
}

// Note [Graph destruction]: a 100,000-op chain is a 100,000-deep chain of shared_ptrs. Releasing
// it naively recurses once per node and overflows the stack. Instead, a node or tensor that drops
// the last reference to a node hands it to a thread-local list, and the outermost release
// destroys the list's nodes one at a time.
void release_node(std::shared_ptr<Node>& p) {
    if (!p || p.use_count() != 1)
        return;
    thread_local std::vector<std::shared_ptr<Node>> pending;
    thread_local bool draining = false;
    pending.push_back(std::move(p));
    if (draining)
        return;
    draining = true;
    while (!pending.empty()) {
        std::shared_ptr<Node> n = std::move(pending.back());
        pending.pop_back();
        n.reset();
    }
    draining = false;
}

/// Adds gradients into a leaf's grad(): the sink of every backward pass.
struct AccumulateGrad final : Node {
    std::weak_ptr<TensorImpl> leaf;
    Grads apply(Grads&& dys) override {
        auto impl = leaf.lock();
        if (!impl || !dys[0].defined())
            return {};
        Tensor g = std::move(dys[0]);
        for (auto& hook : impl->hooks) {
            Tensor r = hook(g);
            if (r.defined())
                g = r;
        }
        if (GradMode::is_enabled()) {  // create_graph: the gradient keeps its history
            impl->grad = impl->grad ? (Tensor(impl->grad) + g).impl_ptr() : g.impl_ptr();
            return {};
        }
        if (!impl->grad) {
            // Steal g only if nobody else can see it; otherwise two leaves could share one
            // gradient buffer and an in-place update of one would change the other.
            const bool exclusive = g.impl_ptr().use_count() == 1 &&
                                   g.impl()->storage.use_count() == 1 && g.is_contiguous();
            impl->grad = exclusive ? g.impl_ptr() : g.detach().clone().impl_ptr();
            return {};
        }
        Tensor acc(impl->grad);
        if (acc.requires_grad()) {  // a grad kept from a create_graph pass: do not mutate it
            impl->grad = (acc.detach() + g).impl_ptr();
        } else {
            runtime::binary_into(backend::BinaryOp::add, acc, acc, g, "backward", 0, 0);
            ++acc.impl()->storage->version;
        }
        return {};
    }
    void release() override {}  // nothing saved; shared by every graph the leaf is used in
};

// Note [Gradient accumulated in place]: when a leaf already has a .grad(), the backward of an
// op that computes its gradient with a BLAS call (linear's dW = dyᵀ·x, db = dyᵀ·1) can add
// straight into it with beta = 1, as the Neanderthal seed's backward pass does, instead of
// writing a temporary that AccumulateGrad then adds: one buffer of the weight's size and one
// pass over it fewer per layer and step (a 4 MiB transient per 1024x1024 layer, which is what
// kept the planner's 25% budget out of reach). It is allowed only where the result is the one
// AccumulateGrad would produce: a backward() (not autograd::grad, which must not touch .grad),
// not create_graph, no anomaly checks or hooks to run on the gradient, and a plain .grad() of
// the leaf's shape, dtype and device. The op then returns an undefined gradient for the input.
Tensor grad_buffer(const Node& n, size_t i) {
    if (!t_into_grad || t_anomaly || GradMode::is_enabled() || i >= n.next_.size())
        return {};
    const auto* acc = dynamic_cast<const AccumulateGrad*>(n.next_[i].fn.get());
    if (!acc || !acc->pre_hooks_.empty())
        return {};
    auto impl = acc->leaf.lock();
    if (!impl || !impl->hooks.empty() || !impl->grad)
        return {};
    Tensor g(impl->grad);
    if (g.requires_grad() || !g.is_contiguous() || g.sizes() != impl->sizes ||
        g.dtype() != impl->dtype || g.device() != impl->storage->device)
        return {};
    return g;
}

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
    TensorImpl* impl = leaf.impl();
    if (auto n = impl->grad_accumulator.lock())
        return n;
    auto n = std::make_shared<AccumulateGrad>();
    n->name_ = "AccumulateGrad";
    n->seq_ = next_seq();
    n->leaf = leaf.impl_ptr();
    n->inputs_.push_back({impl->sizes, impl->dtype, impl->storage->device});
    impl->grad_accumulator = n;
    return n;
}

static void add_edge(Node& n, const Tensor* t) {
    if (t->defined() && t->requires_grad()) {
        if (t->grad_fn())
            n.next_.push_back({t->grad_fn(), t->output_nr()});
        else
            n.next_.push_back({grad_accumulator(*t), 0});
        n.inputs_.push_back({t->sizes(), t->dtype(), t->device()});
    } else {
        n.next_.push_back({nullptr, 0});
        n.inputs_.push_back({{}, Dtype::Float32, Device::cpu()});
    }
}

// The edges are made first: a leaf's AccumulateGrad node, created on its first use, must take a
// lower sequence number than the node that uses it (Note [Tape order]).
void connect(Node& n, std::initializer_list<const Tensor*> inputs) {
    n.next_.reserve(inputs.size());
    n.inputs_.reserve(inputs.size());
    for (const Tensor* t : inputs)
        add_edge(n, t);
    n.seq_ = next_seq();
    if (!t_scope.empty())
        n.scope_ = t_scope;
}

void connect(Node& n, const std::vector<Tensor>& inputs) {
    n.next_.reserve(inputs.size());
    n.inputs_.reserve(inputs.size());
    for (const Tensor& t : inputs)
        add_edge(n, &t);
    n.seq_ = next_seq();
    if (!t_scope.empty())
        n.scope_ = t_scope;
}

void set_history(Tensor& out, const std::shared_ptr<Node>& n, uint32_t nr) {
    out.impl()->grad_fn = n;
    out.impl()->output_nr = nr;
}

static std::string where_recorded(const Node& n) {
    std::string s = "tape position #" + std::to_string(n.seq_);
    if (!n.scope_.empty())
        s += ", recorded in '" + n.scope_ + "'";
    return s;
}

void check_forward_anomaly(const char* op, const Tensor& t) {
    if (!t_anomaly || runtime::all_finite(t))
        return;
    const Node* n = t.grad_fn().get();
    throw autograd_error(std::string("anomaly detected: forward of '") + op +
                         "' produced NaN or Inf in its output of shape " + shape_str(t.sizes()) +
                         (n ? " (" + where_recorded(*n) + ")" : std::string()));
}

}  // namespace detail

namespace {

using detail::where_recorded;

struct Capture {
    // node -> (output slot, index into results)
    std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> at;
    std::unordered_set<Node*> needed;  // nodes to execute
    std::vector<Tensor> results;
};

thread_local const Capture* t_capture = nullptr;  // the running pass's, if it is a grad()

}  // namespace

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
    if (target.buffer_.empty())
        target.buffer_.resize(target.num_outputs_);
    Tensor& b = target.buffer_[slot];
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
        const InputMeta& m = n.inputs_[i];
        const Tensor& g = dxs[i];
        if (g.sizes() != m.sizes || g.dtype() != m.dtype || g.device() != m.device)
            throw autograd_error(std::string("backward of '") + n.name_ +
                                 "' returned an invalid gradient for input " + std::to_string(i) +
                                 ": got " + shape_str(g.sizes()) + " " + dtype_name(g.dtype()) +
                                 " on " + g.device().str() + ", expected " + shape_str(m.sizes) +
                                 " " + dtype_name(m.dtype) + " on " + m.device.str());
        if (t_anomaly && !runtime::all_finite(g))
            throw autograd_error(std::string("anomaly detected: backward of '") + n.name_ +
                                 "' returned NaN or Inf in the gradient of input " +
                                 std::to_string(i) + " (" + where_recorded(n) + ")");
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
                h.top().node->buffer_.clear();
                h.top().node->queued_ = false;
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
        if (!n->queued_) {
            n->queued_ = true;
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
        n->queued_ = false;
        Grads dys = std::move(n->buffer_);
        n->buffer_.clear();
        for (auto& [slot, hook] : n->pre_hooks_) {
            if (slot >= dys.size() || !dys[slot].defined())
                continue;
            Tensor r = hook(dys[slot]);
            if (r.defined())
                dys[slot] = r;
        }
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
        try {
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
            if (!e.fn->queued_) {
                e.fn->queued_ = true;
                heap.push({e.fn->seq_, e.fn.get()});
            }
        }
    }
}

}  // namespace

void detail::backward_owned(std::vector<Tensor>&& roots, std::vector<Tensor>&& grads,
                            bool create_graph) {
    run(std::move(roots), std::move(grads), create_graph, create_graph, nullptr, "backward");
}

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads, bool retain_graph,
              bool create_graph) {
    run(std::vector<Tensor>(roots), std::vector<Tensor>(grads), retain_graph || create_graph,
        create_graph, nullptr, "backward");
}

namespace {

/// autograd::grad over owned outputs and gradients. With stop_at_inputs, the pass does not run
/// the nodes below an input: the gradient of an input is only what reaches it from the outputs
/// directly, not through another input (checkpoint's recomputation, Note [Checkpoint edges]).
std::vector<Tensor> grad_impl(std::vector<Tensor>&& outputs, const std::vector<Tensor>& inputs,
                              std::vector<Tensor>&& grad_outputs, bool retain_graph,
                              bool create_graph, bool allow_unused, bool stop_at_inputs) {
    Capture cap;
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
    run(std::move(outputs), std::move(grad_outputs), retain_graph || create_graph, create_graph,
        &cap, "autograd::grad");
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

bool detail::into_grad_pass() {
    return t_into_grad;
}

}  // namespace autograd

Node::~Node() {
    for (auto& e : next_)
        autograd::detail::release_node(e.fn);
}

TensorImpl::~TensorImpl() {
    autograd::detail::release_node(grad_fn);
}

void Tensor::backward(const Tensor& gradient, bool retain_graph, bool create_graph) const {
    autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

}  // namespace tg
