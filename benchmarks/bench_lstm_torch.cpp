/// bench_lstm's LibTorch side: torch::lstm, as nn::LSTM calls it.
#include <torch/torch.h>

#include "bench_lstm.hpp"

namespace bench::lstm {

void run_side(const ChildOptions& o) {
    torch::set_num_threads(o.torch_threads);
    const Data d = data();
    const std::vector<std::vector<int64_t>> shapes = {{4 * H, I}, {4 * H, H}, {4 * H}, {4 * H}};
    std::vector<torch::Tensor> p;
    for (size_t i = 0; i < 4; ++i)
        p.push_back(torch::tensor(d.params[i]).reshape(shapes[i]).detach().requires_grad_(true));
    const torch::Tensor x = torch::tensor(d.x).reshape({T, N, I}),
                        w = torch::tensor(d.w).reshape({T, N, H});
    const torch::Tensor h0 = torch::zeros({1, N, H}), c0 = torch::zeros({1, N, H});
    auto step = [&] {
        for (torch::Tensor& t : p)
            t.mutable_grad() = torch::Tensor();
        auto r = torch::lstm(x, {h0, c0}, p, true, 1, 0.0, true, false, false);
        const torch::Tensor loss = (std::get<0>(r) * w).sum();
        loss.backward();
        return loss.item<double>();
    };
    double loss = 0;
    for (int r = 0; r < o.warmup; ++r)
        loss = step();
    std::vector<double> s;
    for (int r = 0; r < o.reps; ++r) {
        const double t0 = now_s();
        loss = step();
        s.push_back(now_s() - t0);
    }
    print_result({{"side", "libtorch"},
                  {"torch_version", TORCH_VERSION},
                  {"step_ms", ms_list(s)},
                  {"loss", fmt(loss, 3)}});
}

}  // namespace bench::lstm
