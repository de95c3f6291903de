// A DCGAN as pytorch/examples' cpp/dcgan writes it (a generator of ConvTranspose2d, BatchNorm2d
// and ReLU in a TORCH_MODULE; a discriminator of Conv2d, BatchNorm2d and LeakyReLU in a
// Sequential; binary cross entropy against noisy labels drawn with uniform_; Adam with betas
// 0.5), in float64 on 16x16 images of a pattern, so that its curve can be compared with
// LibTorch's to 1e-5. Written for LibTorch; tapegrad builds it after
// scripts/port-from-libtorch.sh alone (tests/ported/README.md). Prints both losses of every step.
#include <torch/torch.h>

#include <cstdio>

using namespace torch;

const int64_t kNoise = 8, kBatch = 16;

struct GenImpl : nn::Module {
    GenImpl()
        : conv1(nn::ConvTranspose2dOptions(kNoise, 32, 4).bias(false)),
          bn1(32),
          conv2(nn::ConvTranspose2dOptions(32, 16, 4).stride(2).padding(1).bias(false)),
          bn2(16),
          conv3(nn::ConvTranspose2dOptions(16, 1, 4).stride(2).padding(1).bias(false)) {
        register_module("conv1", conv1);
        register_module("bn1", bn1);
        register_module("conv2", conv2);
        register_module("bn2", bn2);
        register_module("conv3", conv3);
    }
    Tensor forward(Tensor z) {
        auto x = torch::relu(bn1(conv1(z)));  // [N,32,4,4]
        x = torch::relu(bn2(conv2(x)));       // [N,16,8,8]
        return torch::tanh(conv3(x));         // [N,1,16,16]
    }
    nn::ConvTranspose2d conv1, conv2, conv3;
    nn::BatchNorm2d bn1, bn2;
};
TORCH_MODULE(Gen);

nn::Sequential discriminator() {
    return nn::Sequential(
        nn::Conv2d(nn::Conv2dOptions(1, 16, 4).stride(2).padding(1).bias(false)),
        nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
        nn::Conv2d(nn::Conv2dOptions(16, 32, 4).stride(2).padding(1).bias(false)),
        nn::BatchNorm2d(32), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
        nn::Conv2d(nn::Conv2dOptions(32, 1, 4).stride(1).padding(0).bias(false)), nn::Sigmoid());
}

/// Real images: soft diagonal stripes whose phase follows the index, in [-1, 1].
Tensor real_batch(int64_t step) {
    auto i = torch::arange(16, kFloat64).reshape({1, 1, 16, 1});
    auto j = torch::arange(16, kFloat64).reshape({1, 1, 1, 16});
    auto phase = (torch::arange(kBatch, kFloat64) + double(step)).reshape({kBatch, 1, 1, 1});
    return torch::sin((i + j) * 0.6 + phase);
}

int main() {
    manual_seed(5);
    Gen g;
    g->to(kFloat64);
    auto d = discriminator();
    d->to(kFloat64);
    optim::Adam g_opt(g->parameters(), optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999)));
    optim::Adam d_opt(d->parameters(), optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999)));
    for (int64_t step = 0; step < 20; ++step) {
        d->zero_grad();
        auto real = real_batch(step);
        auto real_labels = torch::empty(kBatch, kFloat64).uniform_(0.8, 1.0);
        auto d_real =
            binary_cross_entropy(d->forward(real).reshape(real_labels.sizes()), real_labels);
        d_real.backward();
        auto noise = torch::randn({kBatch, kNoise, 1, 1}, kFloat64);
        auto fake = g->forward(noise);
        auto fake_labels = torch::zeros(kBatch, kFloat64);
        auto d_fake = binary_cross_entropy(d->forward(fake.detach()).reshape(fake_labels.sizes()),
                                           fake_labels);
        d_fake.backward();
        d_opt.step();
        g->zero_grad();
        fake_labels.fill_(1);
        auto g_loss =
            binary_cross_entropy(d->forward(fake).reshape(fake_labels.sizes()), fake_labels);
        g_loss.backward();
        g_opt.step();
        std::printf("step %ld d_loss %.17g g_loss %.17g\n", long(step),
                    (d_real + d_fake).item<double>(), g_loss.item<double>());
    }
    return 0;
}
