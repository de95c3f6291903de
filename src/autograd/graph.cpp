// Building the graph: tape positions, edges, leaves' accumulators, and freeing graphs.
#include "autograd/graph.hpp"

#include <algorithm>
#include <atomic>
#include <string>

#include "autograd/engine.hpp"
#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {
namespace autograd::detail {

namespace {
std::atomic<uint64_t> g_seq{1};
}

uint64_t next_seq() {
    return g_seq.fetch_add(1, std::memory_order_relaxed);
}
uint64_t peek_seq() {
    return g_seq.load(std::memory_order_relaxed);
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
        if (!impl)
            return {};
        if (dys.empty() || !dys[0].defined()) {  // Note [Post-accumulate hooks]
            run_post_hooks(impl);
            return {};
        }
        accumulate(impl.get(), std::move(dys[0]));
        run_post_hooks(impl);
        return {};
    }
    void release() override {}  // nothing saved; shared by every graph the leaf is used in

private:
    static void run_post_hooks(const std::shared_ptr<TensorImpl>& impl) {
        if (impl->post_accumulate_hooks.empty() || !impl->grad)
            return;
        const Tensor leaf_tensor(impl);
        for (auto& hook : impl->post_accumulate_hooks)
            hook(leaf_tensor);
    }
    void accumulate(TensorImpl* impl, Tensor&& dy) {
        Tensor g = std::move(dy);
        for (size_t k = 0; k < impl->hooks.size(); ++k) {
            Tensor r = impl->hooks[k](g);
            if (!r.defined())
                continue;
            check_grad(r, inputs_[0], [&] {  // Note [Checked gradients] in engine.hpp
                return "hook " + std::to_string(k) + " of the leaf " + shape_str(inputs_[0].sizes) +
                       " returned an invalid gradient";
            });
            g = std::move(r);
        }
        // A first gradient is stolen only if nobody else can see it: two leaves would otherwise
        // share one buffer (add's backward sends one tensor to both inputs) and the in-place add
        // of a later backward into one would change the other. It must also be contiguous, not
        // an expand() view such as sum's gradient (Note [Checked gradients] in engine.hpp).
        const bool exclusive = !impl->grad && g.impl_ptr().use_count() == 1 &&
                               g.impl()->storage.use_count() == 1 && g.is_contiguous();
        if (GradMode::is_enabled()) {  // create_graph: the gradient keeps its history
            if (impl->grad)
                impl->grad = (Tensor(impl->grad) + g).impl_ptr();
            else
                impl->grad = exclusive ? g.impl_ptr() : g.clone().impl_ptr();
            return;
        }
        if (!impl->grad) {
            impl->grad = exclusive ? g.impl_ptr() : g.detach().clone().impl_ptr();
            return;
        }
        Tensor acc(impl->grad);
        if (acc.requires_grad()) {  // a grad kept from a create_graph pass: do not mutate it
            impl->grad = (acc.detach() + g).impl_ptr();
        } else {
            runtime::binary_into(backend::BinaryOp::add, acc, acc, g, "backward", 0, 0);
            runtime::mark_modified(acc);
        }
    }
};

// Note [Post-accumulate hooks]: a leaf's post-accumulate hooks must run once per pass, after its
// last gradient of the pass. AccumulateGrad runs once per pass (the engine queues a node once)
// and after every node that can send it a gradient (Note [Tape order]), so it runs them. A
// gradient added in place (Note [Gradient accumulated in place]) does not go through it, so
// GradTarget::done() asks the engine to queue the leaf's AccumulateGrad with nothing to add
// (note_accumulated_in_place), which then only runs the hooks.

// Note [Gradient accumulated in place]: when a leaf already has a .grad(), the backward of an
// op that computes its gradient with a BLAS call (linear's dW = dyᵀ·x, db = dyᵀ·1) can add
// straight into it with beta = 1, as Neanderthal's memory-minimal backward pass does, instead of
// writing a temporary that AccumulateGrad then adds: one buffer of the weight's size and one
// pass over it fewer per layer and step (a 4 MiB transient per 1024x1024 layer, which is what
// kept the planner's 25% budget out of reach). It is allowed only where the result is the one
// AccumulateGrad would produce: a backward() (not autograd::grad, which must not touch .grad),
// not create_graph, no anomaly checks or hooks to run on the gradient, and a plain .grad() of
// the leaf's shape, dtype and device. The op then returns an undefined gradient for the input.
GradTarget::GradTarget(const Node& n, size_t i) {
    if (into_grad_pass() && !AnomalyMode::is_enabled() && !GradMode::is_enabled() &&
        i < n.next_.size()) {
        const auto* acc = dynamic_cast<const AccumulateGrad*>(n.next_[i].fn.get());
        if (acc && acc->pre_hooks_.empty()) {
            auto impl = acc->leaf.lock();
            if (impl && impl->hooks.empty() && impl->grad) {
                Tensor g(impl->grad);
                if (!g.requires_grad() && g.is_contiguous() && g.sizes() == impl->sizes &&
                    g.dtype() == impl->dtype && g.device() == impl->storage->device) {
                    out_ = std::move(g);
                    in_place_ = true;
                    if (!impl->post_accumulate_hooks.empty())
                        accumulator_ = n.next_[i].fn.get();
                    chunks_ = impl->grad_chunks;
                    return;
                }
            }
        }
    }
    const InputMeta& m = n.inputs_[i];
    out_ = runtime::empty(m.sizes, m.dtype, m.device);
}

int64_t GradTarget::chunk_rows(int64_t rows, int64_t row_elems) const {
    if (!chunks_ || !chunks_->ready || rows <= 1 || row_elems <= 0)
        return std::max<int64_t>(rows, 1);
    return GradChunks::block_rows(chunks_->bytes, rows,
                                  row_elems * int64_t(element_size(out_.dtype())));
}

void GradTarget::rows_done(int64_t r0, int64_t r1, int64_t row_elems) const {
    if (chunks_ && chunks_->ready)  // Note [Gradient chunks] in hooks.hpp
        chunks_->ready(r0 * row_elems, r1 * row_elems);
}

Tensor GradTarget::done() {
    if (!in_place_)
        return std::move(out_);
    runtime::mark_modified(out_);
    out_ = Tensor();
    if (accumulator_)  // Note [Post-accumulate hooks]
        note_accumulated_in_place(accumulator_);
    return {};
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
    if (!RecordScope::current().empty())
        n.scope_ = RecordScope::current();
}

void connect(Node& n, const std::vector<Tensor>& inputs) {
    n.next_.reserve(inputs.size());
    n.inputs_.reserve(inputs.size());
    for (const Tensor& t : inputs)
        add_edge(n, &t);
    n.seq_ = next_seq();
    if (!RecordScope::current().empty())
        n.scope_ = RecordScope::current();
}

void set_history(Tensor& out, const std::shared_ptr<Node>& n, uint32_t nr) {
    out.impl()->grad_fn = n;
    out.impl()->output_nr = nr;
}

std::string where_recorded(const Node& n) {
    std::string s = "tape position #" + std::to_string(n.seq_);
    if (!n.scope_.empty())
        s += ", recorded in '" + n.scope_ + "'";
    return s;
}

void check_forward_anomaly(const char* op, const Tensor& t) {
    if (!AnomalyMode::is_enabled() || runtime::all_finite(t))
        return;
    const Node* n = t.grad_fn().get();
    throw autograd_error(std::string("anomaly detected: forward of '") + op +
                         "' produced NaN or Inf in its output of shape " + shape_str(t.sizes()) +
                         (n ? " (" + where_recorded(*n) + ")" : std::string()));
}

}  // namespace autograd::detail

Node::~Node() {
    for (auto& e : next_)
        autograd::detail::release_node(e.fn);
}

TensorImpl::~TensorImpl() {
    autograd::detail::release_node(grad_fn);
}

}  // namespace tg
