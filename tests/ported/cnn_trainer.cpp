// A LibTorch CNN trainer of the kind users write: a Module with convolutions, batch norm and
// dropout, a custom dataset through make_data_loader (a RandomSampler: shuffled from the default
// generator), SGD with momentum and weight decay, gradient accumulation over two micro-batches,
// clipping by the global norm, StepLR, and a save / resume halfway. Written for LibTorch; tapegrad
// builds it after scripts/port-from-libtorch.sh alone (tests/ported/README.md). Prints the loss
// of every step.
#include <torch/torch.h>

#include <cstdio>
#include <string>

struct Shapes : torch::data::datasets::Dataset<Shapes> {
    // 64 single-channel 12x12 images: a bright square whose corner and size follow the label
    torch::data::Example<> get(size_t index) override {
        const int64_t label = int64_t(index % 4);
        auto img = torch::zeros({1, 12, 12}, torch::kFloat64);
        const int64_t at = 1 + label * 2, size = 3 + int64_t(index % 3);
        img.index_put_(
            {0, torch::indexing::Slice(at, at + size), torch::indexing::Slice(at, at + size)}, 1.0);
        img += 0.1 * torch::sin(torch::arange(144, torch::kFloat64).reshape({1, 12, 12}) *
                                double(index + 1));
        return {img, torch::tensor(label)};
    }
    torch::optional<size_t> size() const override { return 64; }
};

struct NetImpl : torch::nn::Module {
    NetImpl()
        : conv1(torch::nn::Conv2dOptions(1, 4, 3).padding(1)),
          bn1(4),
          conv2(torch::nn::Conv2dOptions(4, 8, 3)),
          drop(0.25),
          fc(8 * 2 * 2, 4) {
        register_module("conv1", conv1);
        register_module("bn1", bn1);
        register_module("conv2", conv2);
        register_module("drop", drop);
        register_module("fc", fc);
    }
    torch::Tensor forward(torch::Tensor x) {
        x = torch::max_pool2d(torch::relu(bn1(conv1(x))), 2);  // [N,4,6,6]
        x = torch::max_pool2d(torch::relu(conv2(x)), 2);       // [N,8,2,2]
        x = drop(x.view({x.size(0), -1}));
        return torch::log_softmax(fc(x), 1);
    }
    torch::nn::Conv2d conv1;
    torch::nn::BatchNorm2d bn1;
    torch::nn::Conv2d conv2;
    torch::nn::Dropout drop;
    torch::nn::Linear fc;
};
TORCH_MODULE(Net);

/// Trains steps [first, last): a fresh run when first is 0, else a resumed one that loads the
/// model and optimizer saved at `first` and brings its schedule there; saves at `last`.
void run(int first, int last) {
    Net net;
    net->to(torch::kFloat64);
    torch::optim::SGD opt(net->parameters(),
                          torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4));
    torch::optim::StepLR sched(opt, /*step_size=*/4, /*gamma=*/0.5);
    if (first > 0) {
        torch::load(net, "cnn_trainer_model.pt");
        torch::load(opt, "cnn_trainer_optimizer.pt");
        for (int i = 0; i < first; ++i)  // the schedule is not saved: replay it
            sched.step();
    }
    auto loader = torch::data::make_data_loader(Shapes().map(torch::data::transforms::Stack<>()),
                                                torch::data::DataLoaderOptions().batch_size(8));
    const int accumulate = 2;
    int step = first, micro = 0;
    while (step < last)
        for (auto& batch : *loader) {
            auto loss = torch::nll_loss(net->forward(batch.data), batch.target);
            (loss / accumulate).backward();
            if (++micro % accumulate != 0)
                continue;
            const double norm = torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
            opt.step();
            opt.zero_grad();
            sched.step();
            std::printf("step %d loss %.17g norm %.17g lr %.17g\n", step, loss.item<double>(), norm,
                        opt.param_groups()[0].options().get_lr());
            if (++step == last)
                break;
        }
    torch::save(net, "cnn_trainer_model.pt");
    torch::save(opt, "cnn_trainer_optimizer.pt");
}

int main() {
    torch::manual_seed(7);
    run(0, 10);
    run(10, 20);
    std::remove("cnn_trainer_model.pt");
    std::remove("cnn_trainer_optimizer.pt");
    return 0;
}
