/// bench_conv's LibTorch side (the only translation unit of bench_conv_torch that sees
/// LibTorch): the same step as bench_conv_tg, with at::conv2d. --torch-threads sets LibTorch's
/// intra-op threads, --mkldnn 0 disables oneDNN (at::globalContext().setUserEnabledMkldnn)
/// where LibTorch was built with it; the result line names the backend LibTorch selects.
#include <ATen/native/ConvUtils.h>
#include <torch/torch.h>

#include "bench_conv.hpp"
#include "bench_env.hpp"

namespace bench::conv {

namespace {

torch::Tensor copy_of(const std::vector<float>& v, std::vector<int64_t> shape, bool grad) {
    return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32)
        .clone()
        .set_requires_grad(grad);
}

double sum_of(const torch::Tensor& t) {
    return t.defined() ? t.sum().item<double>() : 0.0;
}

std::string backend_name(at::native::ConvBackend b) {
    using B = at::native::ConvBackend;
    switch (b) {
        case B::Mkldnn:
            return "Mkldnn";
        case B::MkldnnEmpty:
            return "MkldnnEmpty";
        case B::NnpackSpatial:
            return "NnpackSpatial";
        case B::Slow2d:
            return "Slow2d";
        case B::SlowDilated2d:
            return "SlowDilated2d";
        case B::Xnnpack2d:
            return "Xnnpack2d";
        case B::Empty:
            return "Empty";
        default:
            return "other(" + std::to_string(int(b)) + ")";
    }
}

/// The backend at::convolution picks for a 3x3, stride-1, padding-1 convolution of x by w.
std::string selected_backend(const torch::Tensor& x, const torch::Tensor& w,
                             const torch::Tensor& b) {
    return backend_name(
        at::native::select_conv_backend(x, w, b, {1, 1}, {1, 1}, {1, 1}, false, {0, 0}, 1));
}

}  // namespace

void run_side(const ChildOptions& o) {
    openblas_set_num_threads(o.threads);
    torch::set_num_threads(o.torch_threads);
    at::globalContext().setUserEnabledMkldnn(o.mkldnn != 0);
    const Init in = make_init();
    torch::Tensor x = copy_of(in.x, {N, C0, H, W}, false);
    torch::Tensor w1 = copy_of(in.w1, {C1, C0, K, K}, true), b1 = copy_of(in.b1, {C1}, true);
    torch::Tensor w2 = copy_of(in.w2, {C2, C1, K, K}, true), b2 = copy_of(in.b2, {C2}, true);
    std::string be1 = selected_backend(x, w1, b1);
    std::string be2 =
        selected_backend(torch::zeros({N, C1, H, W}).set_requires_grad(false), w2, b2);
    std::vector<double> fwd, bwd, step;
    double loss0 = 0, g[4] = {0, 0, 0, 0};
    for (int r = 0; r < o.warmup + o.reps; ++r) {
        double t0 = now_s();
        torch::Tensor y = torch::conv2d(torch::relu(torch::conv2d(x, w1, b1, 1, 1)), w2, b2, 1, 1);
        torch::Tensor loss = y.sum();
        double t1 = now_s();
        loss.backward();
        double t2 = now_s();
        if (r == 0) {
            loss0 = loss.item<double>();
            torch::Tensor ps[4] = {w1, b1, w2, b2};
            for (int i = 0; i < 4; ++i)
                g[i] = sum_of(ps[i].grad());
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
         {"mode", "step"},
         {"torch_version", TORCH_VERSION},
         {"torch_threads", std::to_string(at::get_num_threads())},
         {"blas_threads", std::to_string(openblas_get_num_threads())},
         {"has_mkldnn", at::hasMKLDNN() ? "1" : "0"},
         {"mkldnn_enabled", at::globalContext().userEnabledMkldnn() ? "1" : "0"},
         {"backend", be1 + "," + be2},
         {"loss", fmt(loss0, 4)},
         {"grad_sums", fmt(g[0], 4) + "," + fmt(g[1], 4) + "," + fmt(g[2], 4) + "," + fmt(g[3], 4)},
         {"fwd_ms", ms_list(fwd)},
         {"bwd_ms", ms_list(bwd)},
         {"step_ms", ms_list(step)}});
}

}  // namespace bench::conv
