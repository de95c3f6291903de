#pragma once
/// Op table rows (op_cases.hpp says how to add one): views and copies of shape (reshape, squeeze,
/// expand, cat, narrow, transpose, ...) and the index ops (index_select, gather, index_add,
/// scatter_add). Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> shape_cases() {
    const tg::Tensor idx_rows = labels({2, 0, 2});  // repeated index: gradients add
    const tg::Tensor idx_gather = index_of({3, 0, 1, 1, 2, 2}, {3, 2});
    const tg::Tensor idx_gather0 = index_of({2, 0, 1, 0}, {1, 4});
    const tg::Tensor idx_add = labels({1, 1, 0});
    return {
        {"reshape", {U({3, 4})}, F(tg::reshape(x[0], {2, 6}))},
        {"reshape_method_infer", {U({3, 4})}, F(x[0].reshape({4, -1}))},
        {"reshape_transposed_copy", {UT({3, 4})}, F(x[0].reshape({12}))},
        {"view", {U({3, 4})}, F(tg::view(x[0], {2, 6})), kNoTransposedStorage},
        {"view_method", {U({2, 3, 4})}, F(x[0].view({6, 4})), kNoTransposedStorage},
        {"flatten_all", {U({2, 3, 4})}, F(tg::flatten(x[0]))},
        {"flatten_from1", {U({2, 3, 4})}, F(x[0].flatten(1))},
        {"flatten_transposed", {UT({3, 4})}, F(tg::flatten(x[0]))},
        {"squeeze_all", {U({3, 1, 4})}, F(tg::squeeze(x[0]))},
        {"squeeze_dim", {U({3, 1, 4})}, F(tg::squeeze(x[0], 1))},
        {"squeeze_method", {U({1, 4})}, F(x[0].squeeze(0))},
        {"unsqueeze", {U({3, 4})}, F(tg::unsqueeze(x[0], 1))},
        {"unsqueeze_neg", {U({3, 4})}, F(x[0].unsqueeze(-1))},
        {"expand", {U({3, 1})}, F(tg::expand(x[0], {2, 3, 4}))},
        {"expand_method", {U({1, 4})}, F(x[0].expand({3, 4}) * 2.0)},
        {"cat_dim0", {U({2, 3}), U({4, 3})}, F(tg::cat({x[0], x[1]}, 0))},
        {"cat_dim1", {U({2, 3}), U({2, 1}), U({2, 2})}, F(tg::cat({x[0], x[1], x[2]}, 1))},
        {"cat_neg_dim_transposed", {UT({3, 2}), U({3, 4})}, F(tg::cat({x[0], x[1]}, -1))},
        {"cat_same_input", {U({2, 3})}, F(tg::cat({x[0], x[0]}, 0))},
        {"stack_dim0", {U({2, 3}), U({2, 3})}, F(tg::stack({x[0], x[1]}, 0))},
        {"stack_dim_last", {U({2, 3}), UT({2, 3}), U({2, 3})}, F(tg::stack({x[0], x[1], x[2]}, 2))},
        {"narrow", {U({4, 5})}, F(tg::narrow(x[0], 1, 1, 3))},
        {"narrow_method_dim0", {U({4, 5})}, F(x[0].narrow(0, 2, 2))},
        {"narrow_of_narrow", {U({4, 6})}, F(x[0].narrow(1, 1, 4).narrow(0, 1, 2))},
        {"narrow_transposed", {UT({4, 5})}, F(tg::narrow(x[0], 0, 1, 2))},
        {"index_select_dim0", {U({4, 3})}, F(tg::index_select(x[0], 0, on(idx_rows, x[0])))},
        {"index_select_dim1", {U({3, 4})}, F(tg::index_select(x[0], 1, on(idx_rows, x[0])))},
        {"index_select_transposed", {UT({4, 3})}, F(tg::index_select(x[0], 0, on(idx_rows, x[0])))},
        {"gather_dim1", {U({3, 4})}, F(tg::gather(x[0], 1, on(idx_gather, x[0])))},
        {"gather_dim0", {U({3, 4})}, F(tg::gather(x[0], 0, on(idx_gather0, x[0])))},
        {"gather_transposed", {UT({3, 4})}, F(tg::gather(x[0], 1, on(idx_gather, x[0])))},
        {"narrow_scatter", {U({2, 3})}, F(tg::narrow_scatter(x[0], {5, 3}, 0, 2))},
        {"narrow_scatter_dim1", {U({2, 3})}, F(tg::narrow_scatter(x[0], {2, 6}, 1, 1))},
        {"index_add", {U({3, 4})}, F(tg::index_add(x[0], {2, 4}, 0, on(idx_add, x[0])))},
        {"scatter_add", {U({3, 2})}, F(tg::scatter_add(x[0], {3, 4}, 1, on(idx_gather, x[0])))},
        {"t", {U({3, 4})}, F(tg::t(x[0]))},
        {"t_method_then_mul", {U({3, 4}), U({4, 3})}, F(x[0].t() * x[1])},
        {"transpose", {U({2, 3, 4})}, F(tg::transpose(x[0], 0, 2))},
        {"transpose_method_neg", {U({2, 3, 4})}, F(x[0].transpose(-1, -2))},
        {"permute", {U({2, 3, 4})}, F(tg::permute(x[0], {2, 0, 1}))},
        {"permute_method", {U({2, 3, 4})}, F(x[0].permute({1, 2, 0}) * 3.0)},
        {"contiguous", {UT({3, 4})}, F(x[0].contiguous())},
        {"clone", {U({3, 4})}, F(x[0].clone())},
        {"to_float64", {U({3, 4})}, F(x[0].to(tg::kFloat64) * 2.0), kNoF32},  // output always f64
        {"views_chain",
         {U({2, 3, 4})},
         F(x[0].permute({2, 0, 1}).narrow(0, 1, 2).reshape({2, 6}).t())},
    };
}

}  // namespace opcases
