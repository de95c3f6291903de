#pragma once
/// Op table rows (op_cases.hpp says how to add one): sum, mean, max/min, var, sum_to, and the
/// ordering ops cumsum, sort, argsort, topk.
/// Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> reduction_cases() {
    return {
        {"sum_all", {U({3, 4})}, F(tg::sum(x[0]))},
        {"sum_method", {UT({3, 4})}, F(x[0].sum())},
        {"sum_dim0", {U({3, 4})}, F(tg::sum(x[0], {0}))},
        {"sum_dim_neg_keepdim", {U({3, 4})}, F(tg::sum(x[0], {-1}, true))},
        {"sum_dims_3d", {U({2, 3, 4})}, F(tg::sum(x[0], {0, 2}))},
        {"sum_dims_3d_keepdim", {U({2, 3, 4})}, F(x[0].sum({0, 2}, true))},
        {"sum_transposed", {UT({3, 4})}, F(tg::sum(x[0], {1}))},
        {"sum_strided", {US({3, 4})}, F(tg::sum(x[0], {0}))},
        {"sum_expanded", {U({3, 1})}, F(tg::sum(x[0].expand({3, 5}), {1}))},
        // 300x70: exercises a device's work-group reduction; too large for finite differences
        {"sum_long", {U({300, 70})}, F(tg::sum(x[0], {0}) + tg::sum(x[0] * x[0])), kNoFD},
        {"mean_all", {U({3, 4})}, F(tg::mean(x[0]))},
        {"mean_method", {U({3, 4})}, F(x[0].mean())},
        {"mean_dim", {U({3, 4})}, F(tg::mean(x[0], {1}))},
        {"mean_dims_keepdim", {U({2, 3, 4})}, F(x[0].mean({0, -1}, true))},
        {"max_all", {U({3, 4})}, F(tg::max(x[0]))},
        {"max_method", {UT({3, 4})}, F(x[0].max())},
        {"max_dim1", {U({3, 4})}, F(std::get<0>(tg::max(x[0], 1)))},
        {"max_dim0_keepdim", {U({3, 4})}, F(std::get<0>(tg::max(x[0], 0, true)))},
        {"max_dim_3d", {U({2, 3, 4})}, F(std::get<0>(x[0].max(-2)))},
        {"max_values_and_indices",
         {U({3, 4})},
         [](const V& x) {
             auto [v, i] = x[0].max(1);
             return v + i.to(x[0].dtype());
         }},
        {"max_two_tensors", {U({3, 4}), U({4})}, F(tg::max(x[0], x[1]))},
        {"amax_dims", {U({2, 3, 4})}, F(tg::amax(x[0], {0, 2}))},
        {"amin_keepdim", {U({2, 3, 4})}, F(x[0].amin({1}, true))},
        {"min_all", {U({3, 4})}, F(tg::min(x[0]))},
        {"min_method", {US({3, 4})}, F(x[0].min())},
        {"min_dim", {U({3, 4})}, F(std::get<0>(tg::min(x[0], 0)))},
        {"min_dim_keepdim", {U({2, 3, 4})}, F(std::get<0>(tg::min(x[0], 2, true)))},
        {"var_all_unbiased", {U({3, 4})}, F(tg::var(x[0]))},
        {"var_all_biased", {U({3, 4})}, F(tg::var(x[0], false))},
        {"var_dim", {U({3, 4})}, F(tg::var(x[0], Dims{1}))},
        {"var_dims_keepdim", {U({2, 3, 4})}, F(tg::var(x[0], {0, 2}, false, true))},
        {"var_transposed", {UT({4, 3})}, F(tg::var(x[0], Dims{0}))},
        {"sum_to_row", {U({3, 4})}, F(tg::sum_to(x[0], {1, 4}))},
        {"sum_to_drop_dim", {U({2, 3, 4})}, F(tg::sum_to(x[0], {4}))},
        {"sum_to_col", {U({2, 3, 4})}, F(tg::sum_to(x[0], {3, 1}))},
        {"sum_to_same", {U({3, 4})}, F(tg::sum_to(x[0], {3, 4}))},
        {"norm_composed", {U({3, 4})}, F(tg::sqrt(tg::sum(x[0] * x[0]) + 1e-3))},
        // zero-size dims (op_cases.hpp): a sum over an empty dim is 0; max/min may keep an
        // empty dim but not reduce one (test_sizes.cpp)
        {"cumsum_dim1", {U({3, 5})}, F(tg::cumsum(x[0], 1))},
        {"cumsum_dim0_transposed", {UT({4, 3})}, F(x[0].cumsum(0))},
        {"cumsum_3d", {U({2, 5, 3})}, F(tg::cumsum(x[0], -2) * x[0])},
        // 2x300: nine log steps
        {"cumsum_long", {U({2, 300})}, F(tg::cumsum(x[0], 1)), kNoFD},
        {"sort_values", {U({3, 5})}, F(std::get<0>(tg::sort(x[0], 1)))},
        {"sort_descending_dim0", {UT({4, 3})}, F(std::get<0>(x[0].sort(0, true)) * x[0])},
        {"argsort", {U({3, 5})}, F(tg::argsort(x[0], 1, true) * 10 + x[0].argsort(0)), kValuesOnly},
        {"sort_indices", {U({3, 5})}, F(std::get<1>(tg::sort(x[0], -1))), kValuesOnly},
        {"topk_largest", {U({3, 6})}, F(std::get<0>(tg::topk(x[0], 2)))},
        {"topk_smallest_dim0", {U({5, 3})}, F(std::get<0>(x[0].topk(3, 0, false)))},
        {"topk_indices", {U({3, 6})}, F(std::get<1>(tg::topk(x[0], 4, 1))), kValuesOnly},
        {"sum_empty_all", {U({0, 3})}, F(tg::sum(x[0]) + 1.0)},
        {"sum_empty_dim", {UT({3, 0})}, F(tg::sum(x[0], {1}))},
        {"sum_empty_keepdim", {U({0, 3})}, F(x[0].sum({0}, true))},
        {"sum_empty_kept_dim", {U({2, 0, 3})}, F(tg::sum(x[0], {0, 2}))},
        {"mean_empty_kept_dim", {U({0, 3})}, F(tg::mean(x[0], {1}))},
        {"max_empty_kept_dim", {U({0, 3})}, F(std::get<0>(tg::max(x[0], 1)))},
        {"min_empty_kept_dim", {U({2, 0, 3})}, F(std::get<0>(tg::min(x[0], 2, true)))},
        {"var_empty_kept_dim", {U({0, 4})}, F(tg::var(x[0], Dims{1}))},
        {"sum_to_empty", {U({0, 3})}, F(tg::sum_to(x[0], {1, 3}))},
        {"cumsum_empty", {U({0, 3})}, F(tg::cumsum(x[0], 0) + tg::cumsum(x[0], 1))},
        {"sort_empty", {U({2, 0})}, F(std::get<0>(tg::sort(x[0], 1)))},
        {"topk_empty_kept", {U({0, 4})}, F(std::get<0>(tg::topk(x[0], 2, 1)))},
        {"topk_zero_k", {U({3, 4})}, F(std::get<0>(tg::topk(x[0], 0, 1)))},
        {"sum_to_empty_col", {U({2, 0})}, F(tg::sum_to(x[0], {2, 1}) * 2.0)},
        // LibTorch's spellings (issue 16)
        {"sum_mean_int_dim",
         {U({3, 4})},
         F(x[0].sum(1) + tg::mean(x[0], 1) + tg::sum(x[0], -1, true).squeeze(1))},
        {"logsumexp_dim1", {U({3, 5})}, F(tg::logsumexp(x[0] * 3.0, 1))},
        {"logsumexp_dims_keepdim", {U({2, 3, 4})}, F(tg::logsumexp(x[0], Dims{0, 2}, true))},
        {"logsumexp_large", {U({2, 4})}, F(tg::logsumexp(x[0] + 500.0, -1))},
        {"logsumexp_method", {UT({3, 4})}, F(x[0].logsumexp(0))},
        {"logsumexp_empty", {U({0, 3})}, F(tg::logsumexp(x[0], 1) * 2.0)},
        {"norm_2_all", {U({3, 4})}, F(tg::norm(x[0]))},
        {"norm_2_dim_keepdim", {UT({3, 4})}, F(tg::norm(x[0], 2, Dims{1}, true))},
        {"norm_1", {NZ({3, 4})}, F(tg::norm(x[0], 1, Dims{0}))},
        {"norm_3", {NZ({3, 4})}, F(x[0].norm(3, Dims{1}))},
        {"norm_inf", {U({3, 4})}, F(x[0].norm(std::numeric_limits<double>::infinity(), Dims{1}))},
        {"norm_empty", {U({0, 3})}, F(tg::norm(x[0], 2, Dims{0}))},
    };
}

}  // namespace opcases
