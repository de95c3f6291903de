#pragma once
/// Op table rows (op_cases.hpp says how to add one): batch_norm (training and evaluation, with
/// and without affine parameters and running statistics, 2-D to 5-D), group_norm, instance_norm,
/// local_response_norm and cross_map_lrn2d. Included by op_cases.hpp.

namespace opcases {

/// Fresh running statistics of c channels in ref's dtype, on its device: a training row updates
/// them in place on every call, so each call makes its own.
inline tg::Tensor fresh_mean(const tg::Tensor& ref, int64_t c) {
    return tg::zeros({c}, ref.options());
}
inline tg::Tensor fresh_var(const tg::Tensor& ref, int64_t c) {
    return tg::ones({c}, ref.options());
}

/// The running statistics after one training step of batch_norm on x (detached) from fresh ones,
/// as one float64 tensor [mean, var]: their values are compared (a float32 run against a float64
/// one), not differentiated.
inline tg::Tensor running_after(const tg::Tensor& x, double momentum) {
    const int64_t c = x.size(1);
    const tg::Tensor rm = fresh_mean(x, c), rv = fresh_var(x, c);
    (void)tg::batch_norm(x.detach(), {}, {}, rm, rv, true, momentum, 1e-5, false);
    return tg::cat({rm, rv}).to(tg::kFloat64);
}

inline std::vector<OpCase> norm_cases() {
    // evaluation rows normalise with these (and never modify them)
    const tg::Tensor rm3 = tgtest::make_const({3}, 81), rv3 = tgtest::make_const({3}, 82, 0.5, 2.0);
    return {
        {"batch_norm_train_2d",
         {U({5, 3}), P({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], fresh_mean(x[0], 3), fresh_var(x[0], 3), true, 0.1,
                          1e-5, false))},
        {"batch_norm_train_3d",
         {U({4, 3, 5}), U({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], fresh_mean(x[0], 3), fresh_var(x[0], 3), true, 0.3,
                          1e-5, false))},
        {"batch_norm_train_4d",
         {U({2, 3, 3, 4}), P({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], fresh_mean(x[0], 3), fresh_var(x[0], 3), true, 0.1,
                          1e-5, false))},
        {"batch_norm_train_no_affine",
         {U({4, 3, 2})},
         F(tg::batch_norm(x[0], {}, {}, fresh_mean(x[0], 3), fresh_var(x[0], 3), true, 0.1, 1e-5,
                          false))},
        {"batch_norm_train_no_running_stats",
         {U({6, 2}), U({2}), U({2})},
         F(tg::batch_norm(x[0], x[1], x[2], {}, {}, true, 0.1, 1e-5, false))},
        {"batch_norm_train_weight_only",
         {U({3, 2, 4}), P({2})},
         F(tg::batch_norm(x[0], x[1], {}, {}, {}, true, 0.1, 1e-3, false))},
        {"batch_norm_train_transposed",
         {UT({4, 5}), U({5}), U({5})},
         F(tg::batch_norm(x[0], x[1], x[2], {}, {}, true, 0.1, 1e-5, false))},
        {"batch_norm_train_strided_4d",
         {US({2, 3, 2, 3}), U({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], fresh_mean(x[0], 3), fresh_var(x[0], 3), true, 0.1,
                          1e-5, false))},
        {"batch_norm_train_after_linear",
         {U({5, 4}), U({3, 4}), U({3}), P({3}), U({3})},
         F(tg::tanh(tg::batch_norm(tg::linear(x[0], x[1], x[2]), x[3], x[4], {}, {}, true, 0.1,
                                   1e-5, false)))},
        {"batch_norm_eval_2d",
         {U({4, 3}), P({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], on(rm3, x[0]), on(rv3, x[0]), false, 0.1, 1e-5,
                          false))},
        {"batch_norm_eval_4d",
         {UT({2, 3, 2, 2}), U({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], on(rm3, x[0]), on(rv3, x[0]), false, 0.1, 0.5, false))},
        {"batch_norm_eval_no_affine",
         {U({4, 3, 2})},
         F(tg::batch_norm(x[0], {}, {}, on(rm3, x[0]), on(rv3, x[0]), false, 0.1, 1e-5, false))},
        {"batch_norm_eval_one_sample",
         {U({1, 3}), U({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], on(rm3, x[0]), on(rv3, x[0]), false, 0.1, 1e-5,
                          false))},
        // the running statistics themselves: forward values only
        {"batch_norm_running_stats_2d", {U({6, 3})}, F(running_after(x[0], 0.1)), kValuesOnly},
        {"batch_norm_running_stats_4d",
         {U({2, 3, 2, 3})},
         F(running_after(x[0], 0.75)),
         kValuesOnly},
        {"group_norm_one_group",
         {U({2, 4, 3}), P({4}), U({4})},
         F(tg::group_norm(x[0], 1, x[1], x[2]))},
        {"group_norm_two_groups",
         {U({3, 4, 2}), U({4}), U({4})},
         F(tg::group_norm(x[0], 2, x[1], x[2]))},
        {"group_norm_per_channel",
         {U({2, 4, 3}), U({4}), U({4})},
         F(tg::group_norm(x[0], 4, x[1], x[2], 1e-3))},
        {"group_norm_4d",
         {U({2, 6, 2, 2}), U({6}), U({6})},
         F(tg::group_norm(x[0], 3, x[1], x[2]))},
        {"group_norm_2d_no_affine", {U({3, 4})}, F(tg::group_norm(x[0], 2))},
        {"group_norm_transposed", {UT({4, 6}), P({6})}, F(tg::group_norm(x[0], 2, x[1]))},
        {"group_norm_strided_4d",
         {US({2, 4, 2, 3}), U({4}), U({4})},
         F(tg::group_norm(x[0], 2, x[1], x[2]))},
        // tapegrad/norm_ops.hpp (issue 30)
        {"batch_norm_train_5d",
         {U({2, 3, 2, 2, 2}), P({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], fresh_mean(x[0], 3), fresh_var(x[0], 3), true, 0.1,
                          1e-5, false))},
        {"instance_norm_3d",
         {U({2, 3, 4})},
         F(tg::instance_norm(x[0], {}, {}, {}, {}, true, 0.1, 1e-5))},
        {"instance_norm_affine_4d",
         {UT({2, 3, 2, 3}), P({3}), U({3})},
         F(tg::instance_norm(x[0], x[1], x[2], {}, {}, true, 0.1, 1e-5))},
        {"instance_norm_running_stats",
         {US({3, 2, 5}), U({2}), U({2})},
         F(tg::instance_norm(x[0], x[1], x[2], fresh_mean(x[0], 2), fresh_var(x[0], 2), true, 0.2,
                             1e-3))},
        {"instance_norm_eval",
         {U({2, 3, 2, 2}), U({3})},
         F(tg::instance_norm(x[0], x[1], {}, on(rm3, x[0]), on(rv3, x[0]), false, 0.1, 1e-5))},
        {"instance_norm_5d",
         {U({1, 2, 2, 2, 3})},
         F(tg::instance_norm(x[0], {}, {}, {}, {}, true, 0.1, 1e-5))},
        {"local_response_norm_3d", {U({2, 5, 3})}, F(tg::local_response_norm(x[0] * 2.0, 3))},
        {"local_response_norm_4d",
         {UT({2, 6, 2, 3})},
         F(tg::local_response_norm(x[0] * 2.0, 4, 0.1, 0.6, 2.0))},
        {"local_response_norm_5d",
         {U({1, 4, 2, 2, 2})},
         F(tg::local_response_norm(x[0], 2, 0.5, 0.75, 1.0))},
        // LibTorch's own backward, not the derivative of its forward: no finite differences
        {"cross_map_lrn2d",
         {U({2, 5, 2, 3})},
         F(tg::cross_map_lrn2d(x[0] * 2.0, 3, 0.3, 0.6, 2)),
         kNoFD | kNoGG},
        {"cross_map_lrn2d_size4",
         {UT({1, 6, 2, 2})},
         F(tg::cross_map_lrn2d(x[0] * 2.0, 4, 1.0, 0.5, 1)),
         kNoFD | kNoGG},
        // zero-size dims (op_cases.hpp): an empty batch gives zero weight and bias gradients and
        // leaves the running statistics alone
        {"batch_norm_train_empty",
         {U({0, 3}), P({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], fresh_mean(x[0], 3), fresh_var(x[0], 3), true, 0.1,
                          1e-5, false))},
        {"batch_norm_eval_empty",
         {U({0, 3, 2}), U({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], on(rm3, x[0]), on(rv3, x[0]), false, 0.1, 1e-5,
                          false))},
        {"batch_norm_train_empty_spatial",
         {U({2, 3, 0}), U({3}), U({3})},
         F(tg::batch_norm(x[0], x[1], x[2], {}, {}, true, 0.1, 1e-5, false))},
        {"batch_norm_running_stats_empty", {U({0, 3})}, F(running_after(x[0], 0.1)), kValuesOnly},
        {"instance_norm_empty",
         {U({0, 3, 2}), U({3}), U({3})},
         F(tg::instance_norm(x[0], x[1], x[2], {}, {}, true, 0.1, 1e-5))},
        {"local_response_norm_empty", {U({0, 4, 3})}, F(tg::local_response_norm(x[0], 3))},
        {"cross_map_lrn2d_empty",
         {U({0, 3, 2, 2})},
         F(tg::cross_map_lrn2d(x[0], 3)),
         kNoFD | kNoGG},
        {"group_norm_empty",
         {U({0, 4, 3}), U({4}), U({4})},
         F(tg::group_norm(x[0], 2, x[1], x[2]))},
    };
}

}  // namespace opcases
