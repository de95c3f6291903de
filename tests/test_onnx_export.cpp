// tg::onnx::export_model: the bytes decode as the ModelProto onnx.proto describes (a reader of
// the wire format written here from the protobuf encoding rules), the graphs are the ops
// docs/onnx.md lists, the weights are the model's, the modules keep their training mode, and
// what cannot be exported is a typed error naming the module. The models are also written to
// TG_ONNX_OUT_DIR for tests/onnx/check_models.py (onnx.checker) and runtime tests.
#define BOOST_TEST_MODULE onnx_export
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "onnx/models.hpp"
#include "onnx/traced_models.hpp"
#include "tapegrad/onnx.hpp"

namespace fs = std::filesystem;
using tg::Tensor;
using namespace onnxtest;

namespace {

/// One field of a protobuf message: varints and fixed32 in v, length-delimited in s.
struct Field {
    int number;
    int wire;
    uint64_t v;
    std::string s;
};

std::vector<Field> parse(const std::string& b) {
    std::vector<Field> out;
    size_t i = 0;
    auto varint = [&] {
        uint64_t r = 0;
        for (int shift = 0;; shift += 7) {
            BOOST_REQUIRE(i < b.size() && shift < 64);
            const uint8_t c = uint8_t(b[i++]);
            r |= uint64_t(c & 0x7f) << shift;
            if (!(c & 0x80))
                return r;
        }
    };
    while (i < b.size()) {
        const uint64_t key = varint();
        Field f{int(key >> 3), int(key & 7), 0, {}};
        if (f.wire == 0) {
            f.v = varint();
        } else if (f.wire == 2) {
            const uint64_t n = varint();
            BOOST_REQUIRE(n <= b.size() - i);
            f.s = b.substr(i, n);
            i += n;
        } else if (f.wire == 5) {
            BOOST_REQUIRE(i + 4 <= b.size());
            for (int k = 0; k < 4; ++k)
                f.v |= uint64_t(uint8_t(b[i + k])) << (8 * k);
            i += 4;
        } else {
            BOOST_FAIL("unexpected wire type " << f.wire);
        }
        out.push_back(std::move(f));
    }
    return out;
}

std::vector<std::string> strs(const std::string& msg, int number) {
    std::vector<std::string> r;
    for (const auto& f : parse(msg))
        if (f.number == number && f.wire == 2)
            r.push_back(f.s);
    return r;
}
std::string str(const std::string& msg, int number) {
    auto v = strs(msg, number);
    BOOST_REQUIRE_EQUAL(v.size(), 1u);
    return v[0];
}
std::vector<int64_t> ints(const std::string& msg, int number) {
    std::vector<int64_t> r;
    for (const auto& f : parse(msg))
        if (f.number == number && f.wire == 0)
            r.push_back(int64_t(f.v));
    return r;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path out_dir() {
    fs::path d = TG_ONNX_OUT_DIR;
    fs::create_directories(d);
    return d;
}

/// Exports m to <out_dir>/<name>.onnx and returns the file's bytes.
std::string export_to(const std::string& name, const std::shared_ptr<tg::nn::Module>& m,
                      const Tensor& x, const tg::onnx::ExportOptions& o = {}) {
    const fs::path p = out_dir() / (name + ".onnx");
    tg::onnx::export_model(m, x, p.string(), o);
    return read_file(p);
}

void write_raw(const fs::path& p, const Tensor& t) {
    const Tensor c = t.contiguous();
    std::ofstream out(p, std::ios::binary);
    const void* data = c.dtype() == tg::kInt64 ? static_cast<const void*>(c.data_ptr<int64_t>())
                                               : static_cast<const void*>(c.data_ptr<float>());
    out.write(static_cast<const char*>(data),
              std::streamsize(c.numel() * int64_t(tg::element_size(c.dtype()))));
}

/// Writes x and m(x) in eval mode as <name>.input.bin and <name>.output.bin (raw little-endian)
/// for check_models.py's numpy evaluation of the graph.
void write_reference(const std::string& name, tg::nn::Module& m, const Tensor& x) {
    tg::NoGradGuard no_grad;
    m.eval();
    write_raw(out_dir() / (name + ".input.bin"), x);
    write_raw(out_dir() / (name + ".output.bin"), m(x));
}

// onnx.proto field numbers the checks read
constexpr int kIrVersion = 1, kGraph = 7, kOpsetImport = 8, kNode = 1, kInitializer = 5,
              kInput = 11, kOutput = 12, kOpType = 4, kNodeInputs = 1, kName = 8, kDims = 1,
              kRaw = 9, kDataType = 2;

std::vector<std::string> op_types(const std::string& model) {
    std::vector<std::string> r;
    for (const auto& n : strs(str(model, kGraph), kNode))
        r.push_back(str(n, kOpType));
    return r;
}

/// The dims of a graph input or output: values, or -1 for a named (symbolic) dim.
std::vector<int64_t> io_dims(const std::string& value_info, std::string* param = nullptr) {
    const std::string tensor = str(str(value_info, 2), 1);
    std::vector<int64_t> dims;
    for (const auto& d : strs(str(tensor, 2), 1)) {
        auto v = ints(d, 1);
        if (v.empty()) {
            dims.push_back(-1);
            if (param)
                *param = str(d, 2);
        } else {
            dims.push_back(v[0]);
        }
    }
    return dims;
}

}  // namespace

BOOST_AUTO_TEST_CASE(mlp_decodes_with_its_weights) {
    tg::manual_seed(1);
    auto m = mlp();
    const std::string model = export_to("mlp", m.ptr(), tg::randn({4, 784}));
    BOOST_TEST(ints(model, kIrVersion) == std::vector<int64_t>{7});
    BOOST_TEST(ints(str(model, kOpsetImport), 2) == std::vector<int64_t>{13});
    BOOST_TEST(op_types(model) == (std::vector<std::string>{"Gemm", "Relu", "Identity", "Gemm",
                                                            "Tanh", "Gemm", "LogSoftmax"}),
               boost::test_tools::per_element());
    const std::string graph = str(model, kGraph);
    const auto inits = strs(graph, kInitializer);
    BOOST_REQUIRE_EQUAL(inits.size(), 6u);
    BOOST_TEST(str(inits[0], kName) == "0.weight");
    BOOST_TEST(ints(inits[0], kDims) == (std::vector<int64_t>{64, 784}));
    BOOST_TEST(ints(inits[0], kDataType) == std::vector<int64_t>{1});
    const std::string raw = str(inits[0], kRaw);
    const Tensor w = m->named_parameters()["0.weight"].contiguous();
    BOOST_REQUIRE_EQUAL(raw.size(), size_t(w.numel()) * 4);
    BOOST_TEST(std::memcmp(raw.data(), w.data_ptr<float>(), raw.size()) == 0);
    BOOST_TEST(str(inits[5], kName) == "5.bias");
    write_reference("mlp", *m, tg::randn({4, 784}));
    // the first Gemm reads the graph input and the weights by name; the last writes the output
    const auto nodes = strs(graph, kNode);
    BOOST_TEST(
        strs(nodes[0], kNodeInputs) == (std::vector<std::string>{"input", "0.weight", "0.bias"}),
        boost::test_tools::per_element());
    BOOST_TEST(strs(nodes.back(), 2) == std::vector<std::string>{"output"},
               boost::test_tools::per_element());
    BOOST_TEST(io_dims(str(graph, kInput)) == (std::vector<int64_t>{4, 784}));
    BOOST_TEST(io_dims(str(graph, kOutput)) == (std::vector<int64_t>{4, 10}));
}

BOOST_AUTO_TEST_CASE(cnn_exports_in_eval_mode_and_keeps_the_modes) {
    tg::manual_seed(2);
    auto m = fashion_cnn();
    warm_up(*m, [] { return tg::randn({8, 1, 28, 28}); });
    m[1]->eval();  // a child in another mode than its parent keeps it
    tg::onnx::ExportOptions o;
    o.dynamic_batch = true;
    const std::string model = export_to("cnn_dynamic", m.ptr(), tg::randn({2, 1, 28, 28}), o);
    BOOST_TEST(op_types(model) ==
                   (std::vector<std::string>{"Conv", "BatchNormalization", "Relu", "MaxPool",
                                             "Conv", "BatchNormalization", "Relu", "MaxPool",
                                             "Flatten", "Identity", "Gemm", "Relu", "Gemm"}),
               boost::test_tools::per_element());
    std::string param;
    BOOST_TEST(io_dims(str(str(model, kGraph), kInput), &param) ==
               (std::vector<int64_t>{-1, 1, 28, 28}));
    BOOST_TEST(param == "batch");
    BOOST_TEST(io_dims(str(str(model, kGraph), kOutput)) == (std::vector<int64_t>{-1, 10}));
    BOOST_TEST(m->is_training());
    BOOST_TEST(!m[1]->is_training());
    BOOST_TEST(m[2]->is_training());
    // the running statistics are initializers, in state_dict's names
    std::vector<std::string> names;
    for (const auto& t : strs(str(model, kGraph), kInitializer))
        names.push_back(str(t, kName));
    BOOST_TEST((std::find(names.begin(), names.end(), "1.running_var") != names.end()));
    export_to("cnn", m.ptr(), tg::randn({2, 1, 28, 28}));
}

BOOST_AUTO_TEST_CASE(layer_norm_is_one_node_at_17_and_decomposed_below) {
    tg::manual_seed(3);
    auto m = embedding_model();
    {
        tg::NoGradGuard no_grad;  // a LayerNorm weight and bias that are not ones and zeros
        m->named_parameters()["1.weight"].uniform_(0.5, 1.5);
        m->named_parameters()["1.bias"].uniform_(-0.5, 0.5);
    }
    const Tensor idx = tg::randint(0, 20, {2, 5}, tg::kInt64);
    const std::string at13 = export_to("embedding13", m.ptr(), idx);
    BOOST_TEST(op_types(at13) ==
                   (std::vector<std::string>{"Gather", "ReduceMean", "Sub", "Pow", "ReduceMean",
                                             "Add", "Sqrt", "Div", "Mul", "Add", "MatMul", "Add",
                                             "Div", "Erf", "Add", "Mul", "Mul", "MatMul", "Add"}),
               boost::test_tools::per_element());
    tg::onnx::ExportOptions o;
    o.opset = 17;
    const std::string at17 = export_to("embedding17", m.ptr(), idx, o);
    BOOST_TEST(ints(at17, kIrVersion) == std::vector<int64_t>{8});
    BOOST_TEST(op_types(at17)[1] == "LayerNormalization");
    write_reference("embedding13", *m, idx);
    write_reference("embedding17", *m, idx);
    // the input is int64 indices: ValueInfoProto.type.tensor_type.elem_type
    BOOST_TEST(ints(str(str(str(str(at17, kGraph), kInput), 2), 1), 1) == std::vector<int64_t>{7});
}

BOOST_AUTO_TEST_CASE(other_models_export) {
    tg::manual_seed(4);
    auto act = activations();
    BOOST_TEST(op_types(export_to("activations", act.ptr(), tg::randn({3, 6}))).size() > 20u);
    write_reference("activations", *act, 3 * tg::randn({3, 6}));
    auto cv = conv_variants();
    warm_up(*cv, [] { return tg::randn({4, 3, 16, 16}); });
    BOOST_TEST(op_types(export_to("conv_variants", cv.ptr(), tg::randn({2, 3, 16, 16})))[6] ==
               "GlobalAveragePool");
    auto up = upsampling_model();
    BOOST_TEST(op_types(export_to("upsampling", up.ptr(), tg::randn({2, 3, 6, 6})))[2] ==
               "ConvTranspose");
    auto c1 = conv1d_model();
    warm_up(*c1, [] { return tg::randn({4, 2, 16}); });
    BOOST_TEST(op_types(export_to("conv1d", c1.ptr(), tg::randn({2, 2, 16})))[4] == "AveragePool");
}

BOOST_AUTO_TEST_CASE(transformer_encoder_layers_export) {
    tg::manual_seed(5);
    for (bool pre_norm : {true, false}) {
        auto m = transformer_model(pre_norm);
        const std::string name = pre_norm ? "transformer_pre" : "transformer_post";
        const Tensor x = tg::randn({3, 5, 16});
        const auto ops = op_types(export_to(name, m.ptr(), x));
        BOOST_TEST(std::count(ops.begin(), ops.end(), "Softmax") == 2);
        BOOST_TEST(std::count(ops.begin(), ops.end(), "Transpose") == (pre_norm ? 8 : 12));
        BOOST_TEST(std::count(ops.begin(), ops.end(), "Erf") == (pre_norm ? 2 : 0));
        write_reference(name, *m, x);
    }
}

BOOST_AUTO_TEST_CASE(what_cannot_be_exported_is_a_typed_error) {
    namespace nn = tg::nn;
    const fs::path p = out_dir() / "refused.onnx";
    fs::remove(p);
    auto refused = [&](const std::shared_ptr<nn::Module>& m, const Tensor& x,
                       const std::string& words, tg::onnx::ExportOptions o = {}) {
        try {
            tg::onnx::export_model(m, x, p.string(), o);
            BOOST_ERROR("no error for " << words);
        } catch (const tg::value_error& e) {
            BOOST_TEST_INFO(e.what());
            BOOST_TEST(std::string(e.what()).find(words) != std::string::npos);
        }
        BOOST_TEST(!fs::exists(p));  // nothing written
    };
    struct CustomImpl : nn::Module {
        CustomImpl() : Module("Custom") {}
        Tensor forward(const Tensor& x) override { return tg::abs(x) * 2; }  // abs: no mapping
    };
    nn::Sequential seq(nn::Linear(3, 3));
    seq->push_back(std::make_shared<CustomImpl>());
    refused(seq.ptr(), tg::randn({2, 3}),
            "Custom 'Custom[1]' calls abs, which the ONNX tracer does not map");
    refused(nn::Sequential(nn::AdaptiveAvgPool2d(3)).ptr(), tg::randn({1, 2, 8, 8}),
            "AdaptiveAvgPool2d 'AdaptiveAvgPool2d[0]' pools 8 to 3");
    refused(nn::BatchNorm2d(nn::BatchNormOptions(2).track_running_stats(false)).ptr(),
            tg::randn({2, 2, 3, 3}), "BatchNorm2d 'BatchNorm2d' has no running statistics");
    refused(nn::Conv2d(nn::Conv2dOptions(2, 2, 3).padding_mode(tg::kReflect).padding(1)).ptr(),
            tg::randn({1, 2, 5, 5}), "padding_mode");
    refused(nn::Sequential(nn::Flatten(0, -1)).ptr(), tg::randn({2, 3}),
            "flattens the batch dimension", {13, true, "input", "output"});
    refused(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(4, 2).activation(
                                            [](const Tensor& x) { return tg::sigmoid(x); }))
                .ptr(),
            tg::randn({3, 2, 4}), "has a function as its activation");
    refused(nn::Linear(3, 3).ptr(), tg::randn({2, 3}), "opset 12 is not supported",
            {12, false, "input", "output"});
    refused(nn::Linear(3, 3).ptr(), tg::randn({2, 3}), "must be non-empty and different",
            {13, false, "x", "x"});
    nn::Linear f64(3, 3);
    f64->to(tg::kFloat64);
    BOOST_CHECK_THROW(tg::onnx::export_model(f64, tg::randn({2, 3}, tg::kFloat64), p.string()),
                      tg::dtype_error);
    BOOST_CHECK_THROW(
        tg::onnx::export_model(nn::Linear(3, 3), tg::randn({2, 3}).to(tg::kFloat64), p.string()),
        tg::dtype_error);
    BOOST_TEST(!fs::exists(p));
}

namespace {

/// A module export does not know: y = relu(fc(x)) + x·scale, scale a buffer.
struct ResidualImpl : tg::nn::Module {
    tg::nn::Linear fc{nullptr};
    Tensor scale;
    explicit ResidualImpl(int64_t d) : Module("Residual") {
        fc = register_module("fc", tg::nn::Linear(d, d));
        scale = register_buffer("scale", tg::full({d}, 0.5));
    }
    Tensor forward(const Tensor& x) override { return tg::relu(fc(x)) + x * scale; }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_registered_emitter_exports_a_custom_module) {
    namespace nn = tg::nn;
    tg::manual_seed(6);
    nn::Sequential m(nn::Linear(4, 6), std::make_shared<ResidualImpl>(6), nn::Tanh());
    const Tensor x = tg::randn({3, 4});
    const fs::path p = out_dir() / "custom_refused.onnx";
    // unregistered, it exports by tracing its forward: the same nodes as the emitter below (in
    // the order the forward called its ops)
    auto traced_ops = op_types(export_to("custom_traced", m.ptr(), x));
    std::sort(traced_ops.begin(), traced_ops.end());
    BOOST_TEST(
        traced_ops == (std::vector<std::string>{"Add", "Gemm", "Gemm", "Mul", "Relu", "Tanh"}),
        boost::test_tools::per_element());
    std::vector<std::string> seen;  // what the emitter was told
    tg::onnx::register_emitter<ResidualImpl>([&](ResidualImpl& r, tg::onnx::Emitter& e) {
        seen = {e.path(), e.input(), tg::shape_str(e.example_output().sizes())};
        Tensor ex = e.example_input();
        const std::string h = e.add("Relu", {e.module(*r.fc, "fc", e.input(), ex)});
        BOOST_TEST(tg::shape_str(ex.sizes()) == "[3,6]");  // the child's output
        return e.add("Add", {h, e.add("Mul", {e.input(), e.weight("scale", r.scale)})});
    });
    const std::string model = export_to("custom_residual", m.ptr(), x);
    write_reference("custom_residual", *m, x);
    BOOST_TEST(seen.size() == 3u);
    BOOST_TEST(seen[0] == "1");
    BOOST_TEST(seen[2] == "[3,6]");
    const auto ops = op_types(model);
    BOOST_TEST(ops == (std::vector<std::string>{"Gemm", "Gemm", "Relu", "Mul", "Add", "Tanh"}),
               boost::test_tools::per_element());
    std::vector<std::string> inits;
    for (const auto& t : strs(str(model, kGraph), kInitializer))
        inits.push_back(str(t, kName));
    for (const char* k : {"0.weight", "1.fc.weight", "1.fc.bias", "1.scale"})
        BOOST_TEST((std::find(inits.begin(), inits.end(), k) != inits.end()), k);

    // an emitter's mistakes are value_errors naming the module, and nothing is written
    fs::remove(p);
    auto refused = [&](const std::function<std::string(tg::onnx::Emitter&)>& body,
                       const std::string& words) {
        tg::onnx::register_emitter<ResidualImpl>(
            [&](ResidualImpl&, tg::onnx::Emitter& e) { return body(e); });
        try {
            tg::onnx::export_model(m, x, p.string());
            BOOST_ERROR("no error for " << words);
        } catch (const tg::value_error& e) {
            BOOST_TEST_INFO(e.what());
            BOOST_TEST(std::string(e.what()).find(words) != std::string::npos);
        }
        BOOST_TEST(!fs::exists(p));
    };
    refused([](tg::onnx::Emitter&) { return std::string("nowhere"); },
            "Residual 'Residual[1]' has a registered emitter that returned 'nowhere'");
    refused([](tg::onnx::Emitter& e) { return e.add("Relu", {"ghost"}); },
            "Relu's input 'ghost' is not a value of the graph (module '1')");
    refused(
        [](tg::onnx::Emitter& e) {
            return e.floats("c", {2, 2}, {1.0f});
        },
        "'c' has dims holding 4 values but 1 were given");
    tg::onnx::register_emitter(typeid(ResidualImpl), nullptr);  // removed: traced again
    BOOST_TEST(op_types(export_to("custom_traced", m.ptr(), x)).size() == 6u);
}

// ---- functional forwards: modules without an emitter export by tracing their ops

namespace {

std::vector<std::string> initializer_names(const std::string& model) {
    std::vector<std::string> r;
    for (const auto& t : strs(str(model, kGraph), kInitializer))
        r.push_back(str(t, kName));
    return r;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

BOOST_AUTO_TEST_CASE(functional_forwards_export_by_tracing) {
    namespace nn = tg::nn;
    tg::manual_seed(7);
    auto mlp = std::make_shared<ResidualMlpImpl>(6, 12);
    const Tensor x = tg::randn({3, 4, 6});
    const std::string model = export_to("traced_mlp", mlp, x);
    write_reference("traced_mlp", *mlp, x);
    const auto ops = op_types(model);
    for (const char* op :
         {"ReduceMean", "Gemm", "Erf", "Sigmoid", "Tanh", "Relu", "Neg", "MatMul", "ReduceSum",
          "Sqrt", "Exp", "Log", "Slice", "Concat", "LogSoftmax", "Expand"})
        BOOST_TEST(has(ops, op), op);
    const auto inits = initializer_names(model);
    for (const char* k : {"norm.weight", "norm.bias", "fc1.weight", "fc1.bias", "w2", "scale"})
        BOOST_TEST(has(inits, k), k);
    // opset 17 and a dynamic batch: exported at batch 3, evaluated at batch 5
    tg::onnx::ExportOptions o;
    o.opset = 17;
    o.dynamic_batch = true;
    BOOST_TEST(has(op_types(export_to("traced_mlp17", mlp, x, o)), "LayerNormalization"));
    write_reference("traced_mlp17", *mlp, tg::randn({5, 4, 6}));

    // char_gpt's block in functional ops, inside a Sequential (path "1"), causal attention
    nn::Sequential seq(nn::Linear(16, 16), std::make_shared<AttentionBlockImpl>(16, 4));
    const Tensor xa = tg::randn({2, 5, 16});
    const std::string att = export_to("traced_attention", seq.ptr(), xa);
    BOOST_TEST(seq->is_training());  // modes restored
    write_reference("traced_attention", *seq, xa);
    const auto att_ops = op_types(att);
    BOOST_TEST(std::count(att_ops.begin(), att_ops.end(), "Softmax") == 1);
    BOOST_TEST(std::count(att_ops.begin(), att_ops.end(), "Slice") == 3);
    const auto att_inits = initializer_names(att);
    for (const char* k : {"0.bias", "1.ln1.weight", "1.qkv.weight", "1.proj.bias", "1.fc2.weight"})
        BOOST_TEST(has(att_inits, k), k);
    export_to("traced_attention17", seq.ptr(), xa, o);
    write_reference("traced_attention17", *seq, tg::randn({3, 5, 16}));

    // masks built in the forward from constants: a bool one (Where) and a float one (Add)
    auto masked = std::make_shared<MaskedAttentionImpl>();
    const Tensor xm = tg::randn({2, 2, 4, 3});
    const auto masked_ops = op_types(export_to("traced_masked", masked, xm));
    BOOST_TEST(std::count(masked_ops.begin(), masked_ops.end(), "Where") == 1);
    BOOST_TEST(masked_ops[1] + " " + masked_ops[2] == "Cast Sqrt");  // sqrt of int64 is float32
    write_reference("traced_masked", *masked, xm);

    // the whole small GPT: int64 ids in, Gather of the embeddings, positions as a constant
    auto gpt = std::make_shared<TinyGptImpl>(11, 6, 8);
    const Tensor ids = tg::randint(0, 11, {3, 6}, tg::kInt64);
    const auto gpt_ops = op_types(export_to("traced_gpt", gpt, ids, o));
    BOOST_TEST(std::count(gpt_ops.begin(), gpt_ops.end(), "Gather") == 2);
    write_reference("traced_gpt", *gpt, tg::randint(0, 11, {4, 6}, tg::kInt64));

    // examples/char_gpt.cpp's model: TransformerEncoderLayers called with is_causal, traced
    // through MultiheadAttention
    auto layers = std::make_shared<LayerGptImpl>(11, 6, 8);
    const auto layer_ops = op_types(export_to("traced_gpt_layers", layers, ids, o));
    BOOST_TEST(std::count(layer_ops.begin(), layer_ops.end(), "Softmax") == 2);
    const auto layer_inits = initializer_names(export_to("traced_gpt_layers", layers, ids, o));
    for (const char* k :
         {"tok.weight", "blocks.0.self_attn.in_proj_weight", "blocks.1.self_attn.out_proj.bias",
          "blocks.1.linear2.weight", "head.bias"})
        BOOST_TEST(has(layer_inits, k), k);
    write_reference("traced_gpt_layers", *layers, tg::randint(0, 11, {2, 6}, tg::kInt64));
}

BOOST_AUTO_TEST_CASE(what_a_trace_cannot_export_is_a_typed_error) {
    namespace nn = tg::nn;
    const fs::path p = out_dir() / "refused.onnx";
    fs::remove(p);
    auto refused = [&](std::function<Tensor(const Tensor&)> f, const Tensor& x,
                       const std::string& words, bool dynamic = false) {
        struct FnImpl : nn::Module {
            std::function<Tensor(const Tensor&)> f;
            explicit FnImpl(std::function<Tensor(const Tensor&)> fn) : Module("Fn"), f(fn) {}
            Tensor forward(const Tensor& in) override { return f(in); }
        };
        tg::onnx::ExportOptions o;
        o.dynamic_batch = dynamic;
        try {
            tg::onnx::export_model(std::make_shared<FnImpl>(f), x, p.string(), o);
            BOOST_ERROR("no error for " << words);
        } catch (const tg::value_error& e) {
            BOOST_TEST_INFO(e.what());
            BOOST_TEST(std::string(e.what()).find(words) != std::string::npos);
        }
        BOOST_TEST(!fs::exists(p));  // nothing written
    };
    const Tensor x = tg::randn({2, 3, 4});
    refused([](const Tensor& v) { return tg::abs(v) + 1.0; }, x,
            "Fn 'Fn' calls abs, which the ONNX tracer does not map");
    refused(
        [](const Tensor& v) {
            Tensor y = v * 2.0;
            y.add_(1.0);
            return tg::relu(y);
        },
        x, "changes the output of mul in place");
    refused([](const Tensor& v) { return tg::scaled_dot_product_attention(v, v, v, {}, 0.5); }, x,
            "scaled_dot_product_attention has dropout_p > 0");
    // a mask computed from the input by a comparison (no tape node) would be a constant
    refused([](const Tensor& v) { return v * (v > 0).to(tg::kFloat32); }, x,
            "has a tensor whose values follow its input's");
    refused(
        [](const Tensor& v) {
            return v.transpose(0, 1).reshape({3, -1});
        },
        x, "with the batch in dim 1", true);
    refused(
        [](const Tensor& v) {
            return v.reshape({3, 8});
        },
        x, "moves the batch out of dim 0", true);
}
