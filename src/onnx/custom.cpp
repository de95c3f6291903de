// User-registered module emitters: the registry and the Emitter facade over the walk's graph
// (include/tapegrad/onnx.hpp, docs/onnx.md "Custom modules").
#include "onnx/custom.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <typeindex>
#include <utility>

#include "onnx/emit.hpp"
#include "tapegrad/error.hpp"

namespace tg::onnx {
namespace {

struct Registry {
    std::mutex mutex;
    std::map<std::type_index, EmitFn> fns;
};

Registry& registry() {
    static Registry r;
    return r;
}

/// A constant's dims must be non-negative and hold exactly `count` values.
void check_constant(const char* who, const std::string& name, const std::vector<int64_t>& dims,
                    size_t count) {
    int64_t n = 1;
    for (int64_t d : dims) {
        if (d < 0 || (d > 0 && n > INT64_MAX / d))
            throw value_error(std::string(who) + ": '" + name + "' has a bad dim " +
                              std::to_string(d));
        n *= d;
    }
    if (uint64_t(n) != count)
        throw value_error(std::string(who) + ": '" + name + "' has dims holding " +
                          std::to_string(n) + " values but " + std::to_string(count) +
                          " were given");
}

}  // namespace

void register_emitter(const std::type_info& type, EmitFn fn) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (fn)
        r.fns[std::type_index(type)] = std::move(fn);
    else
        r.fns.erase(std::type_index(type));
}

namespace detail {

EmitFn registered_emitter(const std::type_info& type) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.fns.find(std::type_index(type));
    return it == r.fns.end() ? EmitFn() : it->second;
}

}  // namespace detail

const std::string& Emitter::input() const {
    return impl_.input;
}
const Tensor& Emitter::example_input() const {
    return impl_.example_input;
}
const Tensor& Emitter::example_output() const {
    return impl_.example_output;
}
int64_t Emitter::opset() const {
    return impl_.graph.opset();
}
bool Emitter::dynamic_batch() const {
    return impl_.dynamic_batch;
}
const std::string& Emitter::path() const {
    return impl_.path;
}

std::string Emitter::weight(const std::string& name, const Tensor& t) {
    if (!t.defined())
        throw value_error("onnx::Emitter::weight: '" + name + "' is undefined");
    detail::ScopeGuard scope(impl_.graph, impl_.path);
    return impl_.graph.weight(name, t);
}

std::string Emitter::floats(const std::string& name, std::vector<int64_t> dims,
                            const std::vector<float>& values) {
    detail::ScopeGuard scope(impl_.graph, impl_.path);
    check_constant("onnx::Emitter::floats", name, dims, values.size());
    return impl_.graph.floats(name, std::move(dims), values);
}

std::string Emitter::int64s(const std::string& name, std::vector<int64_t> dims,
                            const std::vector<int64_t>& values) {
    detail::ScopeGuard scope(impl_.graph, impl_.path);
    check_constant("onnx::Emitter::int64s", name, dims, values.size());
    return impl_.graph.int64s(name, std::move(dims), values);
}

std::string Emitter::add(const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<Attribute> attributes) {
    if (op_type.empty())
        throw value_error("onnx::Emitter::add: empty op_type (module '" + impl_.path + "')");
    for (const std::string& in : inputs)
        if (!in.empty() && !impl_.graph.has_value(in))
            throw value_error("onnx::Emitter::add: " + op_type + "'s input '" + in +
                              "' is not a value of the graph (module '" + impl_.path + "')");
    detail::ScopeGuard scope(impl_.graph, impl_.path);
    return impl_.graph.add(op_type, std::move(inputs), std::move(attributes));
}

std::string Emitter::module(nn::Module& child, const std::string& name, const std::string& x,
                            Tensor& example) {
    if (!impl_.graph.has_value(x))
        throw value_error("onnx::Emitter::module: input '" + x +
                          "' is not a value of the graph (module '" + impl_.path + "')");
    const std::string child_path = impl_.path.empty() ? name : impl_.path + "." + name;
    return impl_.emit(child, child_path, example, x);
}

}  // namespace tg::onnx
