/// torch::nn::functional spellings beyond the activations and losses (issue 16): pad, normalize,
/// one_hot and the normalisation and pooling functions with LibTorch's options classes.
/// Gradients and devices: the op table (tests/op_cases_shape.hpp).
#define BOOST_TEST_MODULE test_functional
#include <boost/test/unit_test.hpp>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::from_values;

BOOST_AUTO_TEST_CASE(functional_pad_normalize_one_hot_and_norms) {
    namespace F = tg::nn::functional;
    const tg::Tensor x = from_values({1, 2, 3, 4, 5, 6}, {2, 3});
    const tg::Tensor p = F::pad(x, F::PadFuncOptions({1, 0, 0, 1}).mode(tg::kConstant).value(-1));
    BOOST_TEST(tg::shape_str(p.sizes()) == "[3,4]");
    check_close(p, {-1, 1, 2, 3, -1, 4, 5, 6, -1, -1, -1, -1});
    check_close(F::pad(x, F::PadFuncOptions({-1, 1})), {2, 3, 0, 5, 6, 0});  // crops, then pads
    BOOST_CHECK_THROW(F::pad(x, F::PadFuncOptions({1}).mode(tg::kReflect)), tg::value_error);
    BOOST_CHECK_THROW(F::pad(x, F::PadFuncOptions({1})), tg::shape_error);
    const tg::Tensor n = F::normalize(x, F::NormalizeFuncOptions().dim(1));
    check_close(n.norm(2, {1}), {1, 1}, 1e-12, 1e-12);
    check_close(F::normalize(tg::zeros({1, 2}, tg::kFloat64)), {0, 0});  // eps: no NaN
    const tg::Tensor oh = F::one_hot(tg::tensor(std::vector<int64_t>{2, 0}), 4);
    BOOST_TEST(oh.dtype() == tg::kInt64);
    check_close(oh, {0, 0, 1, 0, 1, 0, 0, 0});
    BOOST_TEST(tg::shape_str(tg::one_hot(tg::tensor(std::vector<int64_t>{1, 3})).sizes()) ==
               "[2,4]");
    BOOST_CHECK_THROW(tg::one_hot(tg::tensor(std::vector<int64_t>{5}), 3), tg::value_error);
    const tg::Tensor img = tg::arange(16.0, tg::kFloat64).reshape({1, 1, 4, 4});
    check_close(F::adaptive_avg_pool2d(img, F::AdaptiveAvgPool2dFuncOptions(2)),
                {2.5, 4.5, 10.5, 12.5});
    const tg::Tensor rm = tg::zeros({1}, tg::kFloat64), rv = tg::ones({1}, tg::kFloat64);
    check_close(F::batch_norm(img, rm, rv, F::BatchNormFuncOptions().eps(1e-300)), img);
    check_close(F::group_norm(img, F::GroupNormFuncOptions(1)).mean(), {0.0}, 1e-12, 1e-12);
}
