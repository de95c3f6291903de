/// Gradient tests of every differentiable op in include/tapegrad/ops.hpp (forward values:
/// test_ops_values.cpp).
///
/// HOW TO ADD A TEST (one line): append a row to the table of the op's family below:
///
///     {"my_op_bcast", {U({3, 1}), P({4})}, F(tg::my_op(x[0], x[1]))},
///
/// - the name must be unique (failures are reported with it);
/// - each input spec gives a shape, a value range and a memory layout:
///     U  uniform in [-1, 1)        P  positive, in [0.5, 2)       NZ  |x| in [0.2, 1), random sign
///     Q  in [0.1, 0.9) (probabilities)
///     and the layout suffix T = transposed leaf (last two dims swapped in memory), S = strided
///     leaf (a narrow() of a wider buffer), e.g. UT({3, 4}) is a non-contiguous [3,4] leaf;
/// - F(expr) builds the function of `x` (a std::vector<tg::Tensor> of float64 leaves). Constants
///   (labels, targets, masks) are built before the table and captured by value; pass float
///   constants through like(c, x[0]) so the float32 cross-check can run the same function;
/// - the optional last field drops checks: kNoGG (no gradgradcheck: op not twice differentiable
///   at these inputs), kNoF32 (no float32-vs-float64 forward comparison, e.g. random masks).
///
/// Every row runs: gradcheck of the raw (possibly non-scalar) output, gradcheck of
/// sum(output * w) with a fixed random w (a non-uniform upstream gradient), gradgradcheck of the
/// latter, and float32 forward values and gradients against float64. Keep inputs away from kinks
/// and singularities (abs/relu at 0, clamp bounds, max ties, log/sqrt at <= 0): finite differences
/// use eps = 1e-6.
#define BOOST_TEST_MODULE test_ops_grad
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace {

using V = std::vector<tg::Tensor>;
using Dims = std::vector<int64_t>;  // tg::var(x, {1}) would pick var(x, bool unbiased)
using tg::Shape;
using tgtest::check_close;
using tgtest::make_const;
using tgtest::make_input;
using tgtest::values_of;

enum class Dist { Uniform, Positive, NonZero, Unit };
enum class Layout { Contiguous, Transposed, Strided };

struct In {
    Shape shape;
    Dist dist = Dist::Uniform;
    Layout layout = Layout::Contiguous;
};
In U(Shape s) {
    return {std::move(s), Dist::Uniform, Layout::Contiguous};
}
In P(Shape s) {
    return {std::move(s), Dist::Positive, Layout::Contiguous};
}
In NZ(Shape s) {
    return {std::move(s), Dist::NonZero, Layout::Contiguous};
}
In Q(Shape s) {
    return {std::move(s), Dist::Unit, Layout::Contiguous};
}
In UT(Shape s) {
    return {std::move(s), Dist::Uniform, Layout::Transposed};
}
In PT(Shape s) {
    return {std::move(s), Dist::Positive, Layout::Transposed};
}
In US(Shape s) {
    return {std::move(s), Dist::Uniform, Layout::Strided};
}

constexpr int kGG = 1, kF32 = 2;
constexpr int kAll = kGG | kF32;
constexpr int kNoGG = kF32;
constexpr int kNoF32 = kGG;

struct OpCase {
    std::string name;
    std::vector<In> inputs;
    std::function<tg::Tensor(const V&)> fn;
    int flags = kAll;
};

#define F(expr) [=](const V& x) -> tg::Tensor { return (expr); }

/// c converted to ref's dtype (float constants follow the dtype of the inputs).
tg::Tensor like(const tg::Tensor& c, const tg::Tensor& ref) {
    return c.to(ref.dtype());
}

std::vector<double> dist_values(const In& in, int64_t n, uint64_t seed) {
    switch (in.dist) {
        case Dist::Positive:
            return tgtest::random_values(n, seed, 0.5, 2.0);
        case Dist::Unit:
            return tgtest::random_values(n, seed, 0.1, 0.9);
        case Dist::NonZero: {
            auto mag = tgtest::random_values(n, seed, 0.2, 1.0);
            auto sgn = tgtest::random_values(n, seed + 7, -1.0, 1.0);
            for (size_t i = 0; i < mag.size(); ++i)
                mag[i] = sgn[i] < 0 ? -mag[i] : mag[i];
            return mag;
        }
        default:
            return tgtest::random_values(n, seed, -1.0, 1.0);
    }
}

/// A float64 leaf that requires grad, laid out in memory as `in.layout` says.
tg::Tensor make_leaf(const In& in, uint64_t seed) {
    Shape s = in.shape;
    tg::Tensor base;
    if (in.layout == Layout::Transposed && s.size() >= 2) {
        Shape mem = s;
        std::swap(mem[mem.size() - 1], mem[mem.size() - 2]);
        base = tgtest::from_values(dist_values(in, tg::numel_of(mem), seed), mem);
        base = base.transpose(-1, -2);
    } else if (in.layout != Layout::Contiguous && !s.empty()) {
        Shape mem = s;
        mem.back() *= 2;
        base = tgtest::from_values(dist_values(in, tg::numel_of(mem), seed), mem);
        base = base.narrow(-1, 1, s.back());
    } else {
        base = tgtest::from_values(dist_values(in, tg::numel_of(s), seed), s);
    }
    base = base.detach();
    base.requires_grad_(true);
    return base;
}

uint64_t name_seed(const std::string& name) {
    return std::hash<std::string>{}(name) % 100000;
}

/// Runs every check of one table row; failures name the row and carry the library's message.
void run_case(const OpCase& c) {
    BOOST_TEST_CONTEXT("op case '" << c.name << "'") {
        const uint64_t seed = name_seed(c.name);
        V inputs;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
            inputs.push_back(make_leaf(c.inputs[i], seed + i));
            if (c.inputs[i].layout != Layout::Contiguous && c.inputs[i].shape.size() >= 2) {
                BOOST_TEST(!inputs.back().is_contiguous(), "input " << i << " should be strided");
            }
        }
        tg::Tensor out;
        try {
            out = c.fn(inputs);
        } catch (const std::exception& e) {
            BOOST_ERROR("forward threw: " << e.what());
            return;
        }
        BOOST_TEST(out.requires_grad());
        BOOST_TEST(out.dtype() == tg::kFloat64);
        const tg::Tensor w = make_const(out.sizes(), seed + 1000, -1.0, 1.0);
        auto weighted = [&c, w](const V& x) { return (c.fn(x) * w).sum(); };

        try {
            BOOST_TEST(tg::gradcheck(c.fn, inputs), "gradcheck (raw output) returned false");
        } catch (const std::exception& e) {
            BOOST_ERROR("gradcheck (raw output) threw: " << e.what());
        }
        try {
            BOOST_TEST(tg::gradcheck(weighted, inputs), "gradcheck (weighted) returned false");
        } catch (const std::exception& e) {
            BOOST_ERROR("gradcheck (weighted) threw: " << e.what());
        }
        if (c.flags & kGG) {
            try {
                BOOST_TEST(tg::gradgradcheck(weighted, inputs), "gradgradcheck returned false");
            } catch (const std::exception& e) {
                BOOST_ERROR("gradgradcheck threw: " << e.what());
            }
        }
        if (c.flags & kF32) {  // float32 forward and backward against float64
            try {
                V x32;
                for (const auto& x : inputs) {
                    x32.push_back(x.detach().to(tg::kFloat32));
                    x32.back().requires_grad_(true);
                }
                tg::Tensor out32 = c.fn(x32);
                BOOST_TEST(out32.dtype() == tg::kFloat32);
                check_close(out32, out, 1e-4, 1e-4);
                auto g32 = tg::autograd::grad({(out32 * w.to(tg::kFloat32)).sum()}, x32, {}, false,
                                              false, true);
                auto g64 = tg::autograd::grad({weighted(inputs)}, inputs, {}, false, false, true);
                for (size_t i = 0; i < g64.size(); ++i) {
                    BOOST_TEST_CONTEXT("float32 gradient of input " << i) {
                        BOOST_TEST(g32[i].defined() == g64[i].defined());
                        if (!g32[i].defined() || !g64[i].defined())
                            continue;
                        BOOST_TEST(g32[i].dtype() == tg::kFloat32);
                        check_close(g32[i], g64[i], 1e-3, 1e-3);
                    }
                }
            } catch (const std::exception& e) {
                BOOST_ERROR("float32 forward/backward threw: " << e.what());
            }
        }
    }
}

void run_table(const std::vector<OpCase>& table) {
    BOOST_TEST_MESSAGE("running " << table.size() << " op cases");
    for (const auto& c : table)
        run_case(c);
}

tg::Tensor labels(std::vector<int64_t> v) {
    return tg::tensor(v);
}
tg::Tensor index_of(std::vector<int64_t> v, const Shape& s) {
    return tg::tensor(v).reshape(s);
}

}  // namespace

// ============================================================================ gradient tables

BOOST_AUTO_TEST_CASE(arithmetic) {
    const tg::Tensor cond = tg::gt(make_const({3, 4}, 5), 0.0);  // int64 0/1 mask
    std::vector<OpCase> table = {
        {"add", {U({3, 4}), U({3, 4})}, F(tg::add(x[0], x[1]))},
        {"add_bcast_col_row", {U({3, 1}), U({4})}, F(tg::add(x[0], x[1]))},
        {"add_bcast_3d", {U({2, 3, 4}), U({3, 1})}, F(x[0] + x[1])},
        {"add_transposed", {UT({3, 4}), U({4, 3})}, F(x[0] + x[1].t())},
        {"add_strided", {US({3, 4}), US({3, 4})}, F(x[0] + x[1])},
        {"add_expand", {U({3, 1})}, F(x[0].expand({3, 4}) + x[0].expand({3, 4}))},
        {"add_same_input", {U({5})}, F(x[0] + x[0])},
        {"sub", {U({3, 4}), U({4})}, F(tg::sub(x[0], x[1]))},
        {"sub_bcast_both", {U({1, 4}), U({3, 1})}, F(x[0] - x[1])},
        {"mul", {U({2, 3, 4}), U({3, 1})}, F(tg::mul(x[0], x[1]))},
        {"mul_permuted", {U({2, 3, 4}), U({4, 2, 3})}, F(x[0] * x[1].permute({1, 2, 0}))},
        {"mul_narrowed", {U({3, 6}), U({3, 4})}, F(x[0].narrow(1, 2, 4) * x[1])},
        {"mul_same_input", {U({5})}, F(x[0] * x[0])},
        {"mul_0d", {U({3, 4}), U({})}, F(x[0] * x[1])},
        {"div", {U({3, 4}), P({4})}, F(tg::div(x[0], x[1]))},
        {"div_bcast", {P({3, 1}), P({1, 4})}, F(x[0] / x[1])},
        {"div_transposed", {U({3, 4}), PT({3, 4})}, F(x[0] / x[1])},
        {"add_scalar", {U({3, 4})}, F(tg::add(x[0], 2.5))},
        {"add_scalar_op", {U({3, 4})}, F(x[0] + 2.5)},
        {"scalar_add_op", {U({3, 4})}, F(2.5 + x[0])},
        {"sub_scalar_op", {U({3, 4})}, F(x[0] - 1.5)},
        {"scalar_sub_op", {U({3, 4})}, F(1.5 - x[0])},
        {"mul_scalar", {U({3, 4})}, F(tg::mul(x[0], -3.0))},
        {"scalar_mul_op", {U({3, 4})}, F(2.0 * x[0])},
        {"div_scalar_op", {U({3, 4})}, F(x[0] / 4.0)},
        {"rdiv", {P({3, 4})}, F(tg::rdiv(2.0, x[0]))},
        {"scalar_div_op", {P({3, 4})}, F(2.0 / x[0])},
        {"neg", {U({3, 4})}, F(tg::neg(x[0]))},
        {"neg_op", {UT({3, 4})}, F(-x[0])},
        {"pow_2", {U({3, 4})}, F(tg::pow(x[0], 2.0))},
        {"pow_3", {U({3, 4})}, F(x[0].pow(3.0))},
        {"pow_1_5", {P({3, 4})}, F(tg::pow(x[0], 1.5))},
        {"pow_neg_half", {P({3, 4})}, F(tg::pow(x[0], -0.5))},
        {"pow_tensor", {P({3, 4}), U({4})}, F(tg::pow(x[0], x[1]))},
        {"pow_tensor_bcast", {P({3, 1}), U({3, 4})}, F(tg::pow(x[0], x[1]))},
        {"pow_scalar_base", {U({3, 4})}, F(tg::pow(2.0, x[0]))},
        {"sqrt", {P({3, 4})}, F(tg::sqrt(x[0]))},
        {"sqrt_method", {PT({3, 4})}, F(x[0].sqrt())},
        {"exp", {U({3, 4})}, F(tg::exp(x[0]))},
        {"exp_method", {US({2, 3})}, F(x[0].exp())},
        {"log", {P({3, 4})}, F(tg::log(x[0]))},
        {"log_method", {PT({3, 4})}, F(x[0].log())},
        {"abs", {NZ({3, 4})}, F(tg::abs(x[0]))},
        {"abs_method", {NZ({5})}, F(x[0].abs())},
        {"clamp", {U({4, 5})}, F(tg::clamp(x[0], -0.5, 0.5))},
        {"clamp_min", {U({4, 5})}, F(tg::clamp_min(x[0], -0.3))},
        {"clamp_max", {U({4, 5})}, F(tg::clamp_max(x[0], 0.3))},
        {"maximum", {U({3, 4}), U({4})}, F(tg::maximum(x[0], x[1]))},
        {"maximum_same_shape", {U({3, 4}), UT({3, 4})}, F(tg::maximum(x[0], x[1]))},
        {"minimum", {U({3, 4}), U({3, 1})}, F(tg::minimum(x[0], x[1]))},
        {"where", {U({3, 4}), U({3, 4})}, F(tg::where(cond, x[0], x[1]))},
        {"where_bcast", {U({3, 4}), U({4})}, F(tg::where(cond, x[0], x[1]))},
        {"chain_rule_mix",
         {U({3, 4}), P({4})},
         F(tg::exp(x[0]) * x[1] / (x[1] + 1.0) - x[0] * x[0])},
    };
    run_table(table);
}

BOOST_AUTO_TEST_CASE(activations) {
    std::vector<OpCase> table = {
        {"tanh", {U({3, 4})}, F(tg::tanh(x[0] * 2.0))},
        {"tanh_method", {UT({3, 4})}, F(x[0].tanh())},
        {"sigmoid", {U({3, 4})}, F(tg::sigmoid(x[0] * 3.0))},
        {"sigmoid_method", {US({3, 4})}, F(x[0].sigmoid())},
        {"relu", {NZ({3, 4})}, F(tg::relu(x[0]))},
        {"relu_method", {NZ({2, 3, 2})}, F(x[0].relu())},
        {"leaky_relu", {NZ({3, 4})}, F(tg::leaky_relu(x[0], 0.1))},
        {"leaky_relu_default", {NZ({3, 4})}, F(tg::leaky_relu(x[0]))},
        {"gelu", {U({3, 4})}, F(tg::gelu(x[0] * 3.0))},
        {"softplus", {U({3, 4})}, F(tg::softplus(x[0] * 3.0))},
        {"softplus_beta", {U({3, 4})}, F(tg::softplus(x[0], 2.0, 20.0))},
        {"softplus_linear_region", {U({3, 4})}, F(tg::softplus(x[0] + 25.0))},
        {"softplus_very_negative", {U({3, 4})}, F(tg::softplus(x[0] - 30.0) * 1e12)},
        {"softmax_dim1", {U({3, 5})}, F(tg::softmax(x[0] * 2.0, 1))},
        {"softmax_dim0", {U({3, 5})}, F(tg::softmax(x[0], 0))},
        {"softmax_dim_neg_3d", {U({2, 3, 4})}, F(tg::softmax(x[0], -1))},
        {"softmax_dim_mid_3d", {U({2, 3, 4})}, F(tg::softmax(x[0], 1))},
        {"softmax_transposed", {UT({3, 5})}, F(tg::softmax(x[0], 1))},
        {"softmax_1d", {U({6})}, F(tg::softmax(x[0], 0))},
        {"softmax_large_logits", {U({2, 4})}, F(tg::softmax(x[0] + 500.0, 1))},
        {"log_softmax_dim1", {U({3, 5})}, F(tg::log_softmax(x[0] * 2.0, 1))},
        {"log_softmax_dim0", {U({3, 5})}, F(tg::log_softmax(x[0], 0))},
        {"log_softmax_3d", {U({2, 3, 4})}, F(tg::log_softmax(x[0], 1))},
        {"log_softmax_strided", {US({3, 4})}, F(tg::log_softmax(x[0], -1))},
        {"log_softmax_large_logits", {U({2, 4})}, F(tg::log_softmax(x[0] * 3.0 + 1000.0, 1))},
        {"dropout_train",
         {U({4, 5})},
         [](const V& x) {
             tg::manual_seed(3);  // the same mask on every call of the function
             return tg::dropout(x[0], 0.3, true);
         },
         kNoF32},
        {"dropout_eval", {U({4, 5})}, F(tg::dropout(x[0], 0.3, false))},
    };
    run_table(table);
}

BOOST_AUTO_TEST_CASE(linear_algebra) {
    std::vector<OpCase> table = {
        {"matmul_dot_1d", {U({5}), U({5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_2d", {U({3, 4}), U({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_method", {U({3, 4}), U({4, 2})}, F(x[0].matmul(x[1]))},
        {"matmul_matrix_vector", {U({3, 4}), U({4})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_batched", {U({2, 3, 4}), U({2, 4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_bcast_rhs", {U({2, 3, 4}), U({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_3d_bcast_batch1", {U({1, 3, 4}), U({2, 4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_at_b", {U({4, 3}), U({4, 5})}, F(tg::matmul(x[0].t(), x[1]))},
        {"matmul_a_bt", {U({3, 4}), U({5, 4})}, F(tg::matmul(x[0], x[1].t()))},
        {"matmul_at_bt", {U({4, 3}), U({5, 4})}, F(tg::matmul(tg::t(x[0]), tg::t(x[1])))},
        {"matmul_transposed_leaves", {UT({3, 4}), UT({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_strided_leaves", {US({3, 4}), US({4, 5})}, F(tg::matmul(x[0], x[1]))},
        {"matmul_narrowed", {U({3, 6}), U({4, 5})}, F(tg::matmul(x[0].narrow(1, 1, 4), x[1]))},
        {"matmul_3d_permuted",
         {U({3, 2, 4}), U({2, 5, 4})},
         F(tg::matmul(x[0].permute({1, 0, 2}), x[1].transpose(1, 2)))},
        {"matmul_mv_transposed", {U({4, 3}), U({4})}, F(tg::matmul(x[0].t(), x[1]))},
        {"matmul_same_input", {U({3, 3})}, F(tg::matmul(x[0], x[0]))},
        {"linear_bias", {U({6, 4}), U({3, 4}), U({3})}, F(tg::linear(x[0], x[1], x[2]))},
        {"linear_no_bias", {U({6, 4}), U({3, 4})}, F(tg::linear(x[0], x[1]))},
        {"linear_transposed_input",
         {UT({6, 4}), U({3, 4}), U({3})},
         F(tg::linear(x[0], x[1], x[2]))},
        {"linear_transposed_weight",
         {U({6, 4}), U({4, 3}), U({3})},
         F(tg::linear(x[0], x[1].t(), x[2]))},
        {"linear_strided", {US({2, 4}), US({3, 4}), U({3})}, F(tg::linear(x[0], x[1], x[2]))},
        {"linear_batch1", {U({1, 4}), U({2, 4}), U({2})}, F(tg::linear(x[0], x[1], x[2]))},
        {"mlp_two_layers",
         {U({5, 4}), U({6, 4}), U({6}), U({3, 6}), U({3})},
         F(tg::linear(tg::tanh(tg::linear(x[0], x[1], x[2])), x[3], x[4]))},
    };
    run_table(table);
}

BOOST_AUTO_TEST_CASE(reductions) {
    std::vector<OpCase> table = {
        {"sum_all", {U({3, 4})}, F(tg::sum(x[0]))},
        {"sum_method", {UT({3, 4})}, F(x[0].sum())},
        {"sum_dim0", {U({3, 4})}, F(tg::sum(x[0], {0}))},
        {"sum_dim_neg_keepdim", {U({3, 4})}, F(tg::sum(x[0], {-1}, true))},
        {"sum_dims_3d", {U({2, 3, 4})}, F(tg::sum(x[0], {0, 2}))},
        {"sum_dims_3d_keepdim", {U({2, 3, 4})}, F(x[0].sum({0, 2}, true))},
        {"sum_transposed", {UT({3, 4})}, F(tg::sum(x[0], {1}))},
        {"sum_strided", {US({3, 4})}, F(tg::sum(x[0], {0}))},
        {"sum_expanded", {U({3, 1})}, F(tg::sum(x[0].expand({3, 5}), {1}))},
        {"mean_all", {U({3, 4})}, F(tg::mean(x[0]))},
        {"mean_method", {U({3, 4})}, F(x[0].mean())},
        {"mean_dim", {U({3, 4})}, F(tg::mean(x[0], {1}))},
        {"mean_dims_keepdim", {U({2, 3, 4})}, F(x[0].mean({0, -1}, true))},
        {"max_all", {U({3, 4})}, F(tg::max(x[0]))},
        {"max_method", {UT({3, 4})}, F(x[0].max())},
        {"max_dim1", {U({3, 4})}, F(tg::max(x[0], 1))},
        {"max_dim0_keepdim", {U({3, 4})}, F(tg::max(x[0], 0, true))},
        {"max_dim_3d", {U({2, 3, 4})}, F(tg::max(x[0], -2))},
        {"min_all", {U({3, 4})}, F(tg::min(x[0]))},
        {"min_method", {US({3, 4})}, F(x[0].min())},
        {"min_dim", {U({3, 4})}, F(tg::min(x[0], 0))},
        {"min_dim_keepdim", {U({2, 3, 4})}, F(tg::min(x[0], 2, true))},
        {"var_all_unbiased", {U({3, 4})}, F(tg::var(x[0]))},
        {"var_all_biased", {U({3, 4})}, F(tg::var(x[0], false))},
        {"var_dim", {U({3, 4})}, F(tg::var(x[0], Dims{1}))},
        {"var_dims_keepdim", {U({2, 3, 4})}, F(tg::var(x[0], {0, 2}, false, true))},
        {"var_transposed", {UT({4, 3})}, F(tg::var(x[0], Dims{0}))},
        {"sum_to_row", {U({3, 4})}, F(tg::sum_to(x[0], {1, 4}))},
        {"sum_to_drop_dim", {U({2, 3, 4})}, F(tg::sum_to(x[0], {4}))},
        {"sum_to_col", {U({2, 3, 4})}, F(tg::sum_to(x[0], {3, 1}))},
        {"sum_to_same", {U({3, 4})}, F(tg::sum_to(x[0], {3, 4}))},
        {"norm_composed", {U({3, 4})}, F(tg::sqrt(tg::sum(x[0] * x[0]) + 1e-3))},
    };
    run_table(table);
}

BOOST_AUTO_TEST_CASE(shape_ops) {
    const tg::Tensor idx_rows = labels({2, 0, 2});  // repeated index: gradients add
    const tg::Tensor idx_gather = index_of({3, 0, 1, 1, 2, 2}, {3, 2});
    const tg::Tensor idx_gather0 = index_of({2, 0, 1, 0}, {1, 4});
    const tg::Tensor idx_add = labels({1, 1, 0});
    std::vector<OpCase> table = {
        {"reshape", {U({3, 4})}, F(tg::reshape(x[0], {2, 6}))},
        {"reshape_method_infer", {U({3, 4})}, F(x[0].reshape({4, -1}))},
        {"reshape_transposed_copy", {UT({3, 4})}, F(x[0].reshape({12}))},
        {"view", {U({3, 4})}, F(tg::view(x[0], {2, 6}))},
        {"view_method", {U({2, 3, 4})}, F(x[0].view({6, 4}))},
        {"flatten_all", {U({2, 3, 4})}, F(tg::flatten(x[0]))},
        {"flatten_from1", {U({2, 3, 4})}, F(x[0].flatten(1))},
        {"flatten_transposed", {UT({3, 4})}, F(tg::flatten(x[0]))},
        {"squeeze_all", {U({3, 1, 4})}, F(tg::squeeze(x[0]))},
        {"squeeze_dim", {U({3, 1, 4})}, F(tg::squeeze(x[0], 1))},
        {"squeeze_method", {U({1, 4})}, F(x[0].squeeze(0))},
        {"unsqueeze", {U({3, 4})}, F(tg::unsqueeze(x[0], 1))},
        {"unsqueeze_neg", {U({3, 4})}, F(x[0].unsqueeze(-1))},
        {"expand", {U({3, 1})}, F(tg::expand(x[0], {2, 3, 4}))},
        {"expand_method", {U({1, 4})}, F(x[0].expand({3, 4}) * 2.0)},
        {"cat_dim0", {U({2, 3}), U({4, 3})}, F(tg::cat({x[0], x[1]}, 0))},
        {"cat_dim1", {U({2, 3}), U({2, 1}), U({2, 2})}, F(tg::cat({x[0], x[1], x[2]}, 1))},
        {"cat_neg_dim_transposed", {UT({3, 2}), U({3, 4})}, F(tg::cat({x[0], x[1]}, -1))},
        {"cat_same_input", {U({2, 3})}, F(tg::cat({x[0], x[0]}, 0))},
        {"stack_dim0", {U({2, 3}), U({2, 3})}, F(tg::stack({x[0], x[1]}, 0))},
        {"stack_dim_last", {U({2, 3}), UT({2, 3}), U({2, 3})}, F(tg::stack({x[0], x[1], x[2]}, 2))},
        {"narrow", {U({4, 5})}, F(tg::narrow(x[0], 1, 1, 3))},
        {"narrow_method_dim0", {U({4, 5})}, F(x[0].narrow(0, 2, 2))},
        {"narrow_of_narrow", {U({4, 6})}, F(x[0].narrow(1, 1, 4).narrow(0, 1, 2))},
        {"narrow_transposed", {UT({4, 5})}, F(tg::narrow(x[0], 0, 1, 2))},
        {"index_select_dim0", {U({4, 3})}, F(tg::index_select(x[0], 0, idx_rows))},
        {"index_select_dim1", {U({3, 4})}, F(tg::index_select(x[0], 1, idx_rows))},
        {"index_select_transposed", {UT({4, 3})}, F(tg::index_select(x[0], 0, idx_rows))},
        {"gather_dim1", {U({3, 4})}, F(tg::gather(x[0], 1, idx_gather))},
        {"gather_dim0", {U({3, 4})}, F(tg::gather(x[0], 0, idx_gather0))},
        {"gather_transposed", {UT({3, 4})}, F(tg::gather(x[0], 1, idx_gather))},
        {"narrow_scatter", {U({2, 3})}, F(tg::narrow_scatter(x[0], {5, 3}, 0, 2))},
        {"narrow_scatter_dim1", {U({2, 3})}, F(tg::narrow_scatter(x[0], {2, 6}, 1, 1))},
        {"index_add", {U({3, 4})}, F(tg::index_add(x[0], {2, 4}, 0, idx_add))},
        {"scatter_add", {U({3, 2})}, F(tg::scatter_add(x[0], {3, 4}, 1, idx_gather))},
        {"t", {U({3, 4})}, F(tg::t(x[0]))},
        {"t_method_then_mul", {U({3, 4}), U({4, 3})}, F(x[0].t() * x[1])},
        {"transpose", {U({2, 3, 4})}, F(tg::transpose(x[0], 0, 2))},
        {"transpose_method_neg", {U({2, 3, 4})}, F(x[0].transpose(-1, -2))},
        {"permute", {U({2, 3, 4})}, F(tg::permute(x[0], {2, 0, 1}))},
        {"permute_method", {U({2, 3, 4})}, F(x[0].permute({1, 2, 0}) * 3.0)},
        {"contiguous", {UT({3, 4})}, F(x[0].contiguous())},
        {"clone", {U({3, 4})}, F(x[0].clone())},
        {"to_float64", {U({3, 4})}, F(x[0].to(tg::kFloat64) * 2.0), kNoF32},  // output always f64
        {"views_chain",
         {U({2, 3, 4})},
         F(x[0].permute({2, 0, 1}).narrow(0, 1, 2).reshape({2, 6}).t())},
    };
    run_table(table);
}

BOOST_AUTO_TEST_CASE(losses) {
    const tg::Tensor target = make_const({4, 3}, 77);
    const tg::Tensor prob = make_const({4, 3}, 78, 0.1, 0.9);
    const tg::Tensor hard = tg::gt(make_const({4, 3}, 79), 0.0).to(tg::kFloat64);
    const tg::Tensor lab = labels({0, 2, 1, 2});
    using R = tg::Reduction;
    std::vector<OpCase> table = {
        {"mse_mean", {U({4, 3})}, F(tg::mse_loss(x[0], like(target, x[0])))},
        {"mse_sum", {U({4, 3})}, F(tg::mse_loss(x[0], like(target, x[0]), R::Sum))},
        {"mse_none", {U({4, 3})}, F(tg::mse_loss(x[0], like(target, x[0]), R::None))},
        {"mse_both_inputs", {U({4, 3}), UT({4, 3})}, F(tg::mse_loss(x[0], x[1]))},
        {"l1_mean", {U({4, 3})}, F(tg::l1_loss(x[0], like(target, x[0])))},
        {"l1_sum", {U({4, 3})}, F(tg::l1_loss(x[0], like(target, x[0]), R::Sum))},
        {"l1_none", {U({4, 3})}, F(tg::l1_loss(x[0], like(target, x[0]), R::None))},
        {"nll_mean", {U({4, 3})}, F(tg::nll_loss(x[0], lab))},
        {"nll_sum", {U({4, 3})}, F(tg::nll_loss(x[0], lab, R::Sum))},
        {"nll_none", {U({4, 3})}, F(tg::nll_loss(x[0], lab, R::None))},
        {"nll_of_log_softmax", {U({4, 3})}, F(tg::nll_loss(tg::log_softmax(x[0], 1), lab))},
        {"cross_entropy_mean", {U({4, 3})}, F(tg::cross_entropy(x[0] * 2.0, lab))},
        {"cross_entropy_sum", {U({4, 3})}, F(tg::cross_entropy(x[0], lab, R::Sum))},
        {"cross_entropy_none", {U({4, 3})}, F(tg::cross_entropy(x[0], lab, R::None))},
        {"cross_entropy_transposed", {UT({4, 3})}, F(tg::cross_entropy(x[0], lab))},
        {"cross_entropy_large_logits", {U({4, 3})}, F(tg::cross_entropy(x[0] + 800.0, lab))},
        {"cross_entropy_after_linear",
         {U({4, 5}), U({3, 5}), U({3})},
         F(tg::cross_entropy(tg::linear(x[0], x[1], x[2]), lab))},
        {"bce_logits_mean",
         {U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0] * 3.0, like(prob, x[0])))},
        {"bce_logits_sum",
         {U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0], like(hard, x[0]), R::Sum))},
        {"bce_logits_none",
         {U({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0], like(prob, x[0]), R::None))},
        {"bce_logits_large",
         {NZ({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0] * 40.0, like(hard, x[0])))},
        {"bce_logits_strided",
         {US({4, 3})},
         F(tg::binary_cross_entropy_with_logits(x[0], like(prob, x[0])))},
    };
    run_table(table);
}

// ============================================================================ gradcheck itself

BOOST_AUTO_TEST_CASE(gradcheck_detects_wrong_gradient) {
    // A hook that triples the gradient makes backward disagree with finite differences.
    tg::Tensor x = make_input({3}, 1);
    auto bad = [](const V& v) {
        tg::Tensor y = v[0] * 2.0;
        y.register_hook([](const tg::Tensor& g) { return g * 3.0; });
        return y.sum();
    };
    bool detected = false;
    try {
        detected = !tg::gradcheck(bad, {x});
    } catch (const tg::autograd_error&) {
        detected = true;
    }
    BOOST_TEST(detected);
}

BOOST_AUTO_TEST_CASE(gradgradcheck_on_hessian_nontrivial_function) {
    tg::Tensor x = make_input({4}, 2);
    tg::Tensor y = make_input({4}, 3);
    auto fn = [](const V& v) { return tg::sum(tg::exp(v[0] * v[1]) * tg::tanh(v[0])); };
    BOOST_TEST(tg::gradgradcheck(fn, {x, y}));
}
