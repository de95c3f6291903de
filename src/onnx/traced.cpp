// Export of a module without an emitter by tracing its forward (Note [Op tracing] in
// src/autograd/trace.hpp, docs/onnx.md "Functional forwards"): the ops the output depends on,
// in call order, each through its mapping (map_*.cpp).
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onnx/map.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::onnx::detail {

Dims OpStep::in_shape(size_t i) const {
    const Tensor& t = op.inputs.at(i);
    return Dims(t.sizes().begin(), t.sizes().end());
}

Dims OpStep::out_shape() const {
    return Dims(op.out.sizes().begin(), op.out.sizes().end());
}

std::string OpStep::as_out_type(size_t i) const {
    const Dtype from = op.inputs.at(i).dtype(), to = op.out.dtype();
    if (from == to)
        return in.at(i);
    return graph.add("Cast", {in.at(i)}, {attr("to", int64_t(onnx_type(to, who)))});
}

void OpStep::refuse(const std::string& why) const {
    throw value_error("onnx::export_model: " + who + ": " + op.op + " " + why);
}

int onnx_type(Dtype d, const std::string& who) {
    if (d == kFloat32)
        return kFloatType;
    if (d == kInt64)
        return kInt64Type;
    if (d == kBool)
        return 9;  // TensorProto.BOOL
    throw dtype_error("onnx::export_model: " + who + ": a traced value is " + dtype_name(d) +
                      "; ONNX export takes float32, int64 and bool");
}

namespace {

using Impl = const TensorImpl*;

/// A constant the trace did not produce, as an initializer (bool as float32 0/1, then Cast).
std::string constant(Graph& g, const std::string& name, const Tensor& t, const std::string& who) {
    const Tensor c = t.detach().contiguous();
    const Dims dims(c.sizes().begin(), c.sizes().end());
    if (c.dtype() == kInt64) {
        std::vector<int64_t> v(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
        return g.int64s(name, dims, v);
    }
    if (c.dtype() == kBool)
        return g.add("Cast", {g.weight(name, c.to(kFloat32))}, {attr("to", int64_t(9))});
    onnx_type(c.dtype(), who);  // float32 or a dtype_error
    return g.weight(name, c);
}

/// m's forward on a copy of x, traced; with grad on (x requiring grad when floating), the tape
/// names any op the trace does not know.
struct Run {
    autograd::detail::Trace trace;
    Tensor x, y;
    Run(nn::Module& m, const Tensor& in) : x(in.detach()) {
        if (is_floating(x.dtype()))
            x.requires_grad_(true);
        AutoGradMode grad(true);
        autograd::detail::TraceGuard guard(trace);
        y = m(x);
    }
};

/// x with other values: 0.25 - x/2 (floats: most signs flip), reversed (indices stay in range).
Tensor other_values(const Tensor& x) {
    if (x.dtype() != kInt64)
        return x.detach() * -0.5 + 0.25;
    Tensor c = x.detach().contiguous().clone();
    int64_t* p = c.data_ptr<int64_t>();
    std::reverse(p, p + c.numel());
    return c;
}

bool same_values(const Tensor& a, const Tensor& b) {
    if (!b.defined() || a.dtype() != b.dtype() || a.sizes() != b.sizes())
        return false;
    const Tensor ca = a.detach().contiguous(), cb = b.detach().contiguous();
    const size_t esize = element_size(a.dtype());
    auto bytes = [esize](const Tensor& t) {
        return static_cast<const char*>(t.impl()->storage->data) + size_t(t.impl()->offset) * esize;
    };
    return std::memcmp(bytes(ca), bytes(cb), size_t(a.numel()) * esize) == 0;
}

}  // namespace

std::string emit_traced(Graph& g, nn::Module& m, const std::string& path, Tensor& x,
                        const std::string& name, bool dynamic_batch) {
    const std::string who = m.name() + " '" + m.label() + "'";
    auto refuse = [&](const std::string& why) {
        throw value_error("onnx::export_model: " + who + " " + why);
    };
    const Run first(m, x);
    const auto& trace = first.trace;
    const Tensor &xin = first.x, &y = first.y;
    // the last record for each value (an outer op's, Note [Op tracing]), and the records the
    // output depends on
    std::unordered_map<Impl, size_t> producer;
    for (size_t i = 0; i < trace.ops.size(); ++i)
        producer[trace.ops[i].out.impl()] = i;
    std::vector<char> live(trace.ops.size(), 0);
    std::vector<Impl> todo{y.impl()};
    while (!todo.empty()) {
        const Impl v = todo.back();
        todo.pop_back();
        auto it = producer.find(v);
        if (it == producer.end() || live[it->second])
            continue;
        live[it->second] = 1;
        for (const Tensor& t : trace.ops[it->second].inputs)
            if (t.defined())
                todo.push_back(t.impl());
    }
    // what names the values: the input, then parameters and buffers, then the nodes
    std::unordered_map<Impl, std::string> keys;
    for (const auto& item : m.named_parameters())
        keys[item.value().impl()] = path.empty() ? item.key() : path + "." + item.key();
    for (const auto& item : m.named_buffers())
        keys[item.value().impl()] = path.empty() ? item.key() : path + "." + item.key();
    std::unordered_map<Impl, std::string> names{{xin.impl(), name}};
    std::unordered_map<Impl, int64_t> bdims{{xin.impl(), dynamic_batch ? 0 : -1}};
    ScopeGuard scope(g, path);
    std::vector<std::pair<size_t, size_t>> constants;  // (record, input) of each constant
    auto value = [&](const Tensor& t, uint32_t version, size_t i, size_t j) -> std::string {
        if (!t.defined())
            return "";
        if (auto it = names.find(t.impl()); it != names.end())
            return it->second;
        if (const auto& fn = t.grad_fn())  // computed here by an op the trace does not know
            refuse(std::string("calls ") + fn->op() +
                   ", which the ONNX tracer does not map (docs/onnx.md lists the ops it does)");
        if (t._version() != version)
            refuse("changes a tensor in place during its forward (in-place ops are not traced)");
        std::string n;
        if (auto k = keys.find(t.impl()); k != keys.end()) {
            ScopeGuard root(g, "");
            n = constant(g, k->second, t, who);
        } else {
            n = constant(g, "const", t, who);
            constants.emplace_back(i, j);
        }
        bdims[t.impl()] = -1;
        return names[t.impl()] = n;
    };
    for (size_t i = 0; i < trace.ops.size(); ++i) {
        if (!live[i])
            continue;
        const TracedOp& r = trace.ops[i];
        OpStep s{g, r, {}, {}, -1, dynamic_batch, x.dim() > 0 ? x.size(0) : 0, who};
        for (size_t j = 0; j < r.inputs.size(); ++j) {
            const Tensor& t = r.inputs[j];
            auto p = t.defined() ? producer.find(t.impl()) : producer.end();
            if (p != producer.end() && trace.ops[p->second].out_version != r.in_version[j])
                refuse(std::string("changes the output of ") + trace.ops[p->second].op +
                       " in place during its forward (in-place ops are not traced)");
            s.in.push_back(value(t, r.in_version[j], i, j));
            const int64_t b = t.defined() ? bdims[t.impl()] : -1;
            s.in_bdim.push_back(b);
            if (b >= 0)  // elementwise: dims line up from the right
                s.out_bdim = std::max(s.out_bdim, b + r.out.dim() - t.dim());
        }
        std::optional<std::string> out = map_shape_op(s);
        if (!out)
            out = map_math_op(s);
        if (!out)
            out = map_layer_op(s);
        if (!out)
            refuse(std::string("calls ") + r.op + ", which has no ONNX mapping");
        names[r.out.impl()] = *out;
        bdims[r.out.impl()] = s.out_bdim;
    }
    std::string out = value(y, y._version(), trace.ops.size(), 0);
    // Note [Constants that are not]: a value computed from the input by an op the trace does not
    // see and the tape does not name (a comparison, argmax, integer arithmetic) would be a
    // constant holding the example's values; run once more on other values to find it, and
    // control flow on the input's values with it
    const Run second(m, other_values(x));
    const auto& ops2 = second.trace.ops;
    bool same = trace.ops.size() == ops2.size();
    for (size_t i = 0; same && i < ops2.size(); ++i)
        same = std::strcmp(trace.ops[i].op, ops2[i].op) == 0 &&
               trace.ops[i].inputs.size() == ops2[i].inputs.size();
    if (!same)
        refuse(
            "runs other ops for other input values (control flow on the values, which a "
            "traced graph cannot express)");
    for (const auto& [i, j] : constants)
        if (!same_values(i < ops2.size() ? trace.ops[i].inputs[j] : y,
                         i < ops2.size() ? ops2[i].inputs[j] : second.y))
            refuse(std::string("has a tensor whose values follow its input's, computed by an op "
                               "the ONNX tracer does not see (a comparison, argmax, integer "
                               "arithmetic, a random draw, ...): it would be exported as a "
                               "constant") +
                   (i < ops2.size() ? std::string(" (an input of ") + trace.ops[i].op + ")" : ""));
    if (g.nodes().empty() || g.nodes().back().outputs[0] != out)
        out = g.add("Identity", {out});
    x = y.detach();
    return out;
}

}  // namespace tg::onnx::detail
