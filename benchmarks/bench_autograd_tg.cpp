/// bench_autograd, tapegrad side.
#include <tapegrad/tapegrad.hpp>

#include "bench_autograd.hpp"
#include "bench_common.hpp"

namespace bench {

namespace {
tg::Tensor chain(tg::Tensor y, const tg::Tensor& a, const tg::Tensor& b, int64_t ops) {
    for (int64_t i = 0; i < ops; ++i) {
        switch (i % 3) {
            case 0:
                y = y + a;
                break;
            case 1:
                y = y * b;
                break;
            default:
                y = tg::tanh(y);
                break;
        }
    }
    return y;
}
}  // namespace

ChainTimes tg_chain(const ChainConfig& c) {
    auto opts = tg::TensorOptions().dtype(tg::kFloat32);
    auto x = tg::full({c.n}, 0.5, opts.requires_grad(true));
    auto a = tg::full({c.n}, 0.1, opts.requires_grad(c.leaves_grad));
    auto b = tg::full({c.n}, 0.9, opts.requires_grad(c.leaves_grad));
    ChainTimes t;
    double t0 = now_s();
    tg::Tensor y = chain(x, a, b, c.ops);
    double t1 = now_s();
    {
        auto s = y.sum();
        s.backward();
        s = tg::Tensor();
        y = tg::Tensor();  // frees the graph
    }
    double t2 = now_s();
    t.fwd = t1 - t0;
    t.bwd = t2 - t1;
    t.checksum = x.grad().sum().item<double>();
    if (c.leaves_grad)
        t.checksum += a.grad().sum().item<double>() + b.grad().sum().item<double>();
    {
        tg::NoGradGuard no_grad;
        double t3 = now_s();
        tg::Tensor z = chain(x, a, b, c.ops);
        double t4 = now_s();
        t.fwd_nograd = t4 - t3;
        t.checksum += 0 * z.sum().item<double>();
    }
    return t;
}

}  // namespace bench
