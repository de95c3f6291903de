/// Tests of the tape (src/autograd): autograd::grad (what it computes and leaves alone,
/// allow_unused, create_graph) and double backward (Hessian-vector products, gradient penalties).
#define BOOST_TEST_MODULE test_engine_grad
#include <boost/test/unit_test.hpp>
#include <vector>

#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::make_const;
using tgtest::make_input;
using tgtest::values_of;

namespace {
std::vector<double> scaled(std::vector<double> v, double s) {
    for (auto& e : v)
        e *= s;
    return v;
}
}  // namespace

// ============================================================================ autograd::grad

BOOST_AUTO_TEST_CASE(autograd_grad_returns_without_touching_dot_grad) {
    tg::Tensor x = make_input({3}, 18), y = make_input({3}, 19);
    tg::Tensor out = (x * x * y).sum();
    auto gs = tg::autograd::grad({out}, {x, y});
    BOOST_TEST_REQUIRE(gs.size() == 2u);
    auto xv = values_of(x), yv = values_of(y);
    std::vector<double> gx, gy;
    for (size_t i = 0; i < 3; ++i) {
        gx.push_back(2 * xv[i] * yv[i]);
        gy.push_back(xv[i] * xv[i]);
    }
    check_close(gs[0], gx, 1e-12, 1e-12);
    check_close(gs[1], gy, 1e-12, 1e-12);
    BOOST_TEST(!x.grad().defined());
    BOOST_TEST(!y.grad().defined());
    BOOST_TEST(!gs[0].requires_grad());

    // non-scalar output with grad_outputs
    tg::Tensor v = tg::tensor({1.0, -2.0, 0.5}, tg::kFloat64);
    auto gv = tg::autograd::grad({x * y}, {x}, {v});
    std::vector<double> e;
    for (size_t i = 0; i < 3; ++i)
        e.push_back(values_of(v)[i] * yv[i]);
    check_close(gv[0], e, 1e-12, 1e-12);
}

BOOST_AUTO_TEST_CASE(autograd_grad_computes_only_what_it_is_asked) {
    // Note [Pruned gradients]: grad(loss, {x}) through linear layers computes dx only. A dW
    // would be a 4 MiB buffer here; everything the pass needs is a few KiB.
    const auto o = tg::TensorOptions().dtype(tg::kFloat32).requires_grad(true);
    const tg::Tensor w1 = tg::randn({1024, 1024}, o), w2 = tg::randn({1024, 1024}, o);
    const tg::Tensor b = tg::zeros({1024}, o), x = tg::randn({2, 1024}, o);
    const tg::Tensor loss = tg::linear(tg::tanh(tg::linear(x, w1, b)), w2, b).sum();
    const int64_t start = tg::memory::stats().current_bytes;
    tg::memory::reset_peak();
    auto gx = tg::autograd::grad({loss}, {x}, {}, /*retain_graph=*/true);
    BOOST_TEST(tg::memory::stats().peak_bytes - start < 64 * 1024);
    // with respect to a weight: that weight's gradient and nothing else of its size
    tg::memory::reset_peak();
    auto gw = tg::autograd::grad({loss}, {w2});
    BOOST_TEST(tg::memory::stats().peak_bytes - start < 4 * 1024 * 1024 + 64 * 1024);
    BOOST_TEST(gw[0].sizes() == w2.sizes());
    // and the values are those of a full pass
    const auto ref = tg::autograd::grad({tg::linear(tg::tanh(tg::linear(x, w1, b)), w2, b).sum()},
                                        {x, w1, w2, b});
    BOOST_TEST(gx[0].to_vector<float>() == ref[0].to_vector<float>());
    BOOST_TEST(gw[0].to_vector<float>() == ref[2].to_vector<float>());
    BOOST_TEST(!w1.grad().defined());
}

BOOST_AUTO_TEST_CASE(autograd_grad_allow_unused) {
    tg::Tensor x = make_input({3}, 20), z = make_input({3}, 21);
    tg::Tensor out = (x * 2.0).sum();
    check_throws<tg::autograd_error>(
        [&] {
            tg::autograd::grad({out}, {x, z}, {}, true);
        },
        {}, "unused input without allow_unused");
    auto gs = tg::autograd::grad({out}, {x, z}, {}, false, false, /*allow_unused=*/true);
    BOOST_TEST_REQUIRE(gs.size() == 2u);
    check_close(gs[0], {2.0, 2.0, 2.0});
    BOOST_TEST(!gs[1].defined());
    BOOST_TEST(!z.grad().defined());
}

BOOST_AUTO_TEST_CASE(autograd_grad_create_graph_records) {
    tg::Tensor x = make_input({3}, 22);
    tg::Tensor out = (x * x * x).sum();
    auto g = tg::autograd::grad({out}, {x}, {}, true, true)[0];
    BOOST_TEST(g.requires_grad());
    BOOST_TEST(g.grad_fn() != nullptr);
    g.sum().backward();  // d/dx sum(3x^2) = 6x
    check_close(x.grad(), scaled(values_of(x), 6.0), 1e-12, 1e-12);
}

// ============================================================================ double backward

namespace {
tg::Tensor hvp_fn(const tg::Tensor& x) {
    return (tg::tanh(x) * x * x).sum() + x.sum() * x.sum() + tg::exp(x * 0.5).sum();
}
tg::Tensor grad_at(const std::vector<double>& xv) {
    tg::Tensor x = tgtest::from_values(xv, {int64_t(xv.size())});
    x.requires_grad_(true);
    return tg::autograd::grad({hvp_fn(x)}, {x})[0];
}
}  // namespace

BOOST_AUTO_TEST_CASE(hessian_vector_product_matches_finite_differences) {
    tg::Tensor x = make_input({5}, 23);
    tg::Tensor v = make_const({5}, 24);
    tg::Tensor g = tg::autograd::grad({hvp_fn(x)}, {x}, {}, true, true)[0];
    tg::Tensor hv = tg::autograd::grad({(g * v).sum()}, {x})[0];
    const double eps = 1e-5;
    auto xv = values_of(x), vv = values_of(v), plus = xv, minus = xv;
    for (size_t i = 0; i < xv.size(); ++i) {
        plus[i] += eps * vv[i];
        minus[i] -= eps * vv[i];
    }
    auto gp = values_of(grad_at(plus)), gm = values_of(grad_at(minus));
    std::vector<double> fd;
    for (size_t i = 0; i < gp.size(); ++i)
        fd.push_back((gp[i] - gm[i]) / (2 * eps));
    check_close(hv, fd, 1e-6, 1e-5);
}

namespace {
/// ||d tanh(x·W).sum() / dx||² : a gradient penalty (WGAN-GP style).
tg::Tensor penalty(const tg::Tensor& x, const tg::Tensor& w) {
    tg::Tensor out = tg::tanh(tg::matmul(x, w)).sum();
    tg::Tensor gx = tg::autograd::grad({out}, {x}, {}, true, true)[0];
    return (gx * gx).sum();
}
}  // namespace

BOOST_AUTO_TEST_CASE(gradient_penalty_backprops_to_weights) {
    tg::Tensor x = make_input({5, 4}, 25), w = make_input({4, 3}, 26);
    tg::Tensor pen = penalty(x, w);
    BOOST_TEST(pen.requires_grad());
    pen.backward();
    BOOST_TEST_REQUIRE(w.grad().defined());
    // finite differences of the penalty in w
    const double eps = 1e-6;
    auto wv = values_of(w);
    std::vector<double> fd;
    for (size_t i = 0; i < wv.size(); ++i) {
        auto p = wv, m = wv;
        p[i] += eps;
        m[i] -= eps;
        tg::Tensor xp = x.detach(), xm = x.detach();
        xp.requires_grad_(true);
        xm.requires_grad_(true);
        double fp = penalty(xp, tgtest::from_values(p, {4, 3})).item<double>();
        double fm = penalty(xm, tgtest::from_values(m, {4, 3})).item<double>();
        fd.push_back((fp - fm) / (2 * eps));
    }
    check_close(w.grad(), fd, 1e-6, 1e-4);
    // and the library's own checker agrees, with respect to both x and w
    tg::Tensor x2 = make_input({3, 4}, 27), w2 = make_input({4, 2}, 28);
    BOOST_TEST(tg::gradcheck([](const std::vector<tg::Tensor>& v) { return penalty(v[0], v[1]); },
                             {x2, w2}));
}
