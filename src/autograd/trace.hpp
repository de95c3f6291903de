#pragma once
// Note [Op tracing]: while tg::onnx::export_model runs the forward of a module it has no emitter
// for, a Trace is active on the thread (trace_slot). Each traceable op, after computing its
// output, appends what it was called with (its name, its tensor inputs, its output and its
// non-tensor arguments) with one line:
//
//     trace_op("relu", {&x}, y);
//     if (Trace* t = trace_slot()) t->add("softmax", {&x}, y, {{"dim", dim}});
//
// With no trace active that is one thread-local load and a branch; the attributes are built
// only inside the branch. An op composed of other traceable ops records its parts too; the
// export keeps the record written last for an output (the outer op's) and drops the records
// no output depends on, so a composed op either records itself (one line at its end) or is
// exported as its parts. Values are identified by their TensorImpl: the trace holds every
// tensor it saw, so no address is reused while it lives. An op's mapping to ONNX nodes is one
// function in src/onnx/map_*.cpp (docs/onnx.md "Functional forwards").
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "tapegrad/tensor.hpp"

namespace tg::autograd::detail {

/// A non-tensor argument of a traced op: an integer, a list of integers or a number.
struct TraceAttr {
    const char* name;
    std::vector<int64_t> ints;
    double f = 0;
    TraceAttr(const char* n, int64_t v) : name(n), ints{v}, f(double(v)) {}
    TraceAttr(const char* n, int v) : name(n), ints{v}, f(v) {}
    TraceAttr(const char* n, bool v) : name(n), ints{v ? 1 : 0}, f(v ? 1 : 0) {}
    TraceAttr(const char* n, double v) : name(n), f(v) {}
    TraceAttr(const char* n, std::vector<int64_t> v) : name(n), ints(std::move(v)) {}
};

/// One traced op call.
struct TracedOp {
    const char* op;
    std::vector<Tensor> inputs;        // an undefined tensor for an absent optional input
    std::vector<uint32_t> in_version;  // each defined input's version when the op read it
    Tensor out;
    uint32_t out_version = 0;
    std::vector<TraceAttr> attrs;

    /// The attribute `name` (value_error naming the op when it has none).
    const TraceAttr& attr(const char* name) const;
    int64_t i(const char* name) const { return attr(name).ints.at(0); }
    double f(const char* name) const { return attr(name).f; }
    const std::vector<int64_t>& ints(const char* name) const { return attr(name).ints; }
};

/// The ops traced on one thread, in call order.
struct Trace {
    std::vector<TracedOp> ops;
    /// Appends op(inputs) = out; an op that returned one of its inputs is not recorded (it
    /// added nothing to the graph).
    void add(const char* op, std::initializer_list<const Tensor*> inputs, const Tensor& out,
             std::vector<TraceAttr> attrs = {});
    void add(const char* op, const std::vector<Tensor>& inputs, const Tensor& out,
             std::vector<TraceAttr> attrs = {});
};

/// The active trace of this thread, or null.
inline Trace*& trace_slot() {
    static thread_local Trace* t = nullptr;
    return t;
}

/// trace_slot()->add(op, inputs, out) when a trace is active: the one line of an op without
/// attributes (with attributes, test trace_slot() first, so they are built only when tracing).
inline void trace_op(const char* op, std::initializer_list<const Tensor*> inputs,
                     const Tensor& out) {
    if (Trace* t = trace_slot())
        t->add(op, inputs, out);
}

/// Makes `t` the thread's active trace for its lifetime, then restores the previous one.
class TraceGuard {
public:
    explicit TraceGuard(Trace& t) : prev_(trace_slot()) { trace_slot() = &t; }
    ~TraceGuard() { trace_slot() = prev_; }
    TraceGuard(const TraceGuard&) = delete;
    TraceGuard& operator=(const TraceGuard&) = delete;

private:
    Trace* prev_;
};

}  // namespace tg::autograd::detail

namespace tg {
using autograd::detail::Trace;
using autograd::detail::trace_op;
using autograd::detail::trace_slot;
}  // namespace tg
