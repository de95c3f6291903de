#pragma once
/// The autograd engine's behaviours on a device (after tests/test_engine*.cpp), each run on kDev
/// and on the CPU from the same inputs and compared: accumulation across backward calls,
/// retain_graph, double backward, hooks, autograd::grad, grad modes, detach, version counters,
/// graph release and a deep chain. Included by backend_device_tests.hpp (NeedsDevice, kDev).
#include <functional>
#include <string>
#include <vector>

namespace device_engine {

using tg::Tensor;

/// A float64 leaf on d that requires grad, the same values for the same seed on every device.
inline Tensor leaf(const tg::Shape& s, uint64_t seed, tg::Device d) {
    return conformance::make_input(s, seed, tg::kFloat64, d, false, true);
}
inline Tensor constant(const tg::Shape& s, uint64_t seed, tg::Device d) {
    return conformance::make_input(s, seed, tg::kFloat64, d, false, false);
}
inline Tensor on_cpu(const Tensor& t) {
    return t.to(tg::Device::cpu());
}

/// Runs f on the CPU and on kDev; f returns the tensors to compare (any device).
inline void same_on_both(const std::string& what,
                         const std::function<std::vector<Tensor>(tg::Device)>& f,
                         double tol = 1e-10) {
    BOOST_TEST_CONTEXT(what << " on " << kDev) {
        const std::vector<Tensor> c = f(tg::Device::cpu()), d = f(kDev);
        BOOST_TEST_REQUIRE(c.size() == d.size());
        for (size_t i = 0; i < c.size(); ++i)
            BOOST_TEST_CONTEXT("result " << i) {
                BOOST_TEST_REQUIRE(d[i].defined() == c[i].defined());
                if (c[i].defined())
                    tgtest::check_close(on_cpu(d[i]), c[i], tol, tol);
            }
    }
}

/// f(x, W) = Σ tanh(x·W)·x·W-ish terms: matmul, tanh, exp and a product, for double backward.
inline Tensor hvp_fn(const Tensor& x, const Tensor& w) {
    const Tensor h = tg::tanh(tg::matmul(x, w));
    return (h * h).sum() + tg::exp(w * 0.5).sum() * x.sum();
}

/// ||d Σ tanh(x·W) / dx||²: a gradient penalty.
inline Tensor penalty(const Tensor& x, const Tensor& w) {
    const Tensor out = tg::tanh(tg::matmul(x, w)).sum();
    const Tensor gx = tg::autograd::grad({out}, {x}, {}, true, true)[0];
    return (gx * gx).sum();
}

}  // namespace device_engine

BOOST_AUTO_TEST_CASE(engine_accumulates_and_retains_graph_on_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    same_on_both("accumulation", [](tg::Device d) {
        Tensor x = leaf({2, 3}, 1, d);
        Tensor loss = (tg::tanh(x) * x).sum();
        loss.backward({}, /*retain_graph=*/true);
        const Tensor g1 = x.grad().clone();
        BOOST_TEST(x.grad().device() == d);
        BOOST_TEST(!x.grad().requires_grad());
        loss.backward();           // allowed once more: the graph was retained
        (x * x).sum().backward();  // a fresh graph adds into .grad()
        tgtest::check_throws<tg::autograd_error>([&] { loss.backward(); }, {"retain_graph"},
                                                 "third backward");
        const Tensor g3 = x.grad().clone();
        x.set_grad(Tensor());  // zero_grad(set_to_none)
        BOOST_TEST(!x.grad().defined());
        (x * 3.0).sum().backward();
        return std::vector<Tensor>{g1, g3, x.grad()};
    });
    same_on_both("explicit gradient, several roots", [](tg::Device d) {
        Tensor x = leaf({3}, 4, d);
        (x * 2.0).backward(constant({3}, 5, d));
        tg::autograd::backward({(x * x).sum(), (tg::exp(x) * 5.0).sum()});
        return std::vector<Tensor>{x.grad()};
    });
}

BOOST_AUTO_TEST_CASE(engine_double_backward_on_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    same_on_both("Hessian-vector product of tanh(matmul)", [](tg::Device d) {
        Tensor x = leaf({4, 3}, 6, d), w = leaf({3, 5}, 7, d);
        const Tensor v = constant({3, 5}, 8, d);
        const auto g = tg::autograd::grad({hvp_fn(x, w)}, {x, w}, {}, true, true);
        BOOST_TEST(g[1].requires_grad());
        BOOST_TEST(g[1].device() == d);
        const auto hv = tg::autograd::grad({(g[1] * v).sum()}, {x, w});
        return std::vector<Tensor>{g[0], g[1], hv[0], hv[1]};
    });
    same_on_both("gradient penalty backpropagated to the weights", [](tg::Device d) {
        Tensor x = leaf({5, 4}, 9, d), w = leaf({4, 3}, 10, d);
        Tensor pen = penalty(x, w);
        BOOST_TEST(pen.requires_grad());
        pen.backward();
        return std::vector<Tensor>{pen, x.grad(), w.grad()};
    });
    same_on_both("create_graph through backward()", [](tg::Device d) {
        Tensor x = leaf({3}, 11, d);
        const Tensor g = tg::autograd::grad({(x * x * x).sum()}, {x}, {}, true, true)[0];
        g.sum().backward();  // d/dx Σ 3x² = 6x
        return std::vector<Tensor>{g, x.grad()};
    });
}

BOOST_AUTO_TEST_CASE(engine_hooks_on_device, *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    same_on_both("leaf and non-leaf hooks", [](tg::Device d) {
        Tensor x = leaf({3}, 12, d), w = leaf({3}, 13, d);
        Tensor seen;
        x.register_hook([&](const Tensor& g) {
            BOOST_TEST(g.device() == d);
            seen = g.clone();
            return Tensor();  // undefined: keep the gradient
        });
        w.register_hook([](const Tensor& g) { return g * 3.0; });
        Tensor h = x * w;
        Tensor seen_h;
        h.register_hook([&](const Tensor& g) {
            seen_h = g.clone();
            return g * 10.0;
        });
        (h * h + w).sum().backward();
        return std::vector<Tensor>{seen, seen_h, x.grad(), w.grad()};
    });
}

BOOST_AUTO_TEST_CASE(engine_autograd_grad_on_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    same_on_both("autograd::grad", [](tg::Device d) {
        Tensor x = leaf({3}, 18, d), y = leaf({3}, 19, d), z = leaf({3}, 20, d);
        const auto gs = tg::autograd::grad({(x * x * y).sum()}, {x, y});
        BOOST_TEST(!x.grad().defined());
        BOOST_TEST(!y.grad().defined());
        BOOST_TEST(!gs[0].requires_grad());
        const auto gv = tg::autograd::grad({x * y}, {x}, {constant({3}, 21, d)});
        tgtest::check_throws<tg::autograd_error>(
            [&] {
                tg::autograd::grad({(x * 2.0).sum()}, {x, z});
            },
            {}, "unused input without allow_unused");
        const auto gu =
            tg::autograd::grad({(x * 2.0).sum()}, {x, z}, {}, false, false, /*allow_unused=*/true);
        BOOST_TEST(!gu[1].defined());
        return std::vector<Tensor>{gs[0], gs[1], gv[0], gu[0], gu[1]};
    });
}

BOOST_AUTO_TEST_CASE(engine_grad_modes_and_detach_on_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    Tensor x = leaf({3}, 22, kDev);
    {
        tg::NoGradGuard guard;
        const Tensor y = x * 2.0 + 1.0;
        BOOST_TEST(!y.requires_grad());
        BOOST_TEST(y.grad_fn() == nullptr);
        const uint32_t v0 = x._version();
        x.mul_(2.0);  // in-place on a leaf is allowed without recording (optimizer steps)
        BOOST_TEST(x._version() > v0);
    }
    BOOST_TEST(tg::exp(x).requires_grad());
    const Tensor y = tg::exp(x);
    Tensor dt = y.detach();
    BOOST_TEST(dt.is_leaf());
    BOOST_TEST(!dt.requires_grad());
    BOOST_TEST(dt.device() == kDev);
    BOOST_TEST(!(dt * 2.0).requires_grad());
    dt.mul_(2.0);  // the detached alias shares storage and version with exp's saved output
    tgtest::check_close(on_cpu(y), on_cpu(dt), 0, 0);
    tgtest::check_throws<tg::autograd_error>([&] { y.sum().backward(); }, {"exp"},
                                             "backward after a write through the detached alias");
    // to() is differentiable: a CPU leaf used on the device gets its gradient on the CPU
    Tensor c = leaf({3}, 23, tg::Device::cpu());
    (c.to(kDev) * 4.0).sum().backward();
    BOOST_TEST(c.grad().device() == tg::Device::cpu());
    tgtest::check_close(c.grad(), {4.0, 4.0, 4.0});
}

BOOST_AUTO_TEST_CASE(engine_version_counter_on_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    Tensor x = leaf({3}, 29, kDev);
    Tensor a = constant({3}, 30, kDev);
    const Tensor y = x * a;
    a.mul_(2.0);
    tgtest::check_throws<tg::autograd_error>([&] { y.sum().backward(); }, {"mul"},
                                             "saved input modified");
    const Tensor e = tg::exp(x);
    {
        tg::NoGradGuard guard;
        Tensor(e).add_(1.0);
    }
    tgtest::check_throws<tg::autograd_error>([&] { e.sum().backward(); }, {"exp"},
                                             "saved output modified");
    tgtest::check_throws<tg::autograd_error>([&] { x.add_(1.0); }, {}, "add_ on a leaf");
    // add saves nothing: modifying its input afterwards is fine
    Tensor b = constant({3}, 31, kDev);
    const Tensor s = x + b;
    b.mul_(2.0);
    BOOST_CHECK_NO_THROW(s.sum().backward());
    tgtest::check_close(on_cpu(x.grad()), {1.0, 1.0, 1.0});
}

BOOST_AUTO_TEST_CASE(engine_frees_graphs_on_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    const Tensor w = leaf({16, 8}, 37, kDev);
    const Tensor x = constant({64, 16}, 38, kDev);
    const int64_t start = tg::memory::stats(kDev).current_bytes;
    for (int i = 0; i < 20; ++i) {  // no NoGradGuard: each graph dies with its loss
        const Tensor loss = tg::tanh(tg::matmul(x, w)).sum();
        BOOST_TEST(loss.requires_grad());
    }
    BOOST_TEST(tg::memory::stats(kDev).current_bytes == start);
    int64_t before = 0;
    {
        Tensor h = tg::tanh(tg::matmul(x, w));  // [64,8] float64 = 4096 bytes
        const Tensor loss = (h * h).sum();
        h = Tensor();
        before = tg::memory::stats(kDev).current_bytes;
        BOOST_TEST(before - start >= 4096);
        loss.backward();
        // the saved activations are gone; w.grad ([16,8] = 1024 bytes) was added
        BOOST_TEST(tg::memory::stats(kDev).current_bytes - start <= 1024 + 512);
    }
    BOOST_TEST(tg::memory::stats(kDev).current_bytes - start <= 1024 + 512);
}

BOOST_AUTO_TEST_CASE(engine_deep_chain_on_device, *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_engine;
    Tensor x = leaf({4}, 36, kDev);
    {
        Tensor y = x;
        for (int i = 0; i < 2000; ++i)
            y = (i % 2) ? y * 1.0 : y + 1e-3;
        y.sum().backward();
        tgtest::check_close(on_cpu(y), tgtest::values_of(on_cpu(x) + 1.0), 1e-12, 1e-12);
        tgtest::check_close(on_cpu(x.grad()), {1.0, 1.0, 1.0, 1.0}, 1e-12, 0);
    }  // the released graph is destroyed here
    {
        Tensor y = x;
        for (int i = 0; i < 2000; ++i)
            y = y * 1.0;
    }  // an un-backpropagated graph of 2000 nodes is destroyed here
    BOOST_TEST(tg::memory::stats(kDev).current_bytes >= 0);
}
