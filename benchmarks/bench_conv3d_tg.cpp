/// bench_conv3d's tapegrad side: the step with tg::conv3d.
#include <tapegrad/tapegrad.hpp>

#include "bench_conv3d.hpp"
#include "bench_env.hpp"

namespace bench::conv3d {

namespace {

tg::Tensor copy_of(const std::vector<float>& v, tg::Shape shape, bool grad) {
    tg::Tensor t = tg::from_blob(const_cast<float*>(v.data()), shape).clone();
    if (grad)
        t.requires_grad_(true);
    return t;
}

}  // namespace

void run_side(const ChildOptions& o) {
    openblas_set_num_threads(o.threads);
    const Init in = make_init();
    tg::Tensor x = copy_of(in.x, {N, C0, T, H, W}, false);
    tg::Tensor w1 = copy_of(in.w1, {C1, C0, K, K, K}, true), b1 = copy_of(in.b1, {C1}, true);
    tg::Tensor w2 = copy_of(in.w2, {C2, C1, K, K, K}, true), b2 = copy_of(in.b2, {C2}, true);
    std::vector<double> fwd, bwd, step;
    double loss0 = 0, g[4] = {0, 0, 0, 0};
    for (int r = 0; r < o.warmup + o.reps; ++r) {
        double t0 = now_s();
        tg::Tensor y = tg::conv3d(tg::relu(tg::conv3d(x, w1, b1, 1, 1)), w2, b2, 1, 1);
        tg::Tensor loss = y.sum();
        double t1 = now_s();
        loss.backward();
        double t2 = now_s();
        if (r == 0) {
            loss0 = loss.item<float>();
            tg::Tensor ps[4] = {w1, b1, w2, b2};
            for (int i = 0; i < 4; ++i)
                g[i] = double(ps[i].grad().sum().item<float>());
        }
        if (r >= o.warmup) {
            fwd.push_back(t1 - t0);
            bwd.push_back(t2 - t1);
            step.push_back(t2 - t0);
        }
        for (auto* p : {&w1, &b1, &w2, &b2})
            p->set_grad(tg::Tensor());
    }
    print_result(
        {{"side", "tg"},
         {"blas_threads", std::to_string(openblas_get_num_threads())},
         {"loss", fmt(loss0, 3)},
         {"grad_sums", fmt(g[0], 3) + "," + fmt(g[1], 3) + "," + fmt(g[2], 3) + "," + fmt(g[3], 3)},
         {"fwd_ms", ms_list(fwd)},
         {"bwd_ms", ms_list(bwd)},
         {"step_ms", ms_list(step)}});
}

}  // namespace bench::conv3d
