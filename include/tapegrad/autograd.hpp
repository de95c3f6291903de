#pragma once
/// The tape: nodes, backward, grad(), NoGradGuard, anomaly mode, gradcheck.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// The gradients a node returns, one per input (undefined: no gradient).
using Grads = SmallVector<Tensor, 3>;

namespace autograd::detail {
struct NodeScratch;  // the engine's access to a node's scratch (src/autograd/engine.cpp)
}

/// Shape, dtype and device an input had when recorded: what its gradient must match.
struct InputMeta {
    Shape sizes;
    Dtype dtype;
    Device device;
};

/// One recorded op (its `grad_fn`). Edges point at the nodes that produced its inputs;
/// `apply` maps the gradients of its outputs to the gradients of its inputs.
struct Node : std::enable_shared_from_this<Node> {
    struct Edge {
        std::shared_ptr<Node> fn;  // null: that input needs no gradient
        uint32_t input_nr = 0;     // which output of fn the input was
    };
    const char* name_ = "";             // the tapegrad op (what errors and reports name)
    const char* torch_name_ = nullptr;  // PyTorch's name when not the table's (name())
    uint64_t seq_ = 0;                  // Note [Tape order] in src/autograd/engine.cpp
    SmallVector<Edge, 2> next_;
    SmallVector<InputMeta, 2> inputs_;
    uint32_t num_outputs_ = 1;
    bool released_ = false;
    std::string scope_;  // the RecordScope it was recorded in (e.g. the layer name)
    /// What the backward closure saved: storage and bytes (autograd::saved_report reads it).
    struct SavedInfo {
        const void* storage;
        int64_t bytes;
    };
    SmallVector<SavedInfo, 2> saved_;
    std::vector<std::pair<uint32_t, std::function<Tensor(const Tensor&)>>> pre_hooks_;

    Node() = default;
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    virtual ~Node();  // Note [Graph destruction]
    /// Gradients of the outputs (undefined ones are zero) to gradients of the inputs.
    virtual Grads apply(Grads&& dys) = 0;
    /// Frees what was saved for backward (after a backward without retain_graph).
    virtual void release() { released_ = true; }
    /// PyTorch's name for this node ("AddBackward0", "MeanBackward1", "AccumulateGrad"), as
    /// LibTorch's grad_fn()->name() gives it: a composed op names the node it returns.
    const char* name() const;
    /// The tapegrad op that recorded it ("add", "mean"), as error messages and saved_report name
    /// it.
    const char* op() const { return name_; }
    uint64_t sequence_nr() const { return seq_; }
    const SmallVector<Edge, 2>& next_functions() const { return next_; }

private:
    friend struct autograd::detail::NodeScratch;
    // Note [Engine buffers] in src/autograd/engine.cpp: the gradients a running pass has sent
    // this node so far, and whether it is queued to run.
    Grads buffer_;
    bool queued_ = false;
};

/// Whether ops record (thread-local). Backward turns it off unless create_graph is set.
struct GradMode {
    static bool is_enabled();
    static void set_enabled(bool on);
};

/// Disables recording in its scope, as torch::NoGradGuard.
class NoGradGuard {
public:
    NoGradGuard() : prev_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
    ~NoGradGuard() { GradMode::set_enabled(prev_); }
    NoGradGuard(const NoGradGuard&) = delete;
    NoGradGuard& operator=(const NoGradGuard&) = delete;

private:
    bool prev_;
};

/// Enables (or sets) recording in its scope.
class AutoGradMode {
public:
    explicit AutoGradMode(bool on) : prev_(GradMode::is_enabled()) { GradMode::set_enabled(on); }
    ~AutoGradMode() { GradMode::set_enabled(prev_); }
    AutoGradMode(const AutoGradMode&) = delete;
    AutoGradMode& operator=(const AutoGradMode&) = delete;

private:
    bool prev_;
};

namespace autograd {

/// Gradients of `outputs` with respect to `inputs` (returned, not accumulated into .grad()).
/// An undefined grad_output means ones (scalar outputs only). Inputs that do not reach the
/// outputs throw unless allow_unused, in which case their gradient is undefined.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                         bool create_graph = false, bool allow_unused = false);

/// Runs backward from several roots at once (the engine behind Tensor::backward).
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads = {},
              bool retain_graph = false, bool create_graph = false);

/// Runs cb once, when the outermost backward pass running on this thread has finished without an
/// exception (PyTorch's Variable._execution_engine.queue_callback); callbacks run in the order
/// they were queued, and an exception from one propagates out of backward(). A pass that throws
/// drops its callbacks. Throws autograd_error outside a backward pass.
void queue_callback(std::function<void()> cb);

/// In its scope, every op checks its outputs and every backward its gradients for NaN/Inf and
/// throws autograd_error naming the op and where it was recorded.
class AnomalyMode {
public:
    AnomalyMode();
    ~AnomalyMode();
    AnomalyMode(const AnomalyMode&) = delete;
    AnomalyMode& operator=(const AnomalyMode&) = delete;
    static bool is_enabled();

private:
    bool prev_;
};

/// What a graph keeps alive for backward (like JAX's print_saved_residuals): one entry per node
/// that saved tensors, and the total over distinct storages.
struct SavedReport {
    struct Entry {
        std::string op, scope;
        uint64_t seq;
        int64_t bytes;
        int64_t first_bytes;  // bytes of the buffers no earlier entry keeps (they sum to total)
    };
    std::vector<Entry> entries;  // in tape order
    int64_t total_bytes = 0;     // each storage counted once
    /// Bytes kept per scope, cut to its first `depth` dot-separated names ("blocks.0" for depth
    /// 2 of "blocks.0.self_attn"), in tape order; "-" for ops recorded outside any scope. Each
    /// buffer counts once, in the scope of the first node that keeps it, so the values sum to
    /// total_bytes.
    std::vector<std::pair<std::string, int64_t>> by_scope(int depth = 1) const;
};
/// The report of root's graph (empty for a tensor without one); value_error if root is undefined.
SavedReport saved_report(const Tensor& root);
std::ostream& operator<<(std::ostream& os, const SavedReport& r);

/// Names the ops recorded in its scope (anomaly messages and saved_report show it);
/// nn::Module::operator() opens one per layer.
class RecordScope {
public:
    explicit RecordScope(std::string name);
    ~RecordScope();
    RecordScope(const RecordScope&) = delete;
    RecordScope& operator=(const RecordScope&) = delete;
    static const std::string& current();

private:
    size_t prev_len_;
};

}  // namespace autograd

/// Compares fn's backward with central finite differences (eps) in float64; inputs must be
/// float64 tensors that require grad. Returns true, or throws autograd_error describing the
/// first element whose analytical and numerical derivatives differ by more than atol + rtol*|num|.
/// Throws value_error for an empty fn, an eps that is not finite and > 0, or a negative or NaN
/// atol or rtol.
bool gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
               const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
               double rtol = 1e-3);

/// gradcheck of the gradient itself: checks the double backward (create_graph) of fn.
bool gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                   const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
                   double rtol = 1e-3);

}  // namespace tg

#pragma GCC visibility pop
