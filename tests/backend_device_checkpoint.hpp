#pragma once
/// Checkpointing on a device: tg::checkpoint and nn::checkpoint_sequential (with Dropout) give
/// gradients bit-identical to the plain run on the same device, and the memory-budget planner
/// measures the device's allocator; a MemoryBudget keeps the device's activations. Included by
/// backend_device_tests.hpp; uses the helpers of backend_device_nn.hpp.
#include <vector>

#include "backend_device_nn.hpp"
#include "tapegrad/checkpoint.hpp"
#include "tapegrad/nn/checkpoint_sequential.hpp"

BOOST_AUTO_TEST_CASE(checkpoint_on_device_is_bit_identical,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    // tg::checkpoint over segments with dropout, with and without checkpointing, on kDev and
    // on the CPU: bit-identical on the same device, close across devices
    auto run = [](tg::Device d, bool ckpt) {
        tg::manual_seed(3);
        std::vector<Tensor> w, b;
        for (int i = 0; i < 4; ++i) {
            w.push_back(tg::randn({8, 8}, tg::kFloat64).mul_(0.4).to(d).requires_grad_());
            b.push_back(tg::randn({8}, tg::kFloat64).to(d).requires_grad_());
        }
        const Tensor x = tg::randn({5, 8}, tg::kFloat64).to(d);
        tg::manual_seed(11);
        Tensor h = x;
        for (int s = 0; s < 2; ++s) {
            auto seg = [&w, &b, s](const std::vector<Tensor>& in) {
                Tensor y = in[0];
                for (int i = 2 * s; i < 2 * s + 2; ++i)
                    y = tg::dropout(tg::tanh(tg::linear(y, w[size_t(i)], b[size_t(i)])), 0.3, true);
                return y;
            };
            h = ckpt ? tg::checkpoint(seg, {h}) : seg({h});
        }
        (h * h).mean().backward();
        std::vector<Tensor> g = grads_of(w);
        for (const Tensor& t : grads_of(b))
            g.push_back(t);
        return g;
    };
    const auto plain = run(kDev, false), ck = run(kDev, true);
    BOOST_TEST((bits(ck) == bits(plain)));
    check_all_close(ck, run(tg::Device::cpu(), true), 1e-10);
}

BOOST_AUTO_TEST_CASE(non_reentrant_checkpoint_on_device_is_bit_identical,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    // checkpoint_sequential(..., use_reentrant=false) with Dropout: the recomputed saved tensors
    // live on the device and give the plain run's gradients bit for bit
    auto run = [](tg::Device d, bool ckpt) {
        tg::manual_seed(7);
        nn::Sequential seq(nn::Linear(6, 16), nn::Tanh(), nn::Dropout(0.2), nn::Linear(16, 16),
                           nn::ReLU(), nn::Linear(16, 16), nn::Sigmoid(), nn::Linear(16, 3));
        seq->to(tg::kFloat64);
        seq->to(d);
        const Tensor x = tg::randn({8, 6}, tg::kFloat64).to(d);
        tg::manual_seed(14);
        const Tensor y = ckpt ? nn::checkpoint_sequential(seq, 3, x, false) : seq(x);
        (y * y).sum().backward();
        return grads_of(seq->parameters());
    };
    const auto plain = run(kDev, false);
    BOOST_TEST((bits(run(kDev, true)) == bits(plain)));
    check_all_close(plain, run(tg::Device::cpu(), true), 1e-10);
}

BOOST_AUTO_TEST_CASE(autograd_grad_through_checkpoint_on_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    // autograd::grad with respect to the input and the weights used inside a checkpointed
    // segment with dropout (Note [Checkpoint edges]): the plain graph's gradients bit for bit on
    // the device, close to the CPU's, and no .grad() written
    auto run = [](tg::Device d, bool ckpt) {
        tg::manual_seed(6);
        const Tensor w = tg::randn({8, 8}, tg::kFloat64).mul_(0.4).to(d).requires_grad_();
        const Tensor b = tg::randn({8}, tg::kFloat64).to(d).requires_grad_();
        const Tensor x = tg::randn({5, 8}, tg::kFloat64).to(d).requires_grad_();
        auto seg = [&w, &b](const std::vector<Tensor>& in) {
            return tg::dropout(tg::tanh(tg::linear(in[0], w, b)), 0.3, true);
        };
        tg::manual_seed(13);
        const Tensor y = ckpt ? tg::checkpoint(seg, {x}) : seg({x});
        auto g = tg::autograd::grad({(y * y).sum()}, {x, w, b});
        BOOST_TEST(!w.grad().defined());
        BOOST_TEST(!b.grad().defined());
        return g;
    };
    const auto plain = run(kDev, false), ck = run(kDev, true);
    BOOST_TEST((bits(ck) == bits(plain)));
    check_all_close(ck, run(tg::Device::cpu(), true), 1e-10);
}

BOOST_AUTO_TEST_CASE(checkpoint_sequential_on_device_is_bit_identical,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    auto run = [](tg::Device d, int mode) {  // 0 plain, 1 two segments, 2 budget plan
        tg::manual_seed(4);
        nn::Sequential seq(nn::Linear(6, 16), nn::Tanh(), nn::Dropout(0.2), nn::Linear(16, 16),
                           nn::ReLU(), nn::Dropout(0.3), nn::Linear(16, 16), nn::Sigmoid(),
                           nn::Linear(16, 3));
        seq->to(tg::kFloat64);
        seq->to(d);
        const Tensor x = tg::randn({8, 6}, tg::kFloat64).to(d);
        nn::CheckpointPlan plan;
        if (mode == 2) {
            const auto prof = nn::profile_sequential(seq, x);
            plan = nn::plan_checkpoints(prof, tg::MemoryBudget{nn::min_checkpoint_budget(prof)});
            BOOST_TEST(prof.saved_bytes_total() > 0);
        }
        tg::manual_seed(12);
        const Tensor y = mode == 0   ? seq(x)
                         : mode == 1 ? nn::checkpoint_sequential(seq, 2, x)
                                     : nn::checkpoint_sequential(seq, plan, x);
        BOOST_TEST(y.device() == d);
        (y * y).sum().backward();
        return grads_of(seq->parameters());
    };
    const auto plain = run(kDev, 0);
    BOOST_TEST((bits(run(kDev, 1)) == bits(plain)));
    BOOST_TEST((bits(run(kDev, 2)) == bits(plain)));
    check_all_close(plain, run(tg::Device::cpu(), 0), 1e-10);
}

BOOST_AUTO_TEST_CASE(checkpoint_planner_measures_the_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    // profile_sequential must read the allocator of the input's device (it read the CPU's)
    using namespace device_nn;
    auto profile = [](tg::Device d) {
        tg::manual_seed(4);
        nn::Sequential seq(nn::Linear(6, 16), nn::Tanh(), nn::Linear(16, 3));
        seq->to(d);
        return nn::profile_sequential(seq, tg::randn({8, 6}).to(d));
    };
    const auto c = profile(tg::Device::cpu()), g = profile(kDev);
    BOOST_TEST_REQUIRE(c.layers.size() == g.layers.size());
    for (size_t i = 0; i < c.layers.size(); ++i)
        BOOST_TEST_CONTEXT(c.layers[i].name) {
            BOOST_TEST(g.layers[i].out_bytes == c.layers[i].out_bytes);
            BOOST_TEST(g.layers[i].saved_bytes == c.layers[i].saved_bytes);
            BOOST_TEST(g.layers[i].forward_peak > 0);
            BOOST_TEST(g.layers[i].forward_peak == c.layers[i].forward_peak);
            BOOST_TEST(g.layers[i].backward_peak > 0);
        }
}

BOOST_AUTO_TEST_CASE(activation_memory_is_counted_on_the_device,
                     *boost::unit_test::precondition(NeedsDevice())) {
    // memory::stats(dev).saved_bytes counts the device's buffers kept for backward, as on the CPU
    using namespace device_nn;
    auto run = [](tg::Device d) {
        tg::manual_seed(5);
        nn::Sequential seq(nn::Linear(16, 16), nn::Tanh(), nn::Dropout(0.5), nn::Linear(16, 16),
                           nn::Tanh());
        seq->to(d);
        const Tensor x = tg::randn({8, 16}).to(d);
        const int64_t s0 = tg::memory::stats(d).saved_bytes;
        tg::memory::reset_peak(d);
        Tensor loss = seq(x).sum();
        const int64_t kept = tg::memory::stats(d).saved_bytes - s0;
        loss.backward();
        BOOST_TEST(tg::memory::stats(d).saved_bytes == s0);
        return std::make_pair(kept, tg::memory::stats(d).peak_saved_bytes - s0);
    };
    const auto [dev_kept, dev_peak] = run(kDev);
    // the two tanh outputs and dropout's output (the second linear's input), 8 x 16 floats
    // each; dropout keeps its mask's seed only on the device, its mask as bits on the CPU (Note
    // [Dropout masks]: 128 bits, 16 bytes); x and the parameters are leaves, not counted
    BOOST_TEST(dev_kept == 3 * 8 * 16 * 4);
    BOOST_TEST(dev_peak == dev_kept);
    BOOST_TEST(run(tg::Device::cpu()).first == dev_kept + 8 * 16 / 8);
}

BOOST_AUTO_TEST_CASE(memory_budget_on_device, *boost::unit_test::precondition(NeedsDevice())) {
    // a MemoryBudget of 1/3 of the plain peak on the device: the activations it keeps are the
    // device's (memory::stats(dev).saved_bytes counts them, and never passes the budget), evicted
    // and recomputed there (dropout's mask drawn again from its seed); gradients bit for bit
    using namespace device_nn;
    tg::manual_seed(6);
    std::vector<Tensor> w;
    for (int i = 0; i < 24; ++i)
        w.push_back(tg::randn({16, 16}, tg::kFloat64).mul_(0.4).to(kDev).requires_grad_());
    const Tensor x = tg::randn({8, 16}, tg::kFloat64).to(kDev);
    auto step = [&] {
        for (Tensor t : w)
            t.set_grad({});
        tg::manual_seed(12);
        Tensor h = x;
        for (size_t i = 0; i < w.size(); ++i) {
            h = tg::linear(h, w[i]);
            h = i % 2 ? tg::tanh(h) : tg::relu(h);
            if (i % 3 == 2)
                h = tg::dropout(h, 0.2, true);
        }
        (h * h).sum().backward();
        return grads_of(w);
    };
    tg::memory::reset_peak(kDev);
    const auto plain = step();
    const int64_t peak = tg::memory::stats(kDev).peak_saved_bytes;
    BOOST_TEST_REQUIRE(peak > 0);
    const int64_t limit = peak / 3;
    tg::autograd::MemoryBudget budget(limit);
    tg::memory::reset_peak(kDev);
    const auto kept = step();
    BOOST_TEST((bits(kept) == bits(plain)));
    const auto r = budget.report();
    BOOST_TEST(r.rematerializations > 0);
    BOOST_TEST(r.peak_saved_bytes <= limit);
    BOOST_TEST(tg::memory::stats(kDev).peak_saved_bytes <= limit);
    BOOST_TEST(tg::memory::stats(kDev).peak_saved_bytes > 0);
    BOOST_TEST(r.recomputed_ops.count("linear") == 1u);
}
