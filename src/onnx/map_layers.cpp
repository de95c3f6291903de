// Mappings of the traced layer ops (map.hpp): linear, matmul, layer_norm, embedding,
// scaled_dot_product_attention (MatMul and Softmax nodes, with the scale, the mask and the
// causal mask as an additive constant).
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "onnx/map.hpp"

namespace tg::onnx::detail {
namespace {

/// y = x·Wᵀ + b: Gemm on a 2-D x, else MatMul with Transpose(W) and Add.
std::string linear(OpStep& s) {
    Graph& g = s.graph;
    std::vector<std::string> in{s.in[0], s.in[1]};
    if (s.op.inputs[0].dim() == 2) {
        if (!s.in[2].empty())
            in.push_back(s.in[2]);
        return g.add("Gemm", std::move(in), {attr("transB", int64_t(1))});
    }
    std::string y =
        g.add("MatMul", {s.in[0], g.add("Transpose", {s.in[1]}, {attr("perm", Dims{1, 0})})});
    return s.in[2].empty() ? y : g.add("Add", {y, s.in[2]});
}

std::string layer_norm(OpStep& s) {
    const Dims in = s.in_shape(0);
    const int64_t n = s.op.i("normalized_dims");
    return layer_norm_nodes(s.graph, s.in[0], s.in[1], s.in[2], Dims(in.end() - n, in.end()),
                            float(s.op.f("eps")), in.size());
}

/// softmax(q·kᵀ·scale + mask)·v over the last two dims.
std::string attention(OpStep& s) {
    if (s.op.f("dropout_p") > 0)
        s.refuse("has dropout_p > 0, which is random (pass 0 outside training)");
    Graph& g = s.graph;
    const Dims q = s.in_shape(0), k = s.in_shape(1);
    const size_t r = k.size();
    Dims perm;
    for (size_t i = 0; i < r; ++i)
        perm.push_back(int64_t(i));
    std::swap(perm[r - 1], perm[r - 2]);
    const double scale = s.op.i("has_scale") ? s.op.f("scale") : 1.0 / std::sqrt(double(q.back()));
    std::string scores = g.add(
        "Mul", {g.add("MatMul", {s.in[0], g.add("Transpose", {s.in[1]}, {attr("perm", perm)})}),
                g.floats("scale", {}, {float(scale)})});
    const float inf = std::numeric_limits<float>::infinity();
    if (!s.in[3].empty()) {
        const Dtype md = s.op.inputs[3].dtype();
        if (md == kBool)
            scores = g.add("Where", {s.in[3], scores, g.floats("neg_inf", {}, {-inf})});
        else if (md == s.op.out.dtype())
            scores = g.add("Add", {scores, s.in[3]});
        else
            s.refuse("has a " + std::string(dtype_name(md)) +
                     " mask (export takes a bool or an additive float mask)");
    }
    if (s.op.i("is_causal")) {  // key j hidden from query i when j > i
        const int64_t L = q[q.size() - 2], S = k[r - 2];
        std::vector<float> m(size_t(L * S), 0.0f);
        for (int64_t i = 0; i < L; ++i)
            for (int64_t j = i + 1; j < S; ++j)
                m[size_t(i * S + j)] = -inf;
        scores = g.add("Add", {scores, g.floats("causal_mask", {L, S}, m)});
    }
    return g.add("MatMul", {g.add("Softmax", {scores}, {attr("axis", int64_t(-1))}), s.in[2]});
}

}  // namespace

std::optional<std::string> map_layer_op(OpStep& s) {
    if (s.is("linear"))
        return linear(s);
    if (s.is("matmul"))
        return s.graph.add("MatMul", {s.in[0], s.in[1]});
    if (s.is("layer_norm"))
        return layer_norm(s);
    if (s.is("embedding")) {
        s.out_bdim = s.in_bdim[1];
        return s.graph.add("Gather", {s.in[0], s.in[1]}, {attr("axis", int64_t(0))});
    }
    if (s.is("scaled_dot_product_attention"))
        return attention(s);
    return std::nullopt;
}

}  // namespace tg::onnx::detail
