// The op trace ONNX export reads (Note [Op tracing] in trace.hpp).
#include "autograd/trace.hpp"

#include <cstring>
#include <string>

#include "tapegrad/error.hpp"

namespace tg::autograd::detail {

const TraceAttr& TracedOp::attr(const char* name) const {
    for (const TraceAttr& a : attrs)
        if (std::strcmp(a.name, name) == 0)
            return a;
    throw value_error(std::string("trace: op ") + op + " has no attribute " + name);
}

void Trace::add(const char* op, std::initializer_list<const Tensor*> inputs, const Tensor& out,
                std::vector<TraceAttr> attrs) {
    std::vector<Tensor> in;
    in.reserve(inputs.size());
    for (const Tensor* t : inputs)
        in.push_back(*t);
    add(op, in, out, std::move(attrs));
}

void Trace::add(const char* op, const std::vector<Tensor>& inputs, const Tensor& out,
                std::vector<TraceAttr> attrs) {
    if (!out.defined())
        return;
    TracedOp r{op, inputs, {}, out, out._version(), std::move(attrs)};
    for (const Tensor& t : inputs) {
        if (t.defined() && t.impl() == out.impl())
            return;  // the op returned its input: nothing to add
        r.in_version.push_back(t.defined() ? t._version() : 0);
    }
    ops.push_back(std::move(r));
}

}  // namespace tg::autograd::detail
