/// Forward values of the ops in include/tapegrad/ops.hpp against hand-computed results: numerical
/// stability at extreme inputs, matmul against a naive loop, documented conventions at ties and
/// kinks, losses, reductions, indexing, dropout statistics and comparison masks. The gradients of
/// every op are in test_ops_grad.cpp (the op table, op_cases.hpp).
#define BOOST_TEST_MODULE test_ops_values
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "test_util.hpp"

namespace {
using Dims = std::vector<int64_t>;  // tg::var(x, {1}) would pick var(x, bool unbiased)
using tgtest::check_close;
using tgtest::make_const;
using tgtest::values_of;
}  // namespace

BOOST_AUTO_TEST_CASE(log_softmax_large_logits_finite_and_correct) {
    const double lse = std::log(1.0 + std::exp(-1.0) + std::exp(-2.0));
    for (tg::Dtype dt : {tg::kFloat64, tg::kFloat32}) {
        tg::Tensor x = tg::tensor({1000.0, 1001.0, 1002.0}, dt);
        tg::Tensor y = tg::log_softmax(x, 0);
        BOOST_TEST(y.dtype() == dt);
        double tol = dt == tg::kFloat64 ? 1e-12 : 1e-4;
        check_close(y, {-2.0 - lse, -1.0 - lse, -lse}, tol, 0);
        tg::Tensor s = tg::softmax(x, 0);
        check_close(s, {std::exp(-2.0 - lse), std::exp(-1.0 - lse), std::exp(-lse)}, tol, 0);
        tg::Tensor neg = tg::log_softmax(tg::tensor({-1000.0, 0.0}, dt), 0);
        check_close(neg, {-1000.0, 0.0}, tol, 1e-6);
    }
}

BOOST_AUTO_TEST_CASE(softmax_rows_sum_to_one) {
    tg::Tensor x = make_const({5, 7}, 11, -30, 30);
    tg::Tensor s = tg::softmax(x, 1);
    check_close(tg::sum(s, {1}), std::vector<double>(5, 1.0), 1e-12, 0);
    tg::Tensor s0 = tg::softmax(x, 0);
    check_close(tg::sum(s0, {0}), std::vector<double>(7, 1.0), 1e-12, 0);
    tg::Tensor s32 = tg::softmax(x.to(tg::kFloat32).t(), -1);
    check_close(tg::sum(s32, {1}), std::vector<double>(7, 1.0), 1e-5, 0);
    for (double v : values_of(s))
        BOOST_TEST((v >= 0.0 && v <= 1.0));
}

namespace {
std::vector<double> naive_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                 int64_t m, int64_t k, int64_t n) {
    std::vector<double> c(size_t(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t p = 0; p < k; ++p)
                c[size_t(i * n + j)] += a[size_t(i * k + p)] * b[size_t(p * n + j)];
    return c;
}
}  // namespace

BOOST_AUTO_TEST_CASE(matmul_matches_naive_loop) {
    tg::Tensor a = make_const({3, 4}, 21), b = make_const({4, 5}, 22);
    auto ref = naive_matmul(values_of(a), values_of(b), 3, 4, 5);
    check_close(tg::matmul(a, b), ref, 1e-12, 1e-12);
    BOOST_TEST(tg::shape_str(tg::matmul(a, b).sizes()) == "[3,5]");
    // transposed operand (a view, passed to BLAS as a flag)
    tg::Tensor at = make_const({4, 3}, 23);
    check_close(tg::matmul(at.t(), b), naive_matmul(values_of(at.t()), values_of(b), 3, 4, 5),
                1e-12, 1e-12);
    // float32
    check_close(tg::matmul(a.to(tg::kFloat32), b.to(tg::kFloat32)), ref, 1e-5, 1e-5);
    // batched: each batch is its own product
    tg::Tensor ba = make_const({2, 3, 4}, 24), bb = make_const({2, 4, 5}, 25);
    tg::Tensor bc = tg::matmul(ba, bb);
    BOOST_TEST(tg::shape_str(bc.sizes()) == "[2,3,5]");
    std::vector<double> expect;
    for (int64_t i = 0; i < 2; ++i) {
        auto r =
            naive_matmul(values_of(ba.narrow(0, i, 1)), values_of(bb.narrow(0, i, 1)), 3, 4, 5);
        expect.insert(expect.end(), r.begin(), r.end());
    }
    check_close(bc, expect, 1e-12, 1e-12);
    // matrix-vector and dot
    tg::Tensor v = make_const({4}, 26);
    tg::Tensor mv = tg::matmul(a, v);
    BOOST_TEST(tg::shape_str(mv.sizes()) == "[3]");
    check_close(mv, naive_matmul(values_of(a), values_of(v), 3, 4, 1), 1e-12, 1e-12);
    tg::Tensor dot = tg::matmul(v, v);
    BOOST_TEST(dot.dim() == 0);
    double d = 0;
    for (double e : values_of(v))
        d += e * e;
    BOOST_TEST(dot.item<double>() == d, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(linear_matches_matmul_plus_bias) {
    tg::Tensor x = make_const({5, 4}, 31), w = make_const({3, 4}, 32), b = make_const({3}, 33);
    check_close(tg::linear(x, w, b), tg::matmul(x, w.t()) + b, 1e-12, 1e-12);
    check_close(tg::linear(x, w), tg::matmul(x, w.t()), 1e-12, 1e-12);
}

BOOST_AUTO_TEST_CASE(var_unbiased_and_biased) {
    tg::Tensor x = tg::tensor({1.0, 2.0, 3.0, 4.0}, tg::kFloat64);
    BOOST_TEST(tg::var(x).item<double>() == 5.0 / 3.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(tg::var(x, false).item<double>() == 1.25, boost::test_tools::tolerance(1e-12));
    tg::Tensor m = tg::tensor({1.0, 2.0, 3.0, 2.0, 4.0, 6.0}, tg::kFloat64).reshape({2, 3});
    check_close(tg::var(m, Dims{1}), {1.0, 4.0}, 1e-12, 0);
    check_close(tg::var(m, {0}, false), {0.25, 1.0, 2.25}, 1e-12, 0);
    BOOST_TEST(tg::shape_str(tg::var(m, {1}, true, true).sizes()) == "[2,1]");
}

BOOST_AUTO_TEST_CASE(max_ties_share_gradient_evenly) {
    // Documented behaviour (ops.hpp): ties share the gradient evenly.
    tg::Tensor x =
        tg::tensor({1.0, 3.0, 3.0, 2.0}, tg::TensorOptions(tg::kFloat64).requires_grad(true));
    tg::Tensor m = tg::max(x);
    BOOST_TEST(m.item<double>() == 3.0);
    m.backward();
    check_close(x.grad(), {0.0, 0.5, 0.5, 0.0});

    tg::Tensor y = tg::tensor({1.0, 3.0, 3.0, 2.0, 2.0, 0.0}, tg::kFloat64).reshape({2, 3});
    y.requires_grad_();
    tg::Tensor my = tg::amax(y, {1});
    check_close(my, {3.0, 2.0});
    my.sum().backward();
    check_close(y.grad(), {0.0, 0.5, 0.5, 0.5, 0.5, 0.0});

    // max(x, dim) selects a value, as in LibTorch: the first max takes the whole gradient
    y.grad().zero_();
    auto [values, indices] = y.max(1);
    check_close(values, {3.0, 2.0});
    BOOST_TEST(indices.to(tg::kFloat64).to_vector<double>() == std::vector<double>({1, 0}),
               boost::test_tools::per_element());
    values.sum().backward();
    check_close(y.grad(), {0.0, 1.0, 0.0, 1.0, 0.0, 0.0});

    tg::Tensor z = tg::tensor({1.0, 1.0, 1.0}, tg::kFloat64);
    z.requires_grad_();
    tg::min(z).backward();
    check_close(z.grad(), {1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-12, 0);

    tg::Tensor a = tg::tensor({1.0, 2.0, 5.0}, tg::kFloat64),
               b = tg::tensor({1.0, 3.0, 4.0}, tg::kFloat64);
    a.requires_grad_();
    b.requires_grad_();
    tg::Tensor mx = tg::maximum(a, b);
    check_close(mx, {1.0, 3.0, 5.0});
    mx.sum().backward();
    check_close(a.grad(), {0.5, 0.0, 1.0});
    check_close(b.grad(), {0.5, 1.0, 0.0});
    a.set_grad(tg::Tensor());
    b.set_grad(tg::Tensor());
    tg::minimum(a, b).sum().backward();
    check_close(a.grad(), {0.5, 1.0, 0.0});
    check_close(b.grad(), {0.5, 0.0, 1.0});
}

BOOST_AUTO_TEST_CASE(kink_conventions) {
    // abs: sign(0) = 0; relu: x > 0; clamp: gradient passes where lo <= x <= hi.
    auto opts = tg::TensorOptions(tg::kFloat64).requires_grad(true);
    tg::Tensor x = tg::tensor({-1.0, 0.0, 2.0}, opts);
    tg::abs(x).sum().backward();
    check_close(x.grad(), {-1.0, 0.0, 1.0});
    tg::Tensor r = tg::tensor({-1.0, 0.0, 2.0}, opts);
    tg::relu(r).sum().backward();
    check_close(r.grad(), {0.0, 0.0, 1.0});
    tg::Tensor c = tg::tensor({-2.0, -1.0, 0.0, 1.0, 2.0}, opts);
    tg::clamp(c, -1.0, 1.0).sum().backward();
    check_close(c.grad(), {0.0, 1.0, 1.0, 1.0, 0.0});
    tg::Tensor l = tg::tensor({-2.0, 3.0}, opts);
    tg::leaky_relu(l, 0.1).sum().backward();
    check_close(l.grad(), {0.1, 1.0}, 1e-12, 0);
}

BOOST_AUTO_TEST_CASE(activation_values) {
    tg::Tensor x = tg::tensor({-1.0, 0.0, 1.0}, tg::kFloat64);
    check_close(tg::gelu(x), {-0.15865525393145707, 0.0, 0.8413447460685429}, 1e-12, 0);
    check_close(tg::sigmoid(x), {1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-1.0))}, 1e-12, 0);
    check_close(tg::tanh(x), {std::tanh(-1.0), 0.0, std::tanh(1.0)}, 1e-12, 0);
    check_close(tg::softplus(x),
                {std::log1p(std::exp(-1.0)), std::log(2.0), std::log1p(std::exp(1.0))}, 1e-12, 0);
    check_close(tg::softplus(x, 2.0, 20.0),
                {std::log1p(std::exp(-2.0)) / 2, std::log(2.0) / 2, std::log1p(std::exp(2.0)) / 2},
                1e-12, 0);
    // extremes stay finite
    tg::Tensor big = tg::tensor({-1000.0, 1000.0}, tg::kFloat32);
    check_close(tg::sigmoid(big), {0.0, 1.0}, 1e-7, 0);
    check_close(tg::softplus(big), {0.0, 1000.0}, 1e-7, 1e-7);
    check_close(tg::tanh(big), {-1.0, 1.0}, 1e-7, 0);
    check_close(tg::leaky_relu(tg::tensor({-2.0, 3.0}, tg::kFloat64), 0.1), {-0.2, 3.0}, 1e-12, 0);
}

BOOST_AUTO_TEST_CASE(loss_values) {
    auto f64 = tg::TensorOptions(tg::kFloat64);
    tg::Tensor logits = tg::tensor({1.0, 2.0, 3.0, 1.0, 1.0, 1.0}, f64).reshape({2, 3});
    tg::Tensor lab = tg::tensor(std::vector<int64_t>{2, 0});
    double l0 = std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0), l1 = std::log(3.0);
    check_close(tg::cross_entropy(logits, lab, tg::Reduction::None), {l0, l1}, 1e-12, 0);
    BOOST_TEST(tg::cross_entropy(logits, lab).item<double>() == (l0 + l1) / 2,
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(tg::cross_entropy(logits, lab, tg::Reduction::Sum).item<double>() == l0 + l1,
               boost::test_tools::tolerance(1e-12));
    check_close(tg::nll_loss(tg::log_softmax(logits, 1), lab, tg::Reduction::None), {l0, l1}, 1e-12,
                0);
    // cross_entropy gradient: (softmax - onehot) / N
    tg::Tensor lg = logits.clone().detach();
    lg.requires_grad_();
    tg::cross_entropy(lg, lab).backward();
    auto sm = values_of(tg::softmax(logits, 1));
    check_close(lg.grad(),
                {sm[0] / 2, sm[1] / 2, (sm[2] - 1) / 2, (sm[3] - 1) / 2, sm[4] / 2, sm[5] / 2},
                1e-12, 0);
    // bce with logits: stable at large |x|
    tg::Tensor bx = tg::tensor({100.0, -100.0, 0.0}, f64), by = tg::tensor({1.0, 1.0, 0.5}, f64);
    check_close(tg::binary_cross_entropy_with_logits(bx, by, tg::Reduction::None),
                {std::log1p(std::exp(-100.0)), 100.0, std::log(2.0)}, 1e-12, 1e-12);
    tg::Tensor bx32 = tg::tensor({100.0, -100.0}, tg::kFloat32),
               by32 = tg::tensor({0.0, 0.0}, tg::kFloat32);
    check_close(tg::binary_cross_entropy_with_logits(bx32, by32, tg::Reduction::None), {100.0, 0.0},
                1e-4, 1e-6);
    // mse and l1
    tg::Tensor a = tg::tensor({1.0, 2.0, 3.0}, f64), b = tg::tensor({2.0, 2.0, 5.0}, f64);
    BOOST_TEST(tg::mse_loss(a, b).item<double>() == 5.0 / 3.0, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(tg::mse_loss(a, b, tg::Reduction::Sum).item<double>() == 5.0);
    BOOST_TEST(tg::l1_loss(a, b).item<double>() == 1.0, boost::test_tools::tolerance(1e-12));
    check_close(tg::l1_loss(a, b, tg::Reduction::None), {1.0, 0.0, 2.0});
}

BOOST_AUTO_TEST_CASE(reduction_and_index_values) {
    tg::Tensor x = tg::arange(0, 12, 1, tg::kFloat64).reshape({3, 4});
    check_close(tg::sum(x, {0}), {12.0, 15.0, 18.0, 21.0});
    check_close(tg::sum(x, {1}, true), {6.0, 22.0, 38.0});
    BOOST_TEST(tg::shape_str(tg::sum(x, {1}, true).sizes()) == "[3,1]");
    BOOST_TEST(tg::mean(x).item<double>() == 5.5);
    check_close(std::get<0>(tg::max(x, 0)), {8.0, 9.0, 10.0, 11.0});
    check_close(std::get<0>(tg::min(x, 1)), {0.0, 4.0, 8.0});
    check_close(tg::sum_to(x, {1, 4}), {12.0, 15.0, 18.0, 21.0});
    check_close(tg::index_select(x, 0, tg::tensor(std::vector<int64_t>{2, 0})),
                {8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0});
    tg::Tensor gi = tg::tensor(std::vector<int64_t>{3, 0, 1, 1, 2, 2}).reshape({3, 2});
    check_close(tg::gather(x, 1, gi), {3.0, 0.0, 5.0, 5.0, 10.0, 10.0});
    check_close(tg::scatter_add(tg::ones({3, 2}, tg::kFloat64), {3, 4}, 1, gi),
                {1.0, 0, 0, 1.0, 0, 2.0, 0, 0, 0, 0, 2.0, 0});
    check_close(tg::cat({x.narrow(0, 0, 1), x.narrow(0, 2, 1)}, 0), {0.0, 1, 2, 3, 8, 9, 10, 11});
    tg::Tensor st = tg::stack({x.narrow(1, 0, 1).flatten(), x.narrow(1, 3, 1).flatten()}, 1);
    BOOST_TEST(tg::shape_str(st.sizes()) == "[3,2]");
    check_close(st, {0.0, 3, 4, 7, 8, 11});
    tg::Tensor am = tg::argmax(tg::tensor({1.0, 5.0, 5.0, 2.0}, tg::kFloat64));
    BOOST_TEST(am.dtype() == tg::kInt64);
    BOOST_TEST(am.item<int64_t>() == 1);  // first one on ties
    check_close(x.t().contiguous(), {0.0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
    check_close(tg::where(tg::gt(x, 5.0), x, -x), {0.0, -1, -2, -3, -4, -5, 6, 7, 8, 9, 10, 11});
}

BOOST_AUTO_TEST_CASE(dropout_statistics) {
    tg::manual_seed(42);
    tg::Tensor x = tg::ones({10000}, tg::kFloat64);
    tg::Tensor y = tg::dropout(x, 0.25, true);
    auto v = values_of(y);
    int64_t zeros = 0;
    for (double e : v) {
        if (e == 0.0)
            ++zeros;
        else
            BOOST_TEST(e == 1.0 / 0.75, boost::test_tools::tolerance(1e-12));
    }
    BOOST_TEST(zeros > 2200);
    BOOST_TEST(zeros < 2800);
    check_close(tg::dropout(x, 0.25, false), std::vector<double>(10000, 1.0));
}

BOOST_AUTO_TEST_CASE(comparisons_are_bool_masks_without_grad) {
    tg::Tensor a = tg::tensor({1.0, 2.0, 3.0}, tg::TensorOptions(tg::kFloat64).requires_grad(true));
    tg::Tensor b = tg::tensor({2.0, 2.0, 2.0}, tg::kFloat64);
    check_close(tg::eq(a, b), {0.0, 1.0, 0.0});
    check_close(a.eq(b), {0.0, 1.0, 0.0});
    check_close(tg::ne(a, b), {1.0, 0.0, 1.0});
    check_close(tg::gt(a, b), {0.0, 0.0, 1.0});
    check_close(tg::lt(a, b), {1.0, 0.0, 0.0});
    check_close(tg::ge(a, b), {0.0, 1.0, 1.0});
    check_close(tg::le(a, b), {1.0, 1.0, 0.0});
    check_close(tg::gt(a, 1.5), {0.0, 1.0, 1.0});
    check_close(tg::lt(a, 1.5), {1.0, 0.0, 0.0});
    tg::Tensor m = tg::gt(a, b);
    BOOST_TEST(m.dtype() == tg::kBool);
    BOOST_TEST(!m.requires_grad());
    tg::Tensor x = tg::tensor({3.0, 1.0, 4.0, 1.0, 5.0, 0.0}, tg::kFloat64).reshape({2, 3});
    check_close(tg::argmax(x, 1), {2.0, 1.0});
    check_close(tg::argmin(x, 1), {1.0, 2.0});
    check_close(tg::argmax(x, 0, true), {0.0, 1.0, 0.0});
    BOOST_TEST(tg::shape_str(tg::argmax(x, 0, true).sizes()) == "[1,3]");
    BOOST_TEST(tg::argmax(x).item<int64_t>() == 4);
}

/// Note [Vectorisable float math]: the CPU's float32 GELU (and its backward) use a polynomial
/// erf; over a wide grid they stay within 1e-6 (relative to max(1, |x|)) of the float64 libm
/// forms, and NaN and infinities come out as libm's do.
BOOST_AUTO_TEST_CASE(float32_gelu_and_its_gradient_match_float64) {
    std::vector<double> v;
    for (int i = -4000; i <= 4000; ++i)
        v.push_back(i * 0.0025);  // [-10, 10]
    for (double e : {1e-30, 1e-8, 0.49999, 0.5, 0.50001, 30.0, -30.0})
        v.push_back(e);
    const tg::Tensor x64 = tg::tensor(v, tg::kFloat64).requires_grad_();
    const tg::Tensor x32 = tg::tensor(v, tg::kFloat32).requires_grad_();
    const tg::Tensor w = tg::tensor(std::vector<double>(v.size(), 0.75), tg::kFloat64);
    (tg::gelu(x64) * w).sum().backward();
    (tg::gelu(x32) * w.to(tg::kFloat32)).sum().backward();
    const auto y64 = tgtest::values_of(tg::gelu(x64.detach())),
               y32 = tgtest::values_of(tg::gelu(x32.detach()));
    const auto g64 = tgtest::values_of(x64.grad()), g32 = tgtest::values_of(x32.grad());
    double worst_y = 0, worst_g = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        const double scale = std::max(1.0, std::abs(v[i]));
        worst_y = std::max(worst_y, std::abs(y32[i] - y64[i]) / scale);
        worst_g = std::max(worst_g, std::abs(g32[i] - g64[i]) / scale);
    }
    BOOST_TEST(worst_y < 1e-6);
    BOOST_TEST(worst_g < 1e-6);
    const double inf = std::numeric_limits<double>::infinity();
    const auto special = tgtest::values_of(
        tg::gelu(tg::tensor(std::vector<double>{std::nan(""), inf, -inf}, tg::kFloat32)));
    BOOST_TEST(std::isnan(special[0]));
    BOOST_TEST(special[1] == inf);
    BOOST_TEST(std::isnan(special[2]));  // -inf·Φ(-inf) = -inf·0, as libm's erf gives
}

BOOST_AUTO_TEST_CASE(float32_exp_at_the_edge_of_its_range) {
    // expf is finite up to 88.72284 and inf above (the fast float32 form once clamped at 88,
    // giving e^88 = 1.65e38 for every larger x)
    const std::vector<float> y =
        tg::exp(tg::tensor({88.0, 88.5, 88.72, 88.8, 200.0})).to_vector<float>();
    const double expect[3] = {std::exp(88.0), std::exp(88.5), std::exp(double(88.72f))};
    for (int i = 0; i < 3; ++i)
        BOOST_TEST(std::abs(y[size_t(i)] / expect[i] - 1) < 1e-6);
    BOOST_TEST((std::isinf(y[3]) && std::isinf(y[4])));
    check_close(tg::sigmoid(tg::tensor({-100.0, 100.0})), {0, 1}, 1e-30);
}
