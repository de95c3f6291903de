// The ONNX graph builder and its ModelProto (Note [Writing ONNX without protobuf] in
// proto_writer.hpp). Field numbers are onnx.proto's (onnx 1.12, IR version 8).
#include "onnx/graph.hpp"

#include <cstring>
#include <utility>

#include "onnx/proto_writer.hpp"
#include "tapegrad/error.hpp"

namespace tg::onnx {

Attribute attr(const std::string& name, int64_t v) {
    Attribute a;
    a.name = name, a.kind = Attribute::kInt, a.i = v;
    return a;
}
Attribute attr(const std::string& name, float v) {
    Attribute a;
    a.name = name, a.kind = Attribute::kFloat, a.f = v;
    return a;
}
Attribute attr(const std::string& name, std::vector<int64_t> v) {
    Attribute a;
    a.name = name, a.kind = Attribute::kInts, a.ints = std::move(v);
    return a;
}
Attribute attr(const std::string& name, const std::string& v) {
    Attribute a;
    a.name = name, a.kind = Attribute::kString, a.s = v;
    return a;
}

}  // namespace tg::onnx

namespace tg::onnx::detail {
namespace {

// ModelProto
constexpr int kModelIrVersion = 1, kModelProducerName = 2, kModelProducerVersion = 3,
              kModelGraph = 7, kModelOpsetImport = 8;
// OperatorSetIdProto
constexpr int kOpsetVersion = 2;
// GraphProto
constexpr int kGraphNode = 1, kGraphName = 2, kGraphInitializer = 5, kGraphInput = 11,
              kGraphOutput = 12;
// NodeProto
constexpr int kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4, kNodeAttribute = 5;
// AttributeProto
constexpr int kAttrName = 1, kAttrF = 2, kAttrI = 3, kAttrS = 4, kAttrFloats = 7, kAttrInts = 8,
              kAttrType = 20;
// TensorProto
constexpr int kTensorDims = 1, kTensorDataType = 2, kTensorName = 8, kTensorRawData = 9;
// ValueInfoProto, TypeProto, TypeProto.Tensor, TensorShapeProto, TensorShapeProto.Dimension
constexpr int kValueName = 1, kValueType = 2, kTypeTensor = 1, kTensorElemType = 1,
              kTensorShape = 2, kShapeDim = 1, kDimValue = 1, kDimParam = 2;

void put_u32(std::string& out, uint32_t u) {
    for (int i = 0; i < 4; ++i)
        out.push_back(char((u >> (8 * i)) & 0xff));
}

ProtoWriter write_attribute(const Attribute& a) {
    ProtoWriter w;
    w.bytes(kAttrName, a.name);
    switch (a.kind) {
        case Attribute::kFloat:
            w.float32(kAttrF, a.f);
            break;
        case Attribute::kInt:
            w.varint(kAttrI, a.i);
            break;
        case Attribute::kString:
            w.bytes(kAttrS, a.s);
            break;
        case Attribute::kFloats:
            for (float f : a.floats)
                w.float32(kAttrFloats, f);
            break;
        case Attribute::kInts:
            for (int64_t i : a.ints)
                w.varint(kAttrInts, i);
            break;
    }
    w.varint(kAttrType, a.kind);
    return w;
}

ProtoWriter write_node(const Node& n) {
    ProtoWriter w;
    for (const auto& i : n.inputs)
        w.bytes(kNodeInput, i);
    for (const auto& o : n.outputs)
        w.bytes(kNodeOutput, o);
    w.bytes(kNodeName, n.name);
    w.bytes(kNodeOpType, n.op_type);
    for (const auto& a : n.attributes)
        w.message(kNodeAttribute, write_attribute(a));
    return w;
}

ProtoWriter write_initializer(const Initializer& t) {
    ProtoWriter w;
    for (int64_t d : t.dims)
        w.varint(kTensorDims, d);
    w.varint(kTensorDataType, t.elem_type);
    w.bytes(kTensorName, t.name);
    w.bytes(kTensorRawData, t.raw);
    return w;
}

ProtoWriter write_value_info(const ValueInfo& v) {
    ProtoWriter shape;
    for (size_t i = 0; i < v.dims.size(); ++i) {
        ProtoWriter dim;
        if (i == 0 && !v.batch_param.empty())
            dim.bytes(kDimParam, v.batch_param);
        else
            dim.varint(kDimValue, v.dims[i]);
        shape.message(kShapeDim, dim);
    }
    ProtoWriter tensor;
    tensor.varint(kTensorElemType, v.elem_type);
    tensor.message(kTensorShape, shape);
    ProtoWriter type;
    type.message(kTypeTensor, tensor);
    ProtoWriter w;
    w.bytes(kValueName, v.name);
    w.message(kValueType, type);
    return w;
}

}  // namespace

std::string Graph::unique(const std::string& base) {
    int& n = taken_[base];
    return n++ == 0 ? base : base + "_" + std::to_string(n - 1);
}

std::string Graph::weight(const std::string& name, const Tensor& t) {
    Tensor c = t.detach().to(Device(kCPU)).to(kFloat32).contiguous();
    std::vector<float> v(size_t(c.numel()));
    if (!v.empty())
        std::memcpy(v.data(), c.data_ptr<float>(), v.size() * sizeof(float));
    std::vector<int64_t> dims(c.sizes().begin(), c.sizes().end());
    return floats(name, std::move(dims), v);
}

std::string Graph::add_initializer(const std::string& name, int elem_type,
                                   std::vector<int64_t> dims, std::string raw) {
    Initializer t;
    t.name = unique(scope_.empty() ? name : scope_ + "." + name);
    t.elem_type = elem_type;
    t.dims = std::move(dims);
    t.raw = std::move(raw);
    values_.insert(t.name);
    initializers_.push_back(std::move(t));
    return initializers_.back().name;
}

std::string Graph::floats(const std::string& name, std::vector<int64_t> dims,
                          const std::vector<float>& v) {
    std::string raw;
    raw.reserve(v.size() * 4);
    for (float f : v) {
        uint32_t u = 0;
        std::memcpy(&u, &f, 4);
        put_u32(raw, u);
    }
    return add_initializer(name, kFloatType, std::move(dims), std::move(raw));
}

std::string Graph::int64s(const std::string& name, std::vector<int64_t> dims,
                          const std::vector<int64_t>& v) {
    std::string raw;
    raw.reserve(v.size() * 8);
    for (int64_t i : v) {
        put_u32(raw, uint32_t(uint64_t(i) & 0xffffffffu));
        put_u32(raw, uint32_t(uint64_t(i) >> 32));
    }
    return add_initializer(name, kInt64Type, std::move(dims), std::move(raw));
}

std::string Graph::add(const std::string& op, std::vector<std::string> inputs,
                       std::vector<Attribute> attributes) {
    Node n;
    n.op_type = op;
    n.name = unique("/" + scope_ + "/" + op);
    n.inputs = std::move(inputs);
    n.outputs = {n.name + "_output"};
    n.attributes = std::move(attributes);
    values_.insert(n.outputs[0]);
    nodes_.push_back(std::move(n));
    return nodes_.back().outputs[0];
}

std::string Graph::serialize(const ValueInfo& input, const ValueInfo& output) const {
    ProtoWriter graph;
    for (const auto& n : nodes_)
        graph.message(kGraphNode, write_node(n));
    graph.bytes(kGraphName, "tapegrad");
    for (const auto& t : initializers_)
        graph.message(kGraphInitializer, write_initializer(t));
    graph.message(kGraphInput, write_value_info(input));
    graph.message(kGraphOutput, write_value_info(output));

    ProtoWriter opset;
    opset.varint(kOpsetVersion, opset_);
    ProtoWriter model;
    // IR version 7 came with opset 13 (onnx 1.8), 8 with opset 15 (onnx 1.10)
    model.varint(kModelIrVersion, opset_ >= 15 ? 8 : 7);
    model.bytes(kModelProducerName, "tapegrad");
    model.bytes(kModelProducerVersion, "0.1");
    model.message(kModelGraph, graph);
    model.message(kModelOpsetImport, opset);
    return model.data();
}

}  // namespace tg::onnx::detail
