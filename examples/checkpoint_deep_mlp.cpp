// A deep MLP trained with and without checkpointing: peak memory and step time of each
// (docs/checkpointing.md).
//
//     OPENBLAS_CORETYPE=SkylakeX ./build/examples/checkpoint_deep_mlp [--layers 32]
//                                [--width 512] [--batch 256] [--steps 3]
//
// Rows: no checkpointing; √n segments (tg::nn::checkpoint_sequential(net, 0, x)); the planner
// at half the unplanned peak (tg::nn::plan_checkpoints, plan printed). Peak memory is the
// allocator's peak during a step minus what was live when it started (parameters, allocated
// gradients, input): what the planner's budget bounds. Activations is the peak of what the graph
// keeps for backward (tg::memory::stats().peak_saved_bytes), without backward's transient
// gradients. The losses agree: same model, same data.
#include <chrono>
#include <iomanip>
#include <iostream>
#include <string>

#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

int main(int argc, char** argv) {
    int layers = 32, width = 512, batch = 256, steps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const int v = std::stoi(argv[i + 1]);
        if (a == "--layers")
            layers = v;
        else if (a == "--width")
            width = v;
        else if (a == "--batch")
            batch = v;
        else if (a == "--steps")
            steps = v;
        else {
            std::cerr << "checkpoint_deep_mlp: unknown option " << a << "\n";
            return 2;
        }
    }
    const double MB = 1 << 20;
    auto make = [&] {
        tg::manual_seed(0);
        tg::nn::Sequential net;
        for (int i = 0; i < layers; ++i) {
            net->push_back(tg::nn::Linear(width, width));
            net->push_back(tg::nn::Tanh());
        }
        return net;
    };
    tg::manual_seed(1);
    const tg::Tensor x = tg::randn({batch, width}), y = tg::randn({batch, width}).mul_(0.5);

    // the budget: half the predicted peak without checkpointing, from one profile
    auto probe = make();
    const auto profile = tg::nn::profile_sequential(probe, x);
    const auto plan = tg::nn::plan_checkpoints(
        profile,
        tg::MemoryBudget{
            tg::nn::predict(profile, {{{0, profile.layers.size(), false}}}).predicted_peak_bytes /
            2});
    std::cout << plan << "\n";

    std::cout << std::left << std::setw(22) << "mode" << std::setw(16) << "peak MB" << std::setw(18)
              << "activations MB" << std::setw(16) << "step ms"
              << "final loss\n";
    for (int mode = 0; mode < 3; ++mode) {
        auto net = make();
        tg::optim::SGD opt(net->parameters(), tg::optim::SGDOptions(0.05));
        int64_t peak = 0, activations = 0;
        double ms = 0, loss_v = 0;
        for (int s = 0; s < steps; ++s) {
            opt.zero_grad(false);  // gradients stay allocated: the peak is the step's own memory
            const tg::memory::Stats before = tg::memory::stats();
            tg::memory::reset_peak();
            const auto t0 = std::chrono::steady_clock::now();
            tg::Tensor out = mode == 0   ? net->forward(x)
                             : mode == 1 ? tg::nn::checkpoint_sequential(net, 0, x)
                                         : tg::nn::checkpoint_sequential(net, plan, x);
            tg::Tensor loss = tg::mse_loss(out, y);
            loss.backward();
            opt.step();
            const double t =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            if (s > 0)
                ms += t / (steps - 1);  // the first step allocates the gradients
            if (s > 0) {
                const tg::memory::Stats after = tg::memory::stats();
                peak = std::max(peak, after.peak_bytes - before.current_bytes);
                activations = std::max(activations, after.peak_saved_bytes - before.saved_bytes);
            }
            loss_v = loss.item<float>();
        }
        const char* name[] = {"no checkpointing", "sqrt(n) segments", "planner (50% budget)"};
        std::cout << std::setw(22) << name[mode] << std::setw(16) << std::setprecision(4)
                  << peak / MB << std::setw(18) << activations / MB << std::setw(16) << ms << loss_v
                  << "\n";
    }
    return 0;
}
