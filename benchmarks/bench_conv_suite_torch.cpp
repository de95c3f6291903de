/// bench_conv_suite's LibTorch side (the only translation unit of bench_conv_suite_torch that
/// sees LibTorch): the same rows as bench_conv_suite_tg. --torch-threads sets LibTorch's
/// intra-op threads, --mkldnn 0 disables oneDNN where LibTorch has it.
#include <torch/torch.h>

#include "bench_conv_suite.hpp"
#include "bench_env.hpp"

namespace bench::suite {

namespace {

torch::Tensor copy_of(const std::vector<float>& v, std::vector<int64_t> shape, bool grad) {
    return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32)
        .clone()
        .set_requires_grad(grad);
}

torch::Tensor forward(const Row& r, const torch::Tensor& x, const torch::Tensor& w) {
    switch (r.op) {
        case Op::ConvTranspose2d:
            return torch::conv_transpose2d(x, w, {}, r.s, r.p, 0, r.g);
        case Op::Conv1d:
            return torch::conv1d(x, w, {}, r.s, r.p, 1, r.g);
        default:
            return torch::conv2d(x, w, {}, r.s, r.p, 1, r.g);
    }
}

}  // namespace

void run_side(const ChildOptions& o) {
    openblas_set_num_threads(o.threads);
    torch::set_num_threads(o.torch_threads);
    at::globalContext().setUserEnabledMkldnn(o.mkldnn != 0);
    std::vector<std::pair<std::string, std::string>> out = {
        {"side", "torch"},
        {"torch_version", TORCH_VERSION},
        {"torch_threads", std::to_string(at::get_num_threads())},
        {"blas_threads", std::to_string(openblas_get_num_threads())},
        {"has_mkldnn", at::hasMKLDNN() ? "1" : "0"}};
    double total = 0;  // the rows' median steps, summed (the driver's log line)
    for (const Row& r : rows()) {
        if (!selected(o, r))
            continue;
        std::vector<int64_t> ys = {r.N, r.O, r.oh(), r.ow()};
        if (r.op == Op::Conv1d)
            ys = {r.N, r.O, r.ow()};
        const Init in = make_init(r, ys);
        torch::Tensor x = copy_of(in.x, r.x_shape(), true), w = copy_of(in.w, r.w_shape(), true);
        const torch::Tensor dy = copy_of(in.dy, ys, false);
        std::vector<double> fwd, bwd;
        double check = 0;
        for (int i = 0; i < o.warmup + o.reps; ++i) {
            const double t0 = now_s();
            torch::Tensor y = forward(r, x, w);
            const double t1 = now_s();
            y.backward(dy);
            const double t2 = now_s();
            if (i == 0)
                check = y.sum().item<double>() + x.grad().sum().item<double>() +
                        w.grad().sum().item<double>();
            if (i >= o.warmup) {
                fwd.push_back(t1 - t0);
                bwd.push_back(t2 - t1);
            }
            x.mutable_grad().reset();
            w.mutable_grad().reset();
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
