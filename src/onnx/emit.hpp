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
/// TransformerEncoderLayer (emit_transformer.cpp).
std::optional<std::string> emit_transformer(const Step& s);

/// The pieces the transformer layer reuses: Linear and LayerNorm on an input of `rank` dims
/// (weights named after g.scope()), and GELU ("none": erf, or "tanh").
std::string emit_linear(Graph& g, const nn::Module& linear, const std::string& x, size_t rank);
std::string emit_layer_norm(Graph& g, const nn::Module& norm, const std::string& x, size_t rank);
std::string emit_gelu(Graph& g, const std::string& x, const std::string& approximate);
/// LayerNorm's nodes over the last normalized.size() of rank dims of x (weight and bias value
/// names, "" for none): LayerNormalization at opset 17, torch.onnx's decomposition below.
std::string layer_norm_nodes(Graph& g, const std::string& x, const std::string& weight,
                             const std::string& bias, const Dims& normalized, float eps,
                             size_t rank);

/// Sets g's scope for its lifetime (the path of a submodule), then restores it.
class ScopeGuard {
public:
    ScopeGuard(Graph& g, const std::string& scope) : g_(g), saved_(g.scope()) {
        g.set_scope(scope);
    }
    ~ScopeGuard() { g_.set_scope(saved_); }
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;

private:
    Graph& g_;
    std::string saved_;
};

/// value_error("onnx::export_model: <Type> '<label>' <why>").
[[noreturn]] void unsupported(const nn::Module& m, const std::string& why);

}  // namespace tg::onnx::detail
