// tg::onnx::export_model: the module walk (include/tapegrad/onnx.hpp, docs/onnx.md).
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "io/posix_file.hpp"
#include "onnx/custom.hpp"
#include "onnx/emit.hpp"
#include "onnx/map.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/container.hpp"
#include "tapegrad/onnx.hpp"

namespace tg::onnx {
namespace {

using detail::Dims;

const char* const kWho = "onnx::export_model";

/// Puts every module back in the training mode it had (pre-order, so a parent's recursive
/// train() is undone by its children's own calls after it).
class ModeRestore {
public:
    explicit ModeRestore(nn::Module& root) {
        root.apply([this](nn::Module& m) { modes_.emplace_back(&m, m.is_training()); });
    }
    ~ModeRestore() {
        for (auto& [m, on] : modes_)
            m->train(on);
    }
    ModeRestore(const ModeRestore&) = delete;
    ModeRestore& operator=(const ModeRestore&) = delete;

private:
    std::vector<std::pair<nn::Module*, bool>> modes_;
};

Dims dims_of(const Tensor& t) {
    return Dims(t.sizes().begin(), t.sizes().end());
}

int elem_type(const Tensor& t, const char* what) {
    if (t.dtype() == kFloat32)
        return detail::kFloatType;
    if (t.dtype() == kInt64)
        return detail::kInt64Type;
    throw dtype_error(std::string(kWho) + ": the " + what + " is " + dtype_name(t.dtype()) +
                      "; ONNX export takes float32 (or int64 indices)");
}

void check_inputs(nn::Module& m, const Tensor& x, const ExportOptions& o) {
    if (o.opset < 13 || o.opset > 17)
        throw value_error(std::string(kWho) + ": opset " + std::to_string(o.opset) +
                          " is not supported (13 to 17)");
    if (o.input_name.empty() || o.output_name.empty() || o.input_name == o.output_name)
        throw value_error(std::string(kWho) +
                          ": input_name and output_name must be non-empty and different");
    if (!x.defined())
        throw value_error(std::string(kWho) + ": undefined example input");
    if (!x.device().is_cpu())
        throw device_error(std::string(kWho) + ": the example input is on " + x.device().str() +
                           "; export runs on the CPU (move the model and input with to(kCPU))");
    elem_type(x, "example input");
    if (o.dynamic_batch && x.dim() == 0)
        throw value_error(std::string(kWho) + ": dynamic_batch needs an input with a batch dim");
    for (const auto& item : m.named_parameters()) {
        if (!item.value().device().is_cpu())
            throw device_error(std::string(kWho) + ": parameter " + item.key() + " is on " +
                               item.value().device().str() + "; export runs on the CPU");
        if (item.value().dtype() != kFloat32)
            throw dtype_error(std::string(kWho) + ": parameter " + item.key() + " is " +
                              dtype_name(item.value().dtype()) + "; ONNX export takes float32");
    }
}

class Walk {
public:
    Walk(detail::Graph& g, bool dynamic_batch) : g_(g), dynamic_batch_(dynamic_batch) {}

    /// Emits m (a chain container: each of its children in turn) for input x named `name`;
    /// x becomes m's output and the returned name its value's.
    std::string emit(nn::Module& m, const std::string& path, Tensor& x, std::string name) {
        if (EmitFn fn = detail::registered_emitter(typeid(m)))
            return emit_registered(fn, m, path, x, name);
        if (m.as<nn::ModuleList>()) {  // Sequential too: a ModuleList with a forward
            for (const auto& item : m.named_children())
                name = emit(*item.value(), path.empty() ? item.key() : path + "." + item.key(), x,
                            std::move(name));
            return name;
        }
        Tensor y = m(x);
        const Dims in = dims_of(x), out = dims_of(y);
        g_.set_scope(path);
        const detail::Step s{g_, m, name, in, out, dynamic_batch_};
        std::optional<std::string> r = detail::emit_layer(s);
        if (!r)
            r = detail::emit_activation(s);
        if (!r)
            r = detail::emit_transformer(s);
        if (!r)  // a module without an emitter: its forward, traced
            return detail::emit_traced(g_, m, path, x, name, dynamic_batch_);
        x = y;
        return *r;
    }

private:
    /// m through the emitter the user registered for its type (Emitter in onnx.hpp).
    std::string emit_registered(const EmitFn& fn, nn::Module& m, const std::string& path, Tensor& x,
                                const std::string& name) {
        Tensor y = m(x);
        Emitter::Impl impl{g_,
                           name,
                           x,
                           y,
                           path,
                           dynamic_batch_,
                           [this](nn::Module& c, const std::string& p, Tensor& ex, std::string n) {
                               return emit(c, p, ex, std::move(n));
                           }};
        Emitter e(impl);
        std::string r = fn(m, e);
        if (!g_.has_value(r))
            detail::unsupported(m, "has a registered emitter that returned '" + r +
                                       "', which is not a value of the graph");
        x = y;
        return r;
    }

    detail::Graph& g_;
    bool dynamic_batch_;
};

}  // namespace

void export_model(const std::shared_ptr<nn::Module>& module, const Tensor& example_input,
                  const std::string& path, const ExportOptions& options) {
    if (!module)
        throw value_error(std::string(kWho) + ": null module");
    check_inputs(*module, example_input, options);
    std::string bytes;
    {
        ModeRestore restore(*module);
        module->eval();  // torch.onnx.export's TrainingMode.EVAL
        NoGradGuard no_grad;
        detail::Graph g(options.opset);
        g.declare_input(options.input_name);
        Tensor x = example_input;
        Walk(g, options.dynamic_batch).emit(*module, "", x, options.input_name);
        if (g.nodes().empty())  // an empty chain: the output is the input
            g.add("Identity", {options.input_name});
        g.nodes().back().outputs[0] = options.output_name;

        const std::string batch = options.dynamic_batch ? "batch" : "";
        detail::ValueInfo in{options.input_name, elem_type(example_input, "example input"),
                             dims_of(example_input), batch};
        if (options.dynamic_batch && x.dim() == 0)
            throw value_error(std::string(kWho) + ": dynamic_batch: the output has no batch dim");
        detail::ValueInfo out{options.output_name, elem_type(x, "model's output"), dims_of(x),
                              batch};
        bytes = g.serialize(in, out);
    }
    io_detail::AtomicFile f(path, std::string(kWho) + "(" + path + ")");
    f.write(bytes.data(), bytes.size());
    f.commit();
}

}  // namespace tg::onnx
