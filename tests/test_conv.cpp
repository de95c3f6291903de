/// Convolutions and pooling against direct loops written here from the definitions (the op table
/// checks their gradients against finite differences, not their values), the gather adjoint
/// against the scatter one (Note [Gathering adjoints] in backend/device_common/window.hpp), and
/// what a convolution keeps alive.
#define BOOST_TEST_MODULE test_conv
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;

namespace {

struct Geom {
    int64_t sh, sw, ph, pw, dh, dw, groups;
};

/// y[n,o,i,j] = b[o] + Σ_{c in o's group, a, b'} w[o,c,a,b'] x[n, g*Cg + c, i*sh - ph + a*dh,
/// j*sw - pw + b'*dw], directly.
std::vector<double> direct_conv(const Tensor& x, const Tensor& w, const Tensor& b, Geom g,
                                int64_t& oh, int64_t& ow) {
    const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t O = w.size(0), Cg = w.size(1), kh = w.size(2), kw = w.size(3);
    oh = (H + 2 * g.ph - g.dh * (kh - 1) - 1) / g.sh + 1;
    ow = (W + 2 * g.pw - g.dw * (kw - 1) - 1) / g.sw + 1;
    const std::vector<double> xv = values_of(x), wv = values_of(w);
    const std::vector<double> bv = b.defined() ? values_of(b) : std::vector<double>(size_t(O), 0);
    std::vector<double> y(size_t(N * O * oh * ow));
    const int64_t Og = O / g.groups;
    (void)C;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                    double s = bv[size_t(o)];
                    for (int64_t c = 0; c < Cg; ++c)
                        for (int64_t a = 0; a < kh; ++a)
                            for (int64_t q = 0; q < kw; ++q) {
                                const int64_t yy = i * g.sh - g.ph + a * g.dh;
                                const int64_t xx = j * g.sw - g.pw + q * g.dw;
                                if (yy < 0 || yy >= H || xx < 0 || xx >= W)
                                    continue;
                                const int64_t ci = (o / Og) * Cg + c;
                                s += wv[size_t(((o * Cg + c) * kh + a) * kw + q)] *
                                     xv[size_t(((n * C + ci) * H + yy) * W + xx)];
                            }
                    y[size_t(((n * O + o) * oh + i) * ow + j)] = s;
                }
    return y;
}

}  // namespace

BOOST_AUTO_TEST_CASE(conv2d_matches_the_direct_sum) {
    const std::vector<std::pair<Geom, std::vector<int64_t>>> cases = {
        // geometry, {N, C, H, W, O, kh, kw}
        {{1, 1, 0, 0, 1, 1, 1}, {2, 3, 5, 6, 4, 3, 3}},
        {{2, 1, 1, 2, 1, 1, 1}, {1, 2, 7, 6, 3, 3, 2}},
        {{1, 2, 2, 1, 2, 1, 1}, {2, 2, 6, 7, 2, 2, 3}},
        {{2, 2, 1, 1, 1, 1, 2}, {2, 4, 5, 5, 6, 3, 3}},
        {{3, 1, 0, 1, 1, 2, 3}, {1, 3, 8, 5, 3, 2, 2}},
        // 272 positions: one sample's GEMMs at a time, the bias inside the GEMM (no groups) or
        // filled in first (groups)
        {{1, 1, 1, 1, 1, 1, 1}, {2, 3, 17, 16, 4, 3, 3}},
        {{1, 1, 1, 1, 1, 1, 2}, {2, 4, 17, 16, 6, 3, 3}},
    };
    int seed = 1;
    for (const auto& [g, s] : cases) {
        const Tensor x = make_const({s[0], s[1], s[2], s[3]}, seed++).to(tg::kFloat64);
        const Tensor w = make_const({s[4], s[1] / g.groups, s[5], s[6]}, seed++).to(tg::kFloat64);
        const Tensor b = make_const({s[4]}, seed++).to(tg::kFloat64);
        int64_t oh = 0, ow = 0;
        const std::vector<double> want = direct_conv(x, w, b, g, oh, ow);
        const Tensor y = tg::conv2d(x, w, b, {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.groups);
        BOOST_TEST((y.sizes() == tg::Shape{s[0], s[4], oh, ow}));
        check_close(y, want, 1e-12, 1e-12);
        // float32 too
        check_close(tg::conv2d(x.to(tg::kFloat32), w.to(tg::kFloat32), b.to(tg::kFloat32),
                               {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.groups),
                    want, 1e-5, 1e-5);
    }
}

BOOST_AUTO_TEST_CASE(conv_transpose2d_is_the_adjoint_of_conv2d) {
    // <conv2d(u, w), v> == <u, conv_transpose2d(v, w)> for every u, v
    const Tensor w = make_const({4, 3, 3, 2}, 7).to(tg::kFloat64);  // [O=4, C=3, 3, 2]
    const Tensor u = make_const({2, 3, 7, 6}, 8).to(tg::kFloat64);
    const Tensor y = tg::conv2d(u, w, {}, {2, 1}, {1, 1}, {1, 2});
    const Tensor v = make_const(y.sizes(), 9).to(tg::kFloat64);
    // conv_transpose2d's weight is [C_in, C_out, kh, kw] = conv2d's [O, C, kh, kw]
    const Tensor ut = tg::conv_transpose2d(v, w, {}, {2, 1}, {1, 1}, {0, 0}, 1, {1, 2});
    BOOST_TEST((ut.sizes() == u.sizes()));
    const double lhs = (y * v).sum().item<double>(), rhs = (u * ut).sum().item<double>();
    BOOST_TEST(std::abs(lhs - rhs) < 1e-12 * (1 + std::abs(lhs)));
}

BOOST_AUTO_TEST_CASE(unfold_and_fold_are_im2col_and_col2im) {
    // x [1,2,3,3] = 0..17; 2x2 windows: col [1, 2*4, 4], row c*4 + a*2 + b, column i*2 + j
    std::vector<double> v(18);
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = double(i);
    const Tensor x = from_values(v, {1, 2, 3, 3});
    const Tensor col = tg::unfold(x, 2);
    BOOST_TEST((col.sizes() == tg::Shape{1, 8, 4}));
    std::vector<double> want(32);
    for (int c = 0; c < 2; ++c)
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
                for (int i = 0; i < 2; ++i)
                    for (int j = 0; j < 2; ++j)
                        want[size_t(((c * 4 + a * 2 + b) * 4) + i * 2 + j)] =
                            v[size_t(c * 9 + (i + a) * 3 + j + b)];
    check_close(col, want, 0, 0);
    // fold adds each entry back where unfold read it: ones count the windows over each element
    check_close(tg::fold(tg::ones({1, 4, 4}, tg::kFloat64), {3, 3}, 2), {1, 2, 1, 2, 4, 2, 1, 2, 1},
                0, 0);
    // padding reads zeros, and fold drops what lands in the padding
    const Tensor padded = tg::unfold(x, 3, 1, 1);
    BOOST_TEST((padded.sizes() == tg::Shape{1, 18, 9}));
    BOOST_TEST(values_of(padded)[0] == 0.0);  // tap (0,0) of window (0,0): padding
    check_close(tg::fold(tg::unfold(x, 3, 1, 1), 3, 3, 1, 1),
                values_of(x * tg::fold(tg::unfold(tg::ones({1, 2, 3, 3}, tg::kFloat64), 3, 1, 1), 3,
                                       3, 1, 1)),
                1e-12, 1e-12);
}

BOOST_AUTO_TEST_CASE(same_padding_keeps_the_size) {
    for (int64_t k : {1, 2, 3, 4, 5}) {
        const Tensor x = make_const({1, 2, 6, 5}, 10 + k);
        const Tensor w = make_const({3, 2, k, k}, 20 + k);
        const Tensor y = tg::conv2d(x, w, {}, 1, "same");
        BOOST_TEST((y.sizes() == tg::Shape{1, 3, 6, 5}));
        // odd kernels: exactly padding (k-1)/2
        if (k % 2 == 1)
            check_close(y, tg::conv2d(x, w, {}, 1, (k - 1) / 2), 1e-6, 1e-6);
    }
}

/// Max and average pooling against loops over each window.
BOOST_AUTO_TEST_CASE(pooling_matches_the_windows) {
    const Tensor x = make_const({2, 3, 7, 6}, 30).to(tg::kFloat64);
    const std::vector<double> xv = values_of(x);
    const int64_t kh = 3, kw = 2, sh = 2, sw = 1, ph = 1, pw = 1;
    // ceil_mode: rows (7+2-3)/2 -> 3 + 1 = 4 (ceil gives 4 as well), columns (6+2-2)/1+1 = 7
    const auto [y, idx] = tg::max_pool2d_with_indices(x, {kh, kw}, {sh, sw}, {ph, pw}, 1, true);
    const Tensor a = tg::avg_pool2d(x, {kh, kw}, {sh, sw}, {ph, pw}, true, false);
    const Tensor ai = tg::avg_pool2d(x, {kh, kw}, {sh, sw}, {ph, pw}, true, true);
    BOOST_TEST_REQUIRE((y.sizes() == tg::Shape{2, 3, 4, 7}));
    const std::vector<double> yv = values_of(y), iv = values_of(idx), av = values_of(a),
                              aiv = values_of(ai);
    size_t e = 0;
    for (int64_t p = 0; p < 6; ++p)
        for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j < 7; ++j, ++e) {
                double best = -std::numeric_limits<double>::infinity(), sum = 0;
                int64_t at = -1, count = 0;
                const int64_t y0 = i * sh - ph, x0 = j * sw - pw;
                const int64_t padded =
                    (std::min(y0 + kh, 7 + ph) - y0) * (std::min(x0 + kw, 6 + pw) - x0);
                for (int64_t yy = std::max<int64_t>(y0, 0); yy < std::min<int64_t>(y0 + kh, 7);
                     ++yy)
                    for (int64_t xx = std::max<int64_t>(x0, 0); xx < std::min<int64_t>(x0 + kw, 6);
                         ++xx) {
                        const double v = xv[size_t(p * 42 + yy * 6 + xx)];
                        if (v > best)
                            best = v, at = yy * 6 + xx;
                        sum += v;
                        ++count;
                    }
                BOOST_TEST(yv[e] == best);
                BOOST_TEST(iv[e] == double(at));
                BOOST_TEST(std::abs(av[e] - sum / double(count)) < 1e-12);
                BOOST_TEST(std::abs(aiv[e] - sum / double(padded)) < 1e-12);
            }
    // adaptive: windows [floor(i*7/3), ceil((i+1)*7/3)) x [floor(j*6/4), ceil((j+1)*6/4))
    const Tensor ad = tg::adaptive_avg_pool2d(x, {3, 4});
    const std::vector<double> adv = values_of(ad);
    e = 0;
    for (int64_t p = 0; p < 6; ++p)
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 4; ++j, ++e) {
                double sum = 0;
                int64_t count = 0;
                for (int64_t yy = i * 7 / 3; yy < ((i + 1) * 7 + 2) / 3; ++yy)
                    for (int64_t xx = j * 6 / 4; xx < ((j + 1) * 6 + 3) / 4; ++xx, ++count)
                        sum += xv[size_t(p * 42 + yy * 6 + xx)];
                BOOST_TEST(std::abs(adv[e] - sum / double(count)) < 1e-12);
            }
}

BOOST_AUTO_TEST_CASE(max_pool_propagates_nan_and_routes_the_gradient_to_the_argmax) {
    Tensor x = tg::tensor(std::vector<double>{1, 5, 2, 3, NAN, 0, 4, 1, 2}).reshape({1, 1, 3, 3});
    x.requires_grad_(true);
    const Tensor y = tg::max_pool2d(x, 2, 1);  // overlapping windows
    const std::vector<double> yv = values_of(y);
    BOOST_TEST(std::isnan(yv[0]));
    BOOST_TEST(std::isnan(yv[3]));
    Tensor z = tg::tensor(std::vector<double>{1, 5, 2, 3, 9, 0, 4, 1, 2}).reshape({1, 1, 3, 3});
    z.requires_grad_(true);
    tg::max_pool2d(z, 2, 1).sum().backward();
    // 9 is the max of all four windows: it gathers all four gradients
    check_close(z.grad().reshape({9}), {0, 0, 0, 0, 4, 0, 0, 0, 0}, 0, 0);
}

/// The float32 2x2/2 pool (its own kernel: SIMD with masked tails) against the float64 one (the
/// general tap loop), on rows of 1 to 40 outputs, odd and even widths, many ties and NaNs: the
/// same values (NaN where NaN) and the same argmax indices (the first of equal maxima).
BOOST_AUTO_TEST_CASE(the_2x2_pool_kernel_equals_the_general_one) {
    for (int64_t w : {2, 3, 8, 15, 16, 17, 31, 32, 33, 46, 80, 81}) {
        const int64_t h = w % 3 + 4;
        std::vector<double> v(size_t(3 * h * w));
        for (size_t i = 0; i < v.size(); ++i)  // three values: ties in most windows
            v[i] = double((i * 2654435761u >> 13) % 3) - 1;
        for (size_t i = size_t(w) % 11; i < v.size(); i += 13)
            v[i] = NAN;
        const Tensor x64 = tg::tensor(v).to(tg::kFloat64).reshape({1, 3, h, w});
        const auto [y32, i32] = tg::max_pool2d_with_indices(x64.to(tg::kFloat32), 2);
        const auto [y64, i64] = tg::max_pool2d_with_indices(x64, 2);
        const std::vector<double> a = values_of(y32), b = values_of(y64);
        BOOST_TEST_INFO("width " << w);
        BOOST_TEST_REQUIRE(a.size() == size_t(3 * (h / 2) * (w / 2)));
        size_t differ = 0, nans = 0;
        for (size_t k = 0; k < a.size(); ++k) {
            nans += std::isnan(b[k]);
            differ += std::isnan(a[k]) != std::isnan(b[k]) || (!std::isnan(b[k]) && a[k] != b[k]);
        }
        BOOST_TEST(differ == 0u);
        BOOST_TEST(nans > 0u);
        BOOST_TEST(values_of(i32) == values_of(i64), boost::test_tools::per_element());
    }
}

/// The gather adjoint (Fold) against the scatter kept for the benchmark: the same terms added
/// in the same order, so equal to the last bit in float64.
BOOST_AUTO_TEST_CASE(gather_adjoint_equals_the_scatter_adjoint_bit_for_bit) {
    const std::vector<std::vector<int64_t>> cases = {
        // N, C, H, W, O, kh, kw, stride, padding, dilation, groups
        {2, 3, 6, 5, 4, 3, 3, 1, 1, 1, 1},
        {1, 2, 9, 8, 2, 3, 2, 2, 1, 1, 1},
        {2, 4, 7, 7, 4, 2, 3, 1, 0, 2, 2},
        {1, 1, 5, 5, 1, 5, 5, 1, 2, 1, 1},
    };
    int seed = 40;
    for (const auto& s : cases) {
        const Tensor w = make_const({s[4], s[1] / s[10], s[5], s[6]}, seed++).to(tg::kFloat64);
        Tensor x = make_input({s[0], s[1], s[2], s[3]}, seed++).to(tg::kFloat64).detach();
        x.requires_grad_(true);
        auto input_grad = [&] {
            x.set_grad(Tensor());
            const Tensor y = tg::conv2d(x, w, {}, s[7], s[8], s[9], s[10]);
            (y * make_const(y.sizes(), 99).to(tg::kFloat64)).sum().backward();
            return values_of(x.grad());
        };
        const std::vector<double> gathered = input_grad();
        setenv("TG_CONV_SCATTER", "1", 1);
        const std::vector<double> scattered = input_grad();
        unsetenv("TG_CONV_SCATTER");
        BOOST_TEST_REQUIRE(gathered.size() == scattered.size());
        size_t differ = 0;
        for (size_t i = 0; i < gathered.size(); ++i)
            differ += gathered[i] != scattered[i];
        BOOST_TEST(differ == 0u);
    }
}

/// A convolution keeps x and w for backward, never its unfolded buffer; checkpointing a conv
/// block keeps only its input.
BOOST_AUTO_TEST_CASE(a_convolution_keeps_no_unfolded_buffer) {
    const Tensor x = make_input({8, 4, 16, 16}, 50);
    Tensor w = make_input({8, 4, 3, 3}, 51), b = make_input({8}, 52);
    tg::memory::empty_cache();
    const int64_t before = tg::memory::stats().current_bytes;
    Tensor y = tg::conv2d(x, w, b, 1, 1);
    const int64_t y_bytes = y.numel() * 8;  // float64
    // y alone: the bias-free product is freed once the bias is added (add saves nothing)
    BOOST_TEST(tg::memory::stats().current_bytes - before <= 2 * y_bytes);
    const int64_t unfolded = 8 * 4 * 9 * 16 * 16 * 8;
    BOOST_TEST(tg::memory::stats().current_bytes - before < unfolded);
    y = Tensor();
    BOOST_TEST(tg::memory::stats().current_bytes == before);

    // a block conv -> tanh -> conv: saved activations with and without checkpointing
    const Tensor w2 = make_input({4, 8, 3, 3}, 53);
    auto block = [&](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{
            tg::conv2d(tg::tanh(tg::conv2d(in[0], w, b, 1, 1)), w2, {}, 1, 1)};
    };
    Tensor h = tg::tanh(x * 1.0);
    const int64_t base = tg::memory::stats().saved_bytes;
    Tensor plain = block({h})[0];
    const int64_t plain_saved = tg::memory::stats().saved_bytes - base;
    plain = Tensor();
    Tensor ck = tg::checkpoint(block, std::vector<Tensor>{h})[0];
    const int64_t ck_saved = tg::memory::stats().saved_bytes - base;
    BOOST_TEST(ck_saved < plain_saved);
    BOOST_TEST(ck_saved <= h.numel() * 8);
    ck.sum().backward();
    BOOST_TEST(w.grad().defined());
}

/// A batch runs in chunks of samples (one unfolded buffer each), whose weight gradients add up:
/// the batch's gradients equal the sums of the per-sample ones.
BOOST_AUTO_TEST_CASE(chunked_batches_match_sample_by_sample) {
    // float64, 3x3, padding 1, chunks of at most 1 MiB unfolded on the CPU:
    // - 64x64 positions, 8 channels: GEMMs a sample at a time, one sample (2.4 MB unfolded) per
    //   chunk, so 5 chunks;
    // - 15x15 positions, 16 channels: GEMMs over a chunk of 4 samples (259 kB unfolded each),
    //   so the 19 samples run as 4 + 4 + 4 + 4 + 3 (and the weight gradient adds 5 blocks).
    const std::vector<std::vector<int64_t>> shapes = {{5, 8, 64, 64, 4}, {19, 16, 15, 15, 6}};
    uint64_t seed = 60;
    for (const auto& s : shapes) {
        const int64_t N = s[0], C = s[1], O = s[4];
        const Tensor x = make_const({N, C, s[2], s[3]}, seed++);
        const Tensor dy = make_const({N, O, s[2], s[3]}, seed++);
        Tensor w = make_input({O, C, 3, 3}, seed++), b = make_input({O}, seed++);
        Tensor xl = x.detach();
        xl.requires_grad_(true);
        const Tensor y = tg::conv2d(xl, w, b, 1, 1);
        (y * dy).sum().backward();
        const Tensor dw = w.grad(), db = b.grad(), dx = xl.grad();
        w.set_grad(Tensor());
        b.set_grad(Tensor());
        for (int64_t n = 0; n < N; ++n) {
            Tensor xn = x.narrow(0, n, 1).detach();
            xn.requires_grad_(true);
            const Tensor yn = tg::conv2d(xn, w, b, 1, 1);
            check_close(yn, y.narrow(0, n, 1), 1e-12, 1e-12);
            (yn * dy.narrow(0, n, 1)).sum().backward();
            check_close(xn.grad(), dx.narrow(0, n, 1), 1e-12, 1e-12);
        }
        check_close(w.grad(), dw, 1e-9, 1e-12);
        check_close(b.grad(), db, 1e-9, 1e-12);
    }
}
