#pragma once
/// ONNX export of a model built from tapegrad's modules, for inference runtimes (OpenCV's DNN
/// module, onnxruntime, ...): docs/onnx.md.
///
///     tg::onnx::ExportOptions o;
///     o.dynamic_batch = true;
///     tg::onnx::export_model(model, tg::randn({1, 1, 28, 28}), "model.onnx", o);
///
/// The graph is found by walking the module: Sequential and ModuleList (run as a chain) are
/// walked in order, every other module is one of the kinds that have an emitter (docs/onnx.md
/// lists them with the ONNX ops they become) or a type the user registered an emitter for
/// (register_emitter, below), or else its forward is traced: the functional ops it calls
/// (docs/onnx.md "Functional forwards") become the nodes. A known module with an option ONNX
/// cannot express, or a traced forward that calls an op without a mapping, is a
/// tg::value_error naming the module's label and type (and the op) before anything is written.
///
/// As torch.onnx.export's default (TrainingMode.EVAL), the export uses eval behaviour whatever
/// the module's mode: it runs the model in eval mode (BatchNorm's running statistics, dropout
/// off) to learn every layer's shapes, exports that, and puts every module back in the mode it
/// was in. Weights are float32 initializers (raw_data, little-endian); the model and the example
/// input must be float32 (int64 for a model that starts with an Embedding) and on the CPU.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tapegrad/nn/module.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::onnx {

/// What export_model writes (a plain aggregate: C++20's designated initializers work on it).
struct ExportOptions {
    /// The ONNX operator set: 13 to 17 (what Debian's onnx 1.12 knows). LayerNorm is one
    /// LayerNormalization node at 17, ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add below.
    int64_t opset = 13;
    /// Declares the input's and output's first dimension as the symbolic "batch" instead of the
    /// example's size, so a runtime accepts any batch size.
    bool dynamic_batch = false;
    /// The graph's input and output names.
    std::string input_name = "input";
    std::string output_name = "output";
};

/// Writes `module`'s inference graph for inputs shaped as `example_input` to `path` as an ONNX
/// ModelProto (atomically, as tg::save: the file appears whole or not at all). Throws
/// value_error for a module or op without an ONNX mapping (naming it) or bad options, dtype_error
/// or device_error for a model or input that is not float32 (int64 indices) on the CPU, io_error
/// when the file cannot be written, and whatever the model's own forward throws for the input.
void export_model(const std::shared_ptr<nn::Module>& module, const Tensor& example_input,
                  const std::string& path, const ExportOptions& options = {});

/// The same for a module holder (tg::nn::Sequential, ...).
template <class Holder, class = decltype(std::declval<const Holder&>().ptr())>
void export_model(const Holder& module, const Tensor& example_input, const std::string& path,
                  const ExportOptions& options = {}) {
    export_model(std::shared_ptr<nn::Module>(module.ptr()), example_input, path, options);
}

/// An attribute of an ONNX node (onnx.proto's AttributeProto): made by attr().
struct Attribute {
    /// onnx.proto's AttributeProto.AttributeType values.
    enum Kind { kFloat = 1, kInt = 2, kString = 3, kFloats = 6, kInts = 7 };
    std::string name;
    Kind kind = kInt;
    float f = 0;
    int64_t i = 0;
    std::string s;
    std::vector<float> floats;
    std::vector<int64_t> ints;
};
Attribute attr(const std::string& name, int64_t v);
Attribute attr(const std::string& name, float v);
Attribute attr(const std::string& name, std::vector<int64_t> v);
Attribute attr(const std::string& name, const std::string& v);

/// What a registered emitter writes its module's nodes with (register_emitter). Every name it
/// returns is the name of a value in the graph; weights and constants are named
/// "<module path>.<name>", as state_dict's keys.
class Emitter {
public:
    /// The name of the module's input value, and the example it had in the export's eval-mode
    /// forward (no grad), and what the module's forward gave for it.
    const std::string& input() const;
    const Tensor& example_input() const;
    const Tensor& example_output() const;
    int64_t opset() const;
    bool dynamic_batch() const;
    /// The module's path in the exported model ("0", "encoder.2"; "" for the model itself).
    const std::string& path() const;
    /// A float32 initializer holding t's values (a parameter or a buffer, converted to float32
    /// on the CPU), or holding the given values.
    std::string weight(const std::string& name, const Tensor& t);
    std::string floats(const std::string& name, std::vector<int64_t> dims,
                       const std::vector<float>& values);
    std::string int64s(const std::string& name, std::vector<int64_t> dims,
                       const std::vector<int64_t>& values);
    /// A node `op_type` (an ONNX operator of the default domain) on the named inputs ("" for an
    /// absent optional input); returns its one output's name.
    std::string add(const std::string& op_type, std::vector<std::string> inputs,
                    std::vector<Attribute> attributes = {});
    /// Emits `child` (a module export knows, a chain, or a registered type) on the value named
    /// x, whose example is `example`: runs the child's forward on it, sets `example` to its
    /// output, and returns the output's name. `name` is the child's name in this module (its
    /// weights become "<path>.<name>.weight").
    std::string module(nn::Module& child, const std::string& name, const std::string& x,
                       Tensor& example);

    struct Impl;
    explicit Emitter(Impl& impl) : impl_(impl) {}
    Emitter(const Emitter&) = delete;
    Emitter& operator=(const Emitter&) = delete;

private:
    Impl& impl_;
};

/// Writes a module's nodes: given the module and an Emitter positioned at it, returns the name
/// of the module's output value.
using EmitFn = std::function<std::string(nn::Module& module, Emitter& e)>;

/// Registers `fn` as the ONNX emitter of modules whose dynamic type is `type` (exactly: not its
/// subclasses), for every later export in the process, before the built-in emitters (so it can
/// also replace one). Registering a type again replaces its emitter; an empty fn removes it.
/// Thread-safe. The module's own forward still runs once in the walk (for the shapes).
void register_emitter(const std::type_info& type, EmitFn fn);

/// register_emitter for module type M (the Impl class: MyBlockImpl), with fn taking an M&.
template <class M, class F>
void register_emitter(F fn) {
    register_emitter(typeid(M), [fn = std::move(fn)](nn::Module& m, Emitter& e) {
        return fn(static_cast<M&>(m), e);
    });
}

}  // namespace tg::onnx

#pragma GCC visibility pop
