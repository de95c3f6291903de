/// torch::nn::functional spellings beyond the activations and losses (issue 16): pad (every
/// mode), interpolate, normalize, one_hot and the normalisation and pooling functions with
/// LibTorch's options classes, and the padding and Upsample modules. Expected values of pad and
/// interpolate are LibTorch 1.13's output (scripts/libtorch_reference.cpp, resampling()). Gradients
/// and devices: the op table (tests/op_cases_shape.hpp, tests/op_cases_conv.hpp).
#define BOOST_TEST_MODULE test_functional
#include <boost/test/unit_test.hpp>
#include <sstream>
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
    BOOST_CHECK_THROW(F::pad(x, F::PadFuncOptions({1}).mode(tg::kReflect)), tg::shape_error);
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

BOOST_AUTO_TEST_CASE(pad_modes_as_libtorch) {
    namespace F = tg::nn::functional;
    const tg::Tensor x = tg::arange(1.0, 13.0, 1, tg::kFloat64).reshape({1, 2, 6});
    const tg::Tensor x2 = tg::arange(1.0, 13.0, 1, tg::kFloat64).reshape({1, 1, 3, 4});
    auto pad = [](const tg::Tensor& t, std::vector<int64_t> p, tg::PadMode m) {
        return F::pad(t, F::PadFuncOptions(std::move(p)).mode(m));
    };
    check_close(pad(x, {2, 3}, tg::kReflect),
                {3, 2, 1, 2, 3, 4, 5, 6, 5, 4, 3, 9, 8, 7, 8, 9, 10, 11, 12, 11, 10, 9});
    check_close(pad(x, {-1, 2}, tg::kReflect), {2, 3, 4, 5, 6, 5, 4, 8, 9, 10, 11, 12, 11, 10});
    check_close(pad(x, {-2, 1}, tg::kReplicate), {3, 4, 5, 6, 6, 9, 10, 11, 12, 12});
    check_close(pad(x, {-2, 3}, tg::kCircular), {3, 4, 5, 6, 3, 4, 5, 9, 10, 11, 12, 9, 10, 11});
    const tg::Tensor r = pad(x2, {1, 2, 2, 1}, tg::kReflect);
    BOOST_TEST(tg::shape_str(r.sizes()) == "[1,1,6,7]");
    check_close(r, {10, 9, 10, 11, 12, 11, 10, 6,  5, 6,  7,  8,  7,  6,  2, 1, 2, 3, 4, 3, 2,
                    6,  5, 6,  7,  8,  7,  6,  10, 9, 10, 11, 12, 11, 10, 6, 5, 6, 7, 8, 7, 6});
    check_close(pad(x2, {1, 2, 2, 1}, tg::kReplicate),
                {1, 1, 2, 3, 4, 4, 4, 1, 1, 2,  3,  4,  4,  4,  1, 1, 2,  3,  4,  4,  4,
                 5, 5, 6, 7, 8, 8, 8, 9, 9, 10, 11, 12, 12, 12, 9, 9, 10, 11, 12, 12, 12});
    check_close(pad(x2, {1, 2, 2, 1}, tg::kCircular),
                {8, 5, 6, 7, 8, 5, 6, 12, 9, 10, 11, 12, 9, 10, 4, 1, 2, 3, 4, 1, 2,
                 8, 5, 6, 7, 8, 5, 6, 12, 9, 10, 11, 12, 9, 10, 4, 1, 2, 3, 4, 1, 2});
    BOOST_TEST(pad(x, {1, 1}, tg::kReplicate).grad_fn() == nullptr);  // no grads: no node
    const tg::Tensor g = x2.detach().requires_grad_(true);
    BOOST_TEST(pad(g, {1, 1, 1, 1}, tg::kReflect).grad_fn()->name() == "ReflectionPad2DBackward0");
    // LibTorch's errors: reflect pads below the size, circular wraps at most once, 2-5 dims
    BOOST_CHECK_THROW(pad(x, {6, 0}, tg::kReflect), tg::shape_error);
    BOOST_CHECK_THROW(pad(x, {7, 0}, tg::kCircular), tg::shape_error);
    BOOST_CHECK_THROW(pad(x.reshape({12}), {1, 1}, tg::kReflect), tg::shape_error);
    BOOST_CHECK_THROW(pad(x2, {1, 1}, tg::kReflect), tg::shape_error);
    BOOST_CHECK_THROW(pad(x, {-4, -3}, tg::kReplicate), tg::shape_error);
}

BOOST_AUTO_TEST_CASE(interpolate_as_libtorch) {
    namespace F = tg::nn::functional;
    using IO = F::InterpolateFuncOptions;
    using Sz = std::vector<int64_t>;
    using Sf = std::vector<double>;
    const tg::Tensor x = tg::arange(1.0, 13.0, 1, tg::kFloat64).reshape({1, 2, 6});
    const tg::Tensor x2 =
        tg::arange(1.0, 13.0, 1, tg::kFloat64).reshape({1, 1, 3, 4}).requires_grad_(true);
    check_close(F::interpolate(x2, IO().size(Sz{5, 7})),
                {1, 1, 2, 2, 3, 3, 4, 1, 1, 2, 2, 3, 3,  4,  5,  5,  6, 6,
                 7, 7, 8, 5, 5, 6, 6, 7, 7, 8, 9, 9, 10, 10, 11, 11, 12});
    check_close(F::interpolate(x2, IO().scale_factor(Sf{1.5, 0.5})), {1, 3, 1, 3, 5, 7, 9, 11});
    check_close(F::interpolate(x, IO().size(Sz{4}).mode(tg::kNearestExact)),
                {1, 3, 4, 6, 7, 9, 10, 12});
    check_close(F::interpolate(x, IO().size(Sz{9}).mode(tg::kLinear).align_corners(false)),
                {1, 1.5, 2.1666666666666665, 2.8333333333333335, 3.5, 4.1666666666666661,
                 4.833333333333333, 5.5, 6, 7, 7.5, 8.1666666666666661, 8.8333333333333321, 9.5,
                 10.166666666666666, 10.833333333333334, 11.5, 12},
                1e-14, 1e-14);
    check_close(F::interpolate(x, IO().size(Sz{4}).mode(tg::kLinear)),
                {1.25, 2.75, 4.25, 5.75, 7.25, 8.75, 10.25, 11.75}, 1e-14, 1e-14);
    const tg::Tensor bl = F::interpolate(x2, IO().size(Sz{5, 7}).mode(tg::kBilinear));
    BOOST_TEST(bl.grad_fn()->name() == "UpsampleBilinear2DBackward0");
    check_close(bl.index({0, 0, 1}),
                {2.6000000000000001, 2.9571428571428569, 3.5285714285714285, 4.0999999999999996,
                 4.6714285714285708, 5.2428571428571429, 5.5999999999999996},
                1e-14, 1e-14);
    check_close(F::interpolate(x2, IO().size(Sz{5, 7}).mode(tg::kBilinear).align_corners(true))
                    .index({0, 0, 3}),
                {7, 7.5, 8, 8.5, 9, 9.5, 10});
    check_close(
        F::interpolate(x2, IO().scale_factor(Sf{1.5, 2.5}).mode(tg::kBilinear)).index({0, 0, 2}),
        {5.6666666666666661, 5.7666666666666666, 6.1666666666666661, 6.5666666666666664,
         6.9666666666666659, 7.3666666666666654, 7.7666666666666666, 8.1666666666666661,
         8.5666666666666664, 8.6666666666666661},
        1e-14, 1e-14);
    check_close(
        F::interpolate(x2.unsqueeze(0), IO().size(Sz{2, 2, 3}).mode(tg::kTrilinear)),
        {2.1666666666666665, 3.5, 4.833333333333333, 8.1666666666666661, 9.5, 10.833333333333332,
         2.1666666666666665, 3.5, 4.8333333333333339, 8.1666666666666661, 9.5, 10.833333333333332},
        1e-14, 1e-14);
    check_close(F::interpolate(x2, IO().size(Sz{2, 3}).mode(tg::kArea)),
                {3.5, 4.5, 5.5, 7.5, 8.5, 9.5}, 1e-14, 1e-14);
    (bl * tg::arange(35.0, tg::kFloat64).reshape({5, 7})).sum().backward();
    check_close(x2.grad(),
                {8.4571428571428591, 13.442857142857143, 18.700000000000006, 22.400000000000002,
                 44.614285714285721, 51.68571428571429, 57.600000000000016, 60.299999999999997,
                 70.857142857142875, 78.442857142857122, 83.700000000000017, 84.799999999999983},
                1e-13, 1e-13);
    // LibTorch's errors
    BOOST_CHECK_THROW(F::interpolate(x, IO().size(Sz{5}).mode(tg::kBilinear)), tg::shape_error);
    BOOST_CHECK_THROW(F::interpolate(x, IO().size(Sz{5}).scale_factor(Sf{2})), tg::value_error);
    BOOST_CHECK_THROW(F::interpolate(x, IO().size(Sz{5}).align_corners(true)), tg::value_error);
    BOOST_CHECK_THROW(F::interpolate(x, IO().size(Sz{5, 5})), tg::shape_error);
    BOOST_CHECK_THROW(F::interpolate(x, IO().size(Sz{0})), tg::shape_error);
    BOOST_CHECK_THROW(F::interpolate(x, IO().scale_factor(Sf{-1})), tg::value_error);
    const tg::Tensor bc = F::interpolate(x2, IO().size(Sz{5, 7}).mode(tg::kBicubic));
    BOOST_TEST(bc.grad_fn()->name() == "UpsampleBicubic2DBackward0");
    check_close(bc.index({0, 0, 0}),
                {0.51678352769679192, 0.89524562682215525, 1.5125925655976658, 2.1159999999999983,
                 2.7194074344023296, 3.3367543731778397, 3.7152164723032071},
                1e-13, 1e-13);
    check_close(bc.index({0, 0, 4}),
                {9.2847835276967903, 9.6632456268221549, 10.280592565597667, 10.884000000000004,
                 11.487407434402336, 12.10475437317784, 12.483216472303219},
                1e-13, 1e-13);
    check_close(
        F::interpolate(x2, IO().scale_factor(Sf{0.7, 1.5}).mode(tg::kBicubic).align_corners(true)),
        {1, 1.5039999999999991, 2.247999999999998, 2.7519999999999989, 3.4959999999999978, 4, 9,
         9.503999999999996, 10.247999999999994, 10.752000000000002, 11.495999999999993, 12},
        1e-13, 1e-13);
    BOOST_CHECK_THROW(F::interpolate(x, IO().size(Sz{5}).mode(tg::kBicubic)), tg::shape_error);
}

BOOST_AUTO_TEST_CASE(padding_and_upsample_modules) {
    namespace nn = tg::nn;
    namespace F = tg::nn::functional;
    const tg::Tensor x2 = tg::arange(1.0, 13.0, 1, tg::kFloat64).reshape({1, 1, 3, 4});
    nn::ReflectionPad2d reflect(nn::ReflectionPad2dOptions({1, 2, 2, 1}));
    check_close(reflect(x2), tg::pad(x2, {1, 2, 2, 1}, tg::kReflect));
    nn::ReplicationPad2d replicate(1);
    BOOST_TEST(tg::shape_str(replicate(x2).sizes()) == "[1,1,5,6]");
    check_close(replicate(x2).index({0, 0, 0}), {1, 1, 2, 3, 4, 4});
    nn::ZeroPad2d zero(nn::ZeroPad2dOptions({1, 0, 0, 0}));
    check_close(zero(x2).index({0, 0, 0}), {0, 1, 2, 3, 4});
    nn::ConstantPad1d constant(nn::ConstantPad1dOptions({0, 2}, -1.5));
    check_close(constant(x2.reshape({1, 3, 4})).index({0, 0}), {1, 2, 3, 4, -1.5, -1.5});
    nn::ReplicationPad3d r3(nn::ReplicationPad3dOptions(1));
    BOOST_TEST(tg::shape_str(r3(x2).sizes()) == "[1,3,5,6]");  // a 4-dim input is unbatched
    std::ostringstream os;
    os << *reflect << "; " << *constant;
    BOOST_TEST(os.str() ==
               "ReflectionPad2d(padding=[1, 2, 2, 1]); "
               "ConstantPad1d(padding=[0, 2], value=-1.5)");
    BOOST_CHECK_THROW(nn::ReflectionPad2d(nn::ReflectionPad2dOptions({1, 2})), tg::value_error);
    // a padded input learns through the module (gradients add back the copies)
    const tg::Tensor w = x2.detach().requires_grad_(true);
    replicate(w).sum().backward();
    check_close(w.grad(), {4, 2, 2, 4, 2, 1, 1, 2, 4, 2, 2, 4});
    nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}));
    BOOST_TEST(tg::shape_str(up(x2).sizes()) == "[1,1,6,8]");
    check_close(up(x2).index({0, 0, 1}), {1, 1, 2, 2, 3, 3, 4, 4});
    nn::Upsample bl(nn::UpsampleOptions()
                        .size(std::vector<int64_t>{5, 7})
                        .mode(tg::kBilinear)
                        .align_corners(false));
    check_close(bl(x2), F::interpolate(x2, F::InterpolateFuncOptions()
                                               .size(std::vector<int64_t>{5, 7})
                                               .mode(tg::kBilinear)
                                               .align_corners(false)));
}
