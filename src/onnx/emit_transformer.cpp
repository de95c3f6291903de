// The emitter of TransformerEncoderLayer: its eval-mode forward(src) (no masks) as MatMul,
// Reshape, Transpose, Softmax and the Linear and LayerNorm emitters, in PyTorch's order.
#include <cmath>
#include <string>

#include "onnx/emit.hpp"
#include "tapegrad/nn/transformer.hpp"

namespace tg::onnx::detail {
namespace {

/// MultiheadAttention's self-attention of y [N, T, E] (batch first), no masks: per head,
/// softmax(q·kᵀ / sqrt(D))·v with q, k, v the in-projection's three blocks, then out_proj.
std::string self_attention(Graph& g, const nn::MultiheadAttentionImpl& mha, const std::string& y,
                           const std::string& scope) {
    ScopeGuard guard(g, scope);
    const int64_t E = mha.options.embed_dim(), H = mha.options.num_heads(), D = E / H;
    auto project = [&](int64_t block, const char* name, const Dims& perm) {
        const std::string w = g.weight(std::string(name) + "_proj_weight_t",
                                       mha.in_proj_weight.narrow(0, block * E, E).t());
        std::string p = g.add("MatMul", {y, w});
        if (mha.in_proj_bias.defined())
            p = g.add("Add", {p, g.weight(std::string(name) + "_proj_bias",
                                          mha.in_proj_bias.narrow(0, block * E, E))});
        // [N, T, E] -> [N, T, H, D] -> perm
        const std::string heads = g.add("Reshape", {p, g.int64s("heads_shape", {4}, {0, 0, H, D})});
        return g.add("Transpose", {heads}, {attr("perm", perm)});
    };
    const std::string q = project(0, "q", {0, 2, 1, 3});   // [N, H, T, D]
    const std::string kt = project(1, "k", {0, 2, 3, 1});  // [N, H, D, T]
    const std::string v = project(2, "v", {0, 2, 1, 3});   // [N, H, T, D]
    const std::string scores = g.add(
        "Div",
        {g.add("MatMul", {q, kt}), g.floats("sqrt_head_dim", {}, {float(std::sqrt(double(D)))})});
    const std::string a =
        g.add("MatMul", {g.add("Softmax", {scores}, {attr("axis", int64_t(-1))}), v});
    const std::string merged =
        g.add("Reshape", {g.add("Transpose", {a}, {attr("perm", Dims{0, 2, 1, 3})}),
                          g.int64s("merged_shape", {3}, {0, 0, E})});
    ScopeGuard out(g, scope + ".out_proj");
    return emit_linear(g, *mha.out_proj, merged, 3);
}

}  // namespace

std::optional<std::string> emit_transformer(const Step& s) {
    const auto* t = s.module.as<nn::TransformerEncoderLayerImpl>();
    if (!t)
        return std::nullopt;
    const auto& o = t->options;
    const auto& mha = *t->self_attn;
    if (o.activation().is_function())
        unsupported(s.module, "has a function as its activation (kReLU and kGELU export)");
    if (mha.options.add_bias_kv() || mha.options.add_zero_attn() ||
        mha.options.kdim() != mha.options.embed_dim() ||
        mha.options.vdim() != mha.options.embed_dim())
        unsupported(s.module, "has attention with bias_kv, zero_attn, kdim or vdim");
    if (s.in.size() != 3)
        unsupported(s.module, "has an unbatched input: export takes [N, T, E] or [T, N, E]");
    Graph& g = s.graph;
    const std::string base = g.scope();
    auto sub = [&](const char* name) {
        return base.empty() ? std::string(name) : base + "." + name;
    };
    auto norm = [&](const nn::LayerNorm& n, const char* name, const std::string& v) {
        ScopeGuard guard(g, sub(name));
        return emit_layer_norm(g, *n, v, 3);
    };
    auto feed_forward = [&](const std::string& v) {
        std::string h;
        {
            ScopeGuard guard(g, sub("linear1"));
            h = emit_linear(g, *t->linear1, v, 3);
        }
        if (o.activation() == nn::Activation::GELU)
            h = emit_gelu(g, h, "none");
        else if (o.activation() == nn::Activation::Tanh)
            h = g.add("Tanh", {h});
        else
            h = g.add("Relu", {h});
        ScopeGuard guard(g, sub("linear2"));
        return emit_linear(g, *t->linear2, h, 3);
    };
    auto attend = [&](const std::string& v) { return self_attention(g, mha, v, sub("self_attn")); };

    std::string x = s.x;
    if (!o.batch_first())  // [T, N, E] -> [N, T, E] and back at the end
        x = g.add("Transpose", {x}, {attr("perm", Dims{1, 0, 2})});
    std::string y;
    if (o.norm_first()) {  // x + sa(norm1(x)), then + ff(norm2(.))
        const std::string h = g.add("Add", {x, attend(norm(t->norm1, "norm1", x))});
        y = g.add("Add", {h, feed_forward(norm(t->norm2, "norm2", h))});
    } else {  // norm1(x + sa(x)), then norm2(. + ff(.))
        const std::string h = norm(t->norm1, "norm1", g.add("Add", {x, attend(x)}));
        y = norm(t->norm2, "norm2", g.add("Add", {h, feed_forward(h)}));
    }
    return o.batch_first() ? y : g.add("Transpose", {y}, {attr("perm", Dims{1, 0, 2})});
}

}  // namespace tg::onnx::detail
