/// The MLP benchmarks' tapegrad side: the MLP step, the deep-MLP memory runs and the
/// Fashion-MNIST epoch. Also linked alone (without LibTorch) into bench_mlp_rss_tg, the tapegrad
/// peak-RSS child.
#include <cstdio>
#include <cstring>
#include <tapegrad/nn.hpp>
#include <tapegrad/optim.hpp>
#include <tapegrad/tapegrad.hpp>

#include "bench_common.hpp"
#include "bench_mlp.hpp"

namespace bench {

std::string set_tg_threads(int threads) {
    tg::set_num_threads(threads);
    return "tg::set_num_threads(" + std::to_string(threads) + "): get_num_threads() " +
           std::to_string(tg::get_num_threads());
}

namespace {

tg::nn::Sequential build(const MlpSpec& s) {
    tg::nn::Sequential seq;
    int64_t fan_in = s.in;
    for (size_t i = 0; i < s.widths.size(); ++i) {
        seq->push_back(tg::nn::Linear(fan_in, s.widths[i]));
        switch (s.acts[i]) {
            case Act::Tanh:
                seq->push_back(tg::nn::Tanh());
                break;
            case Act::Sigmoid:
                seq->push_back(tg::nn::Sigmoid());
                break;
            case Act::ReLU:
                seq->push_back(tg::nn::ReLU());
                break;
            case Act::None:
                break;
        }
        fan_in = s.widths[i];
    }
    return seq;
}

/// Copies init's weights and biases into the model (parameters() is W1, b1, W2, b2, ...).
void load(tg::nn::Sequential& seq, const MlpInit& init) {
    tg::NoGradGuard no_grad;
    auto params = seq->parameters();
    for (size_t i = 0; i < init.w.size(); ++i) {
        std::memcpy(params[2 * i].data_ptr<float>(), init.w[i].data(), init.w[i].size() * 4);
        std::memcpy(params[2 * i + 1].data_ptr<float>(), init.b[i].data(), init.b[i].size() * 4);
    }
}

tg::Tensor copy_of(const std::vector<float>& v, tg::Shape shape) {
    return tg::from_blob(const_cast<float*>(v.data()), shape).clone();
}

class TgMlp : public Stepper {
public:
    TgMlp(const MlpSpec& s, const MlpInit& init)
        : seq_(build(s)),
          x_(copy_of(init.x, {s.batch, s.in})),
          y_(copy_of(init.y, {s.batch, s.widths.back()})),
          opt_(seq_->parameters(), tg::optim::SGDOptions(s.lr)) {
        load(seq_, init);
    }

    StepTimes step() override {
        StepTimes t;
        double t0 = now_s();
        auto loss = tg::mse_loss(seq_->forward(x_), y_);
        double t1 = now_s();
        loss.backward();
        double t2 = now_s();
        opt_.step();
        opt_.zero_grad();
        double t3 = now_s();
        t.fwd = t1 - t0;
        t.bwd = t2 - t1;
        t.upd = t3 - t2;
        t.loss = loss.item<float>();
        return t;
    }

private:
    tg::nn::Sequential seq_;
    tg::Tensor x_, y_;
    tg::optim::SGD opt_;
};

}  // namespace

std::unique_ptr<Stepper> make_tg_mlp(const MlpSpec& s, const MlpInit& init) {
    return std::make_unique<TgMlp>(s, init);
}

DeepMemory tg_deep_memory(const MlpSpec& s, const MlpInit& init, int steps) {
    DeepMemory m;
    auto seq = build(s);
    load(seq, init);
    for (auto& p : seq->parameters())
        m.param_bytes += p.numel() * 4;
    auto x = copy_of(init.x, {s.batch, s.in});
    auto y = copy_of(init.y, {s.batch, s.widths.back()});
    m.input_bytes = (x.numel() + y.numel()) * 4;
    tg::optim::SGD opt(seq->parameters(), tg::optim::SGDOptions(s.lr));
    for (int i = 0; i < steps; ++i) {
        m.before.push_back(tg::memory::stats().current_bytes);
        tg::memory::reset_peak();
        auto loss = tg::mse_loss(seq->forward(x), y);
        loss.backward();
        opt.step();
        opt.zero_grad();
        m.peak.push_back(tg::memory::stats().peak_bytes);
        m.loss.push_back(loss.item<float>());
    }
    return m;
}

void tg_rss_child(const std::string& mode, int /*threads*/) {
    static char buf[1 << 16];
    std::setvbuf(stdout, buf, _IOFBF, sizeof buf);
    tg::manual_seed(0);
    double loss = 0;
    if (mode == "libs") {
        loss = (tg::ones({4}) * 2).sum().item<float>();
    } else {
        MlpSpec s = deep_mlp_spec();
        auto seq = build(s);
        auto x = tg::rand({s.batch, s.in});
        auto y = tg::zeros({s.batch, s.widths.back()});
        tg::optim::SGD opt(seq->parameters(), tg::optim::SGDOptions(s.lr));
        int steps = mode == "params" ? 0 : mode == "step" ? 1 : 3;
        for (int i = 0; i < steps; ++i) {
            auto l = tg::mse_loss(seq->forward(x), y);
            l.backward();
            opt.step();
            opt.zero_grad();
            loss = l.item<float>();
        }
    }
    std::printf("impl=tapegrad mode=%s VmHWM_kB=%ld RssAnon_kB=%ld RssFile_kB=%ld loss=%.6g\n",
                mode.c_str(), proc_status_kib("VmHWM"), proc_status_kib("RssAnon"),
                proc_status_kib("RssFile"), loss);
    std::fflush(stdout);
}

namespace {

class TgFmnist : public EpochRunner {
public:
    TgFmnist(const FmnistData& d, int64_t batch)
        : x_(copy_of(d.images, {d.n, 784})),
          y_(tg::tensor(d.labels)),
          batch_(batch),
          model_(tg::nn::Linear(784, 256), tg::nn::ReLU(), tg::nn::Linear(256, 128), tg::nn::ReLU(),
                 tg::nn::Linear(128, 10)),
          opt_(model_->parameters(), tg::optim::AdamOptions(1e-3)) {}

    EpochResult epoch(int64_t batches) override {
        int64_t n = x_.size(0);
        double loss_sum = 0;
        int64_t count = 0;
        double t0 = now_s();
        for (int64_t i = 0; i < n && (batches < 0 || count < batches); i += batch_, ++count) {
            int64_t len = std::min(batch_, n - i);
            auto xb = x_.narrow(0, i, len);
            auto yb = y_.narrow(0, i, len);
            auto loss = tg::cross_entropy(model_->forward(xb), yb);
            opt_.zero_grad();
            loss.backward();
            opt_.step();
            loss_sum += loss.item<float>();
        }
        return {now_s() - t0, count ? loss_sum / double(count) : 0};
    }

private:
    tg::Tensor x_, y_;
    int64_t batch_;
    tg::nn::Sequential model_;
    tg::optim::Adam opt_;
};

}  // namespace

std::unique_ptr<EpochRunner> make_tg_fmnist(const FmnistData& d, int64_t batch) {
    return std::make_unique<TgFmnist>(d, batch);
}

}  // namespace bench
