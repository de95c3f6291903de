/// bench_lstm's tapegrad side: tg::lstm (one fused node, Note [One node per recurrent layer]).
#include <tapegrad/tapegrad.hpp>

#include "bench_lstm.hpp"

namespace bench::lstm {

void run_side(const ChildOptions& o) {
    const Data d = data();
    const tg::Shape shapes[4] = {{4 * H, I}, {4 * H, H}, {4 * H}, {4 * H}};
    std::vector<tg::Tensor> p;
    for (size_t i = 0; i < 4; ++i)
        p.push_back(tg::tensor(d.params[i]).reshape(shapes[i]).detach().requires_grad_(true));
    const tg::Tensor x = tg::tensor(d.x).reshape({T, N, I}), w = tg::tensor(d.w).reshape({T, N, H});
    const tg::Tensor h0 = tg::zeros({1, N, H}), c0 = tg::zeros({1, N, H});
    auto step = [&] {
        for (tg::Tensor& t : p)
            t.set_grad(tg::Tensor());
        auto [y, h, c] =
            tg::lstm(x, {h0, c0}, p, true, 1, 0.0, true, false, false, o.checkpoint_every);
        const tg::Tensor loss = (y * w).sum();
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
    print_result({{"side", "tapegrad"},
                  {"checkpoint_every", std::to_string(o.checkpoint_every)},
                  {"step_ms", ms_list(s)},
                  {"loss", fmt(loss, 3)}});
}

}  // namespace bench::lstm
