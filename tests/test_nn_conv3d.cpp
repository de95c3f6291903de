/// The 3-D convolution, the transposed 1-D and 3-D convolutions and the 1-D, 3-D and adaptive
/// pools against LibTorch 1.13 in float64 (forward, input and parameter gradients to 1e-12;
/// values recorded by scripts/libtorch_reference.cpp into nn_conv3d_reference.hpp).
#define BOOST_TEST_MODULE test_nn_conv3d
#include <boost/test/unit_test.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "nn_conv3d_reference.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;
namespace nn = tg::nn;

namespace {

/// sin(0.37 i + 0.1 k) over `shape`, a float64 leaf (the reference program's inputs).
Tensor input(const tg::Shape& shape, int k) {
    tg::NoGradGuard no_grad;
    Tensor t =
        (tg::arange(tg::numel_of(shape), tg::kFloat64) * 0.37 + 0.1 * k).sin().reshape(shape);
    return t.detach().requires_grad_(true);
}

const std::vector<double>& lt_ref(const std::string& name) {
    const auto& v = conv3d_ref::values();
    auto it = v.find(name);
    if (it == v.end())
        BOOST_FAIL("no reference values named " << name);
    return it->second;
}

/// y and the gradients of sum(y * cos(0.21 i)) with respect to `leaves` against LibTorch's.
void check_backward(const std::string& name, const Tensor& y, const std::vector<Tensor>& leaves) {
    BOOST_TEST_CONTEXT(name) {
        check_close(y, lt_ref(name), 1e-12, 1e-12);
        const Tensor up = (tg::arange(y.numel(), tg::kFloat64) * 0.21).cos().reshape(y.sizes());
        (y * up).sum().backward();
        for (size_t i = 0; i < leaves.size(); ++i)
            BOOST_TEST_CONTEXT("gradient of input " << i) {
                check_close(leaves[i].grad(), lt_ref(name + "_grad" + std::to_string(i)), 1e-12,
                            1e-12);
            }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(conv3d_matches_libtorch) {
    Tensor x = input({2, 2, 3, 5, 4}, 0), w = input({3, 2, 2, 3, 3}, 1), b = input({3}, 2);
    Tensor y = tg::conv3d(x, w, b, {1, 2, 1}, {1, 0, 1}, {1, 1, 2});
    BOOST_TEST((y.sizes() == tg::Shape{2, 3, 4, 2, 2}));
    check_backward("conv3d", y, {x, w, b});
    Tensor xg = input({1, 4, 3, 3, 3}, 0), wg = input({4, 2, 2, 3, 2}, 1);
    check_backward("conv3d_same_groups", tg::conv3d(xg, wg, {}, 1, tg::kSame, 1, 2), {xg, wg});
}

BOOST_AUTO_TEST_CASE(transposed_convolutions_match_libtorch) {
    Tensor x1 = input({2, 2, 5}, 0), w1 = input({2, 3, 3}, 1), b1 = input({3}, 2);
    check_backward("conv_transpose1d", tg::conv_transpose1d(x1, w1, b1, 2, 1, 1, 1, 2),
                   {x1, w1, b1});
    Tensor x3 = input({1, 4, 2, 3, 2}, 0), w3 = input({4, 1, 2, 3, 2}, 1), b3 = input({2}, 2);
    check_backward("conv_transpose3d",
                   tg::conv_transpose3d(x3, w3, b3, {2, 1, 2}, {0, 1, 1}, {1, 0, 1}, 2),
                   {x3, w3, b3});
}

BOOST_AUTO_TEST_CASE(max_pools_match_libtorch) {
    Tensor p1 = input({2, 3, 9}, 0);
    auto [y1, i1] = tg::max_pool1d_with_indices(p1, 3, 2, 1, 2, true);
    check_close(i1, lt_ref("max_pool1d_indices"), 0, 0);
    check_backward("max_pool1d", y1, {p1});
    Tensor p3 = input({1, 2, 4, 5, 6}, 0);
    auto [y3, i3] = tg::max_pool3d_with_indices(p3, {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, {1, 1, 2});
    check_close(i3, lt_ref("max_pool3d_indices"), 0, 0);
    check_backward("max_pool3d", y3, {p3});
}

BOOST_AUTO_TEST_CASE(avg_pools_match_libtorch) {
    Tensor a1 = input({2, 2, 7}, 0);
    check_backward("avg_pool1d", tg::avg_pool1d(a1, 3, 2, 1, true, false), {a1});
    Tensor a3 = input({1, 2, 4, 5, 5}, 0);
    check_backward("avg_pool3d", tg::avg_pool3d(a3, {2, 3, 3}, {1, 2, 2}, {1, 1, 0}, true), {a3});
    Tensor a3d = input({1, 2, 4, 5, 5}, 1);
    check_backward("avg_pool3d_divisor", tg::avg_pool3d(a3d, 2, 1, 1, false, true, 7), {a3d});
    Tensor a2d = input({1, 2, 4, 5}, 1);
    check_backward("avg_pool2d_divisor", tg::avg_pool2d(a2d, 3, 2, 1, false, true, 4), {a2d});
}

BOOST_AUTO_TEST_CASE(adaptive_pools_match_libtorch) {
    Tensor aa1 = input({2, 2, 7}, 0);
    check_backward("adaptive_avg_pool1d", tg::adaptive_avg_pool1d(aa1, 3), {aa1});
    Tensor aa3 = input({1, 2, 3, 5, 7}, 0);
    check_backward("adaptive_avg_pool3d", tg::adaptive_avg_pool3d(aa3, {2, 3, 4}), {aa3});
    Tensor am1 = input({2, 2, 7}, 0);
    auto r1 = tg::adaptive_max_pool1d(am1, 3);
    check_close(r1.second, lt_ref("adaptive_max_pool1d_indices"), 0, 0);
    check_backward("adaptive_max_pool1d", r1.first, {am1});
    Tensor am2 = input({1, 2, 5, 7}, 0);
    auto r2 = tg::adaptive_max_pool2d(am2, {3, 4});
    check_close(r2.second, lt_ref("adaptive_max_pool2d_indices"), 0, 0);
    check_backward("adaptive_max_pool2d", r2.first, {am2});
    Tensor am3 = input({1, 2, 3, 5, 7}, 0);
    auto r3 = tg::adaptive_max_pool3d(am3, {2, 3, 4});
    check_close(r3.second, lt_ref("adaptive_max_pool3d_indices"), 0, 0);
    check_backward("adaptive_max_pool3d", r3.first, {am3});
}

BOOST_AUTO_TEST_CASE(lp_pools_match_libtorch) {
    Tensor l1 = input({2, 3, 7}, 0);
    check_backward("lp_pool1d", tg::lp_pool1d(tg::abs(l1) + 0.5, 2, 3, 2), {l1});
    Tensor l2 = input({1, 2, 5, 5}, 0);
    check_backward("lp_pool2d", tg::lp_pool2d(tg::abs(l2) + 0.5, 3, {2, 3}, {2, 1}, true), {l2});
}

BOOST_AUTO_TEST_CASE(max_unpools_match_libtorch) {
    // overlapping windows repeat indices: the last write stays, every element gets dy gathered
    // at its index (LibTorch's backward, not the derivative)
    const Tensor i1 = tg::max_pool1d_with_indices(input({2, 3, 9}, 3), 3, 1).second;
    Tensor u1 = input({2, 3, 7}, 0);
    check_backward("max_unpool1d_repeated", tg::max_unpool1d(u1, i1, 3, 1), {u1});
    const Tensor i2 = tg::max_pool2d_with_indices(input({2, 2, 4, 6}, 3), 2).second;
    Tensor u2 = input({2, 2, 2, 3}, 0);
    check_backward("max_unpool2d_output_size",
                   tg::max_unpool2d(u2, i2, 2, {}, 0, std::vector<int64_t>{2, 2, 5, 7}), {u2});
    const Tensor i3 = tg::max_pool3d_with_indices(input({1, 2, 4, 4, 6}, 3), 2, {1, 2, 2}).second;
    Tensor u3 = input({1, 2, 3, 2, 3}, 0);
    check_backward("max_unpool3d_repeated", tg::max_unpool3d(u3, i3, 2, {1, 2, 2}), {u3});
}

BOOST_AUTO_TEST_CASE(fractional_max_pools_match_libtorch) {
    Tensor f2 = input({2, 2, 7, 6}, 0);
    const Tensor s2 = (tg::arange(8, tg::kFloat64) * 0.13 + 0.05).reshape({2, 2, 2});
    auto r2 = tg::fractional_max_pool2d(f2, 2, {4, 3}, {}, s2);
    check_close(r2.second, lt_ref("fractional_max_pool2d_indices"), 0, 0);
    check_backward("fractional_max_pool2d", r2.first, {f2});
    Tensor f3 = input({1, 2, 5, 6, 5}, 0);
    const Tensor s3 = (tg::arange(6, tg::kFloat64) * 0.15 + 0.02).reshape({1, 2, 3});
    auto r3 = tg::fractional_max_pool3d(f3, {2, 3, 2}, {3, 3, 2}, {}, s3);
    check_close(r3.second, lt_ref("fractional_max_pool3d_indices"), 0, 0);
    check_backward("fractional_max_pool3d", r3.first, {f3});
    // the samples drawn as LibTorch draws them: rand({N, C, 2}) of the input's dtype
    tg::manual_seed(7);
    auto rr = tg::fractional_max_pool2d(input({2, 3, 8, 9}, 1), {3, 2}, {}, {0.5, 0.6});
    check_close(rr.second, lt_ref("fractional_max_pool2d_seeded_indices"), 0, 0);
    check_close(tg::rand({2}, tg::kFloat64), lt_ref("fractional_max_pool2d_seeded_after"), 0, 0);
}

BOOST_AUTO_TEST_CASE(pixel_shuffles_and_affine_grids_match_libtorch) {
    Tensor ps = input({2, 8, 2, 3}, 0);
    check_backward("pixel_shuffle", tg::pixel_shuffle(ps, 2), {ps});
    Tensor pu = input({2, 1, 2, 4, 6}, 0);
    check_backward("pixel_unshuffle", tg::pixel_unshuffle(pu, 2), {pu});
    Tensor th = input({2, 2, 3}, 0);
    check_backward("affine_grid_2d", tg::affine_grid(th, {2, 3, 4, 5}), {th});
    Tensor th3 = input({1, 3, 4}, 1);
    check_backward("affine_grid_3d_corners", tg::affine_grid(th3, {1, 1, 2, 3, 4}, true), {th3});
}

BOOST_AUTO_TEST_CASE(grid_sample_matches_libtorch) {
    struct Case {
        const char* name;
        tg::InterpolateMode mode;
        tg::GridPadding pad;
        bool corners;
        double scale;
    };
    const Case cases[] = {
        {"grid_sample_bilinear", tg::kBilinear, tg::kZeros, false, 1.2},
        {"grid_sample_bilinear_border_corners", tg::kBilinear, tg::kBorder, true, 1.3},
        {"grid_sample_bilinear_reflection", tg::kBilinear, tg::kReflection, false, 2.7},
        {"grid_sample_bilinear_reflection_corners", tg::kBilinear, tg::kReflection, true, 2.7},
        {"grid_sample_nearest", tg::kNearest, tg::kZeros, false, 1.1},
        {"grid_sample_nearest_border", tg::kNearest, tg::kBorder, true, 1.5},
        {"grid_sample_bicubic", tg::kBicubic, tg::kZeros, false, 1.2},
        {"grid_sample_bicubic_border", tg::kBicubic, tg::kBorder, false, 1.4},
        {"grid_sample_bicubic_reflection_corners", tg::kBicubic, tg::kReflection, true, 1.6}};
    for (const Case& c : cases) {
        Tensor in = input({2, 2, 4, 5}, 0), g = input({2, 3, 4, 2}, 1);
        check_backward(c.name, tg::grid_sample(in, g * c.scale, c.mode, c.pad, c.corners), {in, g});
    }
    Tensor in3 = input({1, 2, 3, 4, 3}, 0), g3 = input({1, 2, 2, 3, 3}, 1);
    check_backward("grid_sample_trilinear", tg::grid_sample(in3, g3 * 1.2), {in3, g3});
    Tensor in3b = input({1, 1, 3, 3, 4}, 0), g3b = input({1, 2, 2, 2, 3}, 1);
    check_backward("grid_sample_3d_nearest_reflection",
                   tg::grid_sample(in3b, g3b * 1.5, tg::kNearest, tg::kReflection, true),
                   {in3b, g3b});
}

namespace {

/// The module's parameter `name` as float32 values (LibTorch's initial draws are float32).
void check_init(const Tensor& p, const std::string& name) {
    BOOST_TEST_CONTEXT(name) {
        check_close(p, lt_ref(name), 0, 0);
    }
}

std::string printed(const nn::Module& m) {
    std::ostringstream os;
    m.pretty_print(os);
    return os.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(conv_modules_draw_and_compute_as_libtorch) {
    tg::manual_seed(3);
    nn::Conv3d c3(nn::Conv3dOptions(2, 3, {2, 3, 2}).stride({1, 2, 1}).padding(1));
    check_init(c3->weight, "Conv3d_init_weight");
    check_init(c3->bias, "Conv3d_init_bias");
    nn::ConvTranspose1d t1(
        nn::ConvTranspose1dOptions(2, 3, 3).stride(2).padding(1).output_padding(1));
    check_init(t1->weight, "ConvTranspose1d_init_weight");
    check_init(t1->bias, "ConvTranspose1d_init_bias");
    nn::ConvTranspose3d t3(
        nn::ConvTranspose3dOptions(4, 2, {2, 2, 3}).groups(2).stride(2).bias(false));
    check_init(t3->weight, "ConvTranspose3d_init_weight");
    BOOST_TEST(!t3->bias.defined());
    nn::Conv3d cr(nn::Conv3dOptions(1, 2, 2).padding(1).padding_mode(tg::kReplicate));
    for (nn::Module* m : std::initializer_list<nn::Module*>{c3.get(), t1.get(), t3.get(), cr.get()})
        m->to(tg::kFloat64);
    Tensor x3 = input({2, 2, 3, 4, 3}, 0);
    check_backward("Conv3d", c3(x3), {x3, c3->weight, c3->bias});
    Tensor x1 = input({2, 2, 4}, 0);
    check_backward("ConvTranspose1d", t1(x1), {x1, t1->weight, t1->bias});
    Tensor xt = input({1, 4, 2, 2, 2}, 0);
    check_backward("ConvTranspose3d", t3(xt), {xt, t3->weight});
    Tensor xr = input({1, 1, 2, 3, 3}, 0);
    check_backward("Conv3d_replicate", cr(xr), {xr, cr->weight, cr->bias});
    // unbatched input, as LibTorch's
    BOOST_TEST((c3(input({2, 3, 4, 3}, 0)).sizes() == tg::Shape{3, 4, 2, 4}));
}

BOOST_AUTO_TEST_CASE(fractional_modules_draw_their_samples_as_libtorch) {
    tg::manual_seed(11);
    nn::FractionalMaxPool2d fm(nn::FractionalMaxPool2dOptions(2).output_size({5, 4}));
    const Tensor xf = input({2, 2, 8, 7}, 0);
    check_close(fm->forward_with_indices(xf).second, lt_ref("FractionalMaxPool2d_first"), 0, 0);
    check_close(fm->forward_with_indices(xf).second, lt_ref("FractionalMaxPool2d_second"), 0, 0);
    nn::FractionalMaxPool3d fm3(nn::FractionalMaxPool3dOptions({2, 1, 2}).output_size({2, 3, 2}));
    check_close(fm3->forward_with_indices(input({2, 4, 5, 4}, 0)).second,
                lt_ref("FractionalMaxPool3d_unbatched"), 0, 0);
}

BOOST_AUTO_TEST_CASE(modules_print_as_libtorch) {
    // LibTorch 1.13's strings (scripts/libtorch_reference.cpp prints them too), without the
    // torch::nn:: prefix, as every tapegrad module prints
    const std::pair<std::shared_ptr<nn::Module>, std::string> cases[] = {
        {nn::Conv3d(nn::Conv3dOptions(1, 32, 3).padding(1)).ptr(),
         "Conv3d(1, 32, kernel_size=[3, 3, 3], stride=[1, 1, 1], padding=[1, 1, 1])"},
        {nn::Conv3d(nn::Conv3dOptions(1, 32, {3, 2, 1}).stride({1, 2, 1}).bias(false).dilation(2))
             .ptr(),
         "Conv3d(1, 32, kernel_size=[3, 2, 1], stride=[1, 2, 1], dilation=[2, 2, 2], bias=false)"},
        {nn::Conv3d(nn::Conv3dOptions(1, 1, 2).padding(tg::kValid)).ptr(),
         "Conv3d(1, 1, kernel_size=[2, 2, 2], stride=[1, 1, 1], padding='valid')"},
        {nn::ConvTranspose1d(nn::ConvTranspose1dOptions(2, 3, 3).stride(2).output_padding(1)).ptr(),
         "ConvTranspose1d(2, 3, kernel_size=3, stride=2, output_padding=1)"},
        {nn::ConvTranspose3d(nn::ConvTranspose3dOptions(2, 4, {3, 2, 1})
                                 .stride(2)
                                 .output_padding(1)
                                 .groups(2)
                                 .dilation(2)
                                 .bias(false))
             .ptr(),
         "ConvTranspose3d(2, 4, kernel_size=[3, 2, 1], stride=[2, 2, 2], dilation=[2, 2, 2], "
         "output_padding=[1, 1, 1], groups=2, bias=false)"},
        {nn::MaxPool1d(2).ptr(),
         "MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=false)"},
        {nn::MaxPool3d(nn::MaxPool3dOptions(2).stride(1)).ptr(),
         "MaxPool3d(kernel_size=[2, 2, 2], stride=[1, 1, 1], padding=[0, 0, 0], "
         "dilation=[1, 1, 1], ceil_mode=false)"},
        {nn::AvgPool1d(2).ptr(), "AvgPool1d(kernel_size=2, stride=2, padding=0)"},
        {nn::AvgPool3d(nn::AvgPool3dOptions(2).divisor_override(3)).ptr(),
         "AvgPool3d(kernel_size=[2, 2, 2], stride=[2, 2, 2], padding=[0, 0, 0])"},
        {nn::AvgPool2d(2).ptr(), "AvgPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0])"},
        {nn::AdaptiveAvgPool1d(3).ptr(), "AdaptiveAvgPool1d(output_size=3)"},
        {nn::AdaptiveAvgPool3d(3).ptr(), "AdaptiveAvgPool3d(output_size=[3, 3, 3])"},
        {nn::AdaptiveMaxPool1d(3).ptr(), "AdaptiveMaxPool1d(output_size=3)"},
        {nn::AdaptiveMaxPool2d(3).ptr(), "AdaptiveMaxPool2d(output_size=[3, 3])"},
        {nn::AdaptiveMaxPool3d(3).ptr(), "AdaptiveMaxPool3d(output_size=[3, 3, 3])"},
        {nn::AdaptiveAvgPool2d(3).ptr(), "AdaptiveAvgPool2d(output_size=[3, 3])"},
        {nn::LPPool1d(nn::LPPool1dOptions(2, 3)).ptr(),
         "LPPool1d(norm_type=2, kernel_size=3, stride=3, ceil_mode=false)"},
        {nn::LPPool2d(nn::LPPool2dOptions(1.5, {2, 3}).stride(1).ceil_mode(true)).ptr(),
         "LPPool2d(norm_type=1.5, kernel_size=[2, 3], stride=[1, 1], ceil_mode=true)"},
        {nn::MaxUnpool1d(2).ptr(), "MaxUnpool1d(kernel_size=2, stride=2, padding=0)"},
        {nn::MaxUnpool2d(nn::MaxUnpool2dOptions(2).stride(1).padding(1)).ptr(),
         "MaxUnpool2d(kernel_size=[2, 2], stride=[1, 1], padding=[1, 1])"},
        {nn::MaxUnpool3d(2).ptr(),
         "MaxUnpool3d(kernel_size=[2, 2, 2], stride=[2, 2, 2], padding=[0, 0, 0])"},
        {nn::FractionalMaxPool2d(nn::FractionalMaxPool2dOptions(2).output_size(5)).ptr(),
         "FractionalMaxPool2d()"},
        {nn::FractionalMaxPool3d(nn::FractionalMaxPool3dOptions(2).output_ratio(0.5)).ptr(),
         "FractionalMaxPool3d()"},
        {nn::Fold(nn::FoldOptions({4, 5}, {2, 2})).ptr(),
         "Fold(output_size=[4, 5], kernel_size=[2, 2], dilation=[1, 1], padding=[0, 0], "
         "stride=[1, 1])"},
        {nn::Unfold(nn::UnfoldOptions({2, 3}).padding(1)).ptr(),
         "Unfold(kernel_size=[2, 3], dilation=[1, 1], padding=[1, 1], stride=[1, 1])"},
        {nn::PixelShuffle(2).ptr(), "PixelShuffle(upscale_factor=2)"},
        {nn::PixelUnshuffle(2).ptr(), "PixelUnshuffle(downscale_factor=2)"},
    };
    for (const auto& [m, expected] : cases)
        BOOST_TEST(printed(*m) == expected);
}

BOOST_AUTO_TEST_CASE(pool_modules_and_functional_forms_compute_the_ops) {
    namespace F = tg::nn::functional;
    const Tensor x1 = input({2, 3, 9}, 0), x2 = input({2, 2, 6, 7}, 1),
                 x3 = input({1, 2, 4, 6, 5}, 2);
    auto same = [](const Tensor& a, const Tensor& b) { check_close(a, values_of(b), 0, 0); };
    same(nn::MaxPool1d(nn::MaxPool1dOptions(3).stride(2).padding(1))(x1),
         tg::max_pool1d(x1, 3, 2, 1));
    same(F::max_pool3d(x3, F::MaxPool3dFuncOptions(2).dilation({1, 2, 1})),
         tg::max_pool3d(x3, 2, {}, 0, {1, 2, 1}));
    same(std::get<1>(F::max_pool2d_with_indices(x2, F::MaxPool2dFuncOptions(3).stride(2))),
         tg::max_pool2d_with_indices(x2, 3, 2).second);
    same(nn::AvgPool3d(nn::AvgPool3dOptions(2).stride(1).divisor_override(3))(x3),
         tg::avg_pool3d(x3, 2, 1, 0, false, true, 3));
    same(F::avg_pool1d(x1, F::AvgPool1dFuncOptions(4).ceil_mode(true)),
         tg::avg_pool1d(x1, 4, {}, 0, true));
    same(nn::AdaptiveAvgPool1d(4)(x1), tg::adaptive_avg_pool1d(x1, 4));
    same(F::adaptive_avg_pool3d(x3, F::AdaptiveAvgPool3dFuncOptions({2, 3, 3})),
         tg::adaptive_avg_pool3d(x3, {2, 3, 3}));
    same(nn::AdaptiveMaxPool2d({3, 2})->forward_with_indices(x2).second,
         tg::adaptive_max_pool2d(x2, {3, 2}).second);
    same(F::adaptive_max_pool3d(x3, 2), tg::adaptive_max_pool3d(x3, 2).first);
    const Tensor pos = tg::abs(x2) + 0.1;
    same(nn::LPPool2d(nn::LPPool2dOptions(2, 2))(pos), tg::lp_pool2d(pos, 2, 2));
    same(F::lp_pool1d(tg::abs(x1), F::LPPool1dFuncOptions(3, 2)), tg::lp_pool1d(tg::abs(x1), 3, 2));
    auto [y, i] = tg::max_pool2d_with_indices(x2, 2);
    same(nn::MaxUnpool2d(2)(y, i, std::vector<int64_t>{6, 7}),
         tg::max_unpool2d(y, i, 2, {}, 0, std::vector<int64_t>{6, 7}));
    same(F::max_unpool2d(
             y, i, F::MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{2, 2, 7, 8})),
         tg::max_unpool2d(y, i, 2, {}, 0, std::vector<int64_t>{7, 8}));
    same(nn::Unfold(nn::UnfoldOptions(2).stride(2))(x2), tg::unfold(x2, 2, 1, 0, 2));
    const Tensor cols = tg::unfold(x2, 3, 1, 1);
    same(nn::Fold(nn::FoldOptions({6, 7}, 3).padding(1))(cols), tg::fold(cols, {6, 7}, 3, 1, 1));
    same(nn::PixelShuffle(2)(input({1, 8, 2, 3}, 0)), tg::pixel_shuffle(input({1, 8, 2, 3}, 0), 2));
    same(F::pixel_unshuffle(x2.narrow(3, 0, 6), 2), tg::pixel_unshuffle(x2.narrow(3, 0, 6), 2));
    const Tensor grid = input({2, 3, 3, 2}, 3);
    same(
        F::grid_sample(x2, grid, F::GridSampleFuncOptions().mode(tg::kNearest).align_corners(true)),
        tg::grid_sample(x2, grid, tg::kNearest, tg::kZeros, true));
    const Tensor w3 = input({4, 2, 2, 2, 2}, 4);
    same(F::conv3d(x3, w3, F::Conv3dFuncOptions().padding(tg::kSame)),
         tg::conv3d(x3, w3, {}, 1, tg::kSame));
    same(F::conv_transpose3d(x3, w3.transpose(0, 1).contiguous(),
                             F::ConvTranspose3dFuncOptions().stride(2).output_padding(1)),
         tg::conv_transpose3d(x3, w3.transpose(0, 1).contiguous(), {}, 2, 0, 1));
}

BOOST_AUTO_TEST_CASE(bad_module_options_name_the_layer) {
    check_throws<tg::value_error>([] { nn::MaxPool3d(nn::MaxPool3dOptions(2).stride(0)); },
                                  {"MaxPool3d", "stride"});
    check_throws<tg::shape_error>(
        [] {
            nn::AvgPool1d(nn::AvgPool1dOptions({2, 2}));
        },
        {"AvgPool1d", "kernel_size"});
    check_throws<tg::value_error>(
        [] { nn::AvgPool3d(nn::AvgPool3dOptions(2).divisor_override(0)); },
        {"AvgPool3d", "divisor_override"});
    check_throws<tg::value_error>([] { nn::FractionalMaxPool2d(2); },
                                  {"FractionalMaxPool2d", "output size"});
    check_throws<tg::value_error>(
        [] { nn::FractionalMaxPool3d(nn::FractionalMaxPool3dOptions(2).output_ratio(1.5)); },
        {"FractionalMaxPool3d", "output_ratio"});
    check_throws<tg::value_error>(
        [] { nn::ConvTranspose3d(nn::ConvTranspose3dOptions(1, 2, 3).padding_mode(tg::kReflect)); },
        {"ConvTranspose3d", "padding_mode"});
    check_throws<tg::shape_error>(
        [] {
            nn::Conv3d(nn::Conv3dOptions(2, 4, {3, 3}));
        },
        {"Conv3d", "kernel_size"});
    check_throws<tg::shape_error>(
        [] {
            nn::Conv3d(nn::Conv3dOptions(2, 4, 3))(tg::ones({1, 2, 5, 5}));
        },
        {"Conv3d"});
}

namespace {

/// A small 3-D CNN on video-like input [N, 1, T, H, W]: (Conv3d -> ReLU -> MaxPool3d) x2 ->
/// Flatten -> Linear (no BatchNorm3d: not built yet).
nn::Sequential video_cnn(int64_t flat) {
    return nn::Sequential(nn::Conv3d(nn::Conv3dOptions(1, 4, 3).padding(1)), nn::ReLU(),
                          nn::MaxPool3d(2), nn::Conv3d(nn::Conv3dOptions(4, 8, 3).padding(1)),
                          nn::ReLU(), nn::MaxPool3d(2), nn::Flatten(), nn::Linear(flat, 2));
}

/// n clips of t frames h x w: a 4x4 bright square crossing the frame left to right (class 0)
/// or right to left (class 1), at a row that varies by clip, over noise.
std::pair<Tensor, Tensor> moving_squares(int64_t n, int64_t t, int64_t h, int64_t w) {
    const int64_t frame = h * w, clip = t * frame;
    std::vector<double> xs = random_values(n * clip, 21, -0.2, 0.2);
    std::vector<int64_t> ys(size_t(n), 0);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t cls = i % 2, row = (i * 5) % (h - 4);
        ys[size_t(i)] = cls;
        for (int64_t f = 0; f < t; ++f) {
            const int64_t x0 = (w - 4) * f / (t - 1), col = cls == 0 ? x0 : w - 4 - x0;
            for (int64_t r = row; r < row + 4; ++r)
                for (int64_t c = col; c < col + 4; ++c)
                    xs[size_t(i * clip + f * frame + r * w + c)] += 1.0;
        }
    }
    return {from_values(xs, {n, 1, t, h, w}).to(tg::kFloat32), tg::tensor(ys)};
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_small_3d_cnn_learns_from_16x32x32_clips) {
    tg::manual_seed(5);
    nn::Sequential net = video_cnn(8 * 4 * 8 * 8);
    const auto [x, y] = moving_squares(8, 16, 32, 32);
    tg::optim::Adam opt(net->parameters(), tg::optim::AdamOptions(0.01));
    double first = 0, last = 0;
    for (int step = 0; step < 15; ++step) {
        opt.zero_grad();
        const Tensor loss = tg::cross_entropy(net(x), y);
        loss.backward();
        opt.step();
        (step == 0 ? first : last) = loss.item<double>();
    }
    BOOST_TEST(last < 0.3 * first);
    BOOST_TEST(tg::eq(tg::argmax(net(x), 1), y).sum().item<int64_t>() == 8);
}

BOOST_AUTO_TEST_CASE(the_3d_cnn_on_opencl_matches_the_cpu) {
    if (!tg::is_available(tg::Device::opencl(0))) {
        BOOST_TEST_MESSAGE("no OpenCL device: skipped");
        return;
    }
    tg::manual_seed(6);
    nn::Sequential cpu = video_cnn(8 * 1 * 2 * 2);
    tg::manual_seed(6);
    nn::Sequential dev = video_cnn(8 * 1 * 2 * 2);
    dev->to(tg::Device::opencl(0));
    const auto [x, y] = moving_squares(2, 4, 8, 8);
    const Tensor lc = tg::cross_entropy(cpu(x), y);
    const Tensor ld =
        tg::cross_entropy(dev(x.to(tg::Device::opencl(0))), y.to(tg::Device::opencl(0)));
    lc.backward();
    ld.backward();
    BOOST_TEST(std::abs(lc.item<double>() - ld.item<double>()) < 1e-5);
    const auto pc = cpu->parameters(), pd = dev->parameters();
    for (size_t i = 0; i < pc.size(); ++i)
        check_close(pd[i].grad().to(tg::Device::cpu()), pc[i].grad(), 1e-5, 1e-4);
}
