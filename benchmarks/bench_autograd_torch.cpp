/// bench_autograd, LibTorch side (the only translation unit that includes LibTorch).
#include <torch/torch.h>

#include "bench_autograd.hpp"
#include "bench_common.hpp"

namespace bench {

std::string torch_setup(int threads) {
    torch::set_num_threads(threads);
    return "LibTorch " TORCH_VERSION ", intra-op threads " + std::to_string(at::get_num_threads());
}

namespace {
torch::Tensor chain(torch::Tensor y, const torch::Tensor& a, const torch::Tensor& b, int64_t ops) {
    for (int64_t i = 0; i < ops; ++i) {
        switch (i % 3) {
            case 0:
                y = y + a;
                break;
            case 1:
                y = y * b;
                break;
            default:
                y = torch::tanh(y);
                break;
        }
    }
    return y;
}
}  // namespace

ChainTimes torch_chain(const ChainConfig& c) {
    auto opts = torch::TensorOptions().dtype(torch::kFloat32);
    auto x = torch::full({c.n}, 0.5, opts.requires_grad(true));
    auto a = torch::full({c.n}, 0.1, opts.requires_grad(c.leaves_grad));
    auto b = torch::full({c.n}, 0.9, opts.requires_grad(c.leaves_grad));
    ChainTimes t;
    double t0 = now_s();
    torch::Tensor y = chain(x, a, b, c.ops);
    double t1 = now_s();
    {
        auto s = y.sum();
        s.backward();
        s = torch::Tensor();
        y = torch::Tensor();  // frees the graph
    }
    double t2 = now_s();
    t.fwd = t1 - t0;
    t.bwd = t2 - t1;
    t.checksum = x.grad().sum().item<double>();
    if (c.leaves_grad)
        t.checksum += a.grad().sum().item<double>() + b.grad().sum().item<double>();
    {
        torch::NoGradGuard no_grad;
        double t3 = now_s();
        torch::Tensor z = chain(x, a, b, c.ops);
        double t4 = now_s();
        t.fwd_nograd = t4 - t3;
        t.checksum += 0 * z.sum().item<double>();
    }
    return t;
}

}  // namespace bench
