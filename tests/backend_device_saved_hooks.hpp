#pragma once
/// save_on_cpu on a device (Note [Public saved-tensor hooks] in src/autograd/saved_hooks.cpp):
/// an MLP's and a small CNN's saved tensors go to host memory, the device keeps only what the
/// program holds (the loss), and the gradients are the plain step's bit for bit. Included by
/// backend_device_tests.hpp; uses the helpers of backend_device_nn.hpp.
#include <memory>
#include <vector>

#include "backend_device_nn.hpp"
#include "tapegrad/saved_hooks.hpp"

BOOST_AUTO_TEST_CASE(save_on_cpu_on_device, *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    struct Step {
        std::vector<std::vector<double>> grads;
        int64_t device_held = 0, host_held = 0, device_saved = 0;
    };
    auto run = [](bool cnn, bool offload) {
        tg::manual_seed(3);
        nn::Sequential seq;
        if (cnn)
            seq = nn::Sequential(nn::Conv2d(nn::Conv2dOptions(2, 6, 3).padding(1)), nn::ReLU(),
                                 nn::MaxPool2d(2), nn::Conv2d(nn::Conv2dOptions(6, 6, 3)),
                                 nn::Tanh(), nn::Flatten(), nn::Linear(6 * 2 * 2, 3));
        else
            seq = nn::Sequential(nn::Linear(8, 64), nn::Tanh(), nn::Linear(64, 64), nn::ReLU(),
                                 nn::Linear(64, 3));
        seq->to(kDev);
        const Tensor x =
            (cnn ? tg::randn({4, 2, 8, 8}) : tg::randn({32, 8})).to(kDev).requires_grad_();
        const int64_t dev0 = tg::memory::stats(kDev).current_bytes,
                      host0 = tg::memory::stats().current_bytes;
        Step s;
        {
            std::unique_ptr<tg::autograd::save_on_cpu> guard;
            if (offload)
                guard = std::make_unique<tg::autograd::save_on_cpu>();
            const Tensor loss = seq(x).pow(2).mean();
            s.device_held = tg::memory::stats(kDev).current_bytes - dev0;
            s.host_held = tg::memory::stats().current_bytes - host0;
            s.device_saved = tg::memory::stats(kDev).saved_bytes;
            loss.backward();
        }
        std::vector<Tensor> ps = seq->parameters();
        ps.push_back(x);
        s.grads = bits(grads_of(ps));
        return s;
    };
    for (bool cnn : {false, true})
        BOOST_TEST_CONTEXT((cnn ? "cnn" : "mlp")) {
            const Step plain = run(cnn, false), off = run(cnn, true);
            BOOST_TEST_MESSAGE((cnn ? "cnn" : "mlp")
                               << ": device bytes held after forward " << plain.device_held
                               << " plain, " << off.device_held << " under save_on_cpu (host "
                               << off.host_held << ")");
            BOOST_TEST((off.grads == plain.grads));  // bit for bit
            BOOST_TEST(plain.device_saved > 0);
            BOOST_TEST(off.device_saved == 0);
            // the device keeps the loss only; the host keeps the activations (and copies of the
            // parameters and the input, which pack is given too, as in PyTorch)
            BOOST_TEST(plain.device_held >= plain.device_saved);
            BOOST_TEST(off.device_held * 16 < plain.device_held);
            BOOST_TEST(off.host_held >= plain.device_saved);
            BOOST_TEST(plain.host_held == 0);
        }
}
