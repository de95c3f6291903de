// A LibTorch program as its authors write it (issue 29), ported by scripts/port-from-libtorch.sh
// at build time and run as a test (tests/CMakeLists.txt): a DCGAN in the style of
// pytorch/examples' cpp/dcgan on 8x8 images (a generator of ConvTranspose2d and BatchNorm2d
// layers in a TORCH_MODULE, a discriminator in an nn::Sequential with LeakyReLUOptions and
// Conv2dOptions(...).padding(0)), `using namespace torch`, a Device picked at run time, Adam
// with betas, binary_cross_entropy against torch::empty(n, device).uniform_ and fill_(1)
// labels, and checkpoints of the models, the optimizers and a sample written with torch::save
// and read back with torch::load. It compiles and passes against LibTorch 1.13 as well.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <iostream>

using namespace torch;

const int64_t kNoiseSize = 16;
const int64_t kBatchSize = 32;

struct DCGANGeneratorImpl : nn::Module {
    DCGANGeneratorImpl(int noise_size)
        : conv1(nn::ConvTranspose2dOptions(noise_size, 32, 4).bias(false)),
          batch_norm1(32),
          conv2(nn::ConvTranspose2dOptions(32, 1, 4).stride(2).padding(1).bias(false)) {
        register_module("conv1", conv1);
        register_module("conv2", conv2);
        register_module("batch_norm1", batch_norm1);
    }

    torch::Tensor forward(torch::Tensor x) {
        x = torch::relu(batch_norm1(conv1(x)));
        return torch::tanh(conv2(x));
    }

    nn::ConvTranspose2d conv1, conv2;
    nn::BatchNorm2d batch_norm1;
};
TORCH_MODULE(DCGANGenerator);

nn::Sequential create_discriminator() {
    return nn::Sequential(
        nn::Conv2d(nn::Conv2dOptions(1, 16, 4).stride(2).padding(1).bias(false)),
        nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
        nn::Conv2d(nn::Conv2dOptions(16, 32, 4).stride(2).padding(1).bias(false)),
        nn::BatchNorm2d(32), nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
        nn::Conv2d(nn::Conv2dOptions(32, 1, 2).stride(1).padding(0).bias(false)), nn::Sigmoid());
}

// "real" images: a bright square at a random place on a dark 8x8 field, in [-1, 1]
torch::Tensor real_batch(int64_t n) {
    auto images = torch::full({n, 1, 8, 8}, -1.0);
    for (int64_t i = 0; i < n; ++i) {
        const int64_t r = torch::randint(0, 5, {1}).item<int64_t>();
        const int64_t c = torch::randint(0, 5, {1}).item<int64_t>();
        images[i].slice(1, r, r + 4).slice(2, c, c + 4).fill_(1.0);
    }
    return images;
}

int main() {
    torch::manual_seed(1);
    torch::Device device(torch::kCPU);
    if (torch::cuda::is_available()) {
        device = torch::Device(torch::kCUDA);
    }

    DCGANGenerator generator(kNoiseSize);
    generator->to(device);
    nn::Sequential discriminator = create_discriminator();
    discriminator->to(device);

    torch::optim::Adam generator_optimizer(
        generator->parameters(), torch::optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.5)));
    torch::optim::Adam discriminator_optimizer(
        discriminator->parameters(),
        torch::optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.5)));

    double first_d = 0, last_d = 0, last_g = 0;
    for (int64_t step = 1; step <= 40; ++step) {
        torch::Tensor real_images = real_batch(kBatchSize).to(device);
        discriminator->zero_grad();
        torch::Tensor real_labels = torch::empty(real_images.size(0), device).uniform_(0.8, 1.0);
        torch::Tensor real_output =
            discriminator->forward(real_images).reshape(real_labels.sizes());
        torch::Tensor d_loss_real = torch::binary_cross_entropy(real_output, real_labels);
        d_loss_real.backward();

        torch::Tensor noise = torch::randn({real_images.size(0), kNoiseSize, 1, 1}, device);
        torch::Tensor fake_images = generator->forward(noise);
        TORCH_CHECK(fake_images.sizes() == real_images.sizes(), "generator gave ",
                    fake_images.sizes());
        torch::Tensor fake_labels = torch::zeros(real_images.size(0), device);
        torch::Tensor fake_output =
            discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
        torch::Tensor d_loss_fake = torch::binary_cross_entropy(fake_output, fake_labels);
        d_loss_fake.backward();
        torch::Tensor d_loss = d_loss_real + d_loss_fake;
        discriminator_optimizer.step();

        generator->zero_grad();
        fake_labels.fill_(1);
        fake_output = discriminator->forward(fake_images).reshape(fake_labels.sizes());
        torch::Tensor g_loss = torch::binary_cross_entropy(fake_output, fake_labels);
        g_loss.backward();
        generator_optimizer.step();

        if (step == 1)
            first_d = d_loss.item<float>();
        last_d = d_loss.item<float>();
        last_g = g_loss.item<float>();
        if (step % 10 == 0)
            std::printf("[%2ld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long>(step), last_d,
                        last_g);
    }
    TORCH_CHECK(std::isfinite(last_d) && std::isfinite(last_g), "losses ", last_d, " ", last_g);
    TORCH_CHECK(last_d < first_d, "the discriminator did not learn: ", first_d, " -> ", last_d);

    // checkpoints, as dcgan.cpp writes them, and read back into fresh objects
    torch::save(generator, "generator-checkpoint.pt");
    torch::save(generator_optimizer, "generator-optimizer-checkpoint.pt");
    torch::save(discriminator, "discriminator-checkpoint.pt");
    torch::save(discriminator_optimizer, "discriminator-optimizer-checkpoint.pt");
    const auto saved_mean = generator->batch_norm1->running_mean.clone();  // sampling moves it
    torch::Tensor samples = generator->forward(torch::randn({4, kNoiseSize, 1, 1}, device));
    torch::save((samples + 1.0) / 2.0, torch::str("dcgan-sample-", 1, ".pt"));

    DCGANGenerator restored(kNoiseSize);
    torch::load(restored, "generator-checkpoint.pt");
    auto a = generator->named_parameters(), b = restored->named_parameters();
    for (auto& item : a)
        TORCH_CHECK(torch::equal(item.value(), b[item.key()]), item.key(), " differs after load");
    auto buffers = restored->named_buffers();
    TORCH_CHECK(torch::equal(buffers["batch_norm1.running_mean"], saved_mean));
    torch::optim::Adam restored_optimizer(
        restored->parameters(), torch::optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.5)));
    torch::load(restored_optimizer, "generator-optimizer-checkpoint.pt");
    torch::Tensor sample;
    torch::load(sample, "dcgan-sample-1.pt");
    TORCH_CHECK(sample.sizes() == torch::IntArrayRef({4, 1, 8, 8}), sample.sizes());
    TORCH_CHECK(torch::allclose(sample, (samples + 1.0) / 2.0));
    std::cout << "checkpoints restored" << std::endl;
    return 0;
}
