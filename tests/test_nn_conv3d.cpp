/// The 3-D convolution, the transposed 1-D and 3-D convolutions and the 1-D, 3-D and adaptive
/// pools against LibTorch 1.13 in float64 (forward, input and parameter gradients to 1e-12;
/// values recorded by scripts/libtorch_reference.cpp into nn_conv3d_reference.hpp).
#define BOOST_TEST_MODULE test_nn_conv3d
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "nn_conv3d_reference.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;

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
