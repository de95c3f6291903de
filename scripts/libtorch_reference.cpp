// Prints the float64 values tests/test_libtorch_spellings.cpp checks against, computed by
// LibTorch itself (Debian's libtorch-dev, 1.13). Not part of the build: run it by hand when a
// checked spelling is added, and paste its output into the test.
//   g++ -std=c++17 -O1 scripts/libtorch_reference.cpp -o /tmp/libtorch_reference \
//       $(pkg-config --cflags --libs torch 2>/dev/null || echo
//       -I/usr/include/torch/csrc/api/include -ltorch -ltorch_cpu -lc10)
#include <torch/torch.h>

#include <cstdio>
#include <string>

namespace F = torch::nn::functional;

static void show(const char* name, const torch::Tensor& t) {
    auto c = t.to(torch::kFloat64).contiguous().reshape({-1});
    std::printf("%s:", name);
    for (int64_t i = 0; i < c.numel(); ++i)
        std::printf(" %.17g", c[i].item<double>());
    std::printf("\n");
}

int main() {
    auto o = torch::TensorOptions().dtype(torch::kFloat64);
    auto logits =
        torch::tensor({0.5, -1.25, 2.0, 0.75, 0.0, -0.5, 1.5, 2.5, -2.0, 0.25, 0.125, -0.75}, o)
            .reshape({4, 3})
            .requires_grad_(true);
    auto labels = torch::tensor({0, -100, 1, 2}, torch::kInt64);
    auto w = torch::tensor({0.5, 2.0, 1.25}, o);
    auto ce = F::cross_entropy(logits, labels,
                               F::CrossEntropyFuncOptions().weight(w).label_smoothing(0.1));
    show("ce_weight_ignore_smooth", ce);
    ce.backward();
    show("ce_weight_ignore_smooth_grad", logits.grad());
    show(
        "ce_smooth_sum",
        F::cross_entropy(logits, torch::tensor({0, 2, 1, 2}),
                         F::CrossEntropyFuncOptions().label_smoothing(0.3).reduction(torch::kSum)));
    show("ce_ignore_none",
         F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions().reduction(torch::kNone)));
    auto logp = torch::log_softmax(logits, 1);
    show("nll_weight_ignore", F::nll_loss(logp, labels, F::NLLLossFuncOptions().weight(w)));
    show("nll_ignore_1_sum",
         F::nll_loss(logp, torch::tensor({0, 2, 1, 1}),
                     F::NLLLossFuncOptions().ignore_index(1).reduction(torch::kSum)));
    auto x = torch::tensor({0.1, -0.4, 1.5, -2.0, 0.3, 0.9}, o),
         y = torch::tensor({0.0, 0.2, -0.5, -1.0, 0.35, 0.0}, o);
    // LibTorch 1.13's F::smooth_l1_loss ignores SmoothL1LossFuncOptions().beta(): beta is its
    // fourth argument there
    show("smooth_l1_beta_0.5", F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions(), 0.5));
    show("smooth_l1_none",
         F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions().reduction(torch::kNone)));
    show("huber_delta_0.7_sum",
         F::huber_loss(x, y, F::HuberLossFuncOptions().delta(0.7).reduction(torch::kSum)));
    auto t = torch::tensor({0.2, 0.0, 0.8, 0.5, 0.5, 0.0}, o).reshape({2, 3});
    auto lp = torch::log_softmax(x.reshape({2, 3}), 1);
    show("kl_div_mean", F::kl_div(lp, t, F::KLDivFuncOptions().reduction(torch::kMean)));
    show("kl_div_log_target_sum",
         F::kl_div(lp, lp * 0.5, F::KLDivFuncOptions().reduction(torch::kSum).log_target(true)));
    auto p = torch::tensor({0.1, 0.9, 0.5, 0.0, 1.0, 0.3}, o),
         q = torch::tensor({0.0, 1.0, 0.25, 1.0, 1.0, 0.6}, o);
    show("bce_mean", F::binary_cross_entropy(p, q));
    show("bce_weight_sum", F::binary_cross_entropy(p, q,
                                                   F::BinaryCrossEntropyFuncOptions()
                                                       .weight(torch::full({6}, 0.5, o))
                                                       .reduction(torch::kSum)));
    auto m = torch::tensor({1.0, 2.0, 3.0, -1.0, 0.5, 4.0}, o).reshape({2, 3});
    show("logsumexp_1", torch::logsumexp(m, 1));
    show("norm_3_dim1", m.norm(3, {1}));
    show("round", torch::round(torch::tensor({0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 2.2}, o)));
    show("addmm", torch::addmm(torch::tensor({1.0, -1.0}, o), m, m.t(), 0.5, 2.0));
    show("triu_1", torch::triu(torch::arange(1, 10, o).reshape({3, 3}), 1));
    return 0;
}
