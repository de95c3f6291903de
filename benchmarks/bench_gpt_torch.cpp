/// bench_gpt's LibTorch side: the same model with LibTorch 1.13's functional ops and the
/// composed attention softmax(q·kᵀ/√d + causal mask)·v (1.13 has no fused attention).
#include <malloc.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_gpt.hpp"

namespace bench::gpt {

namespace {

namespace F = torch::nn::functional;
constexpr double kDropout = 0.1;

struct Model {
    std::vector<torch::Tensor> p;
    bool train = true;
    torch::Tensor causal;  // [T,T] bool, true above the diagonal

    torch::Tensor drop(const torch::Tensor& x) const { return torch::dropout(x, kDropout, train); }
    const torch::Tensor& w(int64_t block, size_t k) const {
        return p[2 + size_t(block) * kPerBlock + k];
    }
    torch::Tensor forward(const torch::Tensor& ids) const {
        torch::Tensor h = F::embedding(ids, p[0]) + F::embedding(torch::arange(T), p[1]);
        for (int64_t i = 0; i < L; ++i) {
            const torch::Tensor a = torch::layer_norm(h, {D}, w(i, 0), w(i, 1));
            const torch::Tensor qkv = torch::linear(a, w(i, 2), w(i, 3));
            auto heads = [&](int64_t k) {
                return qkv.narrow(2, k * D, D).reshape({B, T, H, D / H}).permute({0, 2, 1, 3});
            };
            torch::Tensor s =
                torch::matmul(heads(0), heads(1).transpose(-2, -1)) / std::sqrt(double(D / H));
            s = s.masked_fill(causal, -std::numeric_limits<float>::infinity());
            const torch::Tensor att = torch::dropout(torch::softmax(s, -1), kDropout, train);
            const torch::Tensor y = torch::matmul(att, heads(2));
            const torch::Tensor x =
                h +
                drop(torch::linear(y.permute({0, 2, 1, 3}).reshape({B, T, D}), w(i, 4), w(i, 5)));
            const torch::Tensor m = torch::layer_norm(x, {D}, w(i, 6), w(i, 7));
            h = x + drop(torch::linear(drop(torch::gelu(torch::linear(m, w(i, 8), w(i, 9)))),
                                       w(i, 10), w(i, 11)));
        }
        const size_t n = p.size();
        return torch::linear(torch::layer_norm(h, {D}, p[n - 4], p[n - 3]), p[n - 2], p[n - 1]);
    }
};

}  // namespace

void run_side(const ChildOptions& o) {
    torch::set_num_threads(o.torch_threads);
    torch::manual_seed(0);
    Model m;
    const auto init = initial_values();
    const auto ps = params();
    for (size_t i = 0; i < ps.size(); ++i)
        m.p.push_back(torch::tensor(init[i]).reshape(ps[i].shape).detach().requires_grad_(true));
    m.causal = torch::ones({T, T}, torch::kBool).triu(1);
    const torch::Tensor all = torch::tensor(tokens()).reshape({B, T + 1});
    const torch::Tensor x = all.narrow(1, 0, T).contiguous(),
                        y = all.narrow(1, 1, T).reshape({B * T});
    double check_loss;
    {
        torch::NoGradGuard g;
        m.train = false;
        check_loss = torch::cross_entropy_loss(m.forward(x).reshape({B * T, V}), y).item<double>();
        m.train = true;
    }
    torch::optim::AdamW opt(m.p, torch::optim::AdamWOptions(1e-4));
    auto step = [&] {
        opt.zero_grad();
        const torch::Tensor loss = torch::cross_entropy_loss(m.forward(x).reshape({B * T, V}), y);
        loss.backward();
        opt.step();
        return loss.item<double>();
    };
    double loss = 0;
    for (int r = 0; r < o.warmup; ++r)
        loss = step();
    if (o.mode == "memory") {
        malloc_trim(0);
        const long rss0 = proc_status_kib("VmRSS");
        const bool hwm = reset_peak_rss();
        loss = step();
        const long rss1 = proc_status_kib("VmHWM");
        print_result({{"side", "libtorch"},
                      {"torch_threads", std::to_string(o.torch_threads)},
                      {"peak_rss_mib", hwm ? fmt(double(rss1 - rss0) / 1024, 2) : "n/a"},
                      {"loss", fmt(loss, 5)},
                      {"check_loss", fmt(check_loss, 6)},
                      {"torch_version", TORCH_VERSION}});
        return;
    }
    std::vector<double> ms;  // seconds
    for (int r = 0; r < o.reps; ++r) {
        const double t0 = now_s();
        loss = step();
        ms.push_back(now_s() - t0);
    }
    print_result({{"side", "libtorch"},
                  {"torch_threads", std::to_string(o.torch_threads)},
                  {"step_ms", ms_list(ms)},
                  {"loss", fmt(loss, 5)},
                  {"check_loss", fmt(check_loss, 6)},
                  {"torch_version", TORCH_VERSION}});
}

}  // namespace bench::gpt
