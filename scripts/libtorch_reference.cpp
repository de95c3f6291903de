// Prints the float64 values tests/test_libtorch_spellings.cpp (and the tests named at each
// function below) check against, computed by LibTorch itself (Debian's libtorch-dev, 1.13). Not
// part of the build: run it by hand when a checked spelling is added, and paste its output into
// the test.
//   g++ -std=c++17 -O1 scripts/libtorch_reference.cpp -o /tmp/libtorch_reference \
//       $(pkg-config --cflags --libs torch 2>/dev/null || echo
//       -I/usr/include/torch/csrc/api/include -ltorch -ltorch_cpu -lc10)
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>

namespace F = torch::nn::functional;

static void show(const char* name, const torch::Tensor& t) {
    auto c = t.to(torch::kFloat64).contiguous().reshape({-1});
    std::printf("%s:", name);
    for (int64_t i = 0; i < c.numel(); ++i)
        std::printf(" %.17g", c[i].item<double>());
    std::printf("\n");
}

/// tests/test_bool_tensors.cpp: comparisons, masks, logic, advanced indexing, index_put_.
static void bool_tensors(const torch::TensorOptions& o) {
    using namespace torch::indexing;
    auto x = torch::tensor({0.7, -0.2, 1.3, 0.4, -1.1, 0.9, 0.05, -0.6, 2.2, 0.6, -0.3, 0.8}, o)
                 .reshape({3, 4});
    auto m = x > 0.5;
    std::printf("mask_dtype_is_bool: %d\n", int(m.dtype() == torch::kBool));
    show("mask", m);
    show("mask_sum", m.sum());
    std::printf("mask_sum_dtype_is_long: %d\n", int(m.sum().dtype() == torch::kInt64));
    show("any_all", torch::stack({m.any().to(torch::kInt64), m.all().to(torch::kInt64)}));
    show("any_dim1", m.any(1));
    show("all_dim0_keep", m.all(0, true));
    show("logic", (m & (x < 1.0)).to(torch::kInt64) * 1 + (m | (x < -0.5)).to(torch::kInt64) * 2 +
                      (~m).to(torch::kInt64) * 4 + (m ^ (x > 0.0)).to(torch::kInt64) * 8);
    show("logical_fns", torch::logical_and(x, x > 0.0).to(torch::kInt64) +
                            torch::logical_not(x - 0.7).to(torch::kInt64) * 2);
    show("nonzero", torch::nonzero(m));
    show("masked_select", torch::masked_select(x, x.lt(0)));
    show("where_bool", torch::where(m, x, -x));
    show("masked_fill_bool", x.masked_fill(~m, 0.0));
    show("mask_times_x", m * x);
    show("int_lt_1.5", torch::tensor({0, 1, 2}) < 1.5);
    show("eq_bool_bool", m == (x > 0.6));
    show("index_mask", x.index({m}));
    show("index_row_mask", x.index({torch::tensor({true, false, true})}));
    show("index_col_mask", x.index({Slice(), x[0] > 0.0}));
    show("index_pairs", x.index({torch::tensor({0, 2, -1}), torch::tensor({1, 3, 0})}));
    show("index_2d", x.index({torch::tensor({{0, 2}, {1, 0}})}));
    std::printf("index_2d_shape: %s\n",
                c10::str(x.index({torch::tensor({{0, 2}, {1, 0}})}).sizes()).c_str());
    show("index_col_neg", x.index({Slice(), torch::tensor({-1, 0})}));
    auto xr = x.clone().requires_grad_(true);
    auto sel = xr.index({xr > 0.5});
    (sel * sel).sum().backward();
    show("index_mask_grad", xr.grad());
    auto z = x.clone();
    z.index_put_({z < 0}, 0.0);
    show("put_mask_scalar", z);
    z.index_put_({torch::tensor({0, 2}), torch::tensor({3, 1})}, torch::tensor({-5.0, -6.0}, o));
    show("put_pairs", z);
    z.index_put_({Slice(None, None, 2), Slice(1, None, 2)}, 9.0);
    show("put_steps", z);
    auto a = x.clone().requires_grad_(true);
    auto v = torch::tensor({10.0, 20.0, 30.0}, o).requires_grad_(true);
    auto w = a * 2.0;
    w.index_put_({Slice(), 1}, v);
    w.index_put_({w < 0}, torch::tensor(0.5, o));
    (w * torch::arange(12, o).reshape({3, 4})).sum().backward();
    show("put_grad_a", a.grad());
    show("put_grad_v", v.grad());
    auto t3 = torch::arange(24, o).reshape({2, 3, 4}).requires_grad_(true);
    auto sep = t3.index({torch::tensor({1, 0, 1}), Slice(), torch::tensor({3, 0, 2})});
    std::printf("index_separated_shape: %d %d\n", int(sep.size(0)), int(sep.size(1)));
    show("index_separated", sep);
    (sep * torch::arange(9, o).reshape({3, 3})).sum().backward();
    show("index_separated_grad", t3.grad());
    auto sep2 = t3.index({torch::tensor({1, 0}), None, Slice(1, 3), torch::tensor({2, 2})});
    std::printf("index_separated_none_shape: %d %d %d\n", int(sep2.size(0)), int(sep2.size(1)),
                int(sep2.size(2)));
    show("index_separated_none", sep2);
    show("index_int_between", t3.index({torch::tensor({1, 0}), 1, torch::tensor({3, 0})}));
    auto acc = x.clone().requires_grad_(true);
    auto u = torch::tensor({1.0, 2.0, 4.0}, o).requires_grad_(true);
    auto c = acc * 1.0;
    c.index_put_({torch::tensor({0, 2, 0}), torch::tensor({1, 1, 1})}, u, /*accumulate=*/true);
    show("put_accumulate", c);
    (c * torch::arange(12, o).reshape({3, 4})).sum().backward();
    show("put_accumulate_grad_u", u.grad());
}

/// tests/test_ordering.cpp: cumsum, sort (ties, NaN), argsort, topk.
static void ordering(const torch::TensorOptions& o) {
    auto v = torch::tensor({3.0, 1.0, double(NAN), 1.0, -2.0, 3.0, 0.5, 1.0}, o).reshape({2, 4});
    auto [sv, si] = v.sort(1);
    show("sort_values", sv);
    show("sort_indices", si);
    auto [dv, di] = v.sort(1, true);
    show("sort_desc_values", dv);
    show("sort_desc_indices", di);
    show("argsort_dim0", torch::argsort(v, int64_t(0), false));
    auto w = torch::tensor({0.3, 2.5, -1.0, 2.5, 0.7, 4.0}, o);
    auto [tv, ti] = w.topk(3);
    show("topk3_values", tv);
    show("topk3_indices", ti);
    auto [bv, bi] = w.topk(2, 0, false);
    show("topk2_smallest_indices", bi);
    show("cumsum_long", torch::tensor({1, 2, 3, 4, 5}).cumsum(0));
    std::printf("cumsum_bool_dtype_is_long: %d\n",
                int((w > 1.0).cumsum(0).dtype() == torch::kInt64));
    show("cumsum_bool", (w > 1.0).cumsum(0));
    auto c =
        torch::tensor({0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, o).reshape({2, 3}).requires_grad_(true);
    (c.cumsum(1) * torch::tensor({1.0, 2.0, 3.0}, o)).sum().backward();
    show("cumsum_grad", c.grad());
    auto e = torch::tensor({1.0, double(NAN), 3.0, 2.0, 2.0, -1.0}, o).reshape({2, 3});
    auto [mv, mi] = e.max(1);
    show("max_dim1_values", mv);
    show("max_dim1_indices", mi);
    auto [nv, ni] = e.min(0, true);
    show("min_dim0_keepdim_values", nv);
    show("min_dim0_keepdim_indices", ni);
    auto g = torch::tensor({1.0, 3.0, 3.0, 2.0, 2.0, 1.0}, o).reshape({2, 3}).requires_grad_(true);
    std::get<0>(g.max(1)).sum().backward();
    show("max_dim1_grad_ties", g.grad());
    g.grad().zero_();
    g.amax(1).sum().backward();
    show("amax_dim1_grad_ties", g.grad());
    show("max_two_tensors", torch::max(e, torch::tensor({0.0, 2.5, 2.5}, o)));
}

static void resampling(const torch::TensorOptions& o) {
    auto x = torch::arange(1, 13, o).reshape({1, 2, 6});
    auto x2 = torch::arange(1, 13, o).reshape({1, 1, 3, 4}).requires_grad_(true);
    show("reflect_1d", F::pad(x, F::PadFuncOptions({2, 3}).mode(torch::kReflect)));
    show("reflect_1d_crop", F::pad(x, F::PadFuncOptions({-1, 2}).mode(torch::kReflect)));
    show("replicate_1d_crop", F::pad(x, F::PadFuncOptions({-2, 1}).mode(torch::kReplicate)));
    show("circular_1d_crop", F::pad(x, F::PadFuncOptions({-2, 3}).mode(torch::kCircular)));
    show("reflect_2d", F::pad(x2, F::PadFuncOptions({1, 2, 2, 1}).mode(torch::kReflect)));
    show("replicate_2d", F::pad(x2, F::PadFuncOptions({1, 2, 2, 1}).mode(torch::kReplicate)));
    show("circular_2d", F::pad(x2, F::PadFuncOptions({1, 2, 2, 1}).mode(torch::kCircular)));
    using IO = F::InterpolateFuncOptions;
    using Sz = std::vector<int64_t>;
    using Sf = std::vector<double>;
    show("nearest_5x7", F::interpolate(x2, IO().size(Sz{5, 7})));
    show("nearest_scale", F::interpolate(x2, IO().scale_factor(Sf{1.5, 0.5})));
    show("nearest_exact_4", F::interpolate(x, IO().size(Sz{4}).mode(torch::kNearestExact)));
    show("linear_9", F::interpolate(x, IO().size(Sz{9}).mode(torch::kLinear).align_corners(false)));
    show("linear_4", F::interpolate(x, IO().size(Sz{4}).mode(torch::kLinear).align_corners(false)));
    auto bl = F::interpolate(x2, IO().size(Sz{5, 7}).mode(torch::kBilinear).align_corners(false));
    show("bilinear_5x7", bl);
    show("bilinear_corners",
         F::interpolate(x2, IO().size(Sz{5, 7}).mode(torch::kBilinear).align_corners(true)));
    show("bilinear_scale",
         F::interpolate(
             x2, IO().scale_factor(Sf{1.5, 2.5}).mode(torch::kBilinear).align_corners(false)));
    show("trilinear",
         F::interpolate(x2.unsqueeze(0),
                        IO().size(Sz{2, 2, 3}).mode(torch::kTrilinear).align_corners(false)));
    show("area_2x3", F::interpolate(x2, IO().size(Sz{2, 3}).mode(torch::kArea)));
    show("bicubic_5x7",
         F::interpolate(x2, IO().size(Sz{5, 7}).mode(torch::kBicubic).align_corners(false)));
    show("bicubic_corners_scale",
         F::interpolate(x2,
                        IO().scale_factor(Sf{0.7, 1.5}).mode(torch::kBicubic).align_corners(true)));
    (bl * torch::arange(35, o).reshape({5, 7})).sum().backward();
    show("bilinear_grad", x2.grad());
}

/// tests/test_attention_options.cpp: MultiheadAttention with kdim = vdim (LibTorch 1.13 asserts
/// key and value have one shape), add_bias_kv and add_zero_attn, every parameter set to
/// sin(0.3 i + k) / 2 (k its index in this list).
static void attention(const torch::TensorOptions& o) {
    auto mha = torch::nn::MultiheadAttention(
        torch::nn::MultiheadAttentionOptions(4, 2).kdim(3).vdim(3).add_bias_kv(true).add_zero_attn(
            true));
    mha->to(torch::kFloat64);
    std::vector<torch::Tensor> params = {
        mha->q_proj_weight, mha->k_proj_weight, mha->v_proj_weight,    mha->in_proj_bias,
        mha->bias_k,        mha->bias_v,        mha->out_proj->weight, mha->out_proj->bias};
    {
        torch::NoGradGuard g;
        for (size_t k = 0; k < params.size(); ++k)
            params[k].copy_((torch::arange(params[k].numel(), o) * 0.3 + double(k))
                                .sin()
                                .reshape_as(params[k]) *
                            0.5);
    }
    auto q = (torch::arange(24, o) * 0.7).cos().reshape({3, 2, 4}).requires_grad_(true);
    auto key = (torch::arange(12, o) * 0.4).sin().reshape({2, 2, 3});
    auto value = (torch::arange(12, o) * 0.25).cos().reshape({2, 2, 3});
    auto pad = torch::tensor({false, true, false, false}).reshape({2, 2});
    auto [y, w] = mha->forward(q, key, value, pad);
    show("mha_options_out", y);
    show("mha_options_weights", w);
    (y * torch::arange(24, o).reshape({3, 2, 4})).sum().backward();
    show("mha_options_grad_bias_k", mha->bias_k.grad());
    show("mha_options_grad_k_proj", mha->k_proj_weight.grad());
    show("mha_options_grad_query", q.grad());
}

/// tests/test_libtorch_fidelity.cpp and test_optim.cpp: calls that compiled against both and
/// computed something else in tapegrad (issue 29).
static void fidelity(const torch::TensorOptions& o) {
    auto x = torch::tensor({0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 3.0, 1.0}, o).reshape({2, 2, 2});
    auto w = torch::tensor({2.0, -3.0}, o), b = torch::tensor({0.5, 0.25}, o);
    auto rm = torch::tensor({0.1, -0.2}, o), rv = torch::tensor({4.0, 0.5}, o);
    show("batch_norm_eval", torch::batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5, false));
    auto rm2 = rm.clone(), rv2 = rv.clone();
    show("batch_norm_train", torch::batch_norm(x, w, b, rm2, rv2, true, 0.3, 1e-3, false));
    show("batch_norm_train_running_mean", rm2);
    show("batch_norm_train_running_var", rv2);
    // StepLR(step_size 2, gamma 0.5) over 6 calls, then lr set to 2 and 3 more calls
    auto p = torch::zeros({2}, torch::requires_grad());
    torch::optim::SGD sgd({p}, torch::optim::SGDOptions(1.0));
    torch::optim::StepLR sched(sgd, 2, 0.5);
    std::printf("step_lr:");
    for (int i = 0; i < 9; ++i) {
        if (i == 6)
            sgd.param_groups()[0].options().set_lr(2.0);
        sched.step();
        std::printf(" %.17g", sgd.param_groups()[0].options().get_lr());
    }
    std::printf("\n");
    // loading an optimizer keeps the options the program set
    torch::optim::SGD saved({torch::zeros({2}, torch::requires_grad())},
                            torch::optim::SGDOptions(0.3).momentum(0.9));
    torch::save(saved, "/tmp/libtorch_reference_sgd.pt");
    torch::optim::SGD loaded({torch::zeros({2}, torch::requires_grad())},
                             torch::optim::SGDOptions(0.7).momentum(0.5));
    torch::load(loaded, "/tmp/libtorch_reference_sgd.pt");
    auto& lo = static_cast<torch::optim::SGDOptions&>(loaded.param_groups()[0].options());
    std::printf("loaded_sgd_lr_momentum: %.17g %.17g\n", lo.lr(), lo.momentum());
    // embedding: ATen's padding_idx (negative = none), scale_grad_by_freq, F:: from the end
    auto ids = torch::tensor({0, 2, 2, 4, 2, 1}).reshape({2, 3});
    auto dy = torch::arange(18, o).reshape({2, 3, 3});
    auto emb_grad = [&](const std::function<torch::Tensor(const torch::Tensor&)>& f) {
        auto w = torch::arange(15, o).reshape({5, 3}).requires_grad_(true);
        (f(w) * dy).sum().backward();
        return w.grad();
    };
    show("embedding_minus1_grad",
         emb_grad([&](const torch::Tensor& w) { return torch::embedding(w, ids, -1); }));
    show("embedding_pad2_freq_grad",
         emb_grad([&](const torch::Tensor& w) { return torch::embedding(w, ids, 2, true); }));
    show("F_embedding_padm1_freq_grad", emb_grad([&](const torch::Tensor& w) {
             return F::embedding(
                 ids, w, F::EmbeddingFuncOptions().padding_idx(-1).scale_grad_by_freq(true));
         }));
    // overloads where an int, {} or a bool means something else than a first guess
    auto v = torch::tensor({1.0, 4.0, -2.0, 0.5, 3.0, 3.0, -1.0, 2.0, 0.0, 5.0, 1.5, -0.5}, o)
                 .reshape({3, 4});
    show("var_x_0", torch::var(v, 0));
    show("var_method_1", v.var(1));
    show("clamp_none_2", torch::clamp(v, {}, 2));
    show("clamp_3_1", torch::clamp(v, 3, 1));
    show("argsort_stable_3d", torch::argsort(v.reshape({2, 3, 2}), true));
    show("mse_loss_reduction_braces", torch::mse_loss(v, v * 0.5, {}));
    show("argmax_braces_keepdim", torch::argmax(v, {}, true));
    std::printf("argmax_braces_keepdim_shape: %s\n",
                c10::str(torch::argmax(v, {}, true).sizes()).c_str());
    torch::manual_seed(0);
    auto h = torch::ones({2, 3}, o);
    F::dropout(h, F::DropoutFuncOptions().p(1.0).inplace(true));
    show("dropout_inplace_p1", h);
    std::printf("data_loader_options_batch_size: %zu\n",
                torch::data::DataLoaderOptions().batch_size());
    std::printf("index_true_shape: %s\n", c10::str(v.index({true}).sizes()).c_str());
    std::printf("index_false_shape: %s\n", c10::str(v.index({false}).sizes()).c_str());
}

/// tests/test_nn_spellings.cpp: module options and the functions ported programs call (issue 29).
static void ported_spellings(const torch::TensorOptions& o) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
    auto a = torch::tensor({1.0, inf, -inf, nan, 1e-9, 100.0, 2.0}, o);
    auto b = torch::tensor({1.0 + 1e-6, inf, inf, nan, 0.0, 100.001, 2.1}, o);
    show("isclose", torch::isclose(a, b));
    show("isclose_equal_nan_rtol_0.1", torch::isclose(a, b, 0.1, 0.0, true));
    std::printf("allclose_first2: %d\n", int(torch::allclose(a.slice(0, 0, 2), b.slice(0, 0, 2))));
    auto x = torch::tensor({-2.0, -0.5, 0.0, 0.3, 1.7, 4.0}, o);
    show("gelu_tanh", torch::nn::GELU(torch::nn::GELUOptions().approximate("tanh"))(x));
    show("gelu_none", torch::nn::GELU()(x));
    auto logits = torch::tensor({0.3, -1.2, 2.0, 0.0, -0.4, 1.1}, o).reshape({2, 3});
    auto target = torch::tensor({1.0, 0.0, 1.0, 0.5, 0.0, 1.0}, o).reshape({2, 3});
    show("bce_logits_pos_weight",
         torch::nn::BCEWithLogitsLoss(torch::nn::BCEWithLogitsLossOptions().pos_weight(
             torch::tensor({2.0, 0.5, 1.5}, o)))(logits, target));
    show("bce_logits_weight_pos_weight_sum",
         torch::nn::BCEWithLogitsLoss(torch::nn::BCEWithLogitsLossOptions()
                                          .weight(torch::tensor({1.0, 3.0, 0.5}, o))
                                          .pos_weight(torch::tensor({2.0, 0.5, 1.5}, o))
                                          .reduction(torch::kSum))(logits, target));
    auto img = torch::arange(12, o).reshape({1, 1, 3, 4}) * 0.5 - 1.0;
    auto w = torch::tensor({1.0, -2.0, 0.5, 3.0}, o).reshape({1, 1, 2, 2});
    for (auto mode : {0, 1, 2, 3}) {
        torch::nn::Conv2dOptions opts(1, 1, 2);
        opts.bias(false).padding(torch::kSame);
        const char* name = "conv_same_zeros";
        if (mode == 1)
            opts.padding_mode(torch::kReflect), name = "conv_same_reflect";
        if (mode == 2)
            opts.padding_mode(torch::kReplicate), name = "conv_same_replicate";
        if (mode == 3)
            opts.padding_mode(torch::kCircular), name = "conv_same_circular";
        torch::nn::Conv2d conv(opts);
        conv->to(torch::kFloat64);
        {
            torch::NoGradGuard g;
            conv->weight.copy_(w);
        }
        show(name, conv(img));
    }
    torch::nn::Conv2d pad1(
        torch::nn::Conv2dOptions(1, 1, 2).bias(false).padding(1).padding_mode(torch::kReflect));
    pad1->to(torch::kFloat64);
    {
        torch::NoGradGuard g;
        pad1->weight.copy_(w);
    }
    show("conv_pad1_reflect", pad1(img));
    auto p = torch::tensor({3.0, -4.0}, o).requires_grad_(), q = torch::tensor({12.0}, o);
    q.requires_grad_();
    for (double nt : {0.0, 3.0, inf}) {
        p.mutable_grad() = torch::tensor({3.0, -4.0}, o);
        q.mutable_grad() = torch::tensor({12.0}, o);
        const double total = torch::nn::utils::clip_grad_norm_({p, q}, 5.0, nt);
        std::printf("clip_norm_type_%g: %.17g\n", nt, total);
        show("clipped", torch::cat({p.grad(), q.grad()}));
    }
    show("norm_2_dim1", torch::tensor({3.0, 4.0, 6.0, 8.0}, o).reshape({2, 2}).norm(2, 1));
}

/// The first k and last k values of t (in index order), for tensors too long to paste whole.
static void show_ends(const char* name, const torch::Tensor& t, int64_t k = 4) {
    auto c = t.to(torch::kFloat64).contiguous().reshape({-1});
    std::printf("%s:", name);
    for (int64_t i = 0; i < k; ++i)
        std::printf(" %.17g", c[i].item<double>());
    for (int64_t i = c.numel() - k; i < c.numel(); ++i)
        std::printf(" %.17g", c[i].item<double>());
    std::printf("\n");
}

/// A dataset of your own, as tests/test_random_libtorch.cpp has: example i is ([i], i).
struct Numbers : torch::data::datasets::Dataset<Numbers> {
    explicit Numbers(size_t n) : n(n) {}
    torch::data::Example<> get(size_t i) override {
        return {torch::tensor({double(i)}), torch::tensor(int64_t(i))};
    }
    torch::optional<size_t> size() const override { return n; }
    size_t n;
};

/// tests/test_random_libtorch.cpp: what LibTorch's random ops, initialisations, dropout and
/// RandomSampler draw after torch::manual_seed (every value exact: %.17g round-trips).
static void random_streams() {
    auto f64 = torch::kFloat64;
    torch::manual_seed(1);
    show("rand_f32", torch::rand({5}));
    show("rand_f64", torch::rand({5}, f64));
    show("randn_f32_5", torch::randn({5}));
    show("randn_f32_20", torch::randn({20}));
    show("randn_f64_17", torch::randn({17}, f64));
    show("randn_f64_3", torch::randn({3}, f64));
    show("randn_f64_2", torch::randn({2}, f64));  // the first is the value kept from the last 3
    show("uniform_f32", torch::empty({6}).uniform_(-0.37, 0.2113));
    show("uniform_f64", torch::empty({6}, f64).uniform_(-0.37, 0.2113));
    show("normal_f32_33", torch::empty({33}).normal_(0.37, 0.31));
    show("randint", torch::randint(-5, 9, {8}));
    show("randint_wide", torch::randint(0, int64_t(1) << 40, {3}));
    show("randint_high_f32", torch::randint(7, {5}, torch::kFloat));
    show("randperm_10", torch::randperm(10));
    show("bernoulli_f32", torch::empty({12}).bernoulli_(0.3));
    auto p = torch::tensor({0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.6, 0.4});
    show("bernoulli_p_f32", torch::bernoulli(p));
    show("bernoulli_p_f64", torch::bernoulli(p.to(f64)));
    show("rand_like", torch::rand_like(torch::zeros({2, 3})));
    show("randn_like_f64", torch::randn_like(torch::zeros({2, 3}, f64)));
    show("streams_after", torch::rand({3}, f64));

    torch::manual_seed(2);  // in-place draws on views go in memory order
    auto a = torch::zeros({4, 6});
    a.t().uniform_(-1, 1);
    a.narrow(1, 1, 3).normal_();
    show("views_2d", a);
    auto b = torch::zeros({2, 3, 4});
    b.permute({2, 0, 1}).normal_();
    show("views_permuted", b);
    show("views_after", torch::rand({3}, f64));

    auto gen = at::make_generator<at::CPUGeneratorImpl>(42);
    show("gen_randn", torch::randn({20}, gen));
    show("gen_randperm", torch::randperm(8, gen));
    show("gen_normal_f64", torch::empty({3}, f64).normal_(0, 1, gen));
    auto gen0 = at::make_generator<at::CPUGeneratorImpl>();
    show("gen_default_seed", torch::rand({3}, gen0));

    for (auto dtype : {torch::kFloat, torch::kDouble}) {
        const bool f = dtype == torch::kFloat;
        torch::manual_seed(7);
        auto x = (torch::arange(40, dtype) * 0.25 - 4.5).reshape({5, 8}).requires_grad_(true);
        auto y = torch::dropout(x, 0.15, true);
        show(f ? "dropout_f32" : "dropout_f64", y);
        (y * torch::arange(40, dtype).reshape({5, 8})).sum().backward();
        show(f ? "dropout_grad_f32" : "dropout_grad_f64", x.grad());
        auto x4 = torch::arange(24, dtype).reshape({2, 3, 2, 2}) - 11.5;
        show(f ? "feature_dropout_f32" : "feature_dropout_f64",
             torch::nn::Dropout2d(torch::nn::Dropout2dOptions(0.4))->forward(x4));
        show(f ? "dropout_after_f32" : "dropout_after_f64", torch::rand({3}, f64));
    }

    torch::manual_seed(1);
    torch::nn::Linear linear(3, 4);
    show("linear_weight", linear->weight);
    show("linear_bias", linear->bias);
    torch::nn::Conv1d conv1(torch::nn::Conv1dOptions(2, 3, 3));
    show("conv1d_weight", conv1->weight);
    show("conv1d_bias", conv1->bias);
    torch::nn::Conv2d conv2(torch::nn::Conv2dOptions(2, 4, 2).groups(2));
    show("conv2d_weight", conv2->weight);
    show("conv2d_bias", conv2->bias);
    torch::nn::ConvTranspose2d convt(torch::nn::ConvTranspose2dOptions(2, 3, 2));
    show("convt_weight", convt->weight);
    show("convt_bias", convt->bias);
    torch::nn::Embedding emb(torch::nn::EmbeddingOptions(5, 4).padding_idx(1));
    show("embedding_weight", emb->weight);
    torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({4}));
    torch::nn::BatchNorm2d bn(3);
    torch::nn::GroupNorm gn(torch::nn::GroupNormOptions(2, 4));
    show("modules_after", torch::rand({3}, f64));

    torch::manual_seed(3);
    torch::nn::MultiheadAttention mha(torch::nn::MultiheadAttentionOptions(8, 2));
    show_ends("mha_in_proj_weight", mha->in_proj_weight);
    show_ends("mha_out_proj_weight", mha->out_proj->weight);
    torch::nn::MultiheadAttention mha_kv(
        torch::nn::MultiheadAttentionOptions(8, 2).kdim(6).vdim(5).add_bias_kv(true));
    show_ends("mha_q_proj_weight", mha_kv->q_proj_weight);
    show_ends("mha_k_proj_weight", mha_kv->k_proj_weight);
    show_ends("mha_v_proj_weight", mha_kv->v_proj_weight);
    show("mha_bias_k", mha_kv->bias_k);
    show("mha_bias_v", mha_kv->bias_v);
    torch::nn::TransformerEncoderLayer layer(
        torch::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.25));
    for (const auto& np : layer->named_parameters())
        show_ends(("layer_" + np.key()).c_str(), np.value(), 2);
    show("init_after", torch::rand({3}, f64));

    // training forwards: the attention's dropout mask and the layer's three dropouts
    layer->to(f64);
    layer->train();
    auto src = (torch::arange(48, f64) * 0.37).sin().reshape({3, 2, 8});
    torch::manual_seed(4);
    show("layer_train_out", layer->forward(src));
    show("layer_train_after", torch::rand({3}, f64));
    torch::manual_seed(5);  // need_weights: the weights after dropout, averaged over heads
    torch::nn::MultiheadAttention mha_train(
        torch::nn::MultiheadAttentionOptions(4, 2).dropout(0.3));
    mha_train->to(f64);
    mha_train->train();
    auto q = (torch::arange(24, f64) * 0.7).cos().reshape({3, 2, 4});
    auto [mha_out, mha_weights] = mha_train->forward(q, q, q);
    show("mha_train_out", mha_out);
    show("mha_train_weights", mha_weights);
    show("mha_train_after", torch::rand({3}, f64));

    torch::manual_seed(1);
    auto loader = torch::data::make_data_loader(Numbers(10).map(torch::data::transforms::Stack<>()),
                                                torch::data::DataLoaderOptions().batch_size(4));
    for (int epoch = 0; epoch < 2; ++epoch) {
        std::printf("loader_epoch_%d:", epoch);
        for (auto& batch : *loader)
            for (int64_t k = 0; k < batch.target.size(0); ++k)
                std::printf(" %ld", long(batch.target[k].item<int64_t>()));
        std::printf("\n");
    }
    show("loader_after", torch::randperm(10));
    auto print = [](const char* name, torch::data::samplers::Sampler<>& sampler) {
        std::printf("%s:", name);
        while (auto batch = sampler.next(3))
            for (size_t i : *batch)
                std::printf(" %zu", i);
        std::printf("\n");
    };
    torch::data::samplers::DistributedRandomSampler dist(10, 3, 1);
    print("distributed_epoch_0", dist);
    dist.reset();
    print("distributed_epoch_0_again", dist);
    dist.set_epoch(1);
    dist.reset();
    print("distributed_epoch_1", dist);
    torch::data::samplers::DistributedRandomSampler no_duplicates(10, 3, 1, false);
    print("distributed_no_duplicates", no_duplicates);
    torch::data::samplers::DistributedSequentialSampler sequential(10, 3, 2);
    print("distributed_sequential", sequential);
}

/// tests/test_nn_rnn.cpp: the recurrent modules in float64 (weights drawn in float32 after
/// manual_seed, as the modules draw them, then converted), their outputs and the gradients of
/// a weighted sum of every output with respect to the input, the initial states and every
/// parameter; packing; the cells; dropout between layers; initial weights in float32.
static torch::Tensor det(torch::IntArrayRef shape, double phase) {
    int64_t n = 1;
    for (int64_t s : shape)
        n *= s;
    return torch::sin(torch::arange(n, torch::kFloat64) * 0.37 + phase).reshape(shape);
}

static torch::Tensor weigh(const torch::Tensor& t, double phase) {
    return (t *
            torch::cos(torch::arange(t.numel(), torch::kFloat64) * 0.91 + phase).reshape(t.sizes()))
        .sum();
}

static void show_grads(const std::string& tag, torch::nn::Module& m) {
    for (const auto& p : m.named_parameters())
        show((tag + "_grad_" + p.key()).c_str(), p.value().grad());
}

static void rnn_modules() {
    namespace rnn = torch::nn::utils::rnn;
    {  // LSTM: 2 layers, bidirectional, projected, given states
        torch::manual_seed(11);
        torch::nn::LSTM m(
            torch::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2));
        m->to(torch::kFloat64);
        auto x = det({3, 2, 3}, 0.1).requires_grad_(true);
        auto h0 = det({4, 2, 2}, 0.7).requires_grad_(true),
             c0 = det({4, 2, 4}, 1.3).requires_grad_(true);
        auto r = m->forward(x, std::make_tuple(h0, c0));
        show("lstm_out", std::get<0>(r));
        show("lstm_h", std::get<0>(std::get<1>(r)));
        show("lstm_c", std::get<1>(std::get<1>(r)));
        (weigh(std::get<0>(r), 0.0) + weigh(std::get<0>(std::get<1>(r)), 1.0) +
         weigh(std::get<1>(std::get<1>(r)), 2.0))
            .backward();
        show("lstm_grad_x", x.grad());
        show("lstm_grad_h0", h0.grad());
        show("lstm_grad_c0", c0.grad());
        show_grads("lstm", *m);
    }
    {  // GRU: batch_first, 2 layers, given h0
        torch::manual_seed(12);
        torch::nn::GRU m(torch::nn::GRUOptions(3, 4).num_layers(2).batch_first(true));
        m->to(torch::kFloat64);
        auto x = det({2, 3, 3}, 0.2).requires_grad_(true),
             h0 = det({2, 2, 4}, 0.5).requires_grad_(true);
        auto r = m->forward(x, h0);
        show("gru_out", std::get<0>(r));
        show("gru_h", std::get<1>(r));
        (weigh(std::get<0>(r), 0.0) + weigh(std::get<1>(r), 1.0)).backward();
        show("gru_grad_x", x.grad());
        show("gru_grad_h0", h0.grad());
        show_grads("gru", *m);
    }
    {  // RNN relu, no bias, bidirectional, zero states
        torch::manual_seed(13);
        torch::nn::RNN m(
            torch::nn::RNNOptions(3, 4).nonlinearity(torch::kReLU).bias(false).bidirectional(true));
        m->to(torch::kFloat64);
        auto x = det({4, 2, 3}, 0.3).requires_grad_(true);
        auto r = m->forward(x);
        show("rnn_relu_out", std::get<0>(r));
        show("rnn_relu_h", std::get<1>(r));
        (weigh(std::get<0>(r), 0.0) + weigh(std::get<1>(r), 1.0)).backward();
        show("rnn_relu_grad_x", x.grad());
        show_grads("rnn_relu", *m);
    }
    {  // RNN tanh, 2 layers with dropout in training
        torch::manual_seed(14);
        torch::nn::RNN m(torch::nn::RNNOptions(3, 5).num_layers(3).dropout(0.4));
        m->to(torch::kFloat64);
        auto x = det({3, 2, 3}, 0.4).requires_grad_(true);
        torch::manual_seed(99);
        auto r = m->forward(x);
        show("rnn_dropout_out", std::get<0>(r));
        show("rnn_dropout_h", std::get<1>(r));
        (weigh(std::get<0>(r), 0.0) + weigh(std::get<1>(r), 1.0)).backward();
        show("rnn_dropout_grad_x", x.grad());
        show_grads("rnn_dropout", *m);
        show("rnn_dropout_next_rand", torch::rand({3}));
    }
    {  // packed LSTM: bidirectional, unsorted lengths, given states
        torch::manual_seed(15);
        torch::nn::LSTM m(torch::nn::LSTMOptions(2, 3).bidirectional(true));
        m->to(torch::kFloat64);
        auto x = det({4, 3, 2}, 0.6).requires_grad_(true);
        auto h0 = det({2, 3, 3}, 0.8).requires_grad_(true),
             c0 = det({2, 3, 3}, 0.9).requires_grad_(true);
        auto packed = rnn::pack_padded_sequence(x, torch::tensor({2, 4, 3}), false, false);
        show("packed_lstm_batch_sizes", packed.batch_sizes());
        show("packed_lstm_sorted", packed.sorted_indices());
        auto r = m->forward_with_packed_input(packed, std::make_tuple(h0, c0));
        show("packed_lstm_data", std::get<0>(r).data());
        auto padded = rnn::pad_packed_sequence(std::get<0>(r), true, -1.5);
        show("packed_lstm_padded", std::get<0>(padded));
        show("packed_lstm_lengths", std::get<1>(padded));
        show("packed_lstm_h", std::get<0>(std::get<1>(r)));
        show("packed_lstm_c", std::get<1>(std::get<1>(r)));
        (weigh(std::get<0>(padded), 0.0) + weigh(std::get<0>(std::get<1>(r)), 1.0) +
         weigh(std::get<1>(std::get<1>(r)), 2.0))
            .backward();
        show("packed_lstm_grad_x", x.grad());
        show("packed_lstm_grad_h0", h0.grad());
        show("packed_lstm_grad_c0", c0.grad());
        show_grads("packed_lstm", *m);
    }
    {  // packed GRU from pack_sequence, sorted, 2 layers
        torch::manual_seed(16);
        torch::nn::GRU m(torch::nn::GRUOptions(2, 3).num_layers(2));
        m->to(torch::kFloat64);
        auto a = det({4, 2}, 0.1).requires_grad_(true), b = det({3, 2}, 0.2).requires_grad_(true),
             c = det({3, 2}, 0.3).requires_grad_(true);
        auto packed = rnn::pack_sequence({a, b, c});
        auto r = m->forward_with_packed_input(packed);
        auto padded = rnn::pad_packed_sequence(std::get<0>(r), false, 0.0, 6);
        show("packed_gru_padded", std::get<0>(padded));
        show("packed_gru_h", std::get<1>(r));
        (weigh(std::get<0>(padded), 0.0) + weigh(std::get<1>(r), 1.0)).backward();
        show("packed_gru_grad_a", a.grad());
        show("packed_gru_grad_b", b.grad());
        show("packed_gru_grad_c", c.grad());
        show_grads("packed_gru", *m);
    }
    {  // the cells, with given states
        torch::manual_seed(17);
        torch::nn::RNNCell rt(3, 4);
        torch::nn::RNNCell rr(
            torch::nn::RNNCellOptions(3, 4).nonlinearity(torch::kReLU).bias(false));
        torch::nn::LSTMCell lc(3, 4);
        torch::nn::GRUCell gc(3, 4);
        rt->to(torch::kFloat64);
        rr->to(torch::kFloat64);
        lc->to(torch::kFloat64);
        gc->to(torch::kFloat64);
        auto x = det({2, 3}, 0.4).requires_grad_(true), h = det({2, 4}, 0.6).requires_grad_(true),
             c = det({2, 4}, 0.8).requires_grad_(true);
        auto y1 = rt->forward(x, h), y2 = rr->forward(x, h);
        auto y3 = lc->forward(x, std::make_tuple(h, c));
        auto y4 = gc->forward(x, h);
        show("cell_rnn_tanh", y1);
        show("cell_rnn_relu", y2);
        show("cell_lstm_h", std::get<0>(y3));
        show("cell_lstm_c", std::get<1>(y3));
        show("cell_gru", y4);
        (weigh(y1, 0.0) + weigh(y2, 1.0) + weigh(std::get<0>(y3), 2.0) +
         weigh(std::get<1>(y3), 3.0) + weigh(y4, 4.0))
            .backward();
        show("cell_grad_x", x.grad());
        show("cell_grad_h", h.grad());
        show("cell_grad_c", c.grad());
        show_grads("cell_rnn_tanh", *rt);
        show_grads("cell_rnn_relu", *rr);
        show_grads("cell_lstm", *lc);
        show_grads("cell_gru", *gc);
    }
    {  // initial weights, float32, exactly
        torch::manual_seed(7);
        torch::nn::LSTM m(torch::nn::LSTMOptions(2, 3).bidirectional(true).proj_size(2));
        for (const auto& p : m->named_parameters())
            show(("init_lstm_" + p.key()).c_str(), p.value());
        torch::nn::GRUCell g(2, 3);
        for (const auto& p : g->named_parameters())
            show(("init_gru_cell_" + p.key()).c_str(), p.value());
        show("init_next_rand", torch::rand({2}));
    }
    show("pad_sequence_batch_first",
         rnn::pad_sequence({det({2, 2}, 0.0), det({3, 2}, 1.0), det({1, 2}, 2.0)}, true, 7.0));
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
    bool_tensors(o);
    ordering(o);
    resampling(o);
    attention(o);
    fidelity(o);
    ported_spellings(o);
    random_streams();
    rnn_modules();
    return 0;
}
