// A LibTorch program as its authors write it (issue 29), ported by scripts/port-from-libtorch.sh
// at build time and run as a test (tests/CMakeLists.txt): a Dataset of our own whose get() is
// not const, an AlexNet-style SequentialImpl subclass built with push_back, nn::Functional (a
// function, a function with bound arguments, a lambda), ExpandingArray, Conv2d with kSame
// padding, a SequentialSampler loader, SGD, clip_grad_norm_, named_parameters() lookups,
// torch::save/load of tensors, TORCH_CHECK/AT_ASSERT and c10::irange. It compiles and passes
// against LibTorch 1.13 as well. Exit status 0: it learned the task (which quadrant of a
// 12x12 image is bright) and every check held.
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

class QuadrantDataset : public torch::data::datasets::Dataset<QuadrantDataset> {
    using Example = torch::data::Example<>;

public:
    explicit QuadrantDataset(int64_t n) {
        for (const auto i : c10::irange(n)) {
            const int64_t label = i % 4;
            auto image = torch::rand({1, 12, 12}) * 0.3;
            const int64_t r = (label / 2) * 6, c = (label % 2) * 6;
            image.slice(1, r, r + 6).slice(2, c, c + 6).add_(0.7);
            images_.push_back(image);
            labels_.push_back(label);
        }
    }

    // not const, as pytorch/examples' custom-dataset declares it
    Example get(size_t index) {
        ++reads_;
        return {images_[index], torch::tensor(labels_[index], torch::kLong)};
    }

    torch::optional<size_t> size() const { return images_.size(); }

private:
    std::vector<torch::Tensor> images_;
    std::vector<int64_t> labels_;
    int64_t reads_ = 0;
};

struct NetworkImpl : torch::nn::SequentialImpl {
    NetworkImpl() {
        using namespace torch::nn;
        auto stride = torch::ExpandingArray<2>({2, 2});
        torch::ExpandingArray<2> shape({-1, 16 * 3 * 3});
        push_back(Conv2d(Conv2dOptions(1, 8, 3).padding(torch::kSame)));
        push_back(Functional(torch::relu));
        push_back(Functional(torch::max_pool2d, 2, stride, 0, 1, false));
        push_back(Conv2d(Conv2dOptions(8, 16, 3).padding(1)));
        push_back(BatchNorm2d(BatchNorm2dOptions(16).momentum(0.2)));
        push_back(LeakyReLU(LeakyReLUOptions().negative_slope(0.1)));
        push_back(Functional(torch::max_pool2d, 2, stride, 0, 1, false));
        push_back(Functional(torch::reshape, shape));
        push_back(Dropout(DropoutOptions(0.1)));
        push_back(Linear(LinearOptions(16 * 3 * 3, 32).bias(true)));
        push_back(ReLU(ReLUOptions().inplace(true)));
        push_back(Linear(32, 4));
        push_back(Functional([](torch::Tensor input) { return torch::log_softmax(input, 1); }));
    }
};
TORCH_MODULE(Network);

template <typename DataLoader>
double train_epoch(Network& network, DataLoader& loader, torch::optim::Optimizer& optimizer) {
    network->train();
    double total = 0;
    int64_t batches = 0;
    for (auto& batch : loader) {
        auto output = network->forward(batch.data);
        auto loss = torch::nll_loss(output, batch.target.view({-1}));
        AT_ASSERT(!std::isnan(loss.template item<float>()));
        optimizer.zero_grad();
        loss.backward();
        const double norm = torch::nn::utils::clip_grad_norm_(network->parameters(), 10.0);
        TORCH_CHECK(norm >= 0 && std::isfinite(norm), "gradient norm ", norm);
        optimizer.step();
        total += loss.template item<float>();
        ++batches;
    }
    return total / batches;
}

template <typename DataLoader>
double accuracy(Network& network, DataLoader& loader) {
    torch::NoGradGuard no_grad;
    network->eval();
    int64_t correct = 0, seen = 0;
    for (const auto& batch : loader) {
        auto pred = network->forward(batch.data).argmax(1);
        correct += pred.eq(batch.target.view({-1})).sum().template item<int64_t>();
        seen += batch.data.size(0);
    }
    return static_cast<double>(correct) / seen;
}

int main() {
    torch::manual_seed(1);
    auto train_set = QuadrantDataset(256).map(torch::data::transforms::Stack<>());
    const size_t train_size = train_set.size().value();
    TORCH_CHECK(train_size == 256, "size() ", train_size);
    auto train_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        std::move(train_set), 32);
    auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        QuadrantDataset(64).map(torch::data::transforms::Stack<>()),
        torch::data::DataLoaderOptions().batch_size(64));

    Network network;
    std::cout << network << std::endl;
    auto params = network->named_parameters();
    TORCH_CHECK(params.contains("0.weight") && params.find("nope") == nullptr);
    TORCH_CHECK(params["0.weight"].sizes() == torch::IntArrayRef({8, 1, 3, 3}), "0.weight is ",
                params["0.weight"].sizes());
    bool threw = false;
    try {
        params["nope"];
    } catch (const c10::Error& e) {
        threw = std::string(e.what()).find("'nope' is not defined") != std::string::npos;
    }
    TORCH_CHECK(threw, "a missing key must throw");

    torch::optim::SGD optimizer(network->parameters(),
                                torch::optim::SGDOptions(0.05).momentum(0.9));
    const double first = train_epoch(network, *train_loader, optimizer);
    double last = first;
    for (int epoch = 2; epoch <= 6; ++epoch)
        last = train_epoch(network, *train_loader, optimizer);
    const double acc = accuracy(network, *test_loader);
    std::printf("loss %.4f -> %.4f, test accuracy %.3f\n", first, last, acc);
    TORCH_CHECK(last < 0.5 * first, "the loss did not fall: ", first, " -> ", last);
    TORCH_CHECK(acc > 0.9, "test accuracy ", acc);

    // tensors to a file and back, one and a list
    std::vector<torch::Tensor> weights;
    for (auto& item : network->named_parameters())
        weights.push_back(item.value().detach().clone());
    const std::string path = torch::str("weights-", weights.size(), ".pt");
    torch::save(weights, path);
    std::vector<torch::Tensor> loaded;
    torch::load(loaded, path);
    TORCH_CHECK(loaded.size() == weights.size(), loaded.size(), " tensors loaded");
    for (const auto i : c10::irange(loaded.size()))
        TORCH_CHECK(torch::equal(loaded[i], weights[i]) && loaded[i].allclose(weights[i]));
    torch::Tensor one;
    torch::save(weights[0] * 2, "one.pt");
    torch::load(one, "one.pt");
    TORCH_CHECK(torch::allclose(one, weights[0] * 2, 0, 0));
    return 0;
}
