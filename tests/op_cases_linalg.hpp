#pragma once
/// Op table rows (op_cases.hpp says how to add one): matmul (dot, matrix-vector, vector-matrix,
/// 2-D, batched), linear. Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> linalg_cases() {
    return {
        {"matmul_dot_1d", {U({5}), U({5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_2d", {U({3, 4}), U({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_method", {U({3, 4}), U({4, 2})}, F(x[0].matmul(x[1]))},
        {"matmul_matrix_vector", {U({3, 4}), U({4})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_vector_matrix", {U({5}), U({5, 3})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_batched", {U({2, 3, 4}), U({2, 4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_bcast_rhs", {U({2, 3, 4}), U({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_bcast_batch1", {U({1, 3, 4}), U({2, 4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_at_b", {U({4, 3}), U({4, 5})}, F(tg::matmul(x[0].t(), x[1]))},
        {"matmul_a_bt", {U({3, 4}), U({5, 4})}, F(tg::matmul(x[0], x[1].t()))},
        {"matmul_at_bt", {U({4, 3}), U({5, 4})}, F(tg::matmul(tg::t(x[0]), tg::t(x[1])))},
        {"matmul_transposed_leaves", {UT({3, 4}), UT({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_strided_leaves", {US({3, 4}), US({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_narrowed", {U({3, 6}), U({4, 5})}, F(tg::matmul(x[0].narrow(1, 1, 4), x[1]))},
        {"matmul_3d_permuted",
         {U({3, 2, 4}), U({2, 5, 4})},
         F(tg::matmul(x[0].permute({1, 0, 2}), x[1].transpose(1, 2)))},
        {"matmul_mv_transposed", {U({4, 3}), U({4})}, F(tg::matmul(x[0].t(), x[1]))},
        {"matmul_same_input", {U({3, 3})}, F(tg::matmul(x[0], x[0]))},
        {"linear_bias", {U({6, 4}), U({3, 4}), U({3})}, F(tg::linear(x[0], x[1], x[2]))},
        {"linear_no_bias", {U({6, 4}), U({3, 4})}, F(tg::linear(x[0], x[1]))},
        {"linear_transposed_input",
         {UT({6, 4}), U({3, 4}), U({3})},
         F(tg::linear(x[0], x[1], x[2]))},
        {"linear_transposed_weight",
         {U({6, 4}), U({4, 3}), U({3})},
         F(tg::linear(x[0], x[1].t(), x[2]))},
        {"linear_strided", {US({2, 4}), US({3, 4}), U({3})}, F(tg::linear(x[0], x[1], x[2]))},
        {"linear_batch1", {U({1, 4}), U({2, 4}), U({2})}, F(tg::linear(x[0], x[1], x[2]))},
        {"mlp_two_layers",
         {U({5, 4}), U({6, 4}), U({6}), U({3, 6}), U({3})},
         F(tg::linear(tg::tanh(tg::linear(x[0], x[1], x[2])), x[3], x[4]))},
        // zero-size dims (op_cases.hpp): an empty inner dim gives zeros, an empty batch gives
        // zero weight and bias gradients
        {"matmul_empty_rows", {U({0, 4}), U({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_empty_inner", {U({3, 0}), UT({0, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_empty_cols", {UT({3, 4}), U({4, 0})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_dot_empty", {U({0}), U({0})}, F(tg::matmul(x[0], x[1]) + 1.0)},
        {"matmul_mv_empty_inner", {U({3, 0}), U({0})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_empty_batch", {U({0, 3, 4}), U({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_empty_inner", {U({2, 3, 0}), U({2, 0, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_empty_inner_folded", {U({2, 3, 0}), U({0, 5})}, F(tg::matmul(x[0], x[1]))},
        {"linear_empty_batch", {U({0, 4}), U({3, 4}), U({3})}, F(tg::linear(x[0], x[1], x[2]))},
        {"linear_empty_batch_3d",
         {U({2, 0, 4}), UT({3, 4}), U({3})},
         F(tg::linear(x[0], x[1], x[2]))},
        {"linear_empty_in", {U({5, 0}), U({3, 0}), U({3})}, F(tg::linear(x[0], x[1], x[2]))},
        {"linear_empty_out", {U({5, 4}), U({0, 4}), U({0})}, F(tg::linear(x[0], x[1], x[2]))},
        {"linear_empty_batch_no_bias", {US({0, 4}), U({3, 4})}, F(tg::linear(x[0], x[1]))},
        // LibTorch's spellings (issue 16)
        {"mm", {U({3, 4}), U({4, 5})}, F(tg::mm(x[0], x[1]))},
        {"mm_method_transposed", {UT({3, 4}), U({4, 2})}, F(x[0].mm(x[1]))},
        {"bmm", {U({2, 3, 4}), U({2, 4, 5})}, F(tg::bmm(x[0], x[1]))},
        {"bmm_method", {U({3, 2, 4}), UT({3, 4, 2})}, F(x[0].bmm(x[1]))},
        {"addmm", {U({3, 5}), U({3, 4}), U({4, 5})}, F(tg::addmm(x[0], x[1], x[2], 0.5, 2.0))},
        {"addmm_bias_row", {U({5}), U({3, 4}), UT({4, 5})}, F(tg::addmm(x[0], x[1], x[2]))},
        {"addmm_beta0",
         {U({3, 5}), U({3, 4}), U({4, 5})},
         F(tg::addmm(x[0], x[1], x[2], 0.0) + x[0])},
        {"mm_empty_inner", {U({3, 0}), U({0, 2})}, F(tg::mm(x[0], x[1]) + 1.0)},
    };
}

}  // namespace opcases
