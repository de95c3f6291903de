// Gradient accumulation: train Fashion-MNIST with a global batch whose activations would not fit
// a memory limit, as micro-batches through tg::optim::Accumulator (docs/checkpointing.md).
//
//     OPENBLAS_CORETYPE=SkylakeX ./build/examples/accumulate [--global 4096] [--micro 256]
//                                [--steps 8] [--limit-mb 16] [--data DIR]
//
// Each step backpropagates global/micro micro-batches (each graph freed by its backward) and
// then steps Adam once: the gradients are those of one step on the whole global batch. Prints the
// loss and the peak memory above the parameters, gradients and optimizer state (allocator
// statistics), then, for comparison, the peak of one forward/backward over the whole batch.
#include <iostream>
#include <stdexcept>
#include <string>

#include "tapegrad/data.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

int main(int argc, char** argv) {
    int64_t global = 4096, micro = 256, steps = 8, limit_mb = 16;
    std::string root = tg::data::default_root();
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (i + 1 >= argc)
                throw std::invalid_argument("missing value after " + a);
            const std::string v = argv[++i];
            if (a == "--global")
                global = std::stoll(v);
            else if (a == "--micro")
                micro = std::stoll(v);
            else if (a == "--steps")
                steps = std::stoll(v);
            else if (a == "--limit-mb")
                limit_mb = std::stoll(v);
            else if (a == "--data")
                root = v;
            else
                throw std::invalid_argument("unknown option " + a);
        }
        if (micro < 1 || global % micro != 0)
            throw std::invalid_argument("--micro must divide --global");
    } catch (const std::exception& e) {
        std::cerr << "accumulate: " << e.what() << "\n";
        return 2;
    }
    try {
        const tg::data::FashionMNIST train(true, root);
        const tg::Tensor images = train.images().flatten(1), labels = train.labels();
        tg::manual_seed(0);
        tg::nn::Sequential net(tg::nn::Linear(784, 512), tg::nn::ReLU(), tg::nn::Linear(512, 512),
                               tg::nn::ReLU(), tg::nn::Linear(512, 10));
        tg::optim::Adam opt(net->parameters(), tg::optim::AdamOptions(1e-3));
        tg::optim::Accumulator acc(opt, global, /*set_to_none=*/false);
        tg::nn::CrossEntropyLoss loss_fn;
        const double MB = 1 << 20;
        int64_t last = 0;
        for (int64_t s = 0; s < steps; ++s) {
            const int64_t before = tg::memory::stats().current_bytes;
            tg::memory::reset_peak();
            double loss_sum = 0;
            for (int64_t k = 0; k < global / micro; ++k) {
                const int64_t at = (s * global + k * micro) % (train.size() - micro);
                // a copy: a narrow() view would keep (and report) the whole dataset's storage
                const tg::Tensor xb = images.narrow(0, at, micro).clone();
                tg::Tensor loss = loss_fn(net(xb), labels.narrow(0, at, micro));
                loss_sum += loss.item<float>() * double(micro);
                acc.backward(loss, micro);  // scaled by micro/global; frees this graph
            }
            acc.step();
            const int64_t peak = tg::memory::stats().peak_bytes - before;
            last = peak;  // step 1 also allocates Adam's state: the steady state is later
            std::cout << "step " << s + 1 << ": loss " << loss_sum / double(global)
                      << ", peak above params+grads+state " << peak / MB << " MB\n";
        }
        const bool fits = double(last) <= double(limit_mb) * MB;
        std::cout << "accumulated steps: " << (fits ? "fit" : "DO NOT fit") << " the " << limit_mb
                  << " MB limit with micro-batches of " << micro << "\n";
        // for comparison only: what one forward/backward over the whole global batch needs
        {
            const tg::Tensor xb = images.narrow(0, 0, global).clone();
            const tg::Tensor yb = labels.narrow(0, 0, global);
            const int64_t before = tg::memory::stats().current_bytes;
            tg::memory::reset_peak();
            loss_fn(net(xb), yb).backward();
            const int64_t peak = tg::memory::stats().peak_bytes - before;
            opt.zero_grad(false);
            std::cout << "one batch of " << global << " would need " << peak / MB << " MB: "
                      << (double(peak) <= double(limit_mb) * MB ? "fits" : "does NOT fit")
                      << " the limit\n";
        }
    } catch (const tg::io_error& e) {
        std::cerr << "accumulate: " << e.what() << "\n";
        return 3;
    }
    return 0;
}
