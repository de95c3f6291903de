// Emitters of the layers with weights or geometry: Linear, Conv, pooling, BatchNorm,
// LayerNorm, Embedding, Flatten, and the modules that are the identity in eval mode.
#include <string>
#include <utility>

#include "onnx/emit.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/nn/conv.hpp"
#include "tapegrad/nn/dropout.hpp"
#include "tapegrad/nn/embedding.hpp"
#include "tapegrad/nn/flatten.hpp"
#include "tapegrad/nn/layer_norm.hpp"
#include "tapegrad/nn/linear.hpp"
#include "tapegrad/nn/normalization.hpp"
#include "tapegrad/nn/pooling.hpp"
#include "tapegrad/ops.hpp"

namespace tg::onnx::detail {

void unsupported(const nn::Module& m, const std::string& why) {
    throw value_error("onnx::export_model: " + m.name() + " '" + m.label() + "' " + why);
}

namespace {

/// An IntArg of one value or D values as D values.
Dims expand(const IntArg& a, size_t D) {
    const auto& v = a.values();
    return v.size() == 1 ? Dims(D, v[0]) : Dims(v.begin(), v.end());
}

bool all_ones(const Dims& d) {
    for (int64_t v : d)
        if (v != 1)
            return false;
    return true;
}

void need_batched(const Step& s, size_t D, const char* what) {
    if (s.in.size() != D + 2)
        unsupported(s.module, std::string("has an unbatched input: ") + what +
                                  " exports for [N, C, ...] inputs only");
}

}  // namespace

std::string emit_linear(Graph& g, const nn::Module& m, const std::string& x, size_t rank) {
    const auto& l = dynamic_cast<const nn::LinearImpl&>(m);
    if (rank == 2) {  // Gemm: y = x·Wᵀ + b, W as stored
        std::vector<std::string> in{x, g.weight("weight", l.weight)};
        if (l.bias.defined())
            in.push_back(g.weight("bias", l.bias));
        return g.add("Gemm", std::move(in), {attr("transB", int64_t(1))});
    }
    // any other rank: MatMul with Wᵀ (stored transposed), then Add
    std::string y = g.add("MatMul", {x, g.weight("weight_t", l.weight.t())});
    return l.bias.defined() ? g.add("Add", {y, g.weight("bias", l.bias)}) : y;
}

namespace {

template <size_t D, class Impl>
std::string conv(const Step& s, const Impl& c) {
    const auto& o = c.options;
    if (o.padding_mode() != kZeros)
        unsupported(s.module, "has a padding_mode other than zeros (no ONNX mapping here)");
    need_batched(s, D, "Conv");
    const Dims k = expand(o.kernel_size(), D), st = expand(o.stride(), D),
               dil = expand(o.dilation(), D);
    Dims pads(2 * D, 0);
    if (o.padding_by_name()) {
        if (o.padding_by_name()->name() == "same")
            for (size_t i = 0; i < D; ++i) {  // as LibTorch: the odd one on the right
                const int64_t total = dil[i] * (k[i] - 1);
                pads[i] = total / 2, pads[i + D] = total - total / 2;
            }
    } else {
        const Dims p = expand(o.padding(), D);
        for (size_t i = 0; i < D; ++i)
            pads[i] = pads[i + D] = p[i];
    }
    Graph& g = s.graph;
    std::vector<std::string> in{s.x, g.weight("weight", c.weight)};
    if (c.bias.defined())
        in.push_back(g.weight("bias", c.bias));
    return g.add("Conv", std::move(in),
                 {attr("kernel_shape", k), attr("strides", st), attr("pads", pads),
                  attr("dilations", dil), attr("group", o.groups())});
}

template <size_t D, class Impl>
std::string conv_transpose(const Step& s, const Impl& c) {
    const auto& o = c.options;
    need_batched(s, D, "ConvTranspose");
    const Dims k = expand(o.kernel_size(), D), st = expand(o.stride(), D),
               dil = expand(o.dilation(), D), p = expand(o.padding(), D),
               out_pad = expand(o.output_padding(), D);
    Dims pads = p;
    pads.insert(pads.end(), p.begin(), p.end());
    Graph& g = s.graph;  // the weight [in, out / groups, k...] is ONNX's layout too
    std::vector<std::string> in{s.x, g.weight("weight", c.weight)};
    if (c.bias.defined())
        in.push_back(g.weight("bias", c.bias));
    std::vector<Attribute> a{attr("kernel_shape", k), attr("strides", st), attr("pads", pads),
                             attr("dilations", dil), attr("group", o.groups())};
    if (out_pad != Dims(D, 0))
        a.push_back(attr("output_padding", out_pad));
    return g.add("ConvTranspose", std::move(in), std::move(a));
}

/// ONNX's pooled size (opset 13): floor or ceil of (in + pads - dil·(k-1) - 1) / stride + 1.
/// With ceil_mode, LibTorch drops a last window that would start in the right padding, ONNX
/// does not: where they differ the export is refused.
void check_pooled(const Step& s, size_t D, const Dims& k, const Dims& st, const Dims& p,
                  const Dims& dil, bool ceil) {
    for (size_t i = 0; i < D; ++i) {
        const int64_t span = s.in[2 + i] + 2 * p[i] - dil[i] * (k[i] - 1) - 1;
        const int64_t n = (ceil ? (span + st[i] - 1) / st[i] : span / st[i]) + 1;
        if (n != s.out[2 + i])
            unsupported(s.module, "with ceil_mode gives " + std::to_string(s.out[2 + i]) +
                                      " windows where ONNX's rule gives " + std::to_string(n));
    }
}

template <size_t D>
std::optional<std::string> pooling(const Step& s) {
    Graph& g = s.graph;
    if (const auto* mp = s.module.as<nn::MaxPoolImpl<D>>()) {
        const auto& o = mp->options;
        need_batched(s, D, "MaxPool");
        const Dims k = expand(o.kernel_size(), D), p = expand(o.padding(), D),
                   dil = expand(o.dilation(), D);
        const Dims st = o.stride().values().empty() ? k : expand(o.stride(), D);
        check_pooled(s, D, k, st, p, dil, o.ceil_mode());
        Dims pads = p;
        pads.insert(pads.end(), p.begin(), p.end());
        std::vector<Attribute> a{attr("kernel_shape", k), attr("strides", st), attr("pads", pads)};
        if (o.ceil_mode())
            a.push_back(attr("ceil_mode", int64_t(1)));
        if (!all_ones(dil))
            a.push_back(attr("dilations", dil));
        return g.add("MaxPool", {s.x}, std::move(a));
    }
    if (const auto* ap = s.module.as<nn::AvgPoolImpl<D>>()) {
        const auto& o = ap->options;
        need_batched(s, D, "AveragePool");
        if (o.divisor_override())
            unsupported(s.module, "has a divisor_override (ONNX's AveragePool has none)");
        if (o.ceil_mode())
            unsupported(s.module, "has ceil_mode (runtimes disagree on the last window's divisor)");
        const Dims k = expand(o.kernel_size(), D), p = expand(o.padding(), D);
        const Dims st = o.stride().values().empty() ? k : expand(o.stride(), D);
        check_pooled(s, D, k, st, p, Dims(D, 1), false);
        Dims pads = p;
        pads.insert(pads.end(), p.begin(), p.end());
        return g.add("AveragePool", {s.x},
                     {attr("kernel_shape", k), attr("strides", st), attr("pads", pads),
                      attr("count_include_pad", int64_t(o.count_include_pad() ? 1 : 0))});
    }
    const bool avg = s.module.as<nn::AdaptiveAvgPoolImpl<D>>() != nullptr;
    if (!avg && !s.module.as<nn::AdaptiveMaxPoolImpl<D>>())
        return std::nullopt;
    need_batched(s, D, avg ? "AdaptiveAvgPool" : "AdaptiveMaxPool");
    Dims out(s.out.begin() + 2, s.out.end());
    if (all_ones(out))
        return g.add(avg ? "GlobalAveragePool" : "GlobalMaxPool", {s.x});
    Dims k(D);  // windows that tile the input exactly: a plain pooling with stride = kernel
    for (size_t i = 0; i < D; ++i) {
        if (s.in[2 + i] % out[i] != 0)
            unsupported(s.module, "pools " + std::to_string(s.in[2 + i]) + " to " +
                                      std::to_string(out[i]) +
                                      ": ONNX has adaptive pooling only to size 1 or to a "
                                      "divisor of the input size");
        k[i] = s.in[2 + i] / out[i];
    }
    return g.add(avg ? "AveragePool" : "MaxPool", {s.x},
                 {attr("kernel_shape", k), attr("strides", k)});
}

std::string batch_norm(const Step& s, const nn::BatchNormBase& bn) {
    if (!bn.options.track_running_stats())
        unsupported(s.module,
                    "has no running statistics (it normalizes by the batch's in eval "
                    "mode too, which ONNX's BatchNormalization does not)");
    if (s.in.size() < 2)
        unsupported(s.module, "has an input of fewer than 2 dims");
    Graph& g = s.graph;
    const int64_t C = s.in[1];
    const std::string w = bn.weight.defined() ? g.weight("weight", bn.weight)
                                              : g.floats("weight", {C}, std::vector<float>(C, 1));
    const std::string b = bn.bias.defined() ? g.weight("bias", bn.bias)
                                            : g.floats("bias", {C}, std::vector<float>(C, 0));
    return g.add("BatchNormalization",
                 {s.x, w, b, g.weight("running_mean", bn.running_mean),
                  g.weight("running_var", bn.running_var)},
                 {attr("epsilon", float(bn.options.eps()))});
}

}  // namespace

std::string emit_layer_norm(Graph& g, const nn::Module& m, const std::string& x, size_t rank) {
    const auto& ln = dynamic_cast<const nn::LayerNormImpl&>(m);
    const auto& shape = ln.options.normalized_shape();
    const std::string w = ln.weight.defined() ? g.weight("weight", ln.weight) : "";
    const std::string b = ln.bias.defined() ? g.weight("bias", ln.bias) : "";
    return layer_norm_nodes(g, x, w, b, Dims(shape.begin(), shape.end()), float(ln.options.eps()),
                            rank);
}

std::string layer_norm_nodes(Graph& g, const std::string& x, const std::string& weight,
                             const std::string& bias, const Dims& normalized, float eps,
                             size_t rank) {
    const int64_t axis = int64_t(rank - normalized.size());
    if (g.opset() >= 17) {
        int64_t count = 1;
        for (int64_t v : normalized)
            count *= v;
        const std::vector<float> ones(size_t(count), 1.0f);
        std::vector<std::string> in{
            x, !weight.empty() ? weight : g.floats("weight", normalized, ones)};
        if (!bias.empty())
            in.push_back(bias);
        return g.add("LayerNormalization", std::move(in),
                     {attr("axis", axis), attr("epsilon", eps)});
    }
    // opset 13 to 16: (x - mean) / sqrt(var + eps) over the last dims, then weight and bias, as
    // torch.onnx writes it (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add: the
    // pattern runtimes fuse back into one layer norm); pow(d, 2) is d·d
    // correctly rounded
    Dims axes;
    for (int64_t a = axis; a < int64_t(rank); ++a)
        axes.push_back(a - int64_t(rank));  // negative: counted from the end
    const std::string mean = g.add("ReduceMean", {x}, {attr("axes", axes)});
    const std::string d = g.add("Sub", {x, mean});
    const std::string sq = g.add("Pow", {d, g.floats("two", {}, {2.0f})});
    const std::string var = g.add("ReduceMean", {sq}, {attr("axes", axes)});
    const std::string den = g.add("Sqrt", {g.add("Add", {var, g.floats("eps", {}, {eps})})});
    std::string y = g.add("Div", {d, den});
    if (!weight.empty())
        y = g.add("Mul", {y, weight});
    if (!bias.empty())
        y = g.add("Add", {y, bias});
    return y;
}

namespace {

std::string flatten(const Step& s, const nn::FlattenImpl& f) {
    const int64_t r = int64_t(s.in.size());
    const int64_t start = wrap_dim(f.options.start_dim(), r, "Flatten"),
                  end = wrap_dim(f.options.end_dim(), r, "Flatten");
    if (start == 1 && end == r - 1)
        return s.graph.add("Flatten", {s.x}, {attr("axis", int64_t(1))});
    if (start == 0 && s.dynamic_batch)
        unsupported(s.module, "flattens the batch dimension, which dynamic_batch keeps apart");
    Dims shape;  // 0 copies the input's dim, -1 takes what is left
    for (int64_t i = 0; i < r; ++i)
        if (i < start)
            shape.push_back(0);
        else if (i == start)
            shape.push_back(-1);
        else if (i > end)
            shape.push_back(s.in[size_t(i)]);
    return s.graph.add("Reshape", {s.x, s.graph.int64s("shape", {int64_t(shape.size())}, shape)});
}

template <class... T>
bool is_any(const nn::Module& m) {
    return ((m.as<T>() != nullptr) || ...);
}

}  // namespace

std::optional<std::string> emit_layer(const Step& s) {
    const nn::Module& m = s.module;
    if (is_any<nn::IdentityImpl, nn::DropoutImpl, nn::Dropout2dImpl, nn::Dropout3dImpl,
               nn::AlphaDropoutImpl, nn::FeatureAlphaDropoutImpl>(m))
        return s.graph.add("Identity", {s.x});  // eval mode: dropout is the identity
    if (m.as<nn::LinearImpl>())
        return emit_linear(s.graph, m, s.x, s.in.size());
    if (const auto* c = m.as<nn::Conv1dImpl>())
        return conv<1>(s, *c);
    if (const auto* c = m.as<nn::Conv2dImpl>())
        return conv<2>(s, *c);
    if (const auto* c = m.as<nn::Conv3dImpl>())
        return conv<3>(s, *c);
    if (const auto* c = m.as<nn::ConvTranspose1dImpl>())
        return conv_transpose<1>(s, *c);
    if (const auto* c = m.as<nn::ConvTranspose2dImpl>())
        return conv_transpose<2>(s, *c);
    if (const auto* c = m.as<nn::ConvTranspose3dImpl>())
        return conv_transpose<3>(s, *c);
    if (auto y = pooling<1>(s))
        return y;
    if (auto y = pooling<2>(s))
        return y;
    if (auto y = pooling<3>(s))
        return y;
    if (const auto* bn = m.as<nn::BatchNormBase>())
        return batch_norm(s, *bn);
    if (m.as<nn::LayerNormImpl>())
        return emit_layer_norm(s.graph, m, s.x, s.in.size());
    if (const auto* f = m.as<nn::FlattenImpl>())
        return flatten(s, *f);
    if (const auto* e = m.as<nn::EmbeddingImpl>())
        return s.graph.add("Gather", {s.graph.weight("weight", e->weight), s.x},
                           {attr("axis", int64_t(0))});
    return std::nullopt;
}

}  // namespace tg::onnx::detail
