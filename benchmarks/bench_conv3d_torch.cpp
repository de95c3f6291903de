/// bench_conv3d's LibTorch side: the same step with torch::conv3d; --torch-threads sets its
/// intra-op threads, --mkldnn 0 disables oneDNN where LibTorch has it.
#include <torch/torch.h>

#include "bench_conv3d.hpp"
#include "bench_env.hpp"

namespace bench::conv3d {

namespace {

torch::Tensor copy_of(const std::vector<float>& v, std::vector<int64_t> shape, bool grad) {
    return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32)
        .clone()
        .set_requires_grad(grad);
}

}  // namespace

void run_side(const ChildOptions& o) {
    openblas_set_num_threads(o.threads);
    torch::set_num_threads(o.torch_threads);
    at::globalContext().setUserEnabledMkldnn(o.mkldnn != 0);
    const Init in = make_init();
    torch::Tensor x = copy_of(in.x, {N, C0, T, H, W}, false);
    torch::Tensor w1 = copy_of(in.w1, {C1, C0, K, K, K}, true), b1 = copy_of(in.b1, {C1}, true);
    torch::Tensor w2 = copy_of(in.w2, {C2, C1, K, K, K}, true), b2 = copy_of(in.b2, {C2}, true);
    std::vector<double> fwd, bwd, step;
    double loss0 = 0, g[4] = {0, 0, 0, 0};
    for (int r = 0; r < o.warmup + o.reps; ++r) {
        double t0 = now_s();
        torch::Tensor y = torch::conv3d(torch::relu(torch::conv3d(x, w1, b1, 1, 1)), w2, b2, 1, 1);
        torch::Tensor loss = y.sum();
        double t1 = now_s();
        loss.backward();
        double t2 = now_s();
        if (r == 0) {
            loss0 = loss.item<double>();
            torch::Tensor ps[4] = {w1, b1, w2, b2};
            for (int i = 0; i < 4; ++i)
                g[i] = ps[i].grad().sum().item<double>();
        }
        if (r >= o.warmup) {
            fwd.push_back(t1 - t0);
            bwd.push_back(t2 - t1);
            step.push_back(t2 - t0);
        }
        for (auto* p : {&w1, &b1, &w2, &b2})
            p->mutable_grad().reset();
    }
    print_result(
        {{"side", "torch"},
         {"torch_version", TORCH_VERSION},
         {"torch_threads", std::to_string(at::get_num_threads())},
         {"blas_threads", std::to_string(openblas_get_num_threads())},
         {"has_mkldnn", at::hasMKLDNN() ? "1" : "0"},
         {"loss", fmt(loss0, 3)},
         {"grad_sums", fmt(g[0], 3) + "," + fmt(g[1], 3) + "," + fmt(g[2], 3) + "," + fmt(g[3], 3)},
         {"fwd_ms", ms_list(fwd)},
         {"bwd_ms", ms_list(bwd)},
         {"step_ms", ms_list(step)}});
}

}  // namespace bench::conv3d
