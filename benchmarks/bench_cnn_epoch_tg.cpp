/// bench_cnn_epoch's tapegrad side: the example CNN (bench_cnn.hpp) with tg::nn, as
/// examples/fashion_mnist_cnn.cpp builds it, trained a batch at a time as the example does.
#include "bench_cnn.hpp"
#include "bench_profile.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace bench::cnn {

Timing run_side(const Options& o, const Data& d) {
    namespace nn = tg::nn;
    tg::manual_seed(0);
    nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32),
                       nn::ReLU(), nn::MaxPool2d(2),
                       nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::BatchNorm2d(64),
                       nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Dropout(0.25),
                       nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
    tg::optim::Adam opt(net->parameters(), tg::optim::AdamOptions(1e-3));
    const tg::Tensor images =
        tg::tensor(d.images, tg::TensorOptions(tg::kFloat32)).reshape({d.n, 1, 28, 28});
    const tg::Tensor labels = tg::tensor(d.labels, tg::TensorOptions(tg::kInt64));
    auto step = [&](int64_t b) {
        const tg::Tensor x = images.narrow(0, b * kBatch, kBatch);
        const tg::Tensor y = labels.narrow(0, b * kBatch, kBatch);
        tg::Tensor logits = net(x);
        tg::Tensor loss = tg::cross_entropy(logits, y);
        opt.zero_grad();
        loss.backward();
        opt.step();
        (void)tg::eq(logits.detach().argmax(1), y).sum().item<int64_t>();
        return loss.item<double>();
    };
    Timing t = time_epochs(o, d, step);
    int64_t b = 0;  // then kProfileSteps more batches under the op profiler (not timed above)
    t.info = {{"side", "tg"},
              {"profile_steps", std::to_string(kProfileSteps)},
              {"profile", profile_steps(kProfileSteps, [&] { step(b++); })}};
    return t;
}

}  // namespace bench::cnn
