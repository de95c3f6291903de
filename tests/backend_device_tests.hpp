#pragma once
/// The device test cases shared by test_backend_opencl.cpp and test_backend_cuda.cpp: include
/// after defining `const tg::Device kDev` (the device under test). Each case needing the device
/// skips cleanly (a Boost.Test precondition) when it is not available. The engine suite
/// (backend_device_engine.hpp), the layers/optimizers/save-load suite (backend_device_nn.hpp)
/// and the checkpointing cases (backend_device_checkpoint.hpp) are included at the end.
#include "backend_conformance.hpp"

namespace {

/// Runs the test body only when kDev exists.
struct NeedsDevice {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
        boost::test_tools::assertion_result r(tg::is_available(kDev));
        r.message() << kDev.str() << " is not available (backend not built, or no device)";
        return r;
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(availability) {
    if (!tg::is_available(kDev)) {
        BOOST_TEST_MESSAGE(kDev.str() << " is not available: checking the error only");
        tgtest::check_throws<tg::backend_unavailable>([] { tg::zeros({2}, kDev); }, {kDev.str()});
        return;
    }
    const tg::Device missing{kDev.type, 99};
    BOOST_TEST(!tg::is_available(missing));
    tgtest::check_throws<tg::backend_unavailable>([&] { tg::zeros({2}, missing); },
                                                  {missing.str(), "device(s) found"});
}

BOOST_AUTO_TEST_CASE(cuda_unavailable_has_hint) {
    if (tg::is_available(tg::Device::cuda(0)))
        return;
    try {
        tg::zeros({2}, tg::Device::cuda(0));
        BOOST_ERROR("expected backend_unavailable");
    } catch (const tg::backend_unavailable& e) {
        const std::string m = e.what();
        BOOST_TEST_INFO("message: " << m);
        BOOST_TEST(
            (tgtest::contains(m, "cuda:0") && (tgtest::contains(m, "built without TG_CUDA") ||
                                               tgtest::contains(m, "no CUDA device"))));
    }
}

BOOST_AUTO_TEST_CASE(every_op_matches_cpu, *boost::unit_test::precondition(NeedsDevice())) {
    conformance::run_all(kDev);
}

BOOST_AUTO_TEST_CASE(int64_ops_and_conversions, *boost::unit_test::precondition(NeedsDevice())) {
    const tg::Tensor a = tg::tensor(std::vector<int64_t>{3, -1, 4, 1, -5, 9}).reshape({2, 3});
    const tg::Tensor d = a.to(kDev);
    tgtest::check_close((d * 2 + d).to(tg::Device::cpu()), {9, -3, 12, 3, -15, 27}, 0, 0);
    tgtest::check_close(d.sum({1}).to(tg::Device::cpu()), {6, 5}, 0, 0);
    tgtest::check_close(tg::amax(d, {0}).to(tg::Device::cpu()), {3, -1, 9}, 0, 0);
    tgtest::check_close(d.to(tg::kFloat64).t().contiguous().to(tg::Device::cpu()),
                        {3, 1, -1, -5, 4, 9}, 0, 0);
    tgtest::check_close(tg::tensor({1.7, -2.2}).to(kDev).to(tg::kInt64).to(tg::Device::cpu()),
                        {1, -2}, 0, 0);
}

BOOST_AUTO_TEST_CASE(every_dtype_stores_converts_and_computes_as_on_the_cpu,
                     *boost::unit_test::precondition(NeedsDevice())) {
    const tg::Device cpu = tg::Device::cpu();
    const tg::Dtype all[] = {tg::kFloat32, tg::kFloat64, tg::kInt64, tg::kBool,    tg::kUInt8,
                             tg::kInt8,    tg::kInt16,   tg::kInt32, tg::kFloat16, tg::kBFloat16};
    // edge values (Note [Conversions]): every pair converts on the device as on the CPU
    const tg::Tensor v = tg::tensor({255.0, 256.0, -1.0, -129.0, 1e10, -1e10, std::nan(""), 2.7,
                                     -2.7, 300.5, 65520.0, 1.0 / 3, 2147483909.0, 1e-7},
                                    tg::kFloat64);
    for (tg::Dtype a : all)
        for (tg::Dtype b : all) {
            BOOST_TEST_CONTEXT(a << " -> " << b << " on " << kDev) {
                const tg::Tensor x = v.to(a);
                const std::vector<double> want = tgtest::values_of(x.to(b));
                const std::vector<double> got = tgtest::values_of(x.to(kDev).to(b).to(cpu));
                for (size_t i = 0; i < want.size(); ++i)
                    BOOST_TEST((got[i] == want[i] || (got[i] != got[i] && want[i] != want[i])),
                               "element " << i << ": " << got[i] << " vs " << want[i]);
            }
        }
    // structural copies move every dtype
    for (tg::Dtype d : all) {
        BOOST_TEST_CONTEXT(d << " on " << kDev) {
            const tg::Tensor x = tg::arange(12).reshape({3, 4}).to(d);
            const tg::Tensor y = x.to(kDev);
            const tg::Tensor idx = tg::tensor(std::vector<int64_t>{2, 0});
            const tg::Tensor mask = tg::tensor({1.0, 0.0, 1.0, 1.0}, tg::kBool);
            tgtest::check_close(y.t().contiguous().to(cpu), x.t().contiguous(), 0, 0);
            tgtest::check_close(tg::cat({y, y}, 1).to(cpu), tg::cat({x, x}, 1), 0, 0);
            tgtest::check_close(y.index_select(0, idx.to(kDev)).to(cpu), x.index_select(0, idx), 0,
                                0);
            tgtest::check_close(tg::where(mask.to(kDev), y, y.narrow(0, 2, 1)).to(cpu),
                                tg::where(mask, x, x.narrow(0, 2, 1)), 0, 0);
        }
    }
    // integer arithmetic wraps and float16 rounds per op, on the device as on the CPU
    const tg::Tensor u = tg::tensor({200.0, 10.0, 0.0, 255.0}, tg::kUInt8);
    const tg::Tensor w = tg::tensor({100.0, 20.0, 1.0, 2.0}, tg::kUInt8);
    const tg::Tensor h = tg::tensor({2048.0, 0.1, 65504.0, -1.5}, tg::kHalf);
    const tg::Tensor ud = u.to(kDev), wd = w.to(kDev), hd = h.to(kDev);
    tgtest::check_close((ud + wd).to(cpu), {44, 30, 1, 1}, 0, 0);
    tgtest::check_close((ud * 2).to(cpu), {144, 20, 0, 254}, 0, 0);
    tgtest::check_close((ud > 300).to(cpu), {1, 0, 0, 1}, 0, 0);
    tgtest::check_close(ud.sum().to(cpu), {465}, 0, 0);
    BOOST_TEST(ud.sum().dtype() == tg::kInt64);
    tgtest::check_close((hd + 1).to(cpu), {2048, 1.099609375, 65504, -0.5}, 0, 0);
    BOOST_TEST(tgtest::values_of((hd * hd).to(cpu)) == tgtest::values_of(h * h));  // inf too
    tgtest::check_close((ud / wd).to(cpu), {2, 0.5, 0, 127.5}, 0, 0);
    // an image's bytes, converted on the device
    std::vector<uint8_t> bytes(2 * 3 * 4);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = uint8_t(i * 11);
    const tg::Tensor img = tg::from_blob(bytes.data(), {2, 3, 4}, tg::kUInt8);
    tgtest::check_close((img.to(kDev).to(tg::kFloat32) / 255).to(cpu), img.to(tg::kFloat32) / 255,
                        0, 0);
}

BOOST_AUTO_TEST_CASE(mlp_trains_like_cpu, *boost::unit_test::precondition(NeedsDevice())) {
    const auto cpu = conformance::train_mlp(tg::Device::cpu(), 200);
    const auto dev = conformance::train_mlp(kDev, 200);
    BOOST_TEST_REQUIRE(cpu.size() == dev.size());
    for (size_t i = 0; i < cpu.size(); ++i)
        BOOST_TEST_CONTEXT("step " << i * 10) {
            BOOST_TEST(std::abs(cpu[i] - dev[i]) <= 2e-3 + 2e-3 * cpu[i]);
        }
    BOOST_TEST(dev.back() < 0.3 * dev.front());
    BOOST_TEST_MESSAGE(kDev << " MLP loss " << dev.front() << " -> " << dev.back() << " (CPU "
                            << cpu.front() << " -> " << cpu.back() << ")");
}

BOOST_AUTO_TEST_CASE(optimizer_steps_move_zero_bytes,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace tg;
    auto sgd = [](std::vector<Tensor> p) {
        return optim::SGD(p, optim::SGDOptions(0.1).momentum(0.9));
    };
    auto adam = [](std::vector<Tensor> p) { return optim::Adam(p, optim::AdamOptions(1e-2)); };
    auto adamw = [](std::vector<Tensor> p) { return optim::AdamW(p, optim::AdamWOptions(1e-2)); };
    for (bool clip : {false, true}) {
        BOOST_TEST_CONTEXT("clip_grad_norm_ " << clip) {
            BOOST_TEST(conformance::step_transfers(kDev, sgd, clip).total() == 0);
            BOOST_TEST(conformance::step_transfers(kDev, adam, clip).total() == 0);
            BOOST_TEST(conformance::step_transfers(kDev, adamw, clip).total() == 0);
        }
    }
}

BOOST_AUTO_TEST_CASE(transfers_are_counted, *boost::unit_test::precondition(NeedsDevice())) {
    tg::memory::reset_transfers(kDev);
    const tg::Tensor x = tg::ones({10, 10}, tg::kFloat32).to(kDev);
    BOOST_TEST(tg::memory::transfers(kDev).host_to_device == 400);
    BOOST_TEST(x.sum().item<float>() == 100.0f);
    BOOST_TEST(tg::memory::transfers(kDev).device_to_host == 4);
    BOOST_TEST(tg::memory::transfers(tg::Device::cpu()).total() == 0);
}

BOOST_AUTO_TEST_CASE(mixing_devices_throws, *boost::unit_test::precondition(NeedsDevice())) {
    const tg::Tensor a = tg::ones({2, 3});
    const tg::Tensor b = tg::ones({2, 3}).to(kDev);
    tgtest::check_throws<tg::device_error>([&] { (void)(a + b); }, {"add", "cpu", kDev.str()});
    tgtest::check_throws<tg::device_error>([&] { (void)tg::matmul(b, a.t()); },
                                           {"cpu", kDev.str()});
    tgtest::check_throws<tg::device_error>([&] { (void)b.data_ptr<float>(); }, {kDev.str()});
}

BOOST_AUTO_TEST_CASE(every_multi_input_op_rejects_mixed_devices,
                     *boost::unit_test::precondition(NeedsDevice())) {
    // a backend must never be handed another device's buffer: each op throws device_error
    // (clip_grad_norm_ accepts gradients on several devices, as PyTorch's does)
    using tg::Tensor;
    const Tensor c = tg::ones({2, 3}), d = tg::ones({2, 3}).to(kDev);
    const Tensor li_c = tg::tensor(std::vector<int64_t>{0, 1}), li_d = li_c.to(kDev);
    const Tensor sq_c = tg::ones({3, 3}), sq_d = sq_c.to(kDev);
    const std::vector<std::pair<std::string, std::function<void()>>> probes = {
        {"sub", [&] { (void)(d - c); }},
        {"mul", [&] { (void)(c * d); }},
        {"div", [&] { (void)(d / c); }},
        {"pow", [&] { (void)tg::pow(d, c); }},
        {"maximum", [&] { (void)tg::maximum(c, d); }},
        {"minimum", [&] { (void)tg::minimum(d, c); }},
        {"where cond", [&] { (void)tg::where(tg::gt(c, 0.0), d, d); }},
        {"where a", [&] { (void)tg::where(tg::gt(d, 0.0), c, d); }},
        {"where b", [&] { (void)tg::where(tg::gt(d, 0.0), d, c); }},
        {"matmul", [&] { (void)tg::matmul(d, sq_c); }},
        {"linear weight", [&] { (void)tg::linear(d, c); }},
        {"linear bias", [&] { (void)tg::linear(d, d, tg::ones({2})); }},
        {"cat",
         [&] {
             (void)tg::cat({d, c});
         }},
        {"stack",
         [&] {
             (void)tg::stack({c, d});
         }},
        {"index_select", [&] { (void)tg::index_select(d, 0, li_c); }},
        {"gather",
         [&] {
             (void)tg::gather(d, 1, li_c.reshape({2, 1}).expand({2, 2}));
         }},
        {"index_add",
         [&] {
             (void)tg::index_add(d, {3, 3}, 0, li_c);
         }},
        {"scatter_add",
         [&] {
             (void)tg::scatter_add(d, {2, 4}, 1, tg::zeros({2, 3}, tg::kInt64));
         }},
        {"eq", [&] { (void)tg::eq(d, c); }},
        {"lt", [&] { (void)tg::lt(c, d); }},
        {"mse_loss", [&] { (void)tg::mse_loss(d, c); }},
        {"l1_loss", [&] { (void)tg::l1_loss(c, d); }},
        {"nll_loss", [&] { (void)tg::nll_loss(d, li_c); }},
        {"nll_loss labels", [&] { (void)tg::nll_loss(c, li_d); }},
        {"cross_entropy", [&] { (void)tg::cross_entropy(d, li_c); }},
        {"cross_entropy labels", [&] { (void)tg::cross_entropy(c, li_d); }},
        {"bce_with_logits", [&] { (void)tg::binary_cross_entropy_with_logits(d, c); }},
        {"add_", [&] { Tensor(d.clone()).add_(c); }},
        {"mul_", [&] { Tensor(c.clone()).mul_(d); }},
        {"backward gradient",
         [&] {
             Tensor x = tg::ones({2, 3}).to(kDev).requires_grad_();
             (x * 2.0).backward(c);
         }},
        {"autograd::grad grad_outputs",
         [&] {
             Tensor x = tg::ones({2, 3}).to(kDev).requires_grad_();
             (void)tg::autograd::grad({x * 2.0}, {x}, {c});
         }},
    };
    for (const auto& [name, f] : probes)
        tgtest::check_throws<tg::device_error>(f, {}, name);
}

BOOST_AUTO_TEST_CASE(bad_index_reported_at_sync, *boost::unit_test::precondition(NeedsDevice())) {
    // Note [Deferred index errors] in src/backend/opencl.cpp (and cuda.cu)
    const tg::Tensor x = tg::ones({3, 2}).to(kDev);
    const tg::Tensor idx = tg::tensor(std::vector<int64_t>{0, 7}).to(kDev);
    tgtest::check_throws<tg::shape_error>(
        [&] { (void)tg::index_select(x, 0, idx).to(tg::Device::cpu()); },
        {"index_select", "index 7", "size 3"});
    const tg::Tensor y = tg::tensor(std::vector<int64_t>{0, 3}).to(kDev);
    tgtest::check_throws<tg::shape_error>(
        [&] {
            (void)tg::cross_entropy(x.reshape({2, 3}), y).item<float>();
        },
        {"cross_entropy", "3"});
    BOOST_TEST(
        tg::index_select(x, 0, tg::tensor(std::vector<int64_t>{2}).to(kDev)).sum().item<float>() ==
        2.0f);
}

BOOST_AUTO_TEST_CASE(allocator_caches_and_counts, *boost::unit_test::precondition(NeedsDevice())) {
    tg::memory::empty_cache(kDev);
    const int64_t before = tg::memory::stats(kDev).current_bytes;
    {
        const tg::Tensor t = tg::zeros({1000}, tg::TensorOptions(tg::kFloat32).device(kDev));
        BOOST_TEST(tg::memory::stats(kDev).current_bytes == before + 4000);
    }
    BOOST_TEST(tg::memory::stats(kDev).current_bytes == before);
    BOOST_TEST(tg::memory::stats(kDev).cached_bytes >= 4000);
    const int64_t allocs = tg::memory::stats(kDev).num_allocs;
    const tg::Tensor again = tg::zeros({1000}, tg::TensorOptions(tg::kFloat32).device(kDev));
    BOOST_TEST(tg::memory::stats(kDev).num_allocs == allocs + 1);
    BOOST_TEST(tg::memory::stats(kDev).cached_bytes < 4000);  // the cached block was reused
    tg::memory::empty_cache(kDev);
    BOOST_TEST(tg::memory::stats(kDev).cached_bytes == 0);
}

BOOST_AUTO_TEST_CASE(anomaly_check_on_device, *boost::unit_test::precondition(NeedsDevice())) {
    tg::Tensor x = tg::tensor({1.0, 0.0}).to(kDev);
    x.requires_grad_(true);
    tg::autograd::AnomalyMode guard;
    tgtest::check_throws<tg::autograd_error>([&] { tg::log(x).sum().backward(); }, {"log"});
}

#include "backend_device_checkpoint.hpp"
#include "backend_device_engine.hpp"
#include "backend_device_nn.hpp"
#include "backend_device_saved_hooks.hpp"
