#pragma once
// One emitter per module kind: each adds the module's nodes to the graph, given the name of its
// input value and the shapes the module's eval-mode forward took and gave, and returns the name
// of its output value; or returns nullopt for a module it does not know.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/graph.hpp"
#include "tapegrad/nn/module.hpp"

namespace tg::onnx::detail {

using Dims = std::vector<int64_t>;

/// What an emitter knows besides the module.
struct Step {
    Graph& graph;
    const nn::Module& module;
    const std::string& x;  // the input value's name
    const Dims& in;        // the example's input shape
    const Dims& out;       // the shape the module gave
    bool dynamic_batch;
};

/// Linear, convolutions, pooling, normalization, Embedding, Flatten, Identity and dropout.
std::optional<std::string> emit_layer(const Step& s);
/// The activation modules.
std::optional<std::string> emit_activation(const Step& s);

/// value_error("onnx::export_model: <Type> '<label>' <why>").
[[noreturn]] void unsupported(const nn::Module& m, const std::string& why);

}  // namespace tg::onnx::detail
