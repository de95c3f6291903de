#pragma once
/// Op table rows (op_cases.hpp says how to add one): arithmetic, broadcasting, scalar forms,
/// elementwise math, clamp, maximum/minimum, where. Included by op_cases.hpp.

namespace opcases {

inline std::vector<OpCase> arithmetic_cases() {
    const tg::Tensor cond = tg::gt(tgtest::make_const({3, 4}, 5), 0.0);  // int64 0/1 mask
    const double inf = std::numeric_limits<double>::infinity();
    const tg::Tensor nonfinite =
        tg::tensor({0.0, inf, 0.0, -inf, std::nan(""), 0.0, 0.0, 0.0, 0.0, inf, 0.0, 0.0})
            .reshape({3, 4});
    return {
        {"add", {U({3, 4}), U({3, 4})}, F(tg::add(x[0], x[1]))},
        {"add_bcast_col_row", {U({3, 1}), U({4})}, F(tg::add(x[0], x[1]))},
        {"add_bcast_3d", {U({2, 3, 4}), U({3, 1})}, F(x[0] + x[1])},
        {"add_transposed", {UT({3, 4}), U({4, 3})}, F(x[0] + x[1].t())},
        {"add_strided", {US({3, 4}), US({3, 4})}, F(x[0] + x[1])},
        {"add_expand", {U({3, 1})}, F(x[0].expand({3, 4}) + x[0].expand({3, 4}))},
        {"add_same_input", {U({5})}, F(x[0] + x[0])},
        {"sub", {U({3, 4}), U({4})}, F(tg::sub(x[0], x[1]))},
        {"sub_bcast_both", {U({1, 4}), U({3, 1})}, F(x[0] - x[1])},
        {"mul", {U({2, 3, 4}), U({3, 1})}, F(tg::mul(x[0], x[1]))},
        {"mul_permuted", {U({2, 3, 4}), U({4, 2, 3})}, F(x[0] * x[1].permute({1, 2, 0}))},
        {"mul_narrowed", {U({3, 6}), U({3, 4})}, F(x[0].narrow(1, 2, 4) * x[1])},
        {"mul_same_input", {U({5})}, F(x[0] * x[0])},
        {"mul_0d", {U({3, 4}), U({})}, F(x[0] * x[1])},
        {"div", {U({3, 4}), P({4})}, F(tg::div(x[0], x[1]))},
        // (a/b stays away from the integers where remainder and fmod jump)
        {"remainder", {U({3, 4}), NZ({4})}, F(tg::remainder(x[0] * 2.5, x[1]))},
        {"fmod_bcast", {UT({3, 4}), P({3, 1})}, F(tg::fmod(x[0] * 3.0, x[1]))},
        {"remainder_scalar_op", {U({3, 4})}, F((x[0] * 3.0) % 0.7)},
        {"div_bcast", {P({3, 1}), P({1, 4})}, F(x[0] / x[1])},
        {"div_transposed", {U({3, 4}), PT({3, 4})}, F(x[0] / x[1])},
        {"add_scalar", {U({3, 4})}, F(tg::add(x[0], 2.5))},
        {"add_scalar_op", {U({3, 4})}, F(x[0] + 2.5)},
        {"scalar_add_op", {U({3, 4})}, F(2.5 + x[0])},
        {"sub_scalar_op", {U({3, 4})}, F(x[0] - 1.5)},
        {"scalar_sub_op", {U({3, 4})}, F(1.5 - x[0])},
        {"mul_scalar", {U({3, 4})}, F(tg::mul(x[0], -3.0))},
        {"scalar_mul_op", {U({3, 4})}, F(2.0 * x[0])},
        {"div_scalar_op", {U({3, 4})}, F(x[0] / 4.0)},
        {"scalar_ops_chain", {U({3, 4})}, F(((x[0] + 2) - 3) * 1.5 / 4 + (2 - x[0]) * 3)},
        {"rdiv", {P({3, 4})}, F(tg::rdiv(2.0, x[0]))},
        {"scalar_div_op", {P({3, 4})}, F(2.0 / x[0])},
        {"neg", {U({3, 4})}, F(tg::neg(x[0]))},
        {"neg_op", {UT({3, 4})}, F(-x[0])},
        {"pow_2", {U({3, 4})}, F(tg::pow(x[0], 2.0))},
        {"pow_3", {U({3, 4})}, F(x[0].pow(3.0))},
        {"pow_1_5", {P({3, 4})}, F(tg::pow(x[0], 1.5))},
        {"pow_2_5", {P({3, 4})}, F(tg::pow(x[0], 2.5))},
        {"pow_neg_half", {P({3, 4})}, F(tg::pow(x[0], -0.5))},
        {"pow_tensor", {P({3, 4}), U({4})}, F(tg::pow(x[0], x[1]))},
        {"pow_tensor_bcast", {P({3, 1}), U({3, 4})}, F(tg::pow(x[0], x[1]))},
        {"pow_scalar_base", {U({3, 4})}, F(tg::pow(2.0, x[0]))},
        {"sqrt", {P({3, 4})}, F(tg::sqrt(x[0]))},
        {"sqrt_method", {PT({3, 4})}, F(x[0].sqrt())},
        {"exp", {U({3, 4})}, F(tg::exp(x[0]))},
        {"exp_method", {US({2, 3})}, F(x[0].exp())},
        {"log", {P({3, 4})}, F(tg::log(x[0]))},
        {"log_method", {PT({3, 4})}, F(x[0].log())},
        {"log1p", {U({3, 4})}, F(tg::log1p(x[0] * 0.9))},
        {"expm1", {UT({3, 4})}, F(tg::expm1(x[0]))},
        {"sin", {U({3, 4})}, F(tg::sin(x[0] * 2.0))},
        {"cos", {US({3, 4})}, F(tg::cos(x[0] * 2.0))},
        {"abs", {NZ({3, 4})}, F(tg::abs(x[0]))},
        {"abs_method", {NZ({5})}, F(x[0].abs())},
        {"clamp", {U({4, 5})}, F(tg::clamp(x[0], -0.5, 0.5))},
        {"clamp_min", {U({4, 5})}, F(tg::clamp_min(x[0], -0.3))},
        {"clamp_max", {U({4, 5})}, F(tg::clamp_max(x[0], 0.3))},
        {"maximum", {U({3, 4}), U({4})}, F(tg::maximum(x[0], x[1]))},
        {"maximum_same_shape", {U({3, 4}), UT({3, 4})}, F(tg::maximum(x[0], x[1]))},
        {"minimum", {U({3, 4}), U({3, 1})}, F(tg::minimum(x[0], x[1]))},
        {"where", {U({3, 4}), U({3, 4})}, F(tg::where(on(cond, x[0]), x[0], x[1]))},
        {"where_bcast", {U({3, 4}), U({4})}, F(tg::where(on(cond, x[0]), x[0], x[1]))},
        // LibTorch's method spellings (tensor_methods.hpp): x.add(y, alpha) is x + alpha·y
        {"add_alpha_method", {U({3, 4}), U({4})}, F(x[0].add(x[1], -0.5))},
        {"sub_alpha_method", {U({3, 4}), UT({3, 4})}, F(x[0].sub(x[1], 2.5))},
        {"where_method", {U({3, 4}), U({4})}, F(x[0].where(on(cond, x[0]), x[1]))},
        {"cumsum_inplace_method", {U({3, 4})}, F(tg::Tensor(x[0] * 1.5).cumsum_(1))},
        {"where_mask_of_input",
         {U({3, 4}), U({3, 4})},
         F(tg::where(tg::gt(x[0], 0.0), x[0], x[1]))},
        {"where_cond_of_other",
         {U({3, 4}), U({4})},
         F(tg::where(tg::gt(x[1], 0.0), x[0], x[1] * 2.0))},
        {"chain_rule_mix",
         {U({3, 4}), P({4})},
         F(tg::exp(x[0]) * x[1] / (x[1] + 1.0) - x[0] * x[0])},
        // zero-size dims (op_cases.hpp): broadcasting against an empty dim sums to zeros
        {"add_empty_bcast", {U({0, 4}), U({4})}, F(x[0] + x[1])},
        {"mul_empty_col_bcast", {U({3, 0}), U({3, 1})}, F(x[0] * x[1] - x[1])},
        {"div_empty", {U({2, 0, 3}), P({3})}, F(x[0] / x[1] + 2.0 / x[1].expand({2, 0, 3}))},
        {"pow_empty", {P({0, 3}), U({3})}, F(tg::pow(x[0], x[1]) + tg::pow(x[0], 1.5))},
        {"math_empty",
         {PT({4, 0})},
         F(tg::sqrt(x[0]) + tg::exp(x[0]) * tg::log(x[0]) - tg::abs(x[0]) +
           tg::sin(x[0]) * tg::cos(x[0]) + tg::log1p(x[0]) + tg::expm1(x[0]) - x[0] * 3.0)},
        {"clamp_maximum_empty",
         {US({3, 0}), U({1})},
         F(tg::clamp(x[0], -0.5, 0.5) + tg::maximum(x[0], x[1]) - tg::minimum(x[1], x[0]))},
        {"where_empty",
         {U({0, 4}), U({4})},
         F(tg::where(tg::gt(x[0], 0.0), x[0], x[1]) +
           tg::where(on(cond, x[1]).narrow(0, 0, 0), x[1], 1.0 - x[1]))},
        // LibTorch's spellings (issue 16)
        {"rsqrt", {P({3, 4})}, F(tg::rsqrt(x[0]))},
        {"rsqrt_method", {PT({3, 4})}, F(x[0].rsqrt())},
        {"square", {U({3, 4})}, F(tg::square(x[0]))},
        {"square_method", {US({3, 4})}, F(x[0].square() * 2.0)},
        {"trig_log_methods", {U({3, 4})}, F(x[0].sin() * x[0].cos() + x[0].log1p() - x[0].expm1())},
        // piecewise constant: zero gradients, recorded (the + x keeps a nonzero one)
        {"rounding_zero_grads",
         {U({3, 4})},
         F(tg::floor(x[0] * 3.0 + 0.25) + tg::ceil(x[0] * 3.0 + 0.25) +
           tg::round(x[0] * 3.0 + 0.25) + tg::trunc(x[0] * 3.0 + 0.25) + tg::sign(x[0]) + x[0])},
        {"rounding_methods",
         {UT({3, 4})},
         F(x[0].floor() * 0.5 + (x[0] * 2.0).ceil() + (x[0] * 5.0).round() + x[0].sign() * x[0])},
        {"rsqrt_square_empty", {P({0, 3})}, F(tg::rsqrt(x[0]) + tg::square(x[0]).floor())},
        // composed pointwise ops and the in-place spellings (tapegrad/inplace_ops.hpp), each
        // in-place row on a non-leaf whose history the op takes over
        {"reciprocal", {NZ({3, 4})}, F(tg::reciprocal(x[0]) + x[0].reciprocal())},
        {"frac_neg_methods", {U({3, 4})}, F(tg::frac(x[0] * 2.5) + x[0].neg() * x[0].trunc())},
        {"addcmul_bcast", {U({3, 4}), U({3, 1}), U({4})}, F(tg::addcmul(x[0], x[1], x[2], 0.5))},
        {"addcdiv", {U({3, 4}), U({3, 4}), NZ({3, 4})}, F(x[0].addcdiv(x[1], x[2], -2.0))},
        {"lerp_scalar", {U({3, 4}), UT({3, 4})}, F(tg::lerp(x[0], x[1], 0.3))},
        {"lerp_tensor", {U({3, 4}), U({4}), Q({3, 4})}, F(x[0].lerp(x[1], x[2]))},
        // std, nan_to_num, vector products, diag, trace (tapegrad/numeric_ops.hpp)
        {"std_overloads",
         {U({3, 4})},
         F(tg::std(x[0]) + x[0].std({1}, false, true).sum() + x[0].std(0).sum())},
        {"nan_to_num",
         {U({3, 4})},
         F(tg::nan_to_num(x[0] + on(nonfinite, x[0]), 0.5, 2.0, -2.0) +
           (x[0] + on(nonfinite, x[0])).nan_to_num().clamp(-4.0, 4.0))},
        {"predicates_count_nonzero",
         {U({3, 4})},
         F(tg::isnan(x[0] + on(nonfinite, x[0])).to(tg::kInt64) +
           (x[0] + on(nonfinite, x[0])).isinf().to(tg::kInt64) * 2 +
           tg::isfinite(x[0] + on(nonfinite, x[0])).to(tg::kInt64) * 4 +
           tg::count_nonzero(tg::gt(x[0], 0.0), 1).reshape({3, 1})),
         kValuesOnly},
        {"dot_mv_outer",
         {U({4}), U({4}), U({3, 4})},
         F(tg::outer(x[0], x[1]) + tg::dot(x[0], x[1]) + tg::mv(x[2], x[1]).sum() +
           x[1].ger(x[0]))},
        {"diag_trace",
         {U({3, 4}), U({3})},
         F(tg::diag(x[1], -1) + tg::diag(x[0]).sum() + tg::trace(x[0]) + x[0].diag(1).sum() * 2.0 +
           x[0].diag(-2).sum())},
        // tan, sinh, cosh, asin, acos, atan, log2, log10, exp2, erf, erfc (tapegrad/math_ops.hpp)
        {"trig_hyperbolic",
         {U({3, 4})},
         F(tg::tan(x[0]) + x[0].sinh() + tg::cosh(x[0]) * 2.0 + tg::asin(x[0] * 0.9) +
           (x[0] * 0.9).acos() * 3.0 + tg::atan(x[0] * 2.0))},
        {"log2_log10_exp2", {P({3, 4})}, F(tg::log2(x[0]) + x[0].log10() * 2.0 + tg::exp2(x[0]))},
        {"erf_erfc", {U({3, 4})}, F(tg::erf(x[0] * 2.0) + x[0].erfc() * 2.0)},
        {"atan2_hypot",
         {U({3, 4}), NZ({4})},
         F(tg::atan2(x[0], x[1]) + x[1].atan2(x[0] * 2.0) + tg::hypot(x[0], x[1]) +
           x[1].hypot(x[0]))},
        {"atan2_hypot_inplace",
         {U({3, 4}), NZ({3, 1})},
         F(inplace_on(x[0] * 1.0, [&x](tg::Tensor& t) { t.atan2_(x[1]); }) +
           inplace_on(x[0] * 2.0, [&x](tg::Tensor& t) { tg::hypot_(t, x[1]).atan2_(x[1]); }))},
        {"math_inplace",
         {U({3, 4})},
         F(inplace_on(x[0] * 0.5, [](tg::Tensor& t) { t.tan_().atan_().sinh_().asin_(); }) +
           inplace_on(x[0] * 1.0,
                      [](tg::Tensor& t) {
                          tg::exp2_(t.erf_().cosh_()).log2_().log10_();
                          t.acos_();
                      }) +
           inplace_on(x[0] * 1.0, [](tg::Tensor& t) { tg::erfc_(t); }))},
        {"inplace_saving_output",
         {NZ({3, 4})},
         F(inplace_on(x[0] * 1.0, [](tg::Tensor& t) { t.relu_(); }) +
           inplace_on(x[0] * 1.0, [](tg::Tensor& t) { t.sigmoid_().tanh_(); }) +
           inplace_on(x[0] * 0.5, [](tg::Tensor& t) { t.exp_().sqrt_().rsqrt_(); }) +
           inplace_on(x[0] * 1.0, [](tg::Tensor& t) { tg::expm1_(t); }))},
        {"inplace_reading_input",
         {P({3, 4})},
         F(inplace_on(x[0] * 1.0, [](tg::Tensor& t) { t.log_().abs_().neg_(); }) +
           inplace_on(x[0] * 1.0, [](tg::Tensor& t) { t.sin_().cos_().log1p_(); }) +
           inplace_on(x[0] * 1.0, [](tg::Tensor& t) { t.reciprocal_().square_().pow_(1.5); }) +
           inplace_on(x[0] * 1.0, [](tg::Tensor& t) { tg::clamp_(t, 0.3, 2.5).frac_(); }))},
        {"inplace_with_operands",
         {U({3, 4}), U({3, 4}), P({3, 4}), Q({4})},
         F(inplace_on(x[0] * 1.0,
                      [&](tg::Tensor& t) {
                          t.addcmul_(x[1], x[2], 0.5).addcdiv_(x[1], x[2], 2.0).lerp_(x[1], x[3]);
                          t.clamp_min_(-3.0).clamp_max_(3.0);
                      }) +
           inplace_on(x[2] * 1.0, [&](tg::Tensor& t) { t.pow_(x[2] * 0.5); }) +
           inplace_on(x[1] * 1.0,
                      [&](tg::Tensor& t) {
                          t.masked_fill_(tg::gt(x[3], 0.5), 0.25)
                              .masked_fill_(tg::lt(x[3], 0.2), x[3][0]);
                      }))},
    };
}

}  // namespace opcases
