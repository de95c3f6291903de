/// Bad-input catalogue (tests/bad_inputs.hpp): the 3-D and transposed 1-D/3-D convolutions, the
/// 1-D, 3-D, adaptive, LP, fractional pools, unpooling, pixel shuffle, grid_sample and
/// affine_grid, the ops and the modules. The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_spatial
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;

namespace {
struct Fixtures {
    tg::Tensor v = tg::zeros({2, 4, 3, 5, 5});  // float32 [N,C,D,H,W]
    tg::Tensor w3 = tg::zeros({6, 4, 2, 3, 3});
    tg::Tensor s = tg::zeros({2, 4, 9});  // float32 [N,C,L]
    tg::Tensor x = tg::zeros({2, 4, 6, 6});
    tg::Tensor vl = tg::zeros({2, 4, 3, 5, 5}, tg::kInt64);
    tg::Tensor idx = tg::zeros({2, 4, 3, 3}, tg::kInt64);
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(convolutions_3d, Fixtures) {
    check_table(
        "3-D and transposed convolutions",
        {
            TG_BAD(tg::conv3d(v, tg::zeros({6, 3, 2, 3, 3})), shape_error, "conv3d", "[2,4,3,5,5]",
                   "[6,3,2,3,3]", "4 input channels"),
            TG_BAD(tg::conv3d(x, w3), shape_error, "conv3d", "[2,4,6,6]", "5-D"),
            TG_BAD(tg::conv3d(v, w3, {}, {1, 2}), shape_error, "conv3d", "stride", "2 values",
                   "expected 1 or 3"),
            TG_BAD(tg::conv3d(v, tg::zeros({6, 4, 4, 3, 3})), shape_error, "conv3d",
                   "4x3x3 dilated", "larger than the padded input (3x5x5)"),
            TG_BAD(tg::conv3d(vl, w3), dtype_error, "conv3d", "int64"),
            TG_BAD(tg::conv3d(v, w3, tg::zeros({5})), shape_error, "conv3d", "bias [5]"),
            TG_BAD(tg::conv3d(v, w3, {}, 2, "same"), value_error, "conv3d", "same", "stride 1"),
            TG_BAD(tg::conv_transpose3d(v, tg::zeros({3, 2, 2, 2, 2})), shape_error,
                   "conv_transpose3d", "input has 4 channels"),
            TG_BAD(tg::conv_transpose3d(v, tg::zeros({4, 2, 2, 2, 2}), {}, 1, 0, {0, 1, 0}),
                   value_error, "conv_transpose3d", "output_padding"),
            TG_BAD(tg::conv_transpose1d(s, tg::zeros({4, 2, 3}), {}, 1, 6), shape_error,
                   "conv_transpose1d", "output would be"),
            TG_BAD(tg::conv_transpose1d(x, tg::zeros({4, 2, 3})), shape_error, "conv_transpose1d",
                   "3-D"),
        });
}

BOOST_FIXTURE_TEST_CASE(pools, Fixtures) {
    check_table(
        "1-D, 3-D, adaptive, LP, fractional pooling and unpooling",
        {
            TG_BAD(tg::max_pool1d(x, 2), shape_error, "max_pool1d", "[2,4,6,6]", "[N,C,L]"),
            TG_BAD(tg::max_pool3d(v, {2, 2}), shape_error, "max_pool3d", "2 values"),
            TG_BAD(tg::max_pool3d(v, 4), shape_error, "max_pool3d", "larger than the padded"),
            TG_BAD(tg::max_pool3d(v, 2, 2, 2), value_error, "max_pool3d", "half the kernel"),
            TG_BAD(tg::max_pool3d(vl, 2), dtype_error, "max_pool3d", "int64"),
            TG_BAD(tg::avg_pool1d(s, 0), value_error, "avg_pool1d", "kernel_size"),
            TG_BAD(tg::avg_pool3d(v, 2, {}, 0, false, true, 0), value_error, "avg_pool3d",
                   "divisor"),
            TG_BAD(tg::adaptive_avg_pool3d(v, {2, 0, 2}), value_error, "adaptive_avg_pool3d",
                   "output_size"),
            TG_BAD(tg::adaptive_max_pool1d(tg::zeros({2, 3, 0}), 2), shape_error,
                   "adaptive_max_pool1d", "empty"),
            TG_BAD(tg::adaptive_max_pool2d(tg::zeros({4, 9}), 2), shape_error,
                   "adaptive_max_pool2d", "[4,9]", "[N,C,H,W]"),
            TG_BAD(tg::lp_pool2d(x, 2, 7), shape_error, "avg_pool2d", "larger"),
            TG_BAD(tg::max_unpool2d(x.narrow(2, 0, 3).narrow(3, 0, 3), idx + 36, 2), value_error,
                   "max_unpool2d", "invalid max index"),
            TG_BAD(tg::max_unpool2d(x, idx, 2), shape_error, "max_unpool2d", "[2,4,6,6]",
                   "indices [2,4,3,3]"),
            TG_BAD(tg::max_unpool2d(x.narrow(2, 0, 3).narrow(3, 0, 3), idx.to(tg::kFloat32), 2),
                   shape_error, "max_unpool2d", "float32", "int64"),
            TG_BAD(tg::max_unpool2d(x.narrow(2, 0, 3).narrow(3, 0, 3), idx, 2, {}, 0,
                                    std::vector<int64_t>{9, 6}),
                   value_error, "max_unpool2d", "output_size dim 0 is 9", "between 4 and 8"),
            TG_BAD(tg::max_unpool3d(v, vl, 2, {}, 0, std::vector<int64_t>{1, 2}), shape_error,
                   "max_unpool3d", "3 or 5 elements"),
            TG_BAD(tg::fractional_max_pool2d(x, 2, {}), value_error, "fractional_max_pool2d",
                   "output_size or an output_ratio"),
            TG_BAD(tg::fractional_max_pool2d(x, 3, 5), shape_error, "fractional_max_pool2d",
                   "pool size 3", "input size 6"),
            TG_BAD(tg::fractional_max_pool2d(x, 2, {}, {1.5}), value_error, "fractional_max_pool2d",
                   "output_ratio"),
            TG_BAD(tg::fractional_max_pool3d(v, 2, 2, {}, tg::zeros({2, 4, 2})), shape_error,
                   "fractional_max_pool3d", "_random_samples [2,4,2]", "[2, 4, 3]"),
        });
}

BOOST_FIXTURE_TEST_CASE(sampling, Fixtures) {
    check_table(
        "Pixel shuffle, grid_sample and affine_grid",
        {
            TG_BAD(tg::pixel_shuffle(x, 3), value_error, "pixel_shuffle", "upscale_factor 3"),
            TG_BAD(tg::pixel_shuffle(tg::zeros({4, 4}), 2), shape_error, "pixel_shuffle", "[4,4]"),
            TG_BAD(tg::pixel_unshuffle(s.reshape({4, 3, 6}), 4), value_error, "pixel_unshuffle",
                   "downscale_factor 4"),
            TG_BAD(tg::grid_sample(x, tg::zeros({2, 3, 3, 3})), shape_error, "grid_sample",
                   "[2,4,6,6]", "grid [2,3,3,3]"),
            TG_BAD(tg::grid_sample(x, tg::zeros({3, 3, 3, 2})), shape_error, "grid_sample",
                   "grid [3,3,3,2]"),
            TG_BAD(tg::grid_sample(x, tg::zeros({2, 3, 3, 2}, tg::kFloat64)), dtype_error,
                   "grid_sample", "float64"),
            TG_BAD(tg::grid_sample(v, tg::zeros({2, 1, 3, 3, 3}), tg::kBicubic), value_error,
                   "grid_sample", "kBicubic", "4-D"),
            TG_BAD(tg::grid_sample(x, tg::zeros({2, 3, 3, 2}), tg::kArea), value_error,
                   "grid_sample", "mode"),
            TG_BAD(tg::grid_sample(x, tg::zeros({2, 3, 3, 2}), tg::kBilinear, tg::kReflect),
                   value_error, "grid_sample", "padding_mode"),
            TG_BAD(tg::affine_grid(tg::zeros({2, 2, 3}), {2, 1, 4, 4, 4}), shape_error,
                   "affine_grid", "theta [2,2,3]", "size [2,1,4,4,4]"),
            TG_BAD(tg::affine_grid(tg::zeros({2, 2, 3}, tg::kInt64), {2, 1, 4, 4}), dtype_error,
                   "affine_grid", "floating"),
        });
}

BOOST_FIXTURE_TEST_CASE(modules, Fixtures) {
    namespace nn = tg::nn;
    nn::Conv3d conv(nn::Conv3dOptions(4, 6, 3));
    nn::MaxUnpool2d unpool(2);
    check_table(
        "3-D convolution, pooling and spatial modules",
        {
            TG_BAD(conv(x), shape_error, "Conv3d(4, 6)", "[2,4,6,6]", "expected 4 channels"),
            TG_BAD(conv(s), shape_error, "Conv3d(4, 6)", "[2,4,9]", "5 dims"),
            TG_BAD(conv(tg::zeros({2, 3, 4, 4, 4})), shape_error, "Conv3d(4, 6)", "4 channels"),
            TG_BAD(nn::Conv3d(nn::Conv3dOptions(4, 6, {3, 3})), shape_error, "Conv3d",
                   "kernel_size", "2 values"),
            TG_BAD(nn::Conv3d(nn::Conv3dOptions(4, 6, 3).padding(tg::kSame).stride(2)), value_error,
                   "Conv3d", "padding='same'"),
            TG_BAD(nn::ConvTranspose1d(nn::ConvTranspose1dOptions(4, 6, 3).groups(4)), shape_error,
                   "ConvTranspose1d(4, 6)", "groups 4"),
            TG_BAD(nn::MaxPool1d(nn::MaxPool1dOptions({2, 2})), shape_error, "MaxPool1d",
                   "kernel_size", "2 values"),
            TG_BAD(nn::AvgPool3d(nn::AvgPool3dOptions(2).padding(-1)), value_error, "AvgPool3d",
                   "padding"),
            TG_BAD(nn::AdaptiveMaxPool3d({1, 2}), shape_error, "AdaptiveMaxPool3d", "2 values"),
            TG_BAD(nn::LPPool2d(nn::LPPool2dOptions(2, 0)), value_error, "LPPool2d", "kernel_size"),
            TG_BAD(unpool(x, tg::zeros({2, 4, 6, 6}, tg::kInt64), std::vector<int64_t>{1}),
                   shape_error, "max_unpool2d", "2 or 4 elements"),
            TG_BAD(nn::FractionalMaxPool2d(
                       nn::FractionalMaxPool2dOptions(2).output_size(3).output_ratio(0.5)),
                   value_error, "FractionalMaxPool2d", "either an output size"),
            TG_BAD(nn::Fold(nn::FoldOptions({4, 0}, 2)), value_error, "Fold", "output_size"),
            TG_BAD(nn::Unfold(nn::UnfoldOptions({2, 2, 2})), shape_error, "Unfold", "kernel_size"),
            TG_BAD(nn::PixelShuffle(2)(tg::zeros({1, 3, 2, 2})), value_error, "pixel_shuffle",
                   "upscale_factor 2"),
        });
}
