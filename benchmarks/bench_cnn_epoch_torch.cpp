/// bench_cnn_epoch's LibTorch side: the example CNN (bench_cnn.hpp) with torch::nn, trained a
/// batch at a time as the tapegrad side; --torch-threads sets the intra-op threads, --mkldnn 0
/// turns oneDNN off.
#include <torch/torch.h>

#include "bench_cnn.hpp"

namespace bench::cnn {

Timing run_side(const Options& o, const Data& d) {
    namespace nn = torch::nn;
    torch::set_num_threads(o.torch_threads);
    at::globalContext().setUserEnabledMkldnn(o.mkldnn != 0);
    torch::manual_seed(0);
    nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32),
                       nn::ReLU(), nn::MaxPool2d(2),
                       nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::BatchNorm2d(64),
                       nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Dropout(0.25),
                       nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
    net->train();
    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
    const torch::Tensor images =
        torch::from_blob(const_cast<float*>(d.images.data()), {d.n, 1, 28, 28}, torch::kFloat32)
            .clone();
    const torch::Tensor labels =
        torch::from_blob(const_cast<int64_t*>(d.labels.data()), {d.n}, torch::kInt64).clone();
    Timing t = time_epochs(o, d, [&](int64_t b) {
        const torch::Tensor x = images.narrow(0, b * kBatch, kBatch);
        const torch::Tensor y = labels.narrow(0, b * kBatch, kBatch);
        torch::Tensor logits = net->forward(x);
        torch::Tensor loss = torch::nn::functional::cross_entropy(logits, y);
        opt.zero_grad();
        loss.backward();
        opt.step();
        (void)logits.detach().argmax(1).eq(y).sum().item<int64_t>();
        return loss.item<double>();
    });
    t.info = {{"side", "torch"},
              {"torch_version", TORCH_VERSION},
              {"has_mkldnn", at::hasMKLDNN() ? "1" : "0"}};
    return t;
}

}  // namespace bench::cnn
