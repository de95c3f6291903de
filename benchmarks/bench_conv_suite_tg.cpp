/// bench_conv_suite's tapegrad side (the only translation unit of bench_conv_suite_tg that sees
/// tapegrad): each row's forward, then its backward from a fixed dy into dx and dw.
#include <tapegrad/tapegrad.hpp>

#include "bench_conv_suite.hpp"
#include "bench_env.hpp"

namespace bench::suite {

namespace {

tg::Tensor copy_of(const std::vector<float>& v, const std::vector<int64_t>& shape, bool grad) {
    tg::Tensor t = tg::from_blob(const_cast<float*>(v.data()), tg::Shape(shape)).clone();
    if (grad)
        t.requires_grad_(true);
    return t;
}

tg::Tensor forward(const Row& r, const tg::Tensor& x, const tg::Tensor& w) {
    switch (r.op) {
        case Op::ConvTranspose2d:
            return tg::conv_transpose2d(x, w, {}, r.s, r.p, 0, r.g);
        case Op::Conv1d:
            return tg::conv1d(x, w, {}, r.s, r.p, 1, r.g);
        default:
            return tg::conv2d(x, w, {}, r.s, r.p, 1, r.g);
    }
}

}  // namespace

void run_side(const ChildOptions& o) {
    openblas_set_num_threads(o.threads);
    std::vector<std::pair<std::string, std::string>> out = {
        {"side", "tg"}, {"blas_threads", std::to_string(openblas_get_num_threads())}};
    double total = 0;  // the rows' median steps, summed (the driver's log line)
    for (const Row& r : rows()) {
        if (!selected(o, r))
            continue;
        std::vector<int64_t> ys = {r.N, r.O, r.oh(), r.ow()};
        if (r.op == Op::Conv1d)
            ys = {r.N, r.O, r.ow()};
        const Init in = make_init(r, ys);
        tg::Tensor x = copy_of(in.x, r.x_shape(), true), w = copy_of(in.w, r.w_shape(), true);
        const tg::Tensor dy = copy_of(in.dy, ys, false);
        std::vector<double> fwd, bwd;
        double check = 0;
        for (int i = 0; i < o.warmup + o.reps; ++i) {
            const double t0 = now_s();
            tg::Tensor y = forward(r, x, w);
            const double t1 = now_s();
            y.backward(dy);
            const double t2 = now_s();
            if (i == 0)
                check = double(y.sum().item<float>()) + double(x.grad().sum().item<float>()) +
                        double(w.grad().sum().item<float>());
            if (i >= o.warmup) {
                fwd.push_back(t1 - t0);
                bwd.push_back(t2 - t1);
            }
            x.set_grad(tg::Tensor());
            w.set_grad(tg::Tensor());
        }
        total += median(fwd) + median(bwd);
        out.push_back({std::string("fwd_ms_") + r.name, ms_list(fwd)});
        out.push_back({std::string("bwd_ms_") + r.name, ms_list(bwd)});
        out.push_back({std::string("check_") + r.name, fmt(check, 3)});
    }
    out.push_back({"step_ms", fmt(1e3 * total, 4)});
    print_result(out);
}

}  // namespace bench::suite
