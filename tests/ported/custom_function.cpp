// A LibTorch program with a dataset and an autograd Function of its own, of the kind users
// write: a Dataset whose get() is not const, mapped through Stack into a loader with a
// SequentialSampler; a custom Function (a smooth clipped activation with a hand-written backward
// that saves its input and a scalar); a model written as a Sequential subclass with
// nn::Functional layers; SGD with Nesterov momentum; MSE loss. Written for LibTorch; tapegrad
// builds it after scripts/port-from-libtorch.sh alone (tests/ported/README.md). Prints the loss
// of every step and whether the Function's gradient agrees with finite differences.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <vector>

/// y = limit * tanh(x / limit), with its derivative 1 - tanh²(x / limit) written by hand.
struct SoftClip : public torch::autograd::Function<SoftClip> {
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x,
                                 double limit) {
        ctx->save_for_backward({x});
        ctx->saved_data["limit"] = limit;
        return limit * torch::tanh(x / limit);
    }
    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list grads) {
        auto x = ctx->get_saved_variables()[0];
        const double limit = ctx->saved_data["limit"].toDouble();
        auto t = torch::tanh(x / limit);
        return {grads[0] * (1 - t * t), torch::Tensor()};
    }
};

/// 48 samples of a noisy quadratic in 3 inputs; get() keeps a count of its calls.
class Quadratic : public torch::data::datasets::Dataset<Quadratic> {
public:
    torch::data::Example<> get(size_t index) override {
        ++calls_;
        auto x = torch::sin(torch::arange(3, torch::kFloat64) * 0.7 + double(index) * 0.37);
        auto y = (x * x).sum(0, true) - x.narrow(0, 0, 1) + 0.05 * std::cos(double(index));
        return {x, y};
    }
    torch::optional<size_t> size() const override { return 48; }

private:
    size_t calls_ = 0;
};

struct RegressorImpl : torch::nn::SequentialImpl {
    RegressorImpl() {
        using namespace torch::nn;
        push_back(Linear(3, 16));
        push_back(Functional([](torch::Tensor x) { return SoftClip::apply(x, 2.0); }));
        push_back(Linear(16, 16));
        push_back(Functional(torch::tanh));
        push_back(Linear(16, 1));
    }
};
TORCH_MODULE(Regressor);

int main() {
    torch::manual_seed(11);
    Regressor model;
    model->to(torch::kFloat64);
    torch::optim::SGD opt(model->parameters(),
                          torch::optim::SGDOptions(0.05).momentum(0.8).nesterov(true));
    auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        Quadratic().map(torch::data::transforms::Stack<>()), /*batch_size=*/12);
    int step = 0;
    for (int epoch = 0; step < 20; ++epoch)
        for (auto& batch : *loader) {
            opt.zero_grad();
            auto loss = torch::mse_loss(model->forward(batch.data), batch.target);
            loss.backward();
            opt.step();
            std::printf("step %d loss %.17g\n", step, loss.item<double>());
            if (++step == 20)
                break;
        }
    // the Function's backward against central differences
    auto x = torch::linspace(-3, 3, 7, torch::kFloat64).requires_grad_(true);
    SoftClip::apply(x, 1.5).sum().backward();
    const double h = 1e-6;
    auto fd =
        (SoftClip::apply(x.detach() + h, 1.5) - SoftClip::apply(x.detach() - h, 1.5)) / (2 * h);
    const double error = (x.grad() - fd).abs().max().item<double>();
    std::printf("softclip gradient %s\n", error < 1e-8 ? "agrees" : "DIFFERS");
    return 0;
}
