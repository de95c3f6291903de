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
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

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

/// tests/test_dtypes.cpp: promotion tables, conversions at the edges, integer and float16
/// arithmetic. Dtypes print as tapegrad names them.
static const char* dt_name(torch::ScalarType t) {
    switch (t) {
        case torch::kByte:
            return "uint8";
        case torch::kChar:
            return "int8";
        case torch::kShort:
            return "int16";
        case torch::kInt:
            return "int32";
        case torch::kLong:
            return "int64";
        case torch::kHalf:
            return "float16";
        case torch::kBFloat16:
            return "bfloat16";
        case torch::kFloat:
            return "float32";
        case torch::kDouble:
            return "float64";
        case torch::kBool:
            return "bool";
        default:
            return "?";
    }
}
static void dt_show(const char* name, const torch::Tensor& t) {
    std::printf("%s [%s]", name, dt_name(t.scalar_type()));
    auto c = t.to(torch::kFloat64).contiguous().reshape({-1});
    for (int64_t i = 0; i < c.numel(); ++i)
        std::printf(" %.17g", c[i].item<double>());
    std::printf("\n");
}
static void dtypes() {
    // the order of tapegrad's Dtype enum
    const torch::ScalarType all[] = {torch::kFloat, torch::kDouble,  torch::kLong,  torch::kBool,
                                     torch::kByte,  torch::kChar,    torch::kShort, torch::kInt,
                                     torch::kHalf,  torch::kBFloat16};
    std::printf("promote_types:\n");
    for (auto a : all) {
        for (auto b : all)
            std::printf(" %s", dt_name(torch::promote_types(a, b)));
        std::printf("\n");
    }
    std::printf("result_type(tensor [2], scalar 2 / 2.0 / true):\n");
    for (auto a : all) {
        auto t = torch::zeros({2}, a);
        std::printf(" %s %s %s\n", dt_name(torch::result_type(t, 2)),
                    dt_name(torch::result_type(t, 2.0)), dt_name(torch::result_type(t, true)));
    }
    std::printf("result_type(tensor [2], tensor []):\n");
    for (auto a : all) {
        for (auto b : all)
            std::printf(" %s",
                        dt_name(torch::result_type(torch::zeros({2}, a), torch::zeros({}, b))));
        std::printf("\n");
    }
    const std::vector<double> v = {255,           256,   -1,       -129,      1e10,
                                   -1e10,         NAN,   INFINITY, -INFINITY, 2.7,
                                   -2.7,          300.5, 65535,    65536,     2147483648.0,
                                   -2147483649.0, 127.9, -128.9,   9.3e18,    2147483909.0};
    for (auto from : {torch::kFloat, torch::kDouble})
        for (auto to : all) {
            const std::string n = std::string("conv_") + dt_name(from) + "_" + dt_name(to);
            dt_show(n.c_str(), torch::tensor(v, torch::kDouble).to(from).to(to));
        }
    const std::vector<int64_t> iv = {
        255,     256, -1, -129, 70000, -70000, 3000000000LL, -3000000000LL, 9007199254740993LL,
        16777217};
    for (auto to : all)
        dt_show((std::string("conv_int64_") + dt_name(to)).c_str(), torch::tensor(iv).to(to));
    const std::vector<double> hv = {65504,
                                    65519,
                                    65520,
                                    1e10,
                                    1.0 / 3,
                                    1e-7,
                                    6e-8,
                                    2e-8,
                                    3e-38,
                                    -0.0,
                                    1.00048828125,
                                    1.000732421875,
                                    2.98023223876953125e-8};
    dt_show("conv_float64_float16_h", torch::tensor(hv, torch::kDouble).to(torch::kHalf));
    dt_show("conv_float64_bfloat16_h", torch::tensor(hv, torch::kDouble).to(torch::kBFloat16));
    dt_show("conv_float16_uint8",
            torch::tensor({2048.0, 0.1, 65504.0, -1.5}).to(torch::kHalf).to(torch::kByte));
    auto u = torch::tensor({200, 10, 0, 255}, torch::kByte),
         w = torch::tensor({100, 20, 1, 2}, torch::kByte);
    auto c = torch::tensor({-128, 127, 5, -1}, torch::kChar);
    auto i32 = torch::tensor({7, -7, 0, 3}, torch::kInt), i64 = torch::tensor({2, 2, 2, 2});
    auto h = torch::tensor({2048.0, 0.1, 65504.0, -1.5}, torch::kHalf);
    auto bf = torch::tensor({256.0, 0.1, 3.0, -1.5}, torch::kBFloat16);
    auto f = torch::tensor({0.5, 1.5, -2.5, 3.0});
    dt_show("u_add_v", u + w);
    dt_show("u_sub_v", u - w);
    dt_show("u_mul_v", u * w);
    dt_show("u_div_v", u / w);
    dt_show("u_add_300", u + 300);
    dt_show("u_mul_2", u * 2);
    dt_show("u_mul_2.0", u * 2.0);
    dt_show("u_add_c", u + c);
    dt_show("i32_add_i64", i32 + i64);
    dt_show("i32_div_i64", i32 / i64);
    dt_show("neg_u", -u);
    dt_show("neg_c", -c);
    dt_show("abs_c", c.abs());
    dt_show("u_gt_300", u > 300);
    dt_show("u_eq_-1", u == -1);
    dt_show("u_gt_-1", u > -1);
    dt_show("u_lt_2.5", u < 2.5);
    dt_show("u_gt_c", u > c);
    dt_show("u_clamp_5_100", u.clamp(5, 100));
    dt_show("u_clamp_5.5_100.5", u.clamp(5.5, 100.5));
    dt_show("sum_u", u.sum());
    dt_show("sum_c", c.sum());
    dt_show("max_u", u.max());
    dt_show("argmax_u", u.argmax());
    dt_show("pow_u_2", u.pow(2));
    dt_show("pow_u_2.5", u.pow(2.5));
    dt_show("pow_c_2", c.pow(2));
    dt_show("pow_i64_40", torch::tensor({3, -1, 2}).pow(40));
    dt_show("pow_i64_tensor", torch::tensor({-1, 1, 2, 3}).pow(torch::tensor({-1, -1, -1, 40})));
    dt_show("maximum_u_c", torch::maximum(u, c));
    dt_show("where_u_f", torch::where(u > 100, u, f));
    dt_show("cat_u_c", torch::cat({u, c}));
    dt_show("masked_fill_u_-1", u.masked_fill(u > 100, -1));
    dt_show("masked_fill_u_2.7", u.masked_fill(u > 100, 2.7));
    dt_show("full_-1_uint8", torch::full({2}, -1, torch::kByte));
    dt_show("full_2.7_uint8", torch::full({2}, 2.7, torch::kByte));
    dt_show("arange_250_260_uint8", torch::arange(250, 260, torch::kByte));
    dt_show("arange_0.5_3_int32", torch::arange(0.5, 3, torch::kInt));
    dt_show("u_add_inplace_c", u.clone().add_(c));
    dt_show("u_mul_inplace_2", u.clone().mul_(2));
    dt_show("rsub_2_u", 2 - u);
    dt_show("h_add_1", h + 1);
    dt_show("h_mul_2.0", h * 2.0);
    dt_show("h_add_h", h + h);
    dt_show("h_mul_h", h * h);
    dt_show("h_add_f", h + f);
    dt_show("i32_add_h", i32 + h);
    dt_show("h_div_3", h / 3);
    dt_show("h_mul_0.1", h * 0.1);
    dt_show("h_sum", h.sum());
    dt_show("bf_add_1", bf + 1);
    dt_show("bf_mul_bf", bf * bf);
    dt_show("bf_sum", bf.sum());
    dt_show("h_small_mean", torch::tensor({0.5, 1.5, 2.5}, torch::kHalf).mean());
    dt_show("h_small_var", torch::tensor({0.5, 1.5, 2.5}, torch::kHalf).var());
    dt_show("u_exp", u.exp());
    dt_show("i32_sqrt", i32.sqrt());
    dt_show("i64_lt_16777217.5", torch::tensor({16777217}) < 16777217.5);
    dt_show("div_c_2_floor", torch::div(c, 2, "floor"));
    dt_show("div_c_2_trunc", torch::div(c, 2, "trunc"));
    dt_show("bool_add_1", torch::tensor({true, false}) + 1);
    for (auto t : all)
        std::cout << torch::tensor({1.5, 2.0}).to(t) << "\n";
    std::cout << torch::tensor({65504.0, 0.1}, torch::kHalf) << "\n";
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

/// tests/test_libtorch_fidelity.cpp: remainder, fmod and operator%.
static void modulo(const torch::TensorOptions& o) {
    auto a = torch::tensor({5.5, -5.5, 7.0, -7.25, 0.0, 3.0}, o);
    auto b = torch::tensor({2.0, 2.0, -3.0, -2.0, 1.5, 0.7}, o);
    show("remainder", torch::remainder(a, b));
    show("fmod", torch::fmod(a, b));
    show("percent_scalar", a % 2);
    show("fmod_scalar", a.fmod(-2.5));
    auto i = torch::tensor({7, -7, 7, -7, 0, 9});
    auto j = torch::tensor({3, 3, -3, -3, 5, 4});
    show("remainder_int", i % j);
    show("fmod_int", torch::fmod(i, j));
    std::printf("remainder_int_dtype_is_long: %d\n", int((i % j).dtype() == torch::kLong));
    std::printf("percent_int_half_dtype_is_float: %d\n", int((i % 2.5).dtype() == torch::kFloat));
    show("percent_int_half", i % 2.5);
    auto ar = a.clone().requires_grad_(true), br = b.clone().requires_grad_(true);
    (torch::remainder(ar, br) * torch::arange(6, o)).sum().backward();
    show("remainder_grad_a", ar.grad());
    show("remainder_grad_b", br.grad());
    auto ar2 = a.clone().requires_grad_(true), br2 = b.clone().requires_grad_(true);
    (torch::fmod(ar2, br2) * torch::arange(6, o)).sum().backward();
    show("fmod_grad_b", br2.grad());
}

/// tests/test_libtorch_fidelity.cpp: the dtypes factories infer.
static void factory_dtypes() {
#define TG_SHOW_DTYPE(e) std::printf("%-36s %s\n", #e, c10::toString((e).scalar_type()))
    TG_SHOW_DTYPE(torch::tensor({1, 2, 3}));
    TG_SHOW_DTYPE(torch::tensor(std::vector<int>{1, 2}));
    TG_SHOW_DTYPE(torch::tensor({true, false}));
    TG_SHOW_DTYPE(torch::tensor({1.5f, 2.f}));
    TG_SHOW_DTYPE(torch::tensor({1.5, 2.0}));
    TG_SHOW_DTYPE(torch::arange(5));
    TG_SHOW_DTYPE(torch::arange(0, 5, 1));
    TG_SHOW_DTYPE(torch::arange(0., 5));
    TG_SHOW_DTYPE(torch::arange(0, 5, 0.5));
    TG_SHOW_DTYPE(torch::full({2}, 3));
    TG_SHOW_DTYPE(torch::full({2}, true));
    TG_SHOW_DTYPE(torch::full({2}, 3.5));
    TG_SHOW_DTYPE(torch::scalar_tensor(3));
    TG_SHOW_DTYPE(torch::tensor(3));
    TG_SHOW_DTYPE(torch::tensor(true));
    TG_SHOW_DTYPE(torch::tensor({{1, 2}, {3, 4}}));
#undef TG_SHOW_DTYPE
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

/// Deterministic inputs that tests can rebuild without LibTorch: element i of the flattened
/// tensor is scale·sin(1.3·i + phase) (tests/test_util.hpp's wave()).
static torch::Tensor wave(std::vector<int64_t> shape, double scale = 1, double phase = 0.5,
                          const torch::TensorOptions& o = torch::kFloat64) {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = scale * std::sin(1.3 * double(i) + phase);
    return torch::tensor(v, o).reshape(shape);
}

/// Prints f(x) as `name` and the gradient of sum(f(x)·wave) with respect to x (and to each of
/// params) as name_grad (name_grad1, ...): x is a fresh float64 leaf.
static void run_grad(const std::string& name,
                     const std::function<torch::Tensor(const torch::Tensor&)>& f,
                     const torch::Tensor& x0, std::vector<torch::Tensor> params = {}) {
    auto x = x0.detach().clone().requires_grad_(true);
    for (auto& p : params)
        p.mutable_grad() = torch::Tensor();
    auto y = f(x);
    show(name.c_str(), y);
    (y * wave(y.sizes().vec(), 1.0, 0.3)).sum().backward();
    show((name + "_grad").c_str(), x.grad());
    for (size_t k = 0; k < params.size(); ++k)
        show((name + "_grad" + std::to_string(k + 1)).c_str(), params[k].grad());
}

/// tests/test_nn_activations.cpp: the activation modules and F:: functions, forward and input
/// (and PReLU weight) gradients, boundary points included; RReLU's and gumbel_softmax's draws.
static void activations() {
    namespace nn = torch::nn;
    using T = torch::Tensor;
    const auto x = wave({2, 3, 4}, 3.0);
    // the kinks of relu6, hardtanh, hardshrink, softshrink and threshold, exactly
    const auto xb = torch::tensor(
        {-7.0, -6.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 6.0, 7.0, -0.25, 0.25},
        torch::kFloat64);
    auto mod = [](auto m) { return [m](const T& t) mutable { return m(t); }; };
    run_grad("elu", mod(nn::ELU()), x);
    run_grad(
        "elu_alpha_inplace",
        [](const T& t) { return nn::ELU(nn::ELUOptions().alpha(0.7).inplace(true))(t * 1); }, x);
    run_grad("selu", mod(nn::SELU()), x);
    run_grad(
        "selu_inplace", [](const T& t) { return nn::SELU(true)(t * 1); }, x);
    run_grad("celu", mod(nn::CELU(nn::CELUOptions().alpha(0.6))), x);
    run_grad("silu", mod(nn::SiLU()), x);
    run_grad("mish", mod(nn::Mish()), x);
    run_grad("relu6", mod(nn::ReLU6()), xb);
    run_grad(
        "relu6_inplace", [](const T& t) { return nn::ReLU6(true)(t * 1); }, xb);
    run_grad("hardtanh", mod(nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(1.5))), xb);
    run_grad(
        "hardtanh_inplace",
        [](const T& t) { return nn::Hardtanh(nn::HardtanhOptions().inplace(true))(t * 1); }, xb);
    run_grad("hardshrink", mod(nn::Hardshrink()), xb);
    run_grad("hardshrink_1", mod(nn::Hardshrink(1.0)), xb);
    run_grad("softshrink", mod(nn::Softshrink()), xb);
    run_grad("softshrink_1.5", mod(nn::Softshrink(1.5)), xb);
    run_grad("tanhshrink", mod(nn::Tanhshrink()), x);
    run_grad("softsign", mod(nn::Softsign()), x);
    run_grad("softplus", mod(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(3))), x);
    run_grad("softmin", mod(nn::Softmin(1)), x);
    run_grad("softmax2d_4d", mod(nn::Softmax2d()), wave({2, 3, 2, 2}, 2.0));
    run_grad("softmax2d_3d", mod(nn::Softmax2d()), wave({3, 2, 2}, 2.0, 1.0));
    run_grad("logsigmoid", mod(nn::LogSigmoid()), x);
    run_grad("logsigmoid_far", mod(nn::LogSigmoid()),
             torch::tensor({-800.0, -50.0, -25.0, -1e-3, 0.0, 1e-3, 25.0, 50.0, 800.0},
                           torch::kFloat64));
    run_grad("glu", mod(nn::GLU()), x);
    run_grad("glu_dim1", mod(nn::GLU(1)), wave({2, 4, 3}, 2.0));
    run_grad("threshold", mod(nn::Threshold(0.1, 20)), xb);
    run_grad("threshold_below", mod(nn::Threshold(0.5, -3)), xb);
    run_grad(
        "threshold_inplace",
        [](const T& t) {
            return nn::Threshold(nn::ThresholdOptions(0.1, 20).inplace(true))(t * 1);
        },
        xb);
    run_grad(
        "threshold_inplace_below",
        [](const T& t) {
            return nn::Threshold(nn::ThresholdOptions(0.5, -3).inplace(true))(t * 1);
        },
        xb);
    run_grad(
        "rrelu_eval",
        [](const T& t) {
            nn::RReLU m;
            m->eval();
            return m(t);
        },
        x);
    nn::PReLU prelu1;
    prelu1->to(torch::kFloat64);
    run_grad("prelu", mod(prelu1), x, {prelu1->weight});
    nn::PReLU prelu3(nn::PReLUOptions().num_parameters(3).init(0.1));
    prelu3->to(torch::kFloat64);
    {
        torch::NoGradGuard g;
        prelu3->weight.copy_(torch::tensor({0.1, -0.3, 0.7}, torch::kFloat64));
    }
    run_grad("prelu_3", mod(prelu3), x, {prelu3->weight});
    run_grad(
        "F_elu", [](const T& t) { return F::elu(t, F::ELUFuncOptions().alpha(1.5)); }, x);
    run_grad(
        "F_celu_inplace",
        [](const T& t) { return F::celu(t * 1, F::CELUFuncOptions().alpha(2).inplace(true)); }, x);
    run_grad(
        "F_hardtanh",
        [](const T& t) { return F::hardtanh(t, F::HardtanhFuncOptions().min_val(-0.5)); }, xb);
    run_grad(
        "F_softmin_dtype",
        [](const T& t) { return F::softmin(t, F::SoftminFuncOptions(-1).dtype(torch::kFloat64)); },
        x);
    run_grad(
        "F_gelu_tanh",
        [](const T& t) { return F::gelu(t, F::GELUFuncOptions().approximate("tanh")); }, x);
    run_grad(
        "F_leaky_relu_inplace",
        [](const T& t) {
            return F::leaky_relu(t * 1,
                                 F::LeakyReLUFuncOptions().negative_slope(0.2).inplace(true));
        },
        x);
    run_grad(
        "F_relu_inplace", [](const T& t) { return F::relu(t * 1, F::ReLUFuncOptions(true)); }, x);
    run_grad(
        "F_rrelu_eval",
        [](const T& t) { return F::rrelu(t, F::RReLUFuncOptions().lower(0.2).upper(0.5)); }, x);
    for (auto dtype : {torch::kFloat64, torch::kFloat32}) {
        const bool f = dtype == torch::kFloat32;
        const auto xr = wave({5, 7}, 2.0, 0.1).to(dtype);
        torch::manual_seed(11);
        auto xl = xr.clone().requires_grad_(true);
        nn::RReLU rr(nn::RReLUOptions().lower(0.1).upper(0.35));
        auto y = rr(xl.t());  // a transposed input: draws in the order of its elements
        show(f ? "rrelu_train_f32" : "rrelu_train_f64", y);
        (y * wave({7, 5}, 1.0, 0.3).to(dtype)).sum().backward();
        show(f ? "rrelu_train_grad_f32" : "rrelu_train_grad_f64", xl.grad());
        show(f ? "rrelu_after_f32" : "rrelu_after_f64", torch::rand({3}, torch::kFloat64));
        torch::manual_seed(12);
        auto z = xr.clone();
        F::rrelu(z, F::RReLUFuncOptions().training(true).inplace(true));
        show(f ? "F_rrelu_inplace_f32" : "F_rrelu_inplace_f64", z);
        torch::manual_seed(13);
        show(f ? "exponential_f32" : "exponential_f64", torch::empty({9}, dtype).exponential_());
        show(f ? "exponential_2.5_f32" : "exponential_2.5_f64",
             torch::empty({5}, dtype).exponential_(2.5));
    }
    torch::manual_seed(14);
    run_grad(
        "gumbel_softmax",
        [](const T& t) { return F::gumbel_softmax(t, F::GumbelSoftmaxFuncOptions().tau(0.5)); }, x);
    torch::manual_seed(15);
    run_grad(
        "gumbel_softmax_hard_dim1",
        [](const T& t) {
            return F::gumbel_softmax(t, F::GumbelSoftmaxFuncOptions().hard(true).dim(1));
        },
        x);
    show("gumbel_after", torch::rand({3}, torch::kFloat64));
}

/// Sets every parameter of m (float64 by then) to wave(its shape, 0.5, k + 1), k its index.
static void set_params(torch::nn::Module& m) {
    torch::NoGradGuard g;
    int k = 0;
    for (auto& p : m.parameters()) {
        p.copy_(wave(p.sizes().vec(), 0.5, double(k) + 1));
        ++k;
    }
}

/// tests/test_nn_norm_more.cpp: BatchNorm3d, InstanceNorm1d/2d/3d (running statistics too),
/// LocalResponseNorm, CrossMapLRN2d and their F:: functions.
static void norm_more() {
    namespace nn = torch::nn;
    using T = torch::Tensor;
    auto params_of = [](nn::Module& m) { return m.parameters(); };
    auto stats = [](const std::string& name, nn::Module& m) {
        for (const auto& b : m.named_buffers())
            show((name + "_" + b.key()).c_str(), b.value());
    };
    nn::BatchNorm3d bn(3);
    bn->to(torch::kFloat64);
    set_params(*bn);
    run_grad(
        "batchnorm3d_train", [&](const T& t) { return bn(t); }, wave({2, 3, 2, 2, 3}, 2.0),
        params_of(*bn));
    stats("batchnorm3d", *bn);
    bn->eval();
    run_grad(
        "batchnorm3d_eval", [&](const T& t) { return bn(t); }, wave({2, 3, 1, 2, 2}, 2.0, 1.0));
    nn::InstanceNorm1d in1(3);
    run_grad(
        "instancenorm1d", [&](const T& t) { return in1(t); }, wave({2, 3, 5}, 2.0));
    run_grad(
        "instancenorm1d_unbatched", [&](const T& t) { return in1(t); }, wave({3, 5}, 2.0));
    nn::InstanceNorm1d in1t(nn::InstanceNorm1dOptions(3).affine(true).track_running_stats(true));
    in1t->to(torch::kFloat64);
    set_params(*in1t);
    run_grad(
        "instancenorm1d_track", [&](const T& t) { return in1t(t); }, wave({2, 3, 5}, 2.0, 0.2),
        params_of(*in1t));
    run_grad(
        "instancenorm1d_track_again", [&](const T& t) { return in1t(t); },
        wave({4, 3, 2}, 1.5, 0.7), params_of(*in1t));
    stats("instancenorm1d_track", *in1t);
    in1t->eval();
    run_grad(
        "instancenorm1d_track_eval", [&](const T& t) { return in1t(t); }, wave({2, 3, 5}, 2.0, 0.9),
        params_of(*in1t));
    nn::InstanceNorm2d in2(nn::InstanceNorm2dOptions(3).affine(true).eps(1e-3));
    in2->to(torch::kFloat64);
    set_params(*in2);
    run_grad(
        "instancenorm2d_affine", [&](const T& t) { return in2(t); }, wave({2, 3, 2, 3}, 2.0),
        params_of(*in2));
    run_grad(
        "instancenorm2d_unbatched", [&](const T& t) { return in2(t); }, wave({3, 2, 3}, 2.0),
        params_of(*in2));
    nn::InstanceNorm3d in3(nn::InstanceNorm3dOptions(2).track_running_stats(true).momentum(0.3));
    in3->to(torch::kFloat64);
    run_grad(
        "instancenorm3d_track", [&](const T& t) { return in3(t); }, wave({2, 2, 2, 2, 3}, 2.0));
    stats("instancenorm3d_track", *in3);
    auto rm = wave({3}, 0.5, 0.1), rv = wave({3}, 0.5, 0.2) + 1.0;
    run_grad(
        "F_instance_norm_running",
        [&](const T& t) {
            return F::instance_norm(
                t, F::InstanceNormFuncOptions().running_mean(rm).running_var(rv).momentum(0.2));
        },
        wave({2, 3, 4}, 2.0));
    show("F_instance_norm_running_mean", rm);
    show("F_instance_norm_running_var", rv);
    run_grad(
        "F_instance_norm_eval",
        [&](const T& t) {
            return F::instance_norm(t, F::InstanceNormFuncOptions()
                                           .running_mean(rm)
                                           .running_var(rv)
                                           .use_input_stats(false)
                                           .weight(wave({3}, 1.0, 2.0))
                                           .eps(0.01));
        },
        wave({2, 3, 4}, 2.0, 0.4));
    run_grad(
        "lrn_3d", [](const T& t) { return nn::LocalResponseNorm(3)(t); }, wave({2, 5, 3}, 2.0));
    run_grad(
        "lrn_4d",
        [](const T& t) {
            return nn::LocalResponseNorm(nn::LocalResponseNormOptions(4).alpha(0.1).beta(0.6).k(2))(
                t);
        },
        wave({2, 6, 2, 2}, 2.0));
    run_grad(
        "lrn_5d",
        [](const T& t) {
            return F::local_response_norm(t, F::LocalResponseNormFuncOptions(2).alpha(0.5));
        },
        wave({1, 4, 2, 2, 2}, 2.0));
    run_grad(
        "crossmaplrn2d",
        [](const T& t) {
            return nn::CrossMapLRN2d(nn::CrossMapLRN2dOptions(3).alpha(0.3).beta(0.6).k(2))(t);
        },
        wave({2, 7, 3, 2}, 2.0));
    run_grad(
        "crossmaplrn2d_5", [](const T& t) { return nn::CrossMapLRN2d(5)(t); },
        wave({1, 6, 2, 2}, 3.0));
    run_grad(
        "crossmaplrn2d_size4",
        [](const T& t) {
            return nn::CrossMapLRN2d(nn::CrossMapLRN2dOptions(4).alpha(1.0).beta(0.5))(t);
        },
        wave({2, 5, 2, 1}, 2.0));
}

/// Prints f(xs) as `name` and the gradient of sum(f(xs)·wave) with respect to each x (fresh
/// float64 leaves) as name_grad0, name_grad1, ..., then to each of params (name_param0, ...).
static void run_many(const std::string& name,
                     const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& f,
                     const std::vector<torch::Tensor>& xs0,
                     std::vector<torch::Tensor> params = {}) {
    std::vector<torch::Tensor> xs;
    for (const auto& x : xs0)
        xs.push_back(x.detach().clone().requires_grad_(true));
    for (auto& p : params)
        p.mutable_grad() = torch::Tensor();
    auto y = f(xs);
    show(name.c_str(), y);
    (y * wave(y.sizes().vec(), 1.0, 0.3)).sum().backward();
    for (size_t k = 0; k < xs.size(); ++k)
        show((name + "_grad" + std::to_string(k)).c_str(), xs[k].grad());
    for (size_t k = 0; k < params.size(); ++k)
        show((name + "_param" + std::to_string(k)).c_str(), params[k].grad());
}

/// tests/test_nn_losses.cpp: the loss modules and F:: losses, forward and gradients (inputs,
/// targets where differentiable, parameters), and AdaptiveLogSoftmaxWithLoss.
static void losses() {
    namespace nn = torch::nn;
    using V = std::vector<torch::Tensor>;
    auto i64 = [](std::vector<int64_t> v) { return torch::tensor(v); };
    auto sign = [](const torch::Tensor& t) {
        return torch::where(t > 0, 1.0, -1.0).to(torch::kFloat64);
    };
    const auto lp = torch::log_softmax(wave({3, 4}, 2.0), 1);
    const auto q = torch::softmax(wave({3, 4}, 1.5, 2.0), 1);
    run_many("kl_div_mean", [](const V& x) { return nn::KLDivLoss()(x[0], x[1]); }, {lp, q});
    run_many("kl_div_batchmean",
             [](const V& x) {
                 return nn::KLDivLoss(nn::KLDivLossOptions(torch::kBatchMean))(x[0], x[1]);
             },
             {lp, q});
    run_many("kl_div_log_target_sum",
             [](const V& x) {
                 return F::kl_div(x[0], x[1],
                                  F::KLDivFuncOptions().reduction(torch::kSum).log_target(true));
             },
             {lp, torch::log(q)});
    run_many("kl_div_none", [](const V& x) { return nn::KLDivLoss(torch::kNone)(x[0], x[1]); },
             {lp, q});
    const auto rate = wave({3, 4}, 1.0);
    const auto counts =
        torch::tensor({0.0, 1.0, 3.0, 2.0, 0.5, 4.0, 1.0, 0.0, 6.0, 2.0, 1.5, 0.0}, torch::kFloat64)
            .reshape({3, 4});
    run_many("poisson_nll", [](const V& x) { return nn::PoissonNLLLoss()(x[0], x[1]); },
             {rate, counts});
    run_many("poisson_nll_full_sum",
             [](const V& x) {
                 return nn::PoissonNLLLoss(
                     nn::PoissonNLLLossOptions().log_input(false).full(true).reduction(
                         torch::kSum))(x[0], x[1]);
             },
             {rate.abs() + 0.1, counts});
    run_many(
        "poisson_nll_none_eps",
        [](const V& x) {
            return F::poisson_nll_loss(
                x[0], x[1],
                F::PoissonNLLLossFuncOptions().log_input(false).eps(0.5).reduction(torch::kNone));
        },
        {rate.abs(), counts});
    // CTC: T 6, N 3, C 5; a repeated label (4, 4) needs a blank between
    const auto logits = wave({6, 3, 5}, 2.0);
    const auto padded = i64({1, 2, 2, 3, 1, 0, 4, 4, 1}).reshape({3, 3});
    const auto il = i64({6, 5, 4}), tl = i64({3, 2, 3});
    run_many("ctc_mean",
             [&](const V& x) { return nn::CTCLoss()(torch::log_softmax(x[0], 2), padded, il, tl); },
             {logits});
    run_many("ctc_log_probs_sum",
             [&](const V& x) {
                 return nn::CTCLoss(nn::CTCLossOptions().reduction(torch::kSum))(x[0], padded, il,
                                                                                 tl);
             },
             {torch::log_softmax(logits, 2)});
    run_many("ctc_concatenated_none_blank2",
             [&](const V& x) {
                 return F::ctc_loss(torch::log_softmax(x[0], 2), i64({1, 3, 0, 3, 4, 4}), il,
                                    i64({2, 1, 3}),
                                    F::CTCLossFuncOptions().blank(2).reduction(torch::kNone));
             },
             {logits});
    // sample 1 cannot fit 2, 2, 2 into 4 frames: an infinite loss
    const auto impossible = i64({1, 2, 0, 2, 2, 2, 3, 0, 0}).reshape({3, 3});
    const auto il2 = i64({6, 4, 5}), tl2 = i64({2, 3, 1});
    run_many("ctc_zero_infinity_mean",
             [&](const V& x) {
                 return nn::CTCLoss(nn::CTCLossOptions().zero_infinity(true))(
                     torch::log_softmax(x[0], 2), impossible, il2, tl2);
             },
             {logits});
    show("ctc_infinite_none", F::ctc_loss(torch::log_softmax(logits, 2), impossible, il2, tl2,
                                          F::CTCLossFuncOptions().reduction(torch::kNone)));
    run_many("ctc_unbatched_empty_target",
             [&](const V& x) {
                 return F::ctc_loss(torch::log_softmax(x[0], 1), i64({}), torch::tensor(5),
                                    torch::tensor(0),
                                    F::CTCLossFuncOptions().reduction(torch::kNone));
             },
             {wave({5, 4}, 1.5)});
    run_many("ctc_unbatched",
             [&](const V& x) {
                 return F::ctc_loss(torch::log_softmax(x[0], 1), i64({3, 1, 1}), torch::tensor(6),
                                    torch::tensor(3));
             },
             {wave({6, 4}, 1.5)});
    const auto a = wave({4, 5}, 1.0), b = wave({4, 5}, 1.0, 1.5),
               y = i64({1, -1, 1, -1}).to(torch::kFloat64);
    run_many("cosine_embedding",
             [&](const V& x) {
                 return nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.2))(
                     x[0], x[1], y);
             },
             {a, b});
    run_many("cosine_embedding_1d_sum",
             [&](const V& x) {
                 return F::cosine_embedding_loss(
                     x[0], x[1], torch::tensor(-1.0, torch::kFloat64),
                     F::CosineEmbeddingLossFuncOptions().reduction(torch::kSum));
             },
             {a[0], b[0]});
    const auto hx = wave({3, 4}, 1.5);
    const auto hy = sign(wave({3, 4}, 1.0, 2.0));
    run_many("hinge_embedding", [&](const V& x) { return nn::HingeEmbeddingLoss()(x[0], hy); },
             {hx});
    run_many("hinge_embedding_margin_none",
             [&](const V& x) {
                 return F::hinge_embedding_loss(
                     x[0], hy,
                     F::HingeEmbeddingLossFuncOptions().margin(0.7).reduction(torch::kNone));
             },
             {hx});
    run_many("margin_ranking",
             [&](const V& x) {
                 return nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.3))(
                     x[0], x[1], x[2]);
             },
             {wave({6}, 1.0), wave({6}, 1.0, 1.0), sign(wave({6}, 1.0, 2.5))});
    const auto mx = wave({4, 5}, 1.5);
    const auto my = i64({0, 3, 1, 4});
    run_many("multi_margin", [&](const V& x) { return nn::MultiMarginLoss()(x[0], my); }, {mx});
    run_many("multi_margin_p2_weight_none",
             [&](const V& x) {
                 return nn::MultiMarginLoss(nn::MultiMarginLossOptions()
                                                .p(2)
                                                .margin(0.5)
                                                .weight(wave({5}, 0.5, 1.0) + 1.0)
                                                .reduction(torch::kNone))(x[0], my);
             },
             {mx});
    run_many("multi_margin_1d_sum",
             [&](const V& x) {
                 return F::multi_margin_loss(
                     x[0], torch::tensor(2),
                     F::MultiMarginLossFuncOptions().reduction(torch::kSum));
             },
             {mx[1]});
    const auto lt = i64({3, 0, -1, 1, 2, 1, 2, 4, -1, -1, -1, 0, 0, 0, 0}).reshape({3, 5});
    run_many("multilabel_margin", [&](const V& x) { return nn::MultiLabelMarginLoss()(x[0], lt); },
             {mx.narrow(0, 0, 3)});
    run_many("multilabel_margin_none",
             [&](const V& x) { return nn::MultiLabelMarginLoss(torch::kNone)(x[0], lt); },
             {mx.narrow(0, 1, 3)});
    run_many("multilabel_margin_1d",
             [&](const V& x) {
                 return F::multilabel_margin_loss(x[0], i64({4, 2, 2, -1, 0}));
             },
             {mx[0]});
    const auto soft_t = (wave({3, 5}, 1.0, 0.7) > 0).to(torch::kFloat64);
    run_many("multilabel_soft_margin",
             [&](const V& x) {
                 return nn::MultiLabelSoftMarginLoss(
                     nn::MultiLabelSoftMarginLossOptions().weight(x[1]))(x[0], soft_t);
             },
             {mx.narrow(0, 0, 3), wave({5}, 0.5, 2.0) + 1.0});
    run_many("multilabel_soft_margin_none",
             [&](const V& x) {
                 return F::multilabel_soft_margin_loss(
                     x[0], soft_t,
                     F::MultilabelSoftMarginLossFuncOptions().reduction(torch::kNone));
             },
             {mx.narrow(0, 1, 3)});
    run_many("soft_margin", [&](const V& x) { return nn::SoftMarginLoss()(x[0], hy); }, {hx});
    const auto ta = wave({4, 6}, 1.0), tp = ta + wave({4, 6}, 0.8, 0.9),
               tn = ta + wave({4, 6}, 0.5, 2.2);
    run_many("triplet", [](const V& x) { return nn::TripletMarginLoss()(x[0], x[1], x[2]); },
             {ta, tp, tn});
    run_many("triplet_p1_swap_none",
             [](const V& x) {
                 return nn::TripletMarginLoss(
                     nn::TripletMarginLossOptions().p(1).swap(true).margin(0.5).eps(1e-3).reduction(
                         torch::kNone))(x[0], x[1], x[2]);
             },
             {ta, tp, tn});
    run_many("triplet_p3_sum",
             [](const V& x) {
                 return F::triplet_margin_loss(
                     x[0], x[1], x[2],
                     F::TripletMarginLossFuncOptions().p(3).margin(2).reduction(torch::kSum));
             },
             {ta, tp, tn});
    run_many("triplet_distance_default",
             [](const V& x) { return nn::TripletMarginWithDistanceLoss()(x[0], x[1], x[2]); },
             {ta, tp, tn});
    run_many("triplet_distance_l1_swap",
             [](const V& x) {
                 return nn::TripletMarginWithDistanceLoss(
                     nn::TripletMarginWithDistanceLossOptions()
                         .distance_function([](const torch::Tensor& u, const torch::Tensor& v) {
                             return (u - v).abs().sum(-1);
                         })
                         .swap(true)
                         .margin(2.5)
                         .reduction(torch::kNone))(x[0], x[1], x[2]);
             },
             {ta, tp, tn});
    run_many("bce_logits_weight_pos_weight",
             [](const V& x) {
                 return F::binary_cross_entropy_with_logits(
                     x[0], x[1],
                     F::BinaryCrossEntropyWithLogitsFuncOptions()
                         .weight(wave({4}, 0.5, 0.2) + 1.0)
                         .pos_weight(wave({4}, 0.5, 1.2) + 1.0)
                         .reduction(torch::kSum));
             },
             {wave({3, 4}, 2.0), torch::sigmoid(wave({3, 4}, 1.0, 1.0))});
    run_many("bce_weight_module",
             [](const V& x) {
                 return nn::BCELoss(nn::BCELossOptions().weight(wave({3, 4}, 0.5, 0.2) + 1.0))(
                     x[0], x[1]);
             },
             {torch::sigmoid(wave({3, 4}, 2.0)), torch::sigmoid(wave({3, 4}, 1.0, 1.0))});
    // AdaptiveLogSoftmaxWithLoss: LibTorch's initial weights after manual_seed, then values
    torch::manual_seed(1);
    nn::AdaptiveLogSoftmaxWithLoss asm_(
        nn::AdaptiveLogSoftmaxWithLossOptions(8, 10, {4, 8}).div_value(2.).head_bias(true));
    for (const auto& p : asm_->named_parameters())
        show(("asm_init_" + p.key()).c_str(), p.value());
    show("asm_init_after", torch::rand({3}, torch::kFloat64));
    asm_->to(torch::kFloat64);
    set_params(*asm_);
    const auto ax = wave({6, 8}, 1.0);
    const auto ay = i64({0, 5, 9, 3, 8, 6});
    run_many(
        "asm_output", [&](const V& x) { return asm_(x[0], ay).output; }, {ax}, asm_->parameters());
    std::printf("asm_loss: %.17g\n", asm_(ax, ay).loss);
    run_many("asm_log_prob", [&](const V& x) { return asm_->log_prob(x[0]); }, {ax});
    show("asm_predict", asm_->predict(ax));
    show("asm_predict_scaled", asm_->predict(ax * 3.0));
    show("asm_unbatched", asm_(ax[2], torch::tensor(9)).output);
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

/// A generator state's size, a hash of all its bytes (h = (131·h + byte) mod 9007199254740881)
/// and its first 24 and last 40 bytes.
static void show_state(const char* name, const torch::Tensor& st) {
    auto c = st.contiguous();
    const uint8_t* b = c.data_ptr<uint8_t>();
    unsigned long long h = 0;
    for (int64_t i = 0; i < c.numel(); ++i)
        h = (h * 131 + b[i]) % 9007199254740881ull;
    std::printf("%s: %lld %llu", name, static_cast<long long>(c.numel()), h);
    for (int i = 0; i < 24; ++i)
        std::printf(" %d", b[i]);
    for (int64_t i = 5016; i < c.numel(); ++i)
        std::printf(" %d", b[i]);
    std::printf("\n");
}

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

    torch::manual_seed(21);  // multinomial: probs / exponential_(1), or a cumulative search
    auto w = torch::tensor({1.0, 3.0, 0.5, 2.0, 4.0, 0.0, 2.5});
    show("multinomial_rep_f32", torch::multinomial(w, 12, true));
    show("multinomial_norep_f32", torch::multinomial(w, 5));
    show("multinomial_one_f32", torch::multinomial(w, 1, true));
    auto w2 = (torch::arange(18, f64).reshape({3, 6}) * 0.37).sin().abs() + 0.01;
    show("multinomial_rep_2d_f64", torch::multinomial(w2, 7, true));
    show("multinomial_norep_2d_f64", torch::multinomial(w2, 4));
    show("multinomial_one_2d_f64", w2.t().multinomial(1));  // draws in w2's memory order
    show("multinomial_all_f32", torch::multinomial(w.narrow(0, 0, 5), 5));
    show("multinomial_rep_2d_f32", w2.to(torch::kFloat).multinomial(3, true));
    auto z = torch::zeros({2, 40});  // more samples than positive weights: topk's ties
    z[0][3] = 1;
    z[0][30] = 2;
    z[1][5] = 1;
    z[1][17] = 0.5;
    show("multinomial_zero_ties", torch::multinomial(z[0].narrow(0, 0, 6), 6));
    show("multinomial_zero_ties_2d", torch::multinomial(z, 40));
    show("multinomial_zero_ties_few", torch::multinomial(z, 3));
    show("multinomial_after", torch::rand({3}, f64));
    for (auto dtype : {torch::kFloat, torch::kDouble}) {
        const bool f = dtype == torch::kFloat;
        torch::manual_seed(22);
        show(f ? "geometric_f32" : "geometric_f64", torch::empty({6}, dtype).geometric_(0.3));
        show(f ? "cauchy_f32" : "cauchy_f64", torch::empty({5}, dtype).cauchy_(0.5, 2.0));
        show(f ? "log_normal_f32" : "log_normal_f64",
             torch::empty({5}, dtype).log_normal_(0.2, 0.7));
        show(f ? "log_normal_20_f32" : "log_normal_20_f64",
             torch::empty({20}, dtype).log_normal_());
        show(f ? "random_f32" : "random_f64", torch::empty({4}, dtype).random_());
        show(f ? "random_to_f32" : "random_to_f64", torch::empty({4}, dtype).random_(10));
        show(f ? "random_from_to_f32" : "random_from_to_f64",
             torch::empty({4}, dtype).random_(-3, 5));
        show(f ? "distributions_after_f32" : "distributions_after_f64", torch::rand({3}, f64));
    }
    torch::manual_seed(23);
    auto ri = torch::empty({4}, torch::kInt64).random_();  // above 2^53: printed as integers
    std::printf("random_i64 (in the test as integers):");
    for (int64_t i = 0; i < 4; ++i)
        std::printf(" %lld", static_cast<long long>(ri[i].item<int64_t>()));
    std::printf("\n");
    show("random_i32", torch::empty({4}, torch::kInt32).random_());
    show("random_u8", torch::empty({4}, torch::kUInt8).random_());
    show("random_bool", torch::empty({6}, torch::kBool).random_());
    show("random_i64_to", torch::empty({4}, torch::kInt64).random_(1000));
    show("random_geometric_i64", torch::empty({4}, torch::kInt64).geometric_(0.6));
    show("random_after", torch::rand({3}, f64));

    {  // get_state: CPUGeneratorImplState's bytes
        auto g5 = at::make_generator<at::CPUGeneratorImpl>(5);
        show_state("state_fresh", g5.get_state());
        torch::randn({3}, g5, f64);  // keeps a normal value
        show_state("state_kept", g5.get_state());
        torch::rand({700}, g5);  // past a twist
        show_state("state_700", g5.get_state());
        auto g1 = at::make_generator<at::CPUGeneratorImpl>(1);
        torch::rand({624}, g1);
        show_state("state_624", g1.get_state());
    }
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

/// tests/test_nn_conv3d.cpp: conv3d, the transposed 1-D and 3-D convolutions and the 1-D, 3-D
/// and adaptive pools in float64. Inputs are sin(0.37 i + 0.1 k) (input k of a case, i its
/// flat index), the upstream gradient cos(0.21 i); each case prints y and the gradients of
/// sum(y * upstream).
static torch::Tensor spatial_input(torch::IntArrayRef shape, int k) {
    auto o = torch::TensorOptions().dtype(torch::kFloat64);
    int64_t n = 1;
    for (int64_t s : shape)
        n *= s;
    return (torch::arange(n, o) * 0.37 + 0.1 * k).sin().reshape(shape).requires_grad_(true);
}
static void spatial_backward(const char* name, const torch::Tensor& y,
                             std::vector<torch::Tensor> leaves) {
    show(name, y);
    auto o = torch::TensorOptions().dtype(torch::kFloat64);
    auto up = (torch::arange(y.numel(), o) * 0.21).cos().reshape(y.sizes());
    (y * up).sum().backward();
    for (size_t i = 0; i < leaves.size(); ++i)
        show((std::string(name) + "_grad" + std::to_string(i)).c_str(), leaves[i].grad());
}
static void spatial() {
    using namespace torch::nn::functional;
    auto x = spatial_input({2, 2, 3, 5, 4}, 0), w = spatial_input({3, 2, 2, 3, 3}, 1),
         b = spatial_input({3}, 2);
    spatial_backward(
        "conv3d",
        conv3d(
            x, w,
            Conv3dFuncOptions().bias(b).stride({1, 2, 1}).padding({1, 0, 1}).dilation({1, 1, 2})),
        {x, w, b});
    auto xg = spatial_input({1, 4, 3, 3, 3}, 0), wg = spatial_input({4, 2, 2, 3, 2}, 1);
    spatial_backward("conv3d_same_groups",
                     conv3d(xg, wg, Conv3dFuncOptions().padding(torch::kSame).groups(2)), {xg, wg});
    auto x1 = spatial_input({2, 2, 5}, 0), w1 = spatial_input({2, 3, 3}, 1),
         b1 = spatial_input({3}, 2);
    spatial_backward(
        "conv_transpose1d",
        conv_transpose1d(
            x1, w1,
            ConvTranspose1dFuncOptions().bias(b1).stride(2).padding(1).output_padding(1).dilation(
                2)),
        {x1, w1, b1});
    auto x3 = spatial_input({1, 4, 2, 3, 2}, 0), w3 = spatial_input({4, 1, 2, 3, 2}, 1),
         b3 = spatial_input({2}, 2);
    spatial_backward("conv_transpose3d",
                     conv_transpose3d(x3, w3,
                                      ConvTranspose3dFuncOptions()
                                          .bias(b3)
                                          .stride({2, 1, 2})
                                          .padding({0, 1, 1})
                                          .output_padding({1, 0, 1})
                                          .groups(2)),
                     {x3, w3, b3});
    auto p1 = spatial_input({2, 3, 9}, 0);
    auto m1 = max_pool1d_with_indices(
        p1, MaxPool1dFuncOptions(3).stride(2).padding(1).dilation(2).ceil_mode(true));
    show("max_pool1d_indices", std::get<1>(m1));
    spatial_backward("max_pool1d", std::get<0>(m1), {p1});
    auto p3 = spatial_input({1, 2, 4, 5, 6}, 0);
    auto m3 = max_pool3d_with_indices(
        p3,
        MaxPool3dFuncOptions({2, 3, 2}).stride({2, 1, 2}).padding({1, 1, 0}).dilation({1, 1, 2}));
    show("max_pool3d_indices", std::get<1>(m3));
    spatial_backward("max_pool3d", std::get<0>(m3), {p3});
    auto a1 = spatial_input({2, 2, 7}, 0);
    spatial_backward(
        "avg_pool1d",
        avg_pool1d(
            a1,
            AvgPool1dFuncOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false)),
        {a1});
    auto a3 = spatial_input({1, 2, 4, 5, 5}, 0);
    spatial_backward(
        "avg_pool3d",
        avg_pool3d(
            a3,
            AvgPool3dFuncOptions({2, 3, 3}).stride({1, 2, 2}).padding({1, 1, 0}).ceil_mode(true)),
        {a3});
    auto a3d = spatial_input({1, 2, 4, 5, 5}, 1);
    spatial_backward(
        "avg_pool3d_divisor",
        avg_pool3d(a3d, AvgPool3dFuncOptions(2).stride(1).padding(1).divisor_override(7)), {a3d});
    auto a2d = spatial_input({1, 2, 4, 5}, 1);
    spatial_backward(
        "avg_pool2d_divisor",
        avg_pool2d(a2d, AvgPool2dFuncOptions(3).stride(2).padding(1).divisor_override(4)), {a2d});
    auto aa1 = spatial_input({2, 2, 7}, 0);
    spatial_backward("adaptive_avg_pool1d", adaptive_avg_pool1d(aa1, 3), {aa1});
    auto aa3 = spatial_input({1, 2, 3, 5, 7}, 0);
    spatial_backward("adaptive_avg_pool3d",
                     adaptive_avg_pool3d(aa3, AdaptiveAvgPool3dFuncOptions({2, 3, 4})), {aa3});
    auto am1 = spatial_input({2, 2, 7}, 0);
    auto r1 = adaptive_max_pool1d_with_indices(am1, AdaptiveMaxPool1dFuncOptions(3));
    show("adaptive_max_pool1d_indices", std::get<1>(r1));
    spatial_backward("adaptive_max_pool1d", std::get<0>(r1), {am1});
    auto am2 = spatial_input({1, 2, 5, 7}, 0);
    auto r2 = adaptive_max_pool2d_with_indices(am2, AdaptiveMaxPool2dFuncOptions({3, 4}));
    show("adaptive_max_pool2d_indices", std::get<1>(r2));
    spatial_backward("adaptive_max_pool2d", std::get<0>(r2), {am2});
    auto am3 = spatial_input({1, 2, 3, 5, 7}, 0);
    auto r3 = adaptive_max_pool3d_with_indices(am3, AdaptiveMaxPool3dFuncOptions({2, 3, 4}));
    show("adaptive_max_pool3d_indices", std::get<1>(r3));
    spatial_backward("adaptive_max_pool3d", std::get<0>(r3), {am3});
}

/// tests/test_nn_conv3d.cpp: LP pooling, max unpooling (repeated indices too), fractional max
/// pooling (given samples, and the samples drawn after manual_seed(7)), pixel (un)shuffle,
/// affine_grid and grid_sample's modes, as spatial().
static void spatial_sampling() {
    using namespace torch::nn::functional;
    auto o = torch::TensorOptions().dtype(torch::kFloat64);
    auto l1 = spatial_input({2, 3, 7}, 0);
    auto l1p = l1.abs() + 0.5;
    spatial_backward("lp_pool1d", lp_pool1d(l1p, LPPool1dFuncOptions(2, 3).stride(2)), {l1});
    auto l2 = spatial_input({1, 2, 5, 5}, 0);
    spatial_backward(
        "lp_pool2d",
        lp_pool2d(l2.abs() + 0.5, LPPool2dFuncOptions(3, {2, 3}).stride({2, 1}).ceil_mode(true)),
        {l2});
    auto src1 = spatial_input({2, 3, 9}, 3);
    auto i1 = std::get<1>(max_pool1d_with_indices(src1, MaxPool1dFuncOptions(3).stride(1)));
    auto u1 = spatial_input({2, 3, 7}, 0);
    spatial_backward("max_unpool1d_repeated",
                     max_unpool1d(u1, i1, MaxUnpool1dFuncOptions(3).stride(1)), {u1});
    auto src2 = spatial_input({2, 2, 4, 6}, 3);
    auto i2 = std::get<1>(max_pool2d_with_indices(src2, MaxPool2dFuncOptions(2)));
    auto u2 = spatial_input({2, 2, 2, 3}, 0);
    spatial_backward(
        "max_unpool2d_output_size",
        max_unpool2d(u2, i2,
                     MaxUnpool2dFuncOptions(2).output_size(std::vector<int64_t>{2, 2, 5, 7})),
        {u2});
    auto src3 = spatial_input({1, 2, 4, 4, 6}, 3);
    auto i3 = std::get<1>(max_pool3d_with_indices(src3, MaxPool3dFuncOptions(2).stride({1, 2, 2})));
    auto u3 = spatial_input({1, 2, 3, 2, 3}, 0);
    spatial_backward("max_unpool3d_repeated",
                     max_unpool3d(u3, i3, MaxUnpool3dFuncOptions(2).stride({1, 2, 2})), {u3});
    auto f2 = spatial_input({2, 2, 7, 6}, 0);
    auto samples2 = (torch::arange(8, o) * 0.13 + 0.05).reshape({2, 2, 2});
    auto r2 = fractional_max_pool2d_with_indices(f2, FractionalMaxPool2dFuncOptions(2)
                                                         .output_size(std::vector<int64_t>{4, 3})
                                                         ._random_samples(samples2));
    show("fractional_max_pool2d_indices", std::get<1>(r2));
    spatial_backward("fractional_max_pool2d", std::get<0>(r2), {f2});
    auto f3 = spatial_input({1, 2, 5, 6, 5}, 0);
    auto samples3 = (torch::arange(6, o) * 0.15 + 0.02).reshape({1, 2, 3});
    auto r3 = fractional_max_pool3d_with_indices(f3, FractionalMaxPool3dFuncOptions({2, 3, 2})
                                                         .output_size(std::vector<int64_t>{3, 3, 2})
                                                         ._random_samples(samples3));
    show("fractional_max_pool3d_indices", std::get<1>(r3));
    spatial_backward("fractional_max_pool3d", std::get<0>(r3), {f3});
    torch::manual_seed(7);
    auto fr = spatial_input({2, 3, 8, 9}, 1);
    auto rr = fractional_max_pool2d_with_indices(
        fr, FractionalMaxPool2dFuncOptions({3, 2}).output_ratio(std::vector<double>{0.5, 0.6}));
    show("fractional_max_pool2d_seeded_indices", std::get<1>(rr));
    show("fractional_max_pool2d_seeded_after", torch::rand({2}, o));
    auto ps = spatial_input({2, 8, 2, 3}, 0);
    spatial_backward("pixel_shuffle", pixel_shuffle(ps, PixelShuffleFuncOptions(2)), {ps});
    auto pu = spatial_input({2, 1, 2, 4, 6}, 0);
    spatial_backward("pixel_unshuffle", pixel_unshuffle(pu, PixelUnshuffleFuncOptions(2)), {pu});
    auto th = spatial_input({2, 2, 3}, 0);
    spatial_backward("affine_grid_2d", affine_grid(th, {2, 3, 4, 5}, false), {th});
    auto th3 = spatial_input({1, 3, 4}, 1);
    spatial_backward("affine_grid_3d_corners", affine_grid(th3, {1, 1, 2, 3, 4}, true), {th3});
    struct GS {
        const char* name;
        int mode;
        int pad;
        bool ac;
        double scale;
    };
    const GS cases[] = {{"grid_sample_bilinear", 0, 0, false, 1.2},
                        {"grid_sample_bilinear_border_corners", 0, 1, true, 1.3},
                        {"grid_sample_bilinear_reflection", 0, 2, false, 2.7},
                        {"grid_sample_bilinear_reflection_corners", 0, 2, true, 2.7},
                        {"grid_sample_nearest", 1, 0, false, 1.1},
                        {"grid_sample_nearest_border", 1, 1, true, 1.5},
                        {"grid_sample_bicubic", 2, 0, false, 1.2},
                        {"grid_sample_bicubic_border", 2, 1, false, 1.4},
                        {"grid_sample_bicubic_reflection_corners", 2, 2, true, 1.6}};
    for (const GS& c : cases) {
        auto in = spatial_input({2, 2, 4, 5}, 0);
        auto g0 = spatial_input({2, 3, 4, 2}, 1);
        auto g = g0 * c.scale;
        auto opt = GridSampleFuncOptions().align_corners(c.ac);
        if (c.mode == 0)
            opt.mode(torch::kBilinear);
        if (c.mode == 1)
            opt.mode(torch::kNearest);
        if (c.pad == 0)
            opt.padding_mode(torch::kZeros);
        if (c.pad == 1)
            opt.padding_mode(torch::kBorder);
        if (c.pad == 2)
            opt.padding_mode(torch::kReflection);
        // LibTorch 1.13's F::grid_sample has no kBicubic (ATen's grid_sampler has, mode 2)
        spatial_backward(
            c.name,
            c.mode == 2 ? torch::grid_sampler(in, g, 2, c.pad, c.ac) : grid_sample(in, g, opt),
            {in, g0});
    }
    auto in3 = spatial_input({1, 2, 3, 4, 3}, 0);
    auto g3 = spatial_input({1, 2, 2, 3, 3}, 1);
    spatial_backward(
        "grid_sample_trilinear",
        grid_sample(in3, g3 * 1.2,
                    GridSampleFuncOptions().mode(torch::kBilinear).align_corners(false)),
        {in3, g3});
    auto in3b = spatial_input({1, 1, 3, 3, 4}, 0);
    auto g3b = spatial_input({1, 2, 2, 2, 3}, 1);
    spatial_backward("grid_sample_3d_nearest_reflection",
                     grid_sample(in3b, g3b * 1.5,
                                 GridSampleFuncOptions()
                                     .mode(torch::kNearest)
                                     .padding_mode(torch::kReflection)
                                     .align_corners(true)),
                     {in3b, g3b});
}

/// tests/test_nn_conv3d.cpp: the new modules' initial parameters after manual_seed(3) (float32,
/// as drawn), then in float64 their outputs and gradients, as spatial().
static void spatial_modules() {
    namespace nn = torch::nn;
    torch::manual_seed(3);
    nn::Conv3d c3(nn::Conv3dOptions(2, 3, {2, 3, 2}).stride({1, 2, 1}).padding(1));
    show("Conv3d_init_weight", c3->weight);
    show("Conv3d_init_bias", c3->bias);
    nn::ConvTranspose1d t1(
        nn::ConvTranspose1dOptions(2, 3, 3).stride(2).padding(1).output_padding(1));
    show("ConvTranspose1d_init_weight", t1->weight);
    show("ConvTranspose1d_init_bias", t1->bias);
    nn::ConvTranspose3d t3(
        nn::ConvTranspose3dOptions(4, 2, {2, 2, 3}).groups(2).stride(2).bias(false));
    show("ConvTranspose3d_init_weight", t3->weight);
    nn::Conv3d cr(nn::Conv3dOptions(1, 2, 2).padding(1).padding_mode(torch::kReplicate));
    c3->to(torch::kFloat64);
    t1->to(torch::kFloat64);
    t3->to(torch::kFloat64);
    cr->to(torch::kFloat64);
    auto x3 = spatial_input({2, 2, 3, 4, 3}, 0);
    spatial_backward("Conv3d", c3(x3), {x3, c3->weight, c3->bias});
    auto x1 = spatial_input({2, 2, 4}, 0);
    spatial_backward("ConvTranspose1d", t1(x1), {x1, t1->weight, t1->bias});
    auto xt = spatial_input({1, 4, 2, 2, 2}, 0);
    spatial_backward("ConvTranspose3d", t3(xt), {xt, t3->weight});
    auto xr = spatial_input({1, 1, 2, 3, 3}, 0);
    spatial_backward("Conv3d_replicate", cr(xr), {xr, cr->weight, cr->bias});
    torch::manual_seed(11);
    nn::FractionalMaxPool2d fm(
        nn::FractionalMaxPool2dOptions(2).output_size(torch::ExpandingArray<2>({5, 4})));
    auto xf = spatial_input({2, 2, 8, 7}, 0);
    show("FractionalMaxPool2d_first", std::get<1>(fm->forward_with_indices(xf)));
    show("FractionalMaxPool2d_second", std::get<1>(fm->forward_with_indices(xf)));
    nn::FractionalMaxPool3d fm3(
        nn::FractionalMaxPool3dOptions({2, 1, 2}).output_size(torch::ExpandingArray<3>({2, 3, 2})));
    show("FractionalMaxPool3d_unbatched",
         std::get<1>(fm3->forward_with_indices(spatial_input({2, 4, 5, 4}, 0))));
}

/// A deterministic float64 input of `shape` for the nn tests: sin(0.37·i + phase), reshaped.
static torch::Tensor wave37(torch::IntArrayRef shape, double phase = 0) {
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return (torch::arange(n, torch::kFloat64) * 0.37 + phase).sin().reshape(shape);
}

/// Prints f(inputs) and the gradient of sum(f(inputs) * wave) for each input, as name, name_d0,
/// name_d1, ...
static void show_grads(const std::string& name, std::vector<torch::Tensor> in,
                       const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& f) {
    for (auto& t : in)
        t = t.detach().clone().requires_grad_(true);
    auto y = f(in);
    show(name.c_str(), y);
    if (!y.requires_grad())
        return (void)std::printf("%s_requires_grad: 0\n", name.c_str());
    (y * wave37(y.sizes(), 1.0)).sum().backward();
    for (size_t i = 0; i < in.size(); ++i)
        if (in[i].grad().defined())
            show((name + "_d" + std::to_string(i)).c_str(), in[i].grad());
        else
            std::printf("%s_d%zu: none\n", name.c_str(), i);
}

/// tests/test_nn_distance.cpp: Identity, Unflatten, Bilinear, CosineSimilarity,
/// PairwiseDistance and pdist (values, gradients, initial weights, printing).
static void nn_distance() {
    using V = std::vector<torch::Tensor>;
    namespace nn = torch::nn;
    show_grads("bilinear",
               {wave37({2, 3}), wave37({2, 4}, 0.5), wave37({5, 3, 4}, 1.5), wave37({5}, 2)},
               [](const V& x) { return F::bilinear(x[0], x[1], x[2], x[3]); });
    show_grads("bilinear_3d", {wave37({2, 3, 2}), wave37({2, 3, 3}, 0.5), wave37({2, 2, 3}, 1.5)},
               [](const V& x) { return F::bilinear(x[0], x[1], x[2]); });
    show_grads("bilinear_1d",
               {wave37({3}), wave37({2}, 0.5), wave37({4, 3, 2}, 1.5), wave37({4}, 2)},
               [](const V& x) { return F::bilinear(x[0], x[1], x[2], x[3]); });
    torch::manual_seed(0);
    nn::Bilinear bil(3, 4, 2);
    show("bilinear_init_weight", bil->weight);
    show("bilinear_init_bias", bil->bias);
    show("bilinear_init_after", torch::rand({2}, torch::kFloat64));
    show_grads("cosine", {wave37({3, 4}), wave37({3, 4}, 0.5)},
               [](const V& x) { return F::cosine_similarity(x[0], x[1]); });
    show_grads("cosine_bcast_dim", {wave37({2, 1, 3}), wave37({4, 3}, 0.5)}, [](const V& x) {
        return F::cosine_similarity(x[0], x[1], F::CosineSimilarityFuncOptions().dim(-1));
    });
    // the first row's norm (1e-9·|…|) is below eps: clamped in value, not in gradient
    auto tiny = wave37({2, 3}) * torch::tensor({1e-9, 1.0}, torch::kFloat64).reshape({2, 1});
    show_grads("cosine_tiny", {tiny, wave37({2, 3}, 0.5)}, [](const V& x) {
        return F::cosine_similarity(x[0], x[1], F::CosineSimilarityFuncOptions().eps(1e-6));
    });
    for (double p : std::vector<double>{2, 1, 3, 0.5, 1.5, INFINITY, -INFINITY, 0, -1}) {
        const std::string tag = "pairwise_p" + std::to_string(p);
        show_grads(tag, {wave37({3, 4}), wave37({3, 4}, 0.5)}, [p](const V& x) {
            return F::pairwise_distance(x[0], x[1], F::PairwiseDistanceFuncOptions().p(p));
        });
    }
    show_grads("pairwise_keepdim_bcast", {wave37({2, 3, 4}), wave37({4}, 0.5)}, [](const V& x) {
        return F::pairwise_distance(x[0], x[1],
                                    F::PairwiseDistanceFuncOptions().keepdim(true).eps(1e-3));
    });
    show_grads("pairwise_1d", {wave37({5}), wave37({5}, 0.5)},
               [](const V& x) { return F::pairwise_distance(x[0], x[1]); });
    show_grads("pairwise_0d", {wave37({}), wave37({}, 0.5)},
               [](const V& x) { return F::pairwise_distance(x[0], x[1]); });
    // rows 0 and 2 are equal (a zero distance); |column differences| tie in rows 1 and 3
    auto rows = torch::tensor({0.3, -0.2, 1.0, 0.5, 0.8, 0.9, 0.3, -0.2, 1.0, 1.5, -0.5, 1.9},
                              torch::kFloat64)
                    .reshape({4, 3});
    for (double p : std::vector<double>{2, 1, 3, 0.5, INFINITY, 0}) {
        const std::string tag = "pdist_p" + std::to_string(p);
        show_grads(tag, {rows}, [p](const V& x) { return F::pdist(x[0], p); });
    }
    show_grads("pdist_wave", {wave37({5, 3})}, [](const V& x) { return F::pdist(x[0]); });
    auto print = [](const char* name, const auto& m) {
        std::ostringstream os;
        os << m;
        std::printf("print_%s: %s\n", name, os.str().c_str());
    };
    print("identity", nn::Identity());
    print("unflatten", nn::Unflatten(nn::UnflattenOptions(-1, {2, -1})));
    print("bilinear", nn::Bilinear(nn::BilinearOptions(3, 4, 5).bias(false)));
    print("cosine", nn::CosineSimilarity(nn::CosineSimilarityOptions().dim(0).eps(1e-3)));
    print("pairwise", nn::PairwiseDistance(nn::PairwiseDistanceOptions().p(1.5).keepdim(true)));
}

/// tests/test_nn_dropout.cpp: AlphaDropout, FeatureAlphaDropout, Dropout3d and the F:: dropouts
/// in training after manual_seed (values, gradients and the generator state after).
static void nn_dropout() {
    using V = std::vector<torch::Tensor>;
    namespace nn = torch::nn;
    torch::manual_seed(7);
    show_grads("alpha_f64", {wave37({3, 4})},
               [](const V& x) { return torch::alpha_dropout(x[0], 0.3, true); });
    show_grads("feature_alpha_f64", {wave37({2, 3, 2, 2})},
               [](const V& x) { return torch::feature_alpha_dropout(x[0], 0.4, true); });
    show("alpha_after_f64", torch::rand({3}, torch::kFloat64));
    torch::manual_seed(8);
    auto x32 = wave37({3, 5}).to(torch::kFloat32).requires_grad_(true);
    auto y32 = torch::alpha_dropout(x32, 0.6, true);
    show("alpha_f32", y32);
    (y32 * wave37({3, 5}, 1.0).to(torch::kFloat32)).sum().backward();
    show("alpha_f32_d0", x32.grad());
    show("feature_alpha_f32",
         torch::feature_alpha_dropout(wave37({2, 4, 3}).to(torch::kFloat32), 0.5, true));
    show("alpha_after_f32", torch::rand({3}, torch::kFloat64));
    torch::manual_seed(9);
    nn::AlphaDropout ad(0.2);
    nn::FeatureAlphaDropout fad(nn::FeatureAlphaDropoutOptions(0.35).inplace(true));
    nn::Dropout3d d3(0.45);
    show("module_alpha", ad(wave37({4, 3})));
    show("module_feature_alpha", fad(wave37({3, 2, 4})));
    show("module_dropout3d", d3(wave37({2, 3, 2, 2, 2})));
    show("module_dropout3d_unbatched", d3(wave37({3, 2, 1, 2})));
    show("f_dropout3d", F::dropout3d(wave37({2, 2, 1, 2, 2}), F::Dropout3dFuncOptions().p(0.3)));
    show("f_dropout2d_unbatched",
         F::dropout2d(wave37({3, 2, 2}), F::Dropout2dFuncOptions().p(0.6)));
    show("f_alpha_training",
         F::alpha_dropout(wave37({5}), F::AlphaDropoutFuncOptions().p(0.5).training(true)));
    show("f_feature_alpha_training",
         F::feature_alpha_dropout(wave37({2, 2, 2}),
                                  F::FeatureAlphaDropoutFuncOptions().p(0.5).training(true)));
    show("module_after", torch::rand({3}, torch::kFloat64));
    show("alpha_p1", torch::alpha_dropout(wave37({3}), 1.0, true));
    auto print = [](const char* name, const auto& m) {
        std::ostringstream os;
        os << m;
        std::printf("print_%s: %s\n", name, os.str().c_str());
    };
    print("alpha", nn::AlphaDropout(0.25));
    print("feature_alpha",
          nn::FeatureAlphaDropout(nn::FeatureAlphaDropoutOptions(0.2).inplace(true)));
    print("dropout3d", nn::Dropout3d(0.3));
}

/// tests/test_nn_parameter_list.cpp: what ParameterList and ParameterDict register and print.
static void nn_containers() {
    namespace nn = torch::nn;
    nn::ParameterList pl(torch::ones({2}).requires_grad_(true),
                         torch::zeros({3, 1}, torch::kFloat64));
    pl->append(torch::zeros({1}, torch::kInt64));
    std::cout << pl << "\n";
    for (const auto& p : pl->named_parameters())
        std::printf("list %s requires_grad %d\n", p.key().c_str(), int(p.value().requires_grad()));
    torch::OrderedDict<std::string, torch::Tensor> od;
    od.insert("a", torch::ones({2}));
    od.insert("b", torch::ones({1}).requires_grad_(true));
    nn::ParameterDict pd(od);
    std::cout << pd << "\n";
    for (const auto& p : pd->named_parameters())
        std::printf("dict %s requires_grad %d\n", p.key().c_str(), int(p.value().requires_grad()));
    pd->pop("a");
    std::printf("after pop: %zu keys, %zu parameters\n", pd->keys().size(),
                pd->parameters().size());
    try {
        pd->update(od);
    } catch (const c10::Error& e) {
        std::printf("update with a missing key: %s\n", e.msg().c_str());
    }
    pd->clear();
    std::cout << pd << "\n";
}

/// tests/test_nn_embedding_bag.cpp: EmbeddingBag and F::embedding_bag (every mode, offsets,
/// include_last_offset, per_sample_weights, padding_idx, empty bags, max_norm), with gradients.
static void nn_embedding_bag() {
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    using V = std::vector<torch::Tensor>;
    namespace nn = torch::nn;
    const auto idx = torch::tensor({4, 0, 2, 2, 5, 1, 0, 3, 2});
    const auto off = torch::tensor({0, 3, 3, 6});  // bag 1 is empty
    for (const char* m : {"sum", "mean", "max"}) {
        const std::string name = m;
        torch::nn::EmbeddingBagMode mode = torch::kSum;
        if (name == "mean")
            mode = torch::kMean;
        if (name == "max")
            mode = torch::kMax;
        show_grads("bag_" + name, {wave37({6, 3})}, [&](const V& x) {
            return F::embedding_bag(idx, x[0],
                                    F::EmbeddingBagFuncOptions().offsets(off).mode(mode));
        });
        show_grads("bag_" + name + "_padding", {wave37({6, 3})}, [&](const V& x) {
            return F::embedding_bag(
                idx, x[0], F::EmbeddingBagFuncOptions().offsets(off).mode(mode).padding_idx(2));
        });
        show_grads("bag_" + name + "_last_offset", {wave37({6, 3})}, [&](const V& x) {
            return F::embedding_bag(idx, x[0],
                                    F::EmbeddingBagFuncOptions()
                                        .offsets(torch::tensor({0, 2, 2, 9}))
                                        .mode(mode)
                                        .include_last_offset(true)
                                        .padding_idx(-1));
        });
        show_grads("bag_" + name + "_2d", {wave37({6, 3})}, [&](const V& x) {
            return F::embedding_bag(idx.reshape({3, 3}), x[0],
                                    F::EmbeddingBagFuncOptions().mode(mode));
        });
    }
    show_grads("bag_sum_weighted", {wave37({6, 3}), wave37({9}, 0.3)}, [&](const V& x) {
        return F::embedding_bag(
            idx, x[0],
            F::EmbeddingBagFuncOptions().offsets(off).mode(torch::kSum).per_sample_weights(x[1]));
    });
    show_grads("bag_sum_weighted_padding_2d", {wave37({6, 3}), wave37({3, 3}, 0.3)},
               [&](const V& x) {
                   return F::embedding_bag(idx.reshape({3, 3}), x[0],
                                           F::EmbeddingBagFuncOptions()
                                               .mode(torch::kSum)
                                               .per_sample_weights(x[1])
                                               .padding_idx(0));
               });
    show_grads("bag_mean_freq", {wave37({6, 3})}, [&](const V& x) {
        return F::embedding_bag(idx, x[0],
                                F::EmbeddingBagFuncOptions().offsets(off).scale_grad_by_freq(true));
    });
    // ties in a max bag: rows 0 and 1 hold the same maximum in column 0 and 2
    auto tied = torch::tensor({1.0, 5.0, 2.0, 1.0, 2.0, 2.0, 0.5, 5.0, 1.0}, torch::kFloat64)
                    .reshape({3, 3});
    show_grads("bag_max_ties", {tied}, [&](const V& x) {
        return F::embedding_bag(
            torch::tensor({0, 1, 2, 1, 0}), x[0],
            F::EmbeddingBagFuncOptions().offsets(torch::tensor({0, 3})).mode(torch::kMax));
    });
    // max_norm renormalises the rows it reads, in place, before the lookup
    auto w = (wave37({6, 3}) * 3).requires_grad_(true);
    auto y = F::embedding_bag(
        idx, w,
        F::EmbeddingBagFuncOptions().offsets(off).max_norm(1.5).norm_type(3).mode(torch::kSum));
    show("bag_max_norm", y);
    show("bag_max_norm_weight", w);
    (y * wave37(y.sizes(), 1.0)).sum().backward();
    show("bag_max_norm_d0", w.grad());
    torch::manual_seed(5);
    nn::EmbeddingBag bag(nn::EmbeddingBagOptions(5, 2).padding_idx(-2));
    show("module_init", bag->weight);
    show("module_init_after", torch::rand({2}, torch::kFloat64));
    bag->to(torch::kFloat64);
    show("module_forward", bag(torch::tensor({0, 3, 3, 1}), torch::tensor({0, 1})));
    auto print = [](const char* name, const auto& m) {
        std::ostringstream os;
        os << m;
        std::printf("print_%s: %s\n", name, os.str().c_str());
    };
    print("default", nn::EmbeddingBag(10, 3));
    print("all", nn::EmbeddingBag(nn::EmbeddingBagOptions(10, 3)
                                      .mode(torch::kMax)
                                      .padding_idx(2)
                                      .include_last_offset(true)
                                      .max_norm(1.5)));
    print("sum", nn::EmbeddingBag(nn::EmbeddingBagOptions(10, 3)
                                      .mode(torch::kSum)
                                      .norm_type(3)
                                      .scale_grad_by_freq(true)
                                      .padding_idx(-1)));
}

/// Every parameter's first and last two values, named prefix + its name.
static void show_params(const std::string& prefix, const torch::nn::Module& m) {
    for (const auto& p : m.named_parameters())
        show_ends((prefix + p.key()).c_str(), p.value(), 2);
}

/// Every parameter's gradient's first and last two values, named prefix + its name + "_grad".
static void show_param_grads(const std::string& prefix, const torch::nn::Module& m) {
    for (const auto& p : m.named_parameters())
        show_ends((prefix + p.key() + "_grad").c_str(), p.value().grad(), 2);
}

/// tests/test_nn_transformer_stack.cpp: TransformerDecoderLayer, TransformerEncoder,
/// TransformerDecoder and Transformer: initial weights after manual_seed, forward values and
/// gradients in float64 with masks (dropout 0), training forwards with dropout, printing.
static void nn_transformer_stack() {
    namespace nn = torch::nn;
    const auto f64 = torch::kFloat64;
    auto causal = nn::TransformerImpl::generate_square_subsequent_mask(5).to(f64);
    show("causal_mask_3", nn::TransformerImpl::generate_square_subsequent_mask(3));
    auto tgt_kpm =
        torch::tensor({false, false, false, false, true, false, false, false, false, false})
            .reshape({2, 5});
    auto mem_kpm =
        torch::tensor({false, false, true, false, false, false, false, true}).reshape({2, 4});
    auto backprop = [](const torch::Tensor& y) { (y * wave37(y.sizes(), 1.0)).sum().backward(); };

    torch::manual_seed(11);
    nn::TransformerDecoderLayer dl(
        nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
    show_params("dl_init.", *dl);
    show("dl_init_after", torch::rand({2}, f64));
    dl->to(f64);
    auto tgt = wave37({5, 2, 8}).requires_grad_(true),
         mem = wave37({4, 2, 8}, 0.7).requires_grad_(true);
    auto y = dl->forward(tgt, mem, causal, torch::Tensor(), tgt_kpm, mem_kpm);
    show("dl_out", y);
    backprop(y);
    show("dl_out_d_tgt", tgt.grad());
    show("dl_out_d_mem", mem.grad());
    show_param_grads("dl.", *dl);

    torch::manual_seed(12);
    nn::TransformerDecoderLayer dg(
        nn::TransformerDecoderLayerOptions(8, 4).dim_feedforward(12).dropout(0.0).activation(
            torch::kGELU));
    dg->to(f64);
    show("dl_gelu_out", dg->forward(wave37({3, 2, 8}), wave37({4, 2, 8}, 0.7), torch::Tensor(),
                                    wave37({3, 4}, 0.2)));
    torch::manual_seed(12);
    nn::TransformerDecoderLayer df(
        nn::TransformerDecoderLayerOptions(8, 4).dim_feedforward(12).dropout(0.0).activation(
            [](const torch::Tensor& x) { return torch::tanh(x) * 2; }));
    df->to(f64);
    show("dl_function_out", df->forward(wave37({3, 2, 8}), wave37({4, 2, 8}, 0.7)));

    torch::manual_seed(13);
    nn::TransformerEncoder enc(
        nn::TransformerEncoderOptions(
            nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0), 2)
            .norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
    show_params("enc_init.", *enc);
    show("enc_init_after", torch::rand({2}, f64));
    enc->to(f64);
    auto src = wave37({5, 2, 8}, 0.3).requires_grad_(true);
    auto e = enc->forward(src, causal, tgt_kpm);
    show("enc_out", e);
    backprop(e);
    show("enc_out_d_src", src.grad());
    show_param_grads("enc.", *enc);

    torch::manual_seed(14);
    nn::TransformerDecoderLayer layer(
        nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
    nn::TransformerDecoder dec(layer, 3);
    show("dec_init_after", torch::rand({2}, f64));
    dec->to(f64);
    auto d = dec->forward(wave37({5, 2, 8}), wave37({4, 2, 8}, 0.7), causal, torch::Tensor(),
                          torch::Tensor(), mem_kpm);
    show("dec_out", d);

    torch::manual_seed(15);
    nn::Transformer tr(nn::TransformerOptions(8, 2, 2, 2).dim_feedforward(16).dropout(0.0));
    show_params("tr_init.", *tr);
    show("tr_init_after", torch::rand({2}, f64));
    tr->to(f64);
    auto s2 = wave37({4, 2, 8}, 0.3).requires_grad_(true),
         t2 = wave37({5, 2, 8}).requires_grad_(true);
    auto out =
        tr->forward(s2, t2, torch::Tensor(), causal, torch::Tensor(), mem_kpm, tgt_kpm, mem_kpm);
    show("tr_out", out);
    backprop(out);
    show("tr_out_d_src", s2.grad());
    show("tr_out_d_tgt", t2.grad());
    show_param_grads("tr.", *tr);

    {  // F::multi_head_attention_forward from explicit weights
        auto q = wave37({3, 2, 4}).requires_grad_(true), kv = wave37({5, 2, 4}, 0.4);
        auto in_w = (wave37({12, 4}, 0.9) * 0.5).requires_grad_(true);
        auto opts =
            F::MultiheadAttentionForwardFuncOptions(
                4, 2, in_w, wave37({12}, 1.1) * 0.1, wave37({1, 1, 4}, 1.3), wave37({1, 1, 4}, 1.7),
                true, 0.0, wave37({4, 4}, 2.1) * 0.5, wave37({4}, 2.3) * 0.1)
                .key_padding_mask(torch::tensor({false, false, true, false, false, false, false,
                                                 false, false, true})
                                      .reshape({2, 5}))
                .attn_mask(wave37({3, 5}, 0.2));
        auto [mo, mw] = F::multi_head_attention_forward(q, kv, kv, opts);
        show("mhaf_out", mo);
        show("mhaf_weights", mw);
        (mo * wave37(mo.sizes(), 1.0)).sum().backward();
        show("mhaf_d_query", q.grad());
        show("mhaf_d_in_proj_weight", in_w.grad());
        auto sopts =
            F::MultiheadAttentionForwardFuncOptions(
                4, 2, wave37({12, 4}, 0.9) * 0.5, wave37({12}, 1.1) * 0.1, torch::Tensor(),
                torch::Tensor(), false, 0.0, wave37({4, 4}, 2.1) * 0.5, wave37({4}, 2.3) * 0.1)
                .static_k(wave37({4, 6, 2}, 0.6))
                .static_v(wave37({4, 6, 2}, 0.8))
                .average_attn_weights(false);
        auto [so, sw] = F::multi_head_attention_forward(q.detach(), kv, kv, sopts);
        show("mhaf_static_out", so);
        show("mhaf_static_weights", sw);
    }
    torch::manual_seed(16);  // training: every dropout and the attention's draw
    nn::Transformer trd(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).dropout(0.2));
    trd->to(f64);
    trd->train();
    torch::manual_seed(17);
    show("tr_train_out",
         trd->forward(wave37({4, 2, 8}, 0.3), wave37({5, 2, 8}), torch::Tensor(), causal));
    show("tr_train_after", torch::rand({3}, f64));
    std::cout << "print_transformer:\n"
              << nn::Transformer(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16))
              << "\nprint_end\n";
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

/// tests/test_state_dict.cpp: the names LibTorch gives parameters and buffers (PyTorch's
/// state_dict() keys are these, each module's own parameters then its own buffers, then its
/// children's, depth first).
struct StateNetImpl : torch::nn::Module {
    StateNetImpl() {
        fc1 = register_module("fc1", torch::nn::Linear(4, 3));
        bn = register_module("bn", torch::nn::BatchNorm1d(3));
        register_parameter("scale", torch::ones({1}));
        register_buffer("step", torch::zeros({1}));
        head = register_module("head",
                               torch::nn::Sequential(torch::nn::Linear(3, 2), torch::nn::ReLU(),
                                                     torch::nn::Linear(2, 1)));
    }
    torch::nn::Linear fc1{nullptr};
    torch::nn::BatchNorm1d bn{nullptr};
    torch::nn::Sequential head{nullptr};
};
TORCH_MODULE(StateNet);
static void state_names(const char* what, torch::nn::Module& m) {
    std::cout << what << " params:";
    for (auto& p : m.named_parameters())
        std::cout << " \"" << p.key() << "\"";
    std::cout << "\n" << what << " buffers:";
    for (auto& p : m.named_buffers())
        std::cout << " \"" << p.key() << "\"";
    std::cout << "\n";
}
static void state_dicts() {
    namespace nn = torch::nn;
    nn::Sequential seq(nn::Linear(2, 3), nn::ReLU(), nn::BatchNorm1d(3), nn::Linear(3, 1));
    state_names("Sequential", *seq);
    StateNet net;
    state_names("Net", *net);
    nn::BatchNorm2d bn(4);
    state_names("BatchNorm2d", *bn);
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
    state_names("MultiheadAttention", *mha);
    nn::MultiheadAttention mha_kv(
        nn::MultiheadAttentionOptions(8, 2).kdim(4).vdim(6).add_bias_kv(true));
    state_names("MultiheadAttention_kdim", *mha_kv);
    nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
    state_names("LSTM", *lstm);
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
    state_names("TransformerEncoderLayer", *layer);
}

int main(int argc, char** argv) {
    // one area only: libtorch_reference nn_distance
    if (argc > 1 && std::string(argv[1]) == "nn_distance")
        return nn_distance(), 0;
    if (argc > 1 && std::string(argv[1]) == "nn_dropout")
        return nn_dropout(), 0;
    if (argc > 1 && std::string(argv[1]) == "nn_containers")
        return nn_containers(), 0;
    if (argc > 1 && std::string(argv[1]) == "nn_embedding_bag")
        return nn_embedding_bag(), 0;
    if (argc > 1 && std::string(argv[1]) == "nn_transformer_stack")
        return nn_transformer_stack(), 0;
    if (argc > 1 && std::string(argv[1]) == "activations")
        return activations(), 0;
    if (argc > 1 && std::string(argv[1]) == "norm_more")
        return norm_more(), 0;
    if (argc > 1 && std::string(argv[1]) == "losses")
        return losses(), 0;
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
    modulo(o);
    factory_dtypes();
    ported_spellings(o);
    random_streams();
    dtypes();
    spatial();
    spatial_sampling();
    spatial_modules();
    rnn_modules();
    state_dicts();
    return 0;
}
