#pragma once
/// Op table rows (op_cases.hpp says how to add one): comparisons and arg-reductions, whose int64
/// outputs are not differentiable (kValuesOnly). Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> comparison_cases() {
    return {
        {"compare",
         {U({3, 4}), U({4})},
         F(tg::eq(x[0], x[0]) + tg::ne(x[0], x[1]) * 2 + tg::gt(x[0], x[1]) * 4 +
           tg::lt(x[0], x[1]) * 8 + tg::ge(x[0], x[1]) * 16 + tg::le(x[0], x[1]) * 32 +
           tg::gt(x[0], 0.1) * 64 + tg::lt(x[0], 0.1) * 128),
         kValuesOnly},
        {"argmax_argmin",
         {U({4, 5})},
         F(tg::argmax(x[0], 1) + tg::argmin(x[0], 0).sum() + tg::argmax(x[0]) * 10 +
           tg::argmax(x[0], 0, true).sum()),
         kValuesOnly},
        // zero-size dims (op_cases.hpp)
        {"compare_empty",
         {U({0, 4}), U({4})},
         F(tg::eq(x[0], x[1]) + tg::gt(x[0], x[1]) * 2 + tg::lt(x[0], 0.1) * 4),
         kValuesOnly},
        {"argmax_empty_kept_dim",
         {U({0, 5}), U({3, 0})},
         F(tg::argmax(x[0], 1) + tg::argmin(x[1], 0)),
         kValuesOnly},
    };
}

}  // namespace opcases
