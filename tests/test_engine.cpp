/// Tests of the tape (src/autograd): accumulation, retain_graph, grad modes, graph structure,
/// hooks, anomaly mode and differentiable conversions. autograd::grad and double backward:
/// test_engine_grad.cpp; in-place ops and version counters: test_engine_inplace.cpp; deep graphs
/// and memory release: test_engine_memory.cpp.
#define BOOST_TEST_MODULE test_engine
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::make_const;
using tgtest::make_input;
using tgtest::values_of;

namespace {
tg::TensorOptions f64_grad() {
    return tg::TensorOptions(tg::kFloat64).requires_grad(true);
}
std::vector<double> scaled(std::vector<double> v, double s) {
    for (auto& e : v)
        e *= s;
    return v;
}
}  // namespace

// ============================================================================ accumulation, retain

BOOST_AUTO_TEST_CASE(gradients_accumulate_across_backward_calls) {
    tg::Tensor x = make_input({2, 3}, 1);
    BOOST_TEST(!x.grad().defined());
    tg::Tensor loss = (x * x).sum();
    loss.backward();
    auto g1 = values_of(x.grad());
    check_close(x.grad(), scaled(values_of(x), 2.0), 1e-12, 0);
    BOOST_TEST(tg::shape_str(x.grad().sizes()) == "[2,3]");
    BOOST_TEST(x.grad().dtype() == tg::kFloat64);
    BOOST_TEST(!x.grad().requires_grad());
    (x * x).sum().backward();  // a fresh graph: adds into .grad()
    check_close(x.grad(), scaled(g1, 2.0), 1e-12, 0);
    x.set_grad(tg::Tensor());  // zero_grad(set_to_none)
    BOOST_TEST(!x.grad().defined());
    (x * 3.0).sum().backward();
    check_close(x.grad(), std::vector<double>(6, 3.0));
}

BOOST_AUTO_TEST_CASE(retain_graph_allows_second_backward) {
    tg::Tensor x = make_input({3}, 2);
    tg::Tensor loss = tg::exp(x).sum();
    loss.backward({}, /*retain_graph=*/true);
    loss.backward();  // allowed: the graph was retained
    std::vector<double> e;
    for (double v : values_of(x))
        e.push_back(2 * std::exp(v));
    check_close(x.grad(), e, 1e-12, 1e-12);
    // the second call did not retain: a third throws
    check_throws<tg::autograd_error>([&] { loss.backward(); }, {"retain_graph"}, "third backward");
}

BOOST_AUTO_TEST_CASE(second_backward_without_retain_graph_throws) {
    tg::Tensor x = make_input({3}, 3);
    tg::Tensor loss = (tg::tanh(x) * x).sum();
    loss.backward();
    check_throws<tg::autograd_error>([&] { loss.backward(); }, {"retain_graph"}, "second backward");
}

BOOST_AUTO_TEST_CASE(backward_with_explicit_gradient) {
    tg::Tensor x = make_input({3}, 4);
    tg::Tensor y = x * 2.0;
    y.backward(tg::tensor({1.0, 2.0, 3.0}, tg::kFloat64));
    check_close(x.grad(), {2.0, 4.0, 6.0});
}

BOOST_AUTO_TEST_CASE(autograd_backward_multiple_roots) {
    tg::Tensor x = make_input({3}, 5);
    tg::Tensor a = (x * 2.0).sum(), b = (x * 5.0).sum();
    tg::autograd::backward({a, b});
    check_close(x.grad(), {7.0, 7.0, 7.0});
}

// ============================================================================ grad mode, graph

BOOST_AUTO_TEST_CASE(no_grad_guard_records_nothing) {
    tg::Tensor x = make_input({3}, 6);
    BOOST_TEST(tg::GradMode::is_enabled());
    {
        tg::NoGradGuard guard;
        BOOST_TEST(!tg::GradMode::is_enabled());
        tg::Tensor y = x * 2.0 + 1.0;
        BOOST_TEST(!y.requires_grad());
        BOOST_TEST(y.grad_fn() == nullptr);
        BOOST_TEST(y.is_leaf());
        {
            tg::AutoGradMode on(true);
            tg::Tensor z = x * 2.0;
            BOOST_TEST(z.requires_grad());
            BOOST_TEST(z.grad_fn() != nullptr);
        }
        BOOST_TEST(!tg::GradMode::is_enabled());
        // in-place on a leaf that requires grad is allowed here (optimizer steps do this)
        uint32_t v0 = x._version();
        x.mul_(2.0);
        BOOST_TEST(x._version() > v0);
    }
    BOOST_TEST(tg::GradMode::is_enabled());
    tg::Tensor y = x * 2.0;
    BOOST_TEST(y.requires_grad());
    BOOST_TEST(y.grad_fn() != nullptr);
}

BOOST_AUTO_TEST_CASE(requires_grad_propagation_and_is_leaf) {
    tg::Tensor x = make_input({3}, 7);
    tg::Tensor c = make_const({3}, 8);
    BOOST_TEST(x.is_leaf());
    BOOST_TEST(x.requires_grad());
    BOOST_TEST(c.is_leaf());
    BOOST_TEST(!c.requires_grad());
    tg::Tensor cc = c * c;
    BOOST_TEST(!cc.requires_grad());
    BOOST_TEST(cc.is_leaf());
    tg::Tensor y = x * c;
    BOOST_TEST(y.requires_grad());
    BOOST_TEST(!y.is_leaf());
    // views of a leaf that requires grad are not leaves
    BOOST_TEST(!x.narrow(0, 0, 2).is_leaf());
}

BOOST_AUTO_TEST_CASE(grad_fn_names_and_edges) {
    tg::Tensor x = make_input({2, 2}, 9), w = make_input({2, 2}, 10);
    tg::Tensor c = make_const({2, 2}, 11);
    tg::Tensor a = x * w;
    tg::Tensor b = tg::tanh(a);
    tg::Tensor m = tg::matmul(b, c);
    tg::Tensor s = m.sum();
    // name() is PyTorch's name (tests/test_grad_fn_names.cpp has them all); op() tapegrad's
    BOOST_TEST(std::string(a.grad_fn()->name()) == "MulBackward0");
    BOOST_TEST(std::string(a.grad_fn()->op()) == "mul");
    BOOST_TEST(std::string(b.grad_fn()->name()) == "TanhBackward0");
    BOOST_TEST(std::string(m.grad_fn()->name()) == "MmBackward0");
    BOOST_TEST(std::string(s.grad_fn()->name()) == "SumBackward0");
    BOOST_TEST(std::string(s.grad_fn()->op()) == "sum");
    BOOST_TEST(std::string(tg::exp(x).grad_fn()->name()) == "ExpBackward0");
    BOOST_TEST(std::string(x.mean().grad_fn()->op()) == "mean");  // a composed op's own name
    // tape order: later ops have larger sequence numbers
    BOOST_TEST(a.grad_fn()->sequence_nr() < b.grad_fn()->sequence_nr());
    BOOST_TEST(b.grad_fn()->sequence_nr() < m.grad_fn()->sequence_nr());
    // edges: mul has two inputs that require grad; matmul's second input does not
    BOOST_TEST_REQUIRE(a.grad_fn()->next_functions().size() == 2u);
    BOOST_TEST(a.grad_fn()->next_functions()[0].fn != nullptr);
    BOOST_TEST(a.grad_fn()->next_functions()[1].fn != nullptr);
    BOOST_TEST_REQUIRE(m.grad_fn()->next_functions().size() == 2u);
    BOOST_TEST(m.grad_fn()->next_functions()[0].fn == b.grad_fn());
    BOOST_TEST(m.grad_fn()->next_functions()[1].fn == nullptr);
}

BOOST_AUTO_TEST_CASE(detach_shares_storage_and_records_nothing) {
    tg::Tensor x = make_input({3}, 12);
    tg::Tensor y = tg::exp(x);
    tg::Tensor d = y.detach();
    BOOST_TEST(d.is_leaf());
    BOOST_TEST(!d.requires_grad());
    BOOST_TEST(d.grad_fn() == nullptr);
    BOOST_TEST(d.data_ptr<double>() == y.data_ptr<double>());
    check_close(d, values_of(y));
    tg::Tensor z = d * 2.0;
    BOOST_TEST(!z.requires_grad());
    // the version counter is shared too: changing the detached alias invalidates exp's saved y
    d.mul_(2.0);
    check_close(y, values_of(d));
    check_throws<tg::autograd_error>([&] { y.sum().backward(); }, {"exp"},
                                     "backward after alias write");
}

BOOST_AUTO_TEST_CASE(grad_mode_is_thread_local) {
    tg::NoGradGuard guard;
    bool other_thread_enabled = false;
    std::thread th([&] { other_thread_enabled = tg::GradMode::is_enabled(); });
    th.join();
    BOOST_TEST(other_thread_enabled);
    BOOST_TEST(!tg::GradMode::is_enabled());
}

// ============================================================================ hooks

BOOST_AUTO_TEST_CASE(hook_on_leaf_observes_and_replaces) {
    tg::Tensor x = make_input({3}, 13);
    std::vector<double> seen;
    x.register_hook([&](const tg::Tensor& g) {
        seen = values_of(g);
        return tg::Tensor();  // undefined: keep the gradient
    });
    (x * x).sum().backward();
    check_close(x.grad(), scaled(values_of(x), 2.0), 1e-12, 0);
    BOOST_TEST_REQUIRE(seen.size() == 3u);
    check_close(x.grad(), seen, 1e-12, 0);

    tg::Tensor w = make_input({3}, 14);
    w.register_hook([](const tg::Tensor& g) { return g * 3.0; });
    (w * 2.0).sum().backward();
    check_close(w.grad(), {6.0, 6.0, 6.0});

    // hooks run in registration order, each seeing the previous one's result
    tg::Tensor u = make_input({2}, 15);
    std::vector<double> second_saw;
    u.register_hook([](const tg::Tensor& g) { return g * 2.0; });
    u.register_hook([&](const tg::Tensor& g) {
        second_saw = values_of(g);
        return tg::Tensor();
    });
    u.sum().backward();
    check_close(u.grad(), {2.0, 2.0});
    check_close(tg::tensor(second_saw, tg::kFloat64), {2.0, 2.0});
}

BOOST_AUTO_TEST_CASE(hook_on_non_leaf_observes_and_replaces) {
    tg::Tensor x = make_input({3}, 16);
    tg::Tensor h = x * 2.0;
    std::vector<double> seen;
    h.register_hook([&](const tg::Tensor& g) {
        seen = values_of(g);
        return tg::Tensor();
    });
    (h * h).sum().backward();
    check_close(tg::tensor(seen, tg::kFloat64), scaled(values_of(h), 2.0), 1e-12, 0);
    check_close(x.grad(), scaled(values_of(x), 8.0), 1e-12, 0);

    tg::Tensor y = make_input({3}, 17);
    tg::Tensor k = y * 2.0;
    k.register_hook([](const tg::Tensor& g) { return g * 10.0; });
    k.sum().backward();
    check_close(y.grad(), {20.0, 20.0, 20.0});
}

// ============================================================================ anomaly mode

BOOST_AUTO_TEST_CASE(anomaly_mode_forward_nan_names_op) {
    tg::Tensor x = tg::tensor({0.5, 1.0}, f64_grad());
    {
        tg::autograd::AnomalyMode anomaly;
        BOOST_TEST(tg::autograd::AnomalyMode::is_enabled());
        check_throws<tg::autograd_error>([&] { tg::log(x - 10.0); }, {"log"}, "log of negative");
    }
    BOOST_TEST(!tg::autograd::AnomalyMode::is_enabled());
    // outside anomaly mode the NaN is just a value
    tg::Tensor y = tg::log(x - 10.0);
    for (double v : values_of(y))
        BOOST_TEST(std::isnan(v));
}

BOOST_AUTO_TEST_CASE(anomaly_mode_backward_inf_names_op) {
    tg::Tensor x = tg::zeros({3}, f64_grad());
    {
        tg::autograd::AnomalyMode anomaly;
        tg::Tensor y = tg::sqrt(x).sum();  // forward is finite (0)
        check_close(y, {0.0});
        check_throws<tg::autograd_error>([&] { y.backward(); }, {"sqrt"}, "sqrt backward at 0");
    }
    x.set_grad(tg::Tensor());
    tg::Tensor y2 = tg::sqrt(x).sum();
    BOOST_CHECK_NO_THROW(y2.backward());  // no anomaly mode: inf gradient, no exception
    for (double v : values_of(x.grad()))
        BOOST_TEST(std::isinf(v));
}

BOOST_AUTO_TEST_CASE(anomaly_mode_names_record_scope) {
    tg::Tensor x = tg::tensor({0.5, 1.0}, f64_grad());
    tg::autograd::AnomalyMode anomaly;
    tg::autograd::RecordScope scope("MyLayer");
    check_throws<tg::autograd_error>([&] { tg::log(x - 10.0); }, {"log", "MyLayer"},
                                     "scoped anomaly");
}

// ============================================================================ conversions,
// printing

BOOST_AUTO_TEST_CASE(to_dtype_is_differentiable) {
    tg::Tensor x =
        tg::tensor({1.0, -2.0, 3.0}, tg::TensorOptions(tg::kFloat32).requires_grad(true));
    tg::Tensor y = x.to(tg::kFloat64);
    BOOST_TEST(y.dtype() == tg::kFloat64);
    BOOST_TEST(y.requires_grad());
    BOOST_TEST(y.grad_fn() != nullptr);
    (y * y).sum().backward();
    BOOST_TEST(x.grad().dtype() == tg::kFloat32);
    check_close(x.grad(), {2.0, -4.0, 6.0}, 1e-6, 0);

    tg::Tensor d = make_input({3}, 42);
    tg::Tensor f = d.to(tg::kFloat32);
    BOOST_TEST(f.dtype() == tg::kFloat32);
    (f * 4.0f).sum().backward();
    BOOST_TEST(d.grad().dtype() == tg::kFloat64);
    check_close(d.grad(), {4.0, 4.0, 4.0});
}

BOOST_AUTO_TEST_CASE(clone_is_differentiable_and_owns_storage) {
    tg::Tensor x = make_input({3}, 43);
    tg::Tensor c = x.clone();
    BOOST_TEST(c.grad_fn() != nullptr);
    BOOST_TEST(c.data_ptr<double>() != x.data_ptr<double>());
    (c * 3.0).sum().backward();
    check_close(x.grad(), {3.0, 3.0, 3.0});
    BOOST_TEST(tg::gradcheck([](const std::vector<tg::Tensor>& v) { return v[0].clone() * v[0]; },
                             {make_input({2, 3}, 44)}));
}

BOOST_AUTO_TEST_CASE(operator_print_shows_values) {
    tg::Tensor x = tg::tensor({1.5, -2.25, 3.0});
    std::ostringstream os;
    os << x;
    std::string s = os.str();
    BOOST_TEST_MESSAGE("printed: " << s);
    BOOST_TEST(s.find("1.5") != std::string::npos, s);
    BOOST_TEST(s.find("-2.25") != std::string::npos, s);
    BOOST_TEST(s.find('3') != std::string::npos, s);
    BOOST_TEST(s.find("CPUFloatType{3}") != std::string::npos, s);  // tests/test_print.cpp: all
    std::ostringstream os2;
    os2 << tg::arange(0, 6, 1, tg::kInt64).reshape({2, 3});
    BOOST_TEST(os2.str().find('5') != std::string::npos, os2.str());
}
