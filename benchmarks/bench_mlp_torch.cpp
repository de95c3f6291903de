/// The MLP benchmarks' LibTorch side (their only translation unit that includes LibTorch).
#include <torch/torch.h>

#include <cstdio>
#include <cstring>

#include "bench_common.hpp"
#include "bench_mlp.hpp"

namespace bench {

std::string set_torch_threads(int threads) {
    torch::set_num_threads(threads);
    return "LibTorch " TORCH_VERSION " intra-op threads " + std::to_string(at::get_num_threads());
}

namespace {

torch::nn::Sequential build(const MlpSpec& s) {
    torch::nn::Sequential seq;
    int64_t fan_in = s.in;
    for (size_t i = 0; i < s.widths.size(); ++i) {
        seq->push_back(torch::nn::Linear(fan_in, s.widths[i]));
        switch (s.acts[i]) {
            case Act::Tanh:
                seq->push_back(torch::nn::Tanh());
                break;
            case Act::Sigmoid:
                seq->push_back(torch::nn::Sigmoid());
                break;
            case Act::ReLU:
                seq->push_back(torch::nn::ReLU());
                break;
            case Act::None:
                break;
        }
        fan_in = s.widths[i];
    }
    return seq;
}

/// Copies init's weights and biases into the model (parameters() is W1, b1, W2, b2, ...).
void load(torch::nn::Sequential& seq, const MlpInit& init) {
    torch::NoGradGuard no_grad;
    auto params = seq->parameters();
    for (size_t i = 0; i < init.w.size(); ++i) {
        std::memcpy(params[2 * i].data_ptr<float>(), init.w[i].data(), init.w[i].size() * 4);
        std::memcpy(params[2 * i + 1].data_ptr<float>(), init.b[i].data(), init.b[i].size() * 4);
    }
}

torch::Tensor copy_of(const std::vector<float>& v, std::vector<int64_t> shape) {
    return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

class TorchMlp : public Stepper {
public:
    TorchMlp(const MlpSpec& s, const MlpInit& init)
        : seq_(build(s)),
          x_(copy_of(init.x, {s.batch, s.in})),
          y_(copy_of(init.y, {s.batch, s.widths.back()})),
          opt_(seq_->parameters(), torch::optim::SGDOptions(s.lr)) {
        load(seq_, init);
    }

    StepTimes step() override {
        StepTimes t;
        double t0 = now_s();
        auto loss = torch::mse_loss(seq_->forward(x_), y_);
        double t1 = now_s();
        loss.backward();
        double t2 = now_s();
        opt_.step();
        opt_.zero_grad();
        double t3 = now_s();
        t.fwd = t1 - t0;
        t.bwd = t2 - t1;
        t.upd = t3 - t2;
        t.loss = loss.item<double>();
        return t;
    }

private:
    torch::nn::Sequential seq_;
    torch::Tensor x_, y_;
    torch::optim::SGD opt_;
};

}  // namespace

std::unique_ptr<Stepper> make_torch_mlp(const MlpSpec& s, const MlpInit& init) {
    return std::make_unique<TorchMlp>(s, init);
}

void torch_rss_child(const std::string& mode, int threads) {
    static char buf[1 << 16];
    std::setvbuf(stdout, buf, _IOFBF, sizeof buf);
    torch::set_num_threads(threads);
    torch::manual_seed(0);
    double loss = 0;
    if (mode == "libs") {
        loss = (torch::ones({4}) * 2).sum().item<double>();
    } else {
        MlpSpec s = deep_mlp_spec();
        auto seq = build(s);
        auto x = torch::rand({s.batch, s.in});
        auto y = torch::zeros({s.batch, s.widths.back()});
        torch::optim::SGD opt(seq->parameters(), torch::optim::SGDOptions(s.lr));
        int steps = mode == "params" ? 0 : mode == "step" ? 1 : 3;
        for (int i = 0; i < steps; ++i) {
            auto l = torch::mse_loss(seq->forward(x), y);
            l.backward();
            opt.step();
            opt.zero_grad();
            loss = l.item<double>();
        }
    }
    std::printf("impl=libtorch mode=%s VmHWM_kB=%ld RssAnon_kB=%ld RssFile_kB=%ld loss=%.6g\n",
                mode.c_str(), proc_status_kib("VmHWM"), proc_status_kib("RssAnon"),
                proc_status_kib("RssFile"), loss);
    std::fflush(stdout);
}

namespace {

class TorchFmnist : public EpochRunner {
public:
    TorchFmnist(const FmnistData& d, int64_t batch)
        : x_(copy_of(d.images, {d.n, 784})),
          y_(torch::from_blob(const_cast<int64_t*>(d.labels.data()), {d.n}, torch::kInt64).clone()),
          batch_(batch),
          model_(torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 128),
                 torch::nn::ReLU(), torch::nn::Linear(128, 10)),
          opt_(model_->parameters(), torch::optim::AdamOptions(1e-3)) {}

    EpochResult epoch(int64_t batches) override {
        int64_t n = x_.size(0);
        double loss_sum = 0;
        int64_t count = 0;
        double t0 = now_s();
        for (int64_t i = 0; i < n && (batches < 0 || count < batches); i += batch_, ++count) {
            int64_t len = std::min(batch_, n - i);
            auto xb = x_.narrow(0, i, len);
            auto yb = y_.narrow(0, i, len);
            auto loss = torch::nn::functional::cross_entropy(model_->forward(xb), yb);
            opt_.zero_grad();
            loss.backward();
            opt_.step();
            loss_sum += loss.item<double>();
        }
        return {now_s() - t0, count ? loss_sum / double(count) : 0};
    }

private:
    torch::Tensor x_, y_;
    int64_t batch_;
    torch::nn::Sequential model_;
    torch::optim::Adam opt_;
};

}  // namespace

std::unique_ptr<EpochRunner> make_torch_fmnist(const FmnistData& d, int64_t batch) {
    return std::make_unique<TorchFmnist>(d, batch);
}

}  // namespace bench
