#pragma once
/// Op table rows (op_cases.hpp says how to add one): activations, softmax, log_softmax, dropout,
/// feature_dropout, and the rest of ATen's activations (tapegrad/activation_ops.hpp).
/// Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> activation_cases() {
    return {
        {"tanh", {U({3, 4})}, F(tg::tanh(x[0] * 2.0))},
        {"tanh_method", {UT({3, 4})}, F(x[0].tanh())},
        {"sigmoid", {U({3, 4})}, F(tg::sigmoid(x[0] * 3.0))},
        {"sigmoid_method", {US({3, 4})}, F(x[0].sigmoid())},
        {"relu", {NZ({3, 4})}, F(tg::relu(x[0]))},
        {"relu_method", {NZ({2, 3, 2})}, F(x[0].relu())},
        {"leaky_relu", {NZ({3, 4})}, F(tg::leaky_relu(x[0], 0.1))},
        {"leaky_relu_default", {NZ({3, 4})}, F(tg::leaky_relu(x[0]))},
        {"gelu", {U({3, 4})}, F(tg::gelu(x[0] * 3.0))},
        {"softplus", {U({3, 4})}, F(tg::softplus(x[0] * 3.0))},
        {"softplus_beta", {U({3, 4})}, F(tg::softplus(x[0], 2.0, 20.0))},
        {"softplus_threshold", {U({4, 5})}, F(tg::softplus(x[0] * 3.0, 1.0, 2.0))},
        {"softplus_linear_region", {U({3, 4})}, F(tg::softplus(x[0] + 25.0))},
        {"softplus_very_negative", {U({3, 4})}, F(tg::softplus(x[0] - 30.0) * 1e12)},
        {"softmax_dim1", {U({3, 5})}, F(tg::softmax(x[0] * 2.0, 1))},
        {"softmax_dim0", {U({3, 5})}, F(tg::softmax(x[0], 0))},
        {"softmax_dim_neg_3d", {U({2, 3, 4})}, F(tg::softmax(x[0], -1))},
        {"softmax_dim_mid_3d", {U({2, 3, 4})}, F(tg::softmax(x[0], 1))},
        {"softmax_transposed", {UT({3, 5})}, F(tg::softmax(x[0], 1))},
        {"softmax_1d", {U({6})}, F(tg::softmax(x[0], 0))},
        {"softmax_large_logits", {U({2, 4})}, F(tg::softmax(x[0] + 500.0, 1))},
        {"log_softmax_dim1", {U({3, 5})}, F(tg::log_softmax(x[0] * 2.0, 1))},
        {"log_softmax_dim0", {U({3, 5})}, F(tg::log_softmax(x[0], 0))},
        {"log_softmax_3d", {U({2, 3, 4})}, F(tg::log_softmax(x[0], 1))},
        {"log_softmax_strided", {US({3, 4})}, F(tg::log_softmax(x[0], -1))},
        {"log_softmax_large_logits", {U({2, 4})}, F(tg::log_softmax(x[0] * 3.0 + 1000.0, 1))},
        {"dropout_train",
         {U({4, 5})},
         [](const V& x) {
             tg::manual_seed(3);  // the same mask on every call of the function
             return tg::dropout(x[0], 0.3, true);
         },
         kNoF32},
        {"dropout_eval", {U({4, 5})}, F(tg::dropout(x[0], 0.3, false))},
        {"feature_dropout_train",
         {U({3, 4, 2, 2})},
         [](const V& x) {
             tg::manual_seed(4);  // zeroes whole [2,2] maps
             return tg::feature_dropout(x[0], 0.4, true);
         },
         kNoF32},
        {"feature_dropout_3d",
         {UT({2, 5, 3})},
         [](const V& x) {
             tg::manual_seed(5);
             return tg::feature_dropout(x[0], 0.5, true) * 2.0;
         },
         kNoF32},
        {"feature_dropout_eval", {U({2, 3, 2})}, F(tg::feature_dropout(x[0], 0.4, false))},
        // tapegrad/activation_ops.hpp (issue 30); inputs kept off the kinks
        {"elu", {U({3, 4})}, F(tg::elu(x[0] * 3.0))},
        {"elu_alpha_scale", {U({3, 4})}, F(tg::elu(x[0] * 2.0, 0.7, 1.5, 2.0))},
        {"elu_negative_alpha", {U({3, 4})}, F(tg::elu(x[0] * 2.0, -0.5))},
        {"elu_inplace",
         {UT({3, 4})},
         [](const V& x) {
             tg::Tensor y = x[0] * 2.0;
             return tg::elu_(y, 0.8);
         }},
        {"selu", {U({3, 4})}, F(tg::selu(x[0] * 3.0))},
        {"selu_inplace",
         {US({3, 4})},
         [](const V& x) {
             tg::Tensor y = x[0] * 3.0;
             return tg::selu_(y);
         }},
        {"celu", {U({3, 4})}, F(tg::celu(x[0] * 2.0, 0.5))},
        {"celu_inplace",
         {U({3, 4})},
         [](const V& x) {
             tg::Tensor y = x[0] * 2.0;
             return tg::celu_(y, 1.5);
         }},
        {"silu", {U({3, 4})}, F(tg::silu(x[0] * 4.0))},
        {"silu_far", {U({2, 3})}, F(tg::silu(x[0] * 60.0))},
        {"mish", {UT({3, 4})}, F(tg::mish(x[0] * 4.0))},
        {"mish_far", {U({2, 3})}, F(tg::mish(x[0] * 60.0))},
        {"log_sigmoid", {U({3, 4})}, F(tg::log_sigmoid(x[0] * 4.0))},
        {"log_sigmoid_far", {U({2, 3})}, F(tg::log_sigmoid(x[0] * 60.0))},
        {"hardtanh", {NZ({3, 4})}, F(tg::hardtanh(x[0] * 1.7))},
        {"hardtanh_bounds", {NZ({3, 4})}, F(tg::hardtanh(x[0] * 3.0, -1.5, 0.75))},
        {"hardtanh_inplace",
         {NZ({3, 4})},
         [](const V& x) {
             tg::Tensor y = x[0] * 1.7;
             return tg::hardtanh_(y, -0.9, 1.1);
         }},
        {"relu6", {NZ({3, 4})}, F(tg::relu6(x[0] * 9.0))},
        {"relu6_inplace",
         {NZ({3, 4})},
         [](const V& x) {
             tg::Tensor y = x[0] * 9.0;
             return tg::relu6_(y);
         }},
        {"hardshrink", {NZ({3, 4})}, F(tg::hardshrink(x[0], 0.35))},
        {"softshrink", {NZ({3, 4})}, F(tg::softshrink(x[0] * 2.0))},
        {"threshold", {NZ({3, 4})}, F(tg::threshold(x[0], 0.1, 20.0))},
        {"threshold_inplace",
         {NZ({3, 4})},
         [](const V& x) {
             tg::Tensor y = x[0] * 2.0;
             return tg::threshold_(y, -0.1, -3.0);
         }},
        {"glu_last", {U({3, 4})}, F(tg::glu(x[0] * 2.0))},
        {"glu_dim1", {UT({2, 6, 3})}, F(tg::glu(x[0], 1))},
        {"prelu_one", {NZ({3, 4}), U({1})}, F(tg::prelu(x[0], x[1]))},
        {"prelu_channels", {NZ({2, 3, 4}), U({3})}, F(tg::prelu(x[0], x[1]))},
        {"prelu_channels_4d", {NZ({2, 3, 2, 2}), P({3})}, F(tg::prelu(x[0], x[1] * -1.0))},
        {"gelu_tanh", {U({3, 4})}, F(tg::gelu(x[0] * 3.0, "tanh"))},
        {"rrelu_eval", {NZ({3, 4})}, F(tg::rrelu(x[0], 0.1, 0.3))},
        {"rrelu_train",
         {NZ({4, 5})},
         [](const V& x) {
             tg::manual_seed(6);  // the same slopes on every call of the function
             return tg::rrelu(x[0], 0.1, 0.3, true);
         },
         kNoF32},
        // zero-size dims (op_cases.hpp)
        {"activations_more_empty",
         {U({0, 4})},
         F(tg::elu(x[0]) + tg::selu(x[0]) + tg::silu(x[0]) + tg::mish(x[0]) +
           tg::log_sigmoid(x[0]) + tg::hardtanh(x[0]) + tg::hardshrink(x[0]) +
           tg::softshrink(x[0]) + tg::threshold(x[0], 0.1, 2.0) +
           tg::cat({tg::glu(x[0]), tg::glu(x[0])}, 1) + tg::rrelu(x[0], 0.1, 0.3, true))},
        {"activations_empty",
         {U({0, 5})},
         F(tg::tanh(x[0]) + tg::sigmoid(x[0]) + tg::relu(x[0]) + tg::leaky_relu(x[0]) +
           tg::gelu(x[0]) + tg::softplus(x[0]))},
        {"softmax_empty_rows", {U({0, 5})}, F(tg::softmax(x[0], 1))},
        {"softmax_empty_dim", {U({3, 0})}, F(tg::softmax(x[0], 1))},
        {"log_softmax_empty_dim0", {UT({0, 4})}, F(tg::log_softmax(x[0], 0))},
        {"log_softmax_empty_3d", {U({2, 0, 3})}, F(tg::log_softmax(x[0], -1))},
        {"dropout_empty",
         {U({0, 3})},
         [](const V& x) {
             tg::manual_seed(3);
             return tg::dropout(x[0], 0.3, true);
         },
         kNoF32},
        {"feature_dropout_empty",
         {U({2, 0, 3})},
         [](const V& x) {
             tg::manual_seed(3);
             return tg::feature_dropout(x[0], 0.3, true);
         },
         kNoF32},
    };
}

}  // namespace opcases
