/// A LibTorch MNIST trainer ported by renaming torch:: to tg:: (issue 16): the program below is
/// written the way LibTorch's C++ users write one (a Module subclass registering its layers,
/// datasets::MNIST with Normalize and Stack, make_data_loader, SGD with momentum, train()/eval(),
/// NoGradGuard, nll_loss in ATen's argument order, argmax/eq/sum/item), and it must compile
/// unchanged apart from the namespace and learn. The data are MNIST-format files written here:
/// digit k is a bright bar on rows 2k+4..2k+6 over noise, so a few epochs separate the classes.
#define BOOST_TEST_MODULE test_libtorch_mnist_program
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"

namespace fs = std::filesystem;

namespace {

// ------------------------------------------------------------- the ported program, as written
struct Net : tg::nn::Module {
    Net()
        : conv1(tg::nn::Conv2dOptions(1, 8, /*kernel_size=*/5)),
          conv2(tg::nn::Conv2dOptions(8, 16, /*kernel_size=*/5)),
          fc1(256, 32),
          fc2(32, 10) {
        register_module("conv1", conv1);
        register_module("conv2", conv2);
        register_module("conv2_drop", conv2_drop);
        register_module("fc1", fc1);
        register_module("fc2", fc2);
    }

    tg::Tensor forward(tg::Tensor x) {
        x = tg::relu(tg::max_pool2d(conv1->forward(x), 2));
        x = tg::relu(tg::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
        x = x.view({-1, 256});
        x = tg::relu(fc1->forward(x));
        x = tg::dropout(x, /*p=*/0.5, /*train=*/is_training());
        x = fc2->forward(x);
        return tg::log_softmax(x, /*dim=*/1);
    }

    tg::nn::Conv2d conv1;
    tg::nn::Conv2d conv2;
    tg::nn::Dropout2d conv2_drop;
    tg::nn::Linear fc1;
    tg::nn::Linear fc2;
};

template <typename DataLoader>
double train(Net& model, tg::Device device, DataLoader& data_loader,
             tg::optim::Optimizer& optimizer) {
    model.train();
    double last = 0;
    for (auto& batch : data_loader) {
        auto data = batch.data.to(device), targets = batch.target.to(device);
        optimizer.zero_grad();
        auto output = model.forward(data);
        auto loss = tg::nll_loss(output, targets);
        BOOST_REQUIRE(!std::isnan(loss.template item<float>()));
        loss.backward();
        optimizer.step();
        last = loss.template item<float>();
    }
    return last;
}

template <typename DataLoader>
double test(Net& model, tg::Device device, DataLoader& data_loader, size_t dataset_size) {
    tg::NoGradGuard no_grad;
    model.eval();
    double test_loss = 0;
    int64_t correct = 0;
    for (const auto& batch : data_loader) {
        auto data = batch.data.to(device), targets = batch.target.to(device);
        auto output = model.forward(data);
        test_loss +=
            tg::nll_loss(output, targets, /*weight=*/{}, tg::Reduction::Sum).template item<float>();
        auto pred = output.argmax(1);
        correct += pred.eq(targets).sum().template item<int64_t>();
    }
    test_loss /= double(dataset_size);
    std::printf("Test set: Average loss: %.4f | Accuracy: %.3f\n", test_loss,
                double(correct) / double(dataset_size));
    return double(correct) / double(dataset_size);
}

double run(const std::string& root, tg::Device device) {
    tg::manual_seed(1);
    Net model;
    model.to(device);
    auto train_dataset = tg::data::datasets::MNIST(root)
                             .map(tg::data::transforms::Normalize<>(0.1307, 0.3081))
                             .map(tg::data::transforms::Stack<>());
    const size_t train_dataset_size = train_dataset.size().value();
    BOOST_TEST(train_dataset_size == 600u);
    auto train_loader = tg::data::make_data_loader<tg::data::samplers::SequentialSampler>(
        std::move(train_dataset), 32);
    auto test_dataset = tg::data::datasets::MNIST(root, tg::data::datasets::MNIST::Mode::kTest)
                            .map(tg::data::transforms::Normalize<>(0.1307, 0.3081))
                            .map(tg::data::transforms::Stack<>());
    const size_t test_dataset_size = test_dataset.size().value();
    auto test_loader = tg::data::make_data_loader(std::move(test_dataset), 100);
    tg::optim::SGD optimizer(model.parameters(), tg::optim::SGDOptions(0.05).momentum(0.5));
    for (size_t epoch = 1; epoch <= 6; ++epoch)
        train(model, device, *train_loader, optimizer);
    return test(model, device, *test_loader, test_dataset_size);
}

// ------------------------------------------------------------- the data: MNIST-format files
void put_u32(std::ofstream& f, uint32_t v) {
    const unsigned char b[4] = {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
    f.write(reinterpret_cast<const char*>(b), 4);
}

void write_split(const fs::path& dir, const std::string& prefix, int n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> noise(0, 80);
    std::ofstream images(dir / (prefix + "-images-idx3-ubyte"), std::ios::binary);
    std::ofstream labels(dir / (prefix + "-labels-idx1-ubyte"), std::ios::binary);
    put_u32(images, 0x803), put_u32(images, uint32_t(n)), put_u32(images, 28), put_u32(images, 28);
    put_u32(labels, 0x801), put_u32(labels, uint32_t(n));
    for (int i = 0; i < n; ++i) {
        const int k = i % 10;
        for (int r = 0; r < 28; ++r)
            for (int c = 0; c < 28; ++c) {
                const bool bar = r >= 2 * k + 4 && r < 2 * k + 7 && c >= 4 && c < 24;
                images.put(char(uint8_t(bar ? 255 - noise(gen) : noise(gen))));
            }
        labels.put(char(k));
    }
}

struct Files {
    fs::path dir = fs::temp_directory_path() / ("tg_mnist_program_" + std::to_string(::getpid()));
    Files() {
        fs::create_directories(dir);
        write_split(dir, "train", 600, 1);
        write_split(dir, "t10k", 200, 2);
    }
    ~Files() { fs::remove_all(dir); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(the_renamed_program_learns) {
    Files files;
    BOOST_TEST(run(files.dir.string(), tg::kCPU) >= 0.9);
}

BOOST_AUTO_TEST_CASE(the_renamed_program_learns_on_opencl) {
    if (!tg::opencl::is_available())
        return;  // no OpenCL device (CI has PoCL)
    Files files;
    BOOST_TEST(run(files.dir.string(), tg::Device("opencl:0")) >= 0.9);
}
