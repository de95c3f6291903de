#pragma once
// ONNX export of a traced forward (Note [Op tracing] in src/autograd/trace.hpp): trace.cpp runs
// the module's forward with a trace active and turns the ops its output depends on into nodes,
// one mapping function per op, grouped by family in map_shape.cpp, map_math.cpp and
// map_layers.cpp. Adding an op: its trace line in src/ops/, one branch in a map_*.cpp.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "autograd/trace.hpp"
#include "onnx/emit.hpp"
#include "onnx/graph.hpp"

namespace tg::onnx::detail {

using autograd::detail::TracedOp;

/// What a mapping sees: the traced op, its inputs' value names and where each holds the batch.
struct OpStep {
    Graph& graph;
    const TracedOp& op;
    std::vector<std::string> in;   // "" for an absent optional input
    std::vector<int64_t> in_bdim;  // the dim holding the batch (dynamic_batch), -1 for none
    int64_t out_bdim = -1;         // the output's: set from the inputs, a mapping may change it
    bool dynamic_batch = false;
    int64_t batch = 0;       // the example's batch size
    const std::string& who;  // "<Type> '<label>'" of the traced module

    bool is(const char* name) const { return std::strcmp(op.op, name) == 0; }
    Dims in_shape(size_t i) const;
    Dims out_shape() const;
    /// Input i, cast to the output's dtype when it differs (a promoted operand).
    std::string as_out_type(size_t i) const;
    /// value_error("onnx::export_model: <who>: <op> <why>").
    [[noreturn]] void refuse(const std::string& why) const;
};

/// The ONNX element type of a dtype export writes (float32, int64, bool), else dtype_error.
int onnx_type(Dtype d, const std::string& who);

/// reshape, transpose, permute, narrow, expand, cat, clone.
std::optional<std::string> map_shape_op(OpStep& s);
/// Elementwise arithmetic and activations, softmax, log_softmax, sum.
std::optional<std::string> map_math_op(OpStep& s);
/// linear, matmul, layer_norm, embedding, scaled_dot_product_attention.
std::optional<std::string> map_layer_op(OpStep& s);

/// Runs m's forward on x (named `name`, dim 0 its batch) with a trace active and adds the
/// nodes of the ops its output depends on; x becomes the output, whose name it returns.
/// Parameters and buffers of m become initializers named "<path>.<state_dict key>", other
/// tensors the trace did not produce constants. value_error naming m and the op for an op
/// without a mapping (or one the tracer does not know: the tape names it).
std::string emit_traced(Graph& g, nn::Module& m, const std::string& path, Tensor& x,
                        const std::string& name, bool dynamic_batch);

}  // namespace tg::onnx::detail
