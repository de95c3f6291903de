// Mappings of the traced shape ops (map.hpp): reshape and view (and so flatten, squeeze,
// unsqueeze), transpose and permute, narrow, expand, cat, clone (contiguous).
#include <string>
#include <utility>
#include <vector>

#include "onnx/map.hpp"

namespace tg::onnx::detail {
namespace {

/// Reshape to the traced output shape. With dynamic batch, a value holding the batch in dim 0
/// keeps it there: 0 (copy the input's dim) when dim 0 is unchanged, -1 when the batch is folded
/// into it or unfolded out of it (the output's dim 0 a multiple of the example's batch).
std::string reshape(OpStep& s) {
    const Dims in = s.in_shape(0);
    Dims target = s.out_shape();
    if (s.dynamic_batch && s.in_bdim[0] >= 0) {
        const std::string what =
            "of " + shape_str(s.op.inputs[0].sizes()) + " to " + shape_str(s.op.out.sizes());
        if (s.in_bdim[0] != 0 || target.empty())
            s.refuse(what + " with the batch in dim " + std::to_string(s.in_bdim[0]) +
                     ": dynamic_batch exports reshapes that keep the batch in dim 0");
        if (target[0] == in[0])
            target[0] = 0;
        else if (s.batch > 0 && target[0] % s.batch == 0)
            target[0] = -1;
        else
            s.refuse(what + " moves the batch out of dim 0, which dynamic_batch cannot export");
        s.out_bdim = 0;
    }
    return s.graph.add("Reshape",
                       {s.in[0], s.graph.int64s("shape", {int64_t(target.size())}, target)});
}

std::string permute(OpStep& s, const Dims& perm) {
    s.out_bdim = -1;
    for (size_t i = 0; i < perm.size(); ++i)
        if (s.in_bdim[0] >= 0 && perm[i] == s.in_bdim[0])
            s.out_bdim = int64_t(i);
    return s.graph.add("Transpose", {s.in[0]}, {attr("perm", perm)});
}

std::string narrow(OpStep& s) {
    const int64_t d = s.op.i("dim"), start = s.op.i("start"), length = s.op.i("length");
    if (s.dynamic_batch && d == s.in_bdim[0])
        s.refuse("slices the batch dim, which dynamic_batch cannot export");
    Graph& g = s.graph;
    return g.add("Slice", {s.in[0], g.int64s("starts", {1}, {start}),
                           g.int64s("ends", {1}, {start + length}), g.int64s("axes", {1}, {d})});
}

/// Expand to the traced shape, with 1 where a dim is kept (ONNX broadcasts both ways, so a
/// dynamic batch dim stays free).
std::string expand(OpStep& s) {
    const Dims in = s.in_shape(0);
    Dims target = s.out_shape();
    const size_t lead = target.size() - in.size();
    for (size_t i = lead; i < target.size(); ++i)
        if (target[i] == in[i - lead])
            target[i] = 1;
    return s.graph.add("Expand",
                       {s.in[0], s.graph.int64s("shape", {int64_t(target.size())}, target)});
}

}  // namespace

std::optional<std::string> map_shape_op(OpStep& s) {
    if (s.is("reshape") || s.is("view"))
        return reshape(s);
    if (s.is("transpose")) {
        Dims perm;
        for (int64_t i = 0; i < s.op.out.dim(); ++i)
            perm.push_back(i);
        std::swap(perm[size_t(s.op.i("dim0"))], perm[size_t(s.op.i("dim1"))]);
        return permute(s, perm);
    }
    if (s.is("permute"))
        return permute(s, s.op.ints("dims"));
    if (s.is("narrow"))
        return narrow(s);
    if (s.is("expand"))
        return expand(s);
    if (s.is("cat"))
        return s.graph.add("Concat", s.in, {attr("axis", s.op.i("dim"))});
    if (s.is("clone"))
        return s.graph.add("Identity", {s.in[0]});
    return std::nullopt;
}

}  // namespace tg::onnx::detail
