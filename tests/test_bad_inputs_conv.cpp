/// Bad-input catalogue (tests/bad_inputs.hpp): convolutions, pooling and normalisation, the ops
/// and the modules.
/// The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_conv
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;

namespace {
struct Fixtures {
    tg::Tensor x = tg::zeros({2, 4, 5, 5});  // float32 [N,C,H,W]
    tg::Tensor w = tg::zeros({6, 4, 3, 3});
    tg::Tensor b = tg::zeros({6});
    tg::Tensor wd = tg::zeros({6, 4, 3, 3}, tg::kFloat64);
    tg::Tensor xl = tg::zeros({2, 4, 5, 5}, tg::kInt64);
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(convolutions, Fixtures) {
    check_table(
        "Convolutions",
        {
            TG_BAD(tg::conv2d(x, tg::zeros({6, 3, 3, 3})), shape_error, "conv2d", "[2,4,5,5]",
                   "[6,3,3,3]", "4 input channels"),
            TG_BAD(tg::conv2d(x.reshape({8, 5, 5}), w), shape_error, "conv2d", "[8,5,5]", "4-D"),
            TG_BAD(tg::conv2d(x, w, tg::zeros({5})), shape_error, "conv2d", "bias [5]", "[6]"),
            TG_BAD(tg::conv2d(x, wd), dtype_error, "conv2d", "float64"),
            TG_BAD(tg::conv2d(xl, w), dtype_error, "conv2d", "int64"),
            TG_BAD(tg::conv2d(x, w, {}, 0), value_error, "conv2d", "stride"),
            TG_BAD(tg::conv2d(x, w, {}, 1, -1), value_error, "conv2d", "padding"),
            TG_BAD(tg::conv2d(x, w, {}, 1, 0, {1, 0}), value_error, "conv2d", "dilation"),
            TG_BAD(tg::conv2d(x, w, {}, {1, 1, 1}), shape_error, "conv2d", "stride", "3 values"),
            TG_BAD(tg::conv2d(x, tg::zeros({6, 4, 6, 6})), shape_error, "conv2d",
                   "larger than the padded input"),
            TG_BAD(tg::conv2d(x, tg::zeros({6, 2, 3, 3}), {}, 1, 0, 1, 3), shape_error, "conv2d",
                   "groups 3"),
            TG_BAD(tg::conv2d(x, w, {}, 1, 0, 1, 0), shape_error, "conv2d", "groups 0"),
            TG_BAD(tg::conv2d(x, w, {}, 2, "same"), value_error, "conv2d", "same", "stride 1"),
            TG_BAD(tg::conv2d(x, w, {}, 1, "full"), value_error, "conv2d", "\"full\""),
            TG_BAD(tg::conv2d(tg::zeros({1, 4, 5, 5}).expand({int64_t(1) << 55, 4, 5, 5}), w),
                   shape_error, "conv2d"),
            TG_BAD(tg::conv1d(x, w), shape_error, "conv1d", "3-D"),
            TG_BAD(tg::conv1d(tg::zeros({2, 4, 5}), tg::zeros({3, 4, 2}), {}, {1, 2}), shape_error,
                   "conv1d", "one value"),
            TG_BAD(tg::unfold(tg::zeros({4, 5, 5}), 2), shape_error, "unfold", "[4,5,5]", "4-D"),
            TG_BAD(tg::unfold(x, 0), value_error, "unfold", "kernel_size"),
            TG_BAD(tg::unfold(x, 6), shape_error, "unfold", "larger than the padded input"),
            TG_BAD(tg::unfold(xl, 2), dtype_error, "unfold", "int64"),
            TG_BAD(tg::fold(tg::zeros({2, 7, 4}), 3, 2), shape_error, "fold", "[2,7,4]",
                   "multiple of the kernel's 4 taps"),
            TG_BAD(tg::fold(tg::zeros({2, 8, 5}), 3, 2), shape_error, "fold", "2x2 = 4 windows",
                   "the input 5"),
            TG_BAD(tg::fold(tg::zeros({2, 8, 4}), {3, 0}, 2), value_error, "fold", "output_size"),
            TG_BAD(tg::fold(tg::zeros({8, 4}), 3, 2), shape_error, "fold", "3-D"),
            TG_BAD(tg::conv_transpose2d(x, tg::zeros({3, 2, 3, 3})), shape_error,
                   "conv_transpose2d", "input has 4 channels"),
            TG_BAD(tg::conv_transpose2d(x, w, {}, 1, 0, 1), value_error, "conv_transpose2d",
                   "output_padding"),
            TG_BAD(tg::conv_transpose2d(x, tg::zeros({4, 2, 3, 3}), {}, 1, 4), shape_error,
                   "conv_transpose2d", "output would be"),
            TG_BAD(tg::conv_transpose2d(x, tg::zeros({4, 2, 3, 3}), tg::zeros({3})), shape_error,
                   "conv_transpose2d", "bias [3]"),
        });
}

BOOST_FIXTURE_TEST_CASE(pooling, Fixtures) {
    check_table(
        "Pooling",
        {
            TG_BAD(tg::max_pool2d(tg::zeros({5, 5}), 2), shape_error, "max_pool2d", "[5,5]"),
            TG_BAD(tg::max_pool2d(x, 0), value_error, "max_pool2d", "kernel_size"),
            TG_BAD(tg::max_pool2d(x, 2, 0), value_error, "max_pool2d", "stride"),
            TG_BAD(tg::max_pool2d(x, 2, 2, 2), value_error, "max_pool2d", "half the kernel"),
            TG_BAD(tg::max_pool2d(x, 6), shape_error, "max_pool2d", "larger"),
            TG_BAD(tg::max_pool2d(x, {2, 2, 2}), shape_error, "max_pool2d", "3 values"),
            TG_BAD(tg::max_pool2d(xl, 2), dtype_error, "max_pool2d", "int64"),
            TG_BAD(tg::avg_pool2d(x, 3, 1, 2), value_error, "avg_pool2d", "half the kernel"),
            TG_BAD(tg::avg_pool2d(x, -1), value_error, "avg_pool2d", "kernel_size"),
            TG_BAD(tg::adaptive_avg_pool2d(x, 0), value_error, "adaptive_avg_pool2d",
                   "output_size"),
            TG_BAD(tg::adaptive_avg_pool2d(tg::zeros({1, 2, 0, 3}), 1), shape_error,
                   "adaptive_avg_pool2d", "empty"),
        });
}

BOOST_FIXTURE_TEST_CASE(modules, Fixtures) {
    namespace nn = tg::nn;
    nn::Conv2d conv(nn::Conv2dOptions(4, 6, 3));
    check_table(
        "Convolution and pooling modules",
        {
            TG_BAD(nn::Conv2d(nn::Conv2dOptions(0, 6, 3)), shape_error, "Conv2d(0, 6)"),
            TG_BAD(nn::Conv2d(nn::Conv2dOptions(4, 6, 3).groups(4)), shape_error, "Conv2d(4, 6)",
                   "groups 4"),
            TG_BAD(nn::Conv2d(nn::Conv2dOptions(4, 6, {3, 0})), value_error, "Conv2d",
                   "kernel_size"),
            TG_BAD(nn::Conv1d(nn::Conv1dOptions(4, 6, {3, 3})), shape_error, "Conv1d", "2 values"),
            TG_BAD(conv(tg::zeros({2, 3, 5, 5})), shape_error, "Conv2d(4, 6)", "[2,3,5,5]",
                   "4 channels"),
            TG_BAD(conv(tg::zeros({2, 4, 5})), shape_error, "Conv2d(4, 6)", "[2,4,5]"),
            TG_BAD(conv(tg::zeros({2, 4, 5, 5}, tg::kFloat64)), dtype_error, "Conv2d(4, 6)",
                   "float64"),
            TG_BAD(conv(tg::Tensor()), value_error, "Conv2d(4, 6)", "undefined"),
            TG_BAD(nn::MaxPool2d(nn::MaxPool2dOptions(2).padding(-1)), value_error, "MaxPool2d",
                   "padding"),
            TG_BAD(nn::AvgPool2d(nn::AvgPool2dOptions(0)), value_error, "AvgPool2d", "kernel_size"),
            TG_BAD(nn::AdaptiveAvgPool2d({1, 2, 3}), shape_error, "AdaptiveAvgPool2d", "3 values"),
        });
}

BOOST_FIXTURE_TEST_CASE(padding_and_resampling, Fixtures) {
    const tg::Tensor x3 = tg::zeros({2, 4, 6});  // [N, C, L]
    check_table(
        "Padding and resampling",
        {
            TG_BAD(tg::constant_pad_nd(x, {1, 1, 1}), shape_error, "pad", "3 padding sizes"),
            TG_BAD(tg::constant_pad_nd(x, {-3, -3}), shape_error, "pad", "negative size"),
            TG_BAD(tg::pad(x3, {6, 0}, tg::kReflect), shape_error, "pad", "reflect", "(6, 0)",
                   "dim 2", "below the dim's size"),
            TG_BAD(tg::pad(x3, {7, 0}, tg::kCircular), shape_error, "pad", "circular",
                   "more than once"),
            TG_BAD(tg::pad(x, {1, 1}, tg::kReplicate), shape_error, "pad", "replicate",
                   "[2,4,5,5]"),
            TG_BAD(tg::pad(tg::zeros({6}), {1, 1}, tg::kReflect), shape_error, "pad", "[6]"),
            TG_BAD(tg::pad(x3, {-4, -3}, tg::kReplicate), shape_error, "pad", "(-4, -3)",
                   "no elements"),
            TG_BAD(tg::interpolate(x3, {5}, {}, tg::kBilinear), shape_error, "interpolate",
                   "bilinear", "[2,4,6]", "4-dim"),
            TG_BAD(tg::interpolate(x3, {5}, {2.0}), value_error, "interpolate",
                   "exactly one of size and scale_factor"),
            TG_BAD(tg::interpolate(x3, {5}, {}, tg::kNearest, true), value_error, "interpolate",
                   "align_corners"),
            TG_BAD(tg::interpolate(x, {5}, {}), shape_error, "interpolate", "size has 1",
                   "expected 2"),
            TG_BAD(tg::interpolate(x3, {0}, {}), shape_error, "interpolate", "output size 0"),
            TG_BAD(tg::interpolate(x3, {}, {-1.0}), value_error, "interpolate", "scale_factor"),
            TG_BAD(tg::interpolate(x3, {}, {0.1}), shape_error, "interpolate", "output size 0"),
            TG_BAD(tg::interpolate(xl, {3, 3}, {}, tg::kBilinear), dtype_error, "interpolate",
                   "int64"),
            TG_BAD(tg::interpolate(x3, {3}, {}, tg::kBicubic), shape_error, "interpolate",
                   "bicubic", "4-dim"),
            TG_BAD(tg::interpolate(tg::zeros({2, 3}), {3}, {}), shape_error, "interpolate",
                   "[2,3]"),
            TG_BAD(tg::nn::ReflectionPad2d(tg::nn::ReflectionPad2dOptions({1, 2})), value_error,
                   "ReflectionPad2d", "4 sizes"),
            TG_BAD(tg::nn::Upsample()(x3), value_error, "interpolate", "exactly one"),
        });
}

BOOST_FIXTURE_TEST_CASE(normalisation, Fixtures) {
    namespace nn = tg::nn;
    const tg::Tensor c4 = tg::zeros({4}), c3 = tg::zeros({3});
    const tg::Tensor g4 = tg::zeros({4}).requires_grad_();  // a statistic that requires grad
    nn::BatchNorm2d bn(4);
    nn::GroupNorm gn(nn::GroupNormOptions(2, 4));
    check_table(
        "Normalisation",
        {
            TG_BAD(tg::batch_norm(x, {}, {}, c3, c4, true, 0.1, 1e-5, false), shape_error,
                   "batch_norm", "running_mean [3]", "[2,4,5,5]", "4 channels"),
            TG_BAD(tg::batch_norm(x, c3, {}, c4, c4, false, 0.1, 1e-5, false), shape_error,
                   "batch_norm", "weight [3]"),
            TG_BAD(tg::batch_norm(x, {}, {}, {}, {}, false, 0.1, 1e-5, false), value_error,
                   "batch_norm", "needs running_mean"),
            TG_BAD(tg::batch_norm(x, {}, {}, c4, c4, true, 1.5, 1e-5, false), value_error,
                   "batch_norm", "momentum"),
            TG_BAD(tg::batch_norm(x, {}, {}, c4, c4, true, 0.1, 0, false), value_error,
                   "batch_norm", "eps"),
            TG_BAD(tg::batch_norm(tg::zeros({1, 4}), {}, {}, c4, c4, true, 0.1, 1e-5, false),
                   shape_error, "batch_norm", "1 value per channel"),
            TG_BAD(tg::batch_norm(tg::zeros({4}), {}, {}, c4, c4, false, 0.1, 1e-5, false),
                   shape_error, "batch_norm", "[4]", "2 dims"),
            TG_BAD(tg::batch_norm(xl, {}, {}, {}, {}, true, 0.1, 1e-5, false), dtype_error,
                   "batch_norm", "int64"),
            TG_BAD(tg::batch_norm(x, {}, {}, c4.to(tg::kFloat64), c4, false, 0.1, 1e-5, false),
                   dtype_error, "batch_norm", "float64"),
            TG_BAD(tg::batch_norm(x, {}, {}, g4, c4, true, 0.1, 1e-5, false), value_error,
                   "batch_norm", "require grad"),
            TG_BAD(tg::group_norm(x, 3), shape_error, "group_norm", "[2,4,5,5]", "3 groups"),
            TG_BAD(tg::group_norm(x, 0), shape_error, "group_norm", "0 groups"),
            TG_BAD(tg::group_norm(x, 2, c3), shape_error, "group_norm", "weight [3]"),
            TG_BAD(tg::feature_dropout(tg::zeros({4}), 0.5, true), shape_error, "feature_dropout",
                   "[4]"),
            TG_BAD(tg::feature_dropout(x, 1.5, true), value_error, "feature_dropout",
                   "probability"),
            TG_BAD(nn::BatchNorm2d(0), shape_error, "BatchNorm2d(0)", "num_features"),
            TG_BAD(nn::BatchNorm1d(nn::BatchNormOptions(4).eps(0)), value_error, "BatchNorm1d",
                   "eps"),
            TG_BAD(bn(tg::zeros({2, 4, 5})), shape_error, "BatchNorm2d", "4-D", "[2,4,5]"),
            TG_BAD(bn(tg::zeros({2, 3, 5, 5})), shape_error, "BatchNorm2d(4)", "[2,3,5,5]",
                   "3 channels"),
            TG_BAD(nn::GroupNorm(nn::GroupNormOptions(3, 4)), value_error, "GroupNorm(3, 4)",
                   "divide"),
            TG_BAD(gn(tg::zeros({2, 6, 5})), shape_error, "GroupNorm", "6 channels", "expected 4"),
            TG_BAD(nn::Dropout2d(-0.5), value_error, "Dropout2d", "[0, 1)"),
            TG_BAD(nn::Dropout2d(0.5)(tg::zeros({2, 4})), shape_error, "Dropout2d", "[2,4]"),
        });
}
