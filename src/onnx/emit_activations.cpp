// Emitters of the activation modules: one ONNX op where ONNX has it, else a few elementwise ops
// (GELU's erf and tanh forms, SiLU, Mish, Tanhshrink).
#include <cmath>
#include <string>

#include "onnx/emit.hpp"
#include "tapegrad/nn/activation.hpp"
#include "tapegrad/nn/activation_more.hpp"

namespace tg::onnx::detail {
namespace {

std::string scalar(Graph& g, const char* name, double v) {
    return g.floats(name, {}, {float(v)});
}

}  // namespace

std::string emit_gelu(Graph& g, const std::string& x, const std::string& approximate) {
    std::string inner;
    if (approximate == "tanh") {  // 1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))
        const std::string x3 = g.add("Mul", {x, g.add("Mul", {x, x})});
        const std::string u = g.add("Add", {x, g.add("Mul", {x3, scalar(g, "kappa", 0.044715)})});
        inner = g.add("Tanh", {g.add("Mul", {u, scalar(g, "beta", std::sqrt(2.0 / M_PI))})});
    } else {  // 1 + erf(x / sqrt(2))
        inner = g.add("Erf", {g.add("Div", {x, scalar(g, "sqrt2", std::sqrt(2.0))})});
    }
    const std::string one_plus = g.add("Add", {inner, scalar(g, "one", 1.0)});
    return g.add("Mul", {g.add("Mul", {x, one_plus}), scalar(g, "half", 0.5)});
}

namespace {

std::string clip(const Step& s, double lo, double hi) {
    return s.graph.add("Clip", {s.x, scalar(s.graph, "min", lo), scalar(s.graph, "max", hi)});
}

}  // namespace

std::optional<std::string> emit_activation(const Step& s) {
    const nn::Module& m = s.module;
    Graph& g = s.graph;
    if (m.as<nn::ReLUImpl>())
        return g.add("Relu", {s.x});
    if (m.as<nn::SigmoidImpl>())
        return g.add("Sigmoid", {s.x});
    if (m.as<nn::TanhImpl>())
        return g.add("Tanh", {s.x});
    if (m.as<nn::SoftsignImpl>())
        return g.add("Softsign", {s.x});
    if (m.as<nn::SELUImpl>())  // ONNX's default alpha and gamma are PyTorch's constants
        return g.add("Selu", {s.x});
    if (const auto* a = m.as<nn::GELUImpl>()) {
        if (a->options.approximate() != "none" && a->options.approximate() != "tanh")
            unsupported(m, "has approximate '" + a->options.approximate() + "'");
        return emit_gelu(g, s.x, a->options.approximate());
    }
    if (m.as<nn::SiLUImpl>())
        return g.add("Mul", {s.x, g.add("Sigmoid", {s.x})});
    if (m.as<nn::MishImpl>())
        return g.add("Mul", {s.x, g.add("Tanh", {g.add("Softplus", {s.x})})});
    if (m.as<nn::TanhshrinkImpl>())
        return g.add("Sub", {s.x, g.add("Tanh", {s.x})});
    if (const auto* a = m.as<nn::LeakyReLUImpl>())
        return g.add("LeakyRelu", {s.x}, {attr("alpha", float(a->options.negative_slope()))});
    if (const auto* a = m.as<nn::ELUImpl>())
        return g.add("Elu", {s.x}, {attr("alpha", float(a->options.alpha()))});
    if (const auto* a = m.as<nn::CELUImpl>())
        return g.add("Celu", {s.x}, {attr("alpha", float(a->options.alpha()))});
    if (m.as<nn::ReLU6Impl>())
        return clip(s, 0, 6);
    if (const auto* a = m.as<nn::HardtanhImpl>())
        return clip(s, a->options.min_val(), a->options.max_val());
    if (const auto* a = m.as<nn::SoftmaxImpl>())
        return g.add("Softmax", {s.x}, {attr("axis", a->options.dim())});
    if (const auto* a = m.as<nn::LogSoftmaxImpl>())
        return g.add("LogSoftmax", {s.x}, {attr("axis", a->options.dim())});
    if (const auto* a = m.as<nn::PReLUImpl>()) {
        // ONNX broadcasts the slope from the right: [C] becomes [C, 1, ...] for dim 1
        const int64_t n = a->weight.numel();
        Shape shape{n};
        for (size_t i = 2; n > 1 && i < s.in.size(); ++i)
            shape.push_back(1);
        return g.add("PRelu", {s.x, g.weight("weight", a->weight.reshape(shape))});
    }
    if (const auto* a = m.as<nn::SoftplusImpl>()) {
        // ONNX's Softplus is log(1 + exp(x)): beta 1 only; PyTorch's threshold (x above it
        // gives x) differs from it by less than exp(-threshold)
        if (a->options.beta() != 1.0 || a->options.threshold() < 20)
            unsupported(m,
                        "has beta other than 1 or threshold below 20 (ONNX's Softplus is "
                        "log(1 + exp(x)))");
        return g.add("Softplus", {s.x});
    }
    return std::nullopt;
}

}  // namespace tg::onnx::detail
