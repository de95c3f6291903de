#pragma once
// The ONNX graph export_model builds (nodes, initializers, the input and output) and its
// serialization as a ModelProto (graph.cpp, Note [Writing ONNX without protobuf]).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/onnx.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::onnx::detail {

/// onnx.proto's TensorProto.DataType values that export writes.
constexpr int kFloatType = 1;
constexpr int kInt64Type = 7;

using tg::onnx::attr;
using tg::onnx::Attribute;

struct Node {
    std::string op_type, name;
    std::vector<std::string> inputs, outputs;
    std::vector<Attribute> attributes;
};

struct Initializer {
    std::string name;
    int elem_type = kFloatType;
    std::vector<int64_t> dims;
    std::string raw;  // little-endian values
};

/// A graph input or output: its element type and dims, dim 0 named `batch_param` when that is
/// not empty (dynamic batch).
struct ValueInfo {
    std::string name;
    int elem_type = kFloatType;
    std::vector<int64_t> dims;
    std::string batch_param;
};

class Graph {
public:
    explicit Graph(int64_t opset) : opset_(opset) {}
    int64_t opset() const { return opset_; }

    /// The path of the module being emitted ("0", "encoder.2"): names its nodes and weights.
    void set_scope(std::string scope) { scope_ = std::move(scope); }
    const std::string& scope() const { return scope_; }

    /// A float32 initializer holding t's values, named "<scope>.<name>" ("0.weight").
    std::string weight(const std::string& name, const Tensor& t);
    /// A float32 or int64 constant initializer named "<scope>.<name>".
    std::string floats(const std::string& name, std::vector<int64_t> dims,
                       const std::vector<float>& v);
    std::string int64s(const std::string& name, std::vector<int64_t> dims,
                       const std::vector<int64_t>& v);
    /// A node `op` of the current scope with one output; returns the output's name.
    std::string add(const std::string& op, std::vector<std::string> inputs,
                    std::vector<Attribute> attributes = {});

    /// The ModelProto with this graph between `input` and `output`.
    std::string serialize(const ValueInfo& input, const ValueInfo& output) const;

    /// Makes `name` (the graph's input) a value of the graph.
    void declare_input(const std::string& name) { values_.insert(name); }
    /// Whether `name` is the graph's input, an initializer or a node's output.
    bool has_value(const std::string& name) const { return values_.count(name) > 0; }

    /// The model's nodes so far (the last node's output is renamed to the graph's output).
    std::vector<Node>& nodes() { return nodes_; }

private:
    std::string unique(const std::string& base);
    /// An initializer named "<scope>.<name>" holding raw little-endian values.
    std::string add_initializer(const std::string& name, int elem_type, std::vector<int64_t> dims,
                                std::string raw);

    int64_t opset_;
    std::string scope_;
    std::vector<Node> nodes_;
    std::vector<Initializer> initializers_;
    std::map<std::string, int> taken_;
    std::set<std::string> values_;
};

}  // namespace tg::onnx::detail
