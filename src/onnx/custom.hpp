#pragma once
// User-registered module emitters (tg::onnx::register_emitter) and what an Emitter stands on
// during a walk (custom.cpp).
#include <functional>
#include <string>
#include <typeinfo>

#include "onnx/graph.hpp"
#include "tapegrad/onnx.hpp"

namespace tg::onnx {

struct Emitter::Impl {
    detail::Graph& graph;
    const std::string& input;
    const Tensor& example_input;
    const Tensor& example_output;
    const std::string& path;
    bool dynamic_batch;
    /// The walk's emit: (child, its path, its example input (becomes its output), the input's
    /// value name) -> the output's value name.
    std::function<std::string(nn::Module&, const std::string&, Tensor&, std::string)> emit;
};

namespace detail {

/// The emitter registered for modules of exactly this dynamic type, or an empty function.
EmitFn registered_emitter(const std::type_info& type);

}  // namespace detail
}  // namespace tg::onnx
