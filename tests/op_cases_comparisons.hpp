#pragma once
/// Op table rows (op_cases.hpp says how to add one): comparisons, logic and arg-reductions, whose
/// bool and int64 outputs are not differentiable (kValuesOnly; bool results are counted as
/// int64 through their masks). Included by op_cases.hpp.

namespace opcases {

/// A bool result as int64 0/1, so that rows can combine several into one number.
inline tg::Tensor I(const tg::Tensor& m) {
    return m.to(tg::kInt64);
}

inline std::vector<OpCase> comparison_cases() {
    return {
        {"compare",
         {U({3, 4}), U({4})},
         F(I(tg::eq(x[0], x[0])) + I(tg::ne(x[0], x[1])) * 2 + I(tg::gt(x[0], x[1])) * 4 +
           I(tg::lt(x[0], x[1])) * 8 + I(tg::ge(x[0], x[1])) * 16 + I(tg::le(x[0], x[1])) * 32 +
           I(tg::gt(x[0], 0.1)) * 64 + I(x[0] < 0.1) * 128 + I(x[0] >= x[1]) * 256 +
           I(x[0] == 0.5) * 512 + I(x[0] != x[1]) * 1024 + I(x[0] <= 0.3) * 2048),
         kValuesOnly},
        {"logic_and_masks",
         {U({3, 4}), U({4})},
         F(I(tg::logical_and(x[0] > 0.2, x[1] > 0.4)) +
           I(tg::logical_or(x[0] > 0.7, x[1] < 0.2)) * 2 +
           I(tg::logical_xor(x[0] > 0.5, x[1] > 0.5)) * 4 + I(tg::logical_not(x[0] > 0.5)) * 8 +
           I(~(x[0] > 0.5) | (x[1] > 0.6)) * 16 + I(tg::any(x[0] > 0.8, 1, true)) * 32 +
           I(tg::all(x[0] > 0.1, 0)) * 64 + I(tg::where(x[0] > 0.5, x[0], x[1]) > 0.5) * 128 +
           (x[0] > 0.5).sum() * 256 + x[0].masked_fill(x[0] < 0.3, 0.0).gt(0.0).sum(0)),
         kValuesOnly},
        {"masked_select",
         {U({3, 4}), U({4})},
         F(tg::masked_select(x[0], x[1] > 0.5) * 2.0 + x[0].index({x[0] > 0.4}).sum())},
        {"argmax_argmin",
         {U({4, 5})},
         F(tg::argmax(x[0], 1) + tg::argmin(x[0], 0).sum() + tg::argmax(x[0]) * 10 +
           tg::argmax(x[0], 0, true).sum()),
         kValuesOnly},
        // zero-size dims (op_cases.hpp)
        {"compare_empty",
         {U({0, 4}), U({4})},
         F(I(tg::eq(x[0], x[1])) + I(tg::gt(x[0], x[1])) * 2 + I(tg::lt(x[0], 0.1)) * 4 +
           I(tg::any(x[0] > 0.5, 0)) * 8 + I(tg::all(x[0] > 0.5, 0)) * 16),
         kValuesOnly},
        {"masked_select_empty", {U({0, 4}), U({4})}, F(tg::masked_select(x[0], x[1] > 0.5) * 2.0)},
        {"argmax_empty_kept_dim",
         {U({0, 5}), U({3, 0})},
         F(tg::argmax(x[0], 1) + tg::argmin(x[1], 0)),
         kValuesOnly},
    };
}

}  // namespace opcases
