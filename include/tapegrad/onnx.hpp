#pragma once
/// ONNX export of a model built from tapegrad's modules, for inference runtimes (OpenCV's DNN
/// module, onnxruntime, ...): docs/onnx.md.
///
///     tg::onnx::ExportOptions o;
///     o.dynamic_batch = true;
///     tg::onnx::export_model(model, tg::randn({1, 1, 28, 28}), "model.onnx", o);
///
/// The graph is found by walking the module, not by tracing: Sequential and ModuleList (run
/// as a chain) are walked in order, and every other module must be one of the kinds that
/// have an emitter (docs/onnx.md lists them with the ONNX ops they become). Any other module
/// (a custom one, or a known one with an option ONNX cannot express) is a tg::value_error
/// naming the module's label and type before anything is written.
///
/// As torch.onnx.export's default (TrainingMode.EVAL), the export uses eval behaviour whatever
/// the module's mode: it runs the model in eval mode (BatchNorm's running statistics, dropout
/// off) to learn every layer's shapes, exports that, and puts every module back in the mode it
/// was in. Weights are float32 initializers (raw_data, little-endian); the model and the example
/// input must be float32 (int64 for a model that starts with an Embedding) and on the CPU.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

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
/// value_error for a module without an ONNX mapping (naming it) or bad options, dtype_error or
/// device_error for a model or input that is not float32 (int64 indices) on the CPU, io_error
/// when the file cannot be written, and whatever the model's own forward throws for the input.
void export_model(const std::shared_ptr<nn::Module>& module, const Tensor& example_input,
                  const std::string& path, const ExportOptions& options = {});

/// The same for a module holder (tg::nn::Sequential, ...).
template <class Holder, class = decltype(std::declval<const Holder&>().ptr())>
void export_model(const Holder& module, const Tensor& example_input, const std::string& path,
                  const ExportOptions& options = {}) {
    export_model(std::shared_ptr<nn::Module>(module.ptr()), example_input, path, options);
}

}  // namespace tg::onnx

#pragma GCC visibility pop
