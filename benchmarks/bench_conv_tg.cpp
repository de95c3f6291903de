/// bench_conv's tapegrad side (the only translation unit of bench_conv_tg that sees tapegrad):
/// the step, or with --mode input_grad the second convolution's input gradient alone.
#include <tapegrad/tapegrad.hpp>

#include "bench_conv.hpp"
#include "bench_env.hpp"

namespace bench::conv {

namespace {

tg::Tensor copy_of(const std::vector<float>& v, tg::Shape shape, bool grad) {
    tg::Tensor t = tg::from_blob(const_cast<float*>(v.data()), shape).clone();
    if (grad)
        t.requires_grad_(true);
    return t;
}

double sum_of(const tg::Tensor& t) {
    return t.defined() ? double(t.sum().item<float>()) : 0.0;
}

/// Forward (conv, relu, conv, sum) + backward into the weights' and biases' grad(), which are
/// reset (undefined) after each step, outside the timing, as the LibTorch side does.
void run_step(const Init& in, const ChildOptions& o) {
    tg::Tensor x = copy_of(in.x, {N, C0, H, W}, false);
    tg::Tensor w1 = copy_of(in.w1, {C1, C0, K, K}, true), b1 = copy_of(in.b1, {C1}, true);
    tg::Tensor w2 = copy_of(in.w2, {C2, C1, K, K}, true), b2 = copy_of(in.b2, {C2}, true);
    std::vector<double> fwd, bwd, step;
    double loss0 = 0, g[4] = {0, 0, 0, 0};
    for (int r = 0; r < o.warmup + o.reps; ++r) {
        double t0 = now_s();
        tg::Tensor y = tg::conv2d(tg::relu(tg::conv2d(x, w1, b1, 1, 1)), w2, b2, 1, 1);
        tg::Tensor loss = y.sum();
        double t1 = now_s();
        loss.backward();
        double t2 = now_s();
        if (r == 0) {
            loss0 = loss.item<float>();
            tg::Tensor ps[4] = {w1, b1, w2, b2};
            for (int i = 0; i < 4; ++i)
                g[i] = sum_of(ps[i].grad());
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
         {"mode", "step"},
         {"blas_threads", std::to_string(openblas_get_num_threads())},
         {"scatter", env_or_unset("TG_CONV_SCATTER")},
         {"loss", fmt(loss0, 4)},
         {"grad_sums", fmt(g[0], 4) + "," + fmt(g[1], 4) + "," + fmt(g[2], 4) + "," + fmt(g[3], 4)},
         {"fwd_ms", ms_list(fwd)},
         {"bwd_ms", ms_list(bwd)},
         {"step_ms", ms_list(step)}});
}

/// dL/dh of y = conv2d(h, w2, b2) for dy = ones, through tg::autograd::grad, with h a leaf
/// that requires grad and w2, b2 constants: one conv2d_input (64 GEMMs [288,64]x[64,784] into
/// the unfolded buffer, then the fold: gather, or scatter with TG_CONV_SCATTER=1). The forward
/// is recorded before the clock starts.
void run_input_grad(const Init& in, const ChildOptions& o) {
    tg::Tensor x = copy_of(in.x, {N, C0, H, W}, false);
    tg::Tensor w1 = copy_of(in.w1, {C1, C0, K, K}, false), b1 = copy_of(in.b1, {C1}, false);
    tg::Tensor w2 = copy_of(in.w2, {C2, C1, K, K}, false), b2 = copy_of(in.b2, {C2}, false);
    tg::Tensor h = tg::relu(tg::conv2d(x, w1, b1, 1, 1)).clone();
    h.requires_grad_(true);
    tg::Tensor ones = tg::ones({N, C2, H, W});
    std::vector<double> t;
    double check = 0;
    for (int r = 0; r < o.warmup + o.reps; ++r) {
        tg::Tensor y = tg::conv2d(h, w2, b2, 1, 1);
        double t0 = now_s();
        std::vector<tg::Tensor> dh = tg::autograd::grad({y}, {h}, {ones});
        double t1 = now_s();
        if (r == 0)
            check = sum_of(dh[0]);
        if (r >= o.warmup)
            t.push_back(t1 - t0);
    }
    print_result({{"side", "tg"},
                  {"mode", "input_grad"},
                  {"blas_threads", std::to_string(openblas_get_num_threads())},
                  {"scatter", env_or_unset("TG_CONV_SCATTER")},
                  {"grad_sum", fmt(check, 4)},
                  {"step_ms", ms_list(t)}});
}

/// The fold kernel alone: tg::fold of conv2's unfolded input gradient, col [64, 32*9, 784] ->
/// [64, 32, 28, 28] (3x3, padding 1), without recording: the gather (or, with
/// TG_CONV_SCATTER=1, the scatter) and nothing else.
void run_fold(const ChildOptions& o) {
    tg::NoGradGuard no_grad;
    tg::manual_seed(3);
    const tg::Tensor col = tg::rand({N, C1 * K * K, L});
    std::vector<double> t;
    double check = 0;
    for (int r = 0; r < o.warmup + o.reps; ++r) {
        double t0 = now_s();
        tg::Tensor x = tg::fold(col, {H, W}, K, 1, 1);
        double t1 = now_s();
        if (r == 0)
            check = sum_of(x);
        if (r >= o.warmup)
            t.push_back(t1 - t0);
    }
    print_result({{"side", "tg"},
                  {"mode", "fold"},
                  {"blas_threads", std::to_string(openblas_get_num_threads())},
                  {"scatter", env_or_unset("TG_CONV_SCATTER")},
                  {"grad_sum", fmt(check, 4)},
                  {"step_ms", ms_list(t)}});
}

}  // namespace

void run_side(const ChildOptions& o) {
    openblas_set_num_threads(o.threads);
    const Init in = make_init();
    if (o.mode == "input_grad")
        run_input_grad(in, o);
    else if (o.mode == "fold")
        run_fold(o);
    else
        run_step(in, o);
}

}  // namespace bench::conv
