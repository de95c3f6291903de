#pragma once
/// The backend conformance suite (after ggml's test-backend-ops): every op of ops.hpp run on a
/// device and on the CPU from the same inputs, forward values and input gradients compared
/// with per-dtype tolerances, with contiguous and non-contiguous (transposed-storage) inputs.
/// Used by test_backend_opencl.cpp and test_backend_cuda.cpp.
///
/// Adding an op: one `{name, {input shapes}, [](const In& x) { return op(x[0], ...); }}` line in
/// cases(). Keep inputs in the op's domain inside the lambda (e.g. log(x*x + 0.1)); constants
/// such as indices are created on x[0].device().
#include <functional>
#include <string>
#include <vector>

#include "tapegrad/memory.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "test_util.hpp"

namespace conformance {

using In = std::vector<tg::Tensor>;
using tg::Tensor;

struct Case {
    std::string name;
    std::vector<tg::Shape> shapes;
    std::function<Tensor(const In&)> f;
    bool grad = true;  // compare input gradients too
};

inline Tensor longs(const std::vector<int64_t>& v, const Tensor& like) {
    return tg::tensor(v, tg::kInt64).to(like.device());
}

inline std::vector<Case> cases() {
    using namespace tg;
    const auto R = Reduction::Sum;
    return {
        // arithmetic, broadcasting
        {"add_bcast", {{3, 4}, {4}}, [](const In& x) { return x[0] + x[1]; }},
        {"sub_bcast", {{3, 1}, {1, 4}}, [](const In& x) { return x[0] - x[1]; }},
        {"mul_bcast", {{2, 3, 4}, {3, 1}}, [](const In& x) { return x[0] * x[1]; }},
        {"div", {{3, 4}, {3, 4}}, [](const In& x) { return x[0] / (x[1] * x[1] + 0.5); }},
        {"scalars",
         {{3, 4}},
         [](const In& x) { return ((x[0] + 2) - 3) * 1.5 / 4 + (2 - x[0]) * 3; }},
        {"rdiv", {{5}}, [](const In& x) { return rdiv(2.0, x[0] * x[0] + 1); }},
        {"neg", {{2, 3}}, [](const In& x) { return -x[0]; }},
        {"pow_scalar", {{3, 4}}, [](const In& x) { return pow(x[0] * x[0] + 0.5, 2.5); }},
        {"pow_tensor", {{3, 4}, {4}}, [](const In& x) { return pow(x[0] * x[0] + 0.5, x[1]); }},
        {"rpow", {{3, 4}}, [](const In& x) { return pow(2.0, x[0]); }},
        {"sqrt", {{3, 4}}, [](const In& x) { return sqrt(x[0] * x[0] + 0.1); }},
        {"exp", {{3, 4}}, [](const In& x) { return exp(x[0]); }},
        {"log", {{3, 4}}, [](const In& x) { return log(x[0] * x[0] + 0.1); }},
        {"abs", {{3, 4}}, [](const In& x) { return abs(x[0]); }},
        {"clamp",
         {{3, 4}},
         [](const In& x) {
             return clamp(x[0], -0.5, 0.5) + clamp_min(x[0], 0.2) * clamp_max(x[0], -0.1);
         }},
        {"maximum", {{3, 4}, {4}}, [](const In& x) { return maximum(x[0], x[1]); }},
        {"minimum", {{3, 1}, {3, 4}}, [](const In& x) { return minimum(x[0], x[1]); }},
        {"where_mask",
         {{3, 4}, {3, 4}},
         [](const In& x) { return where(gt(x[0], 0.0), x[0], x[1]); }},
        {"where_float",
         {{3, 4}, {4}},
         [](const In& x) { return where(gt(x[1], 0.0).to(x[0].dtype()), x[0], x[1] * 2); }},
        // activations
        {"tanh", {{4, 5}}, [](const In& x) { return tanh(x[0] * 2); }},
        {"sigmoid", {{4, 5}}, [](const In& x) { return sigmoid(x[0] * 3); }},
        {"relu", {{4, 5}}, [](const In& x) { return relu(x[0]); }},
        {"leaky_relu", {{4, 5}}, [](const In& x) { return leaky_relu(x[0], 0.1); }},
        {"gelu", {{4, 5}}, [](const In& x) { return gelu(x[0] * 2); }},
        {"softplus", {{4, 5}}, [](const In& x) { return softplus(x[0] * 3, 1, 2); }},
        {"softmax", {{4, 5}}, [](const In& x) { return softmax(x[0], 1); }},
        {"softmax_dim0", {{4, 5}}, [](const In& x) { return softmax(x[0], 0); }},
        {"log_softmax_3d", {{2, 3, 4}}, [](const In& x) { return log_softmax(x[0], 1); }},
        // linear algebra
        {"matmul", {{3, 5}, {5, 4}}, [](const In& x) { return matmul(x[0], x[1]); }},
        {"matmul_tt", {{5, 3}, {4, 5}}, [](const In& x) { return matmul(x[0].t(), x[1].t()); }},
        {"matvec", {{3, 5}, {5}}, [](const In& x) { return matmul(x[0], x[1]); }},
        {"vecmat", {{5}, {5, 3}}, [](const In& x) { return matmul(x[0], x[1]); }},
        {"dot", {{6}, {6}}, [](const In& x) { return matmul(x[0], x[1]); }},
        {"bmm", {{2, 3, 5}, {2, 5, 4}}, [](const In& x) { return matmul(x[0], x[1]); }},
        {"bmm_bcast", {{2, 3, 5}, {5, 4}}, [](const In& x) { return matmul(x[0], x[1]); }},
        {"linear", {{4, 5}, {3, 5}, {3}}, [](const In& x) { return linear(x[0], x[1], x[2]); }},
        {"linear_nobias", {{4, 5}, {3, 5}}, [](const In& x) { return linear(x[0], x[1]); }},
        {"transpose_permute",
         {{2, 3, 4}},
         [](const In& x) {
             return transpose(x[0], 0, 2) * 2 + permute(x[0], {2, 1, 0}) +
                    t(x[0].sum({0})).unsqueeze(2);
         }},
        // reductions
        {"sum", {{3, 4}}, [](const In& x) { return sum(x[0]); }},
        {"sum_dims",
         {{2, 3, 4}},
         [](const In& x) {
             return sum(x[0], {0, 2}) + sum(x[0], {1}, true).sum({2}).squeeze(1).sum({0});
         }},
        {"mean", {{3, 4}}, [](const In& x) { return mean(x[0]) + mean(x[0], {1}).sum(); }},
        {"max_min", {{3, 4}}, [](const In& x) { return max(x[0]) * 2 + min(x[0]); }},
        {"max_dim", {{3, 4}}, [](const In& x) { return max(x[0], 1) + min(x[0], 0, true).sum(); }},
        {"var",
         {{3, 4}},
         [](const In& x) { return var(x[0]) + var(x[0], {0}, false, true).sum(); }},
        {"sum_to",
         {{2, 3, 4}},
         [](const In& x) {
             return sum_to(x[0], {3, 1});
         }},
        {"sum_long", {{300, 70}}, [](const In& x) { return sum(x[0], {0}) + sum(x[0] * x[0]); }},
        // shape
        {"reshape_flatten",
         {{2, 3, 4}},
         [](const In& x) {
             return reshape(x[0], {6, 4}) * flatten(x[0], 1).reshape({6, 4});
         }},
        {"squeeze_unsqueeze",
         {{3, 1, 4}},
         [](const In& x) { return squeeze(x[0]).unsqueeze(0) + squeeze(x[0], 1); }},
        {"expand",
         {{3, 1}},
         [](const In& x) {
             return expand(x[0], {2, 3, 4});
         }},
        {"cat_stack",
         {{2, 3}, {4, 3}},
         [](const In& x) {
             return cat({x[0], x[1]}, 0) + stack({x[1], x[1]}, 0).sum({0}).narrow(0, 0, 4).sum();
         }},
        {"cat_dim1",
         {{3, 2}, {3, 4}},
         [](const In& x) {
             return cat({x[0], x[1]}, 1);
         }},
        {"narrow",
         {{5, 4}},
         [](const In& x) {
             return narrow(x[0], 0, 1, 3) * narrow(x[0], 1, 2, 2).narrow(0, 0, 3).sum();
         }},
        {"narrow_scatter",
         {{2, 4}},
         [](const In& x) {
             return narrow_scatter(x[0], {5, 4}, 0, 2);
         }},
        // indexing
        {"index_select",
         {{5, 3}},
         [](const In& x) {
             return index_select(x[0], 0, longs({4, 0, 4, 2}, x[0]));
         }},
        {"index_select_dim1",
         {{3, 5}},
         [](const In& x) {
             return index_select(x[0], 1, longs({1, 1, 3}, x[0]));
         }},
        {"gather",
         {{3, 4}},
         [](const In& x) {
             return gather(x[0], 1, longs({0, 3, 3, 1, 2, 2}, x[0]).reshape({3, 2}));
         }},
        {"index_add",
         {{3, 2}},
         [](const In& x) {
             return index_add(x[0], {4, 2}, 0, longs({3, 0, 3}, x[0]));
         }},
        {"scatter_add",
         {{2, 3}},
         [](const In& x) {
             return scatter_add(x[0], {2, 4}, 1, longs({0, 0, 3, 1, 2, 1}, x[0]).reshape({2, 3}));
         }},
        // comparisons and arg-reductions (no gradient)
        {"compare",
         {{3, 4}, {4}},
         [](const In& x) {
             return eq(x[0], x[0]) + ne(x[0], x[1]) * 2 + gt(x[0], x[1]) * 4 + lt(x[0], x[1]) * 8 +
                    ge(x[0], x[1]) * 16 + le(x[0], x[1]) * 32 + gt(x[0], 0.1) * 64 +
                    lt(x[0], 0.1) * 128;
         },
         false},
        {"argmax",
         {{4, 5}},
         [](const In& x) {
             return argmax(x[0], 1) + argmin(x[0], 0).sum() + argmax(x[0]) * 10 +
                    argmax(x[0], 0, true).sum();
         },
         false},
        // losses
        {"mse_l1",
         {{4, 3}, {4, 3}},
         [](const In& x) { return mse_loss(x[0], x[1]) + l1_loss(x[0], x[1], Reduction::Sum); }},
        {"nll",
         {{4, 3}},
         [](const In& x) {
             return nll_loss(log_softmax(x[0], 1), longs({2, 0, 1, 2}, x[0]));
         }},
        {"cross_entropy",
         {{4, 3}},
         [R](const In& x) {
             const Tensor l = longs({2, 0, 1, 1}, x[0]);
             return cross_entropy(x[0] * 3, l) + cross_entropy(x[0], l, R) +
                    cross_entropy(x[0], l, Reduction::None).sum();
         }},
        {"bce_logits",
         {{4, 3}, {4, 3}},
         [](const In& x) { return binary_cross_entropy_with_logits(x[0] * 4, sigmoid(x[1])); }},
        {"dropout",
         {{6, 5}},
         [](const In& x) {
             tg::manual_seed(11);
             return dropout(x[0], 0.3, true);
         }},
    };
}

/// Input k of a case: values from seed, on dev; transposed storage when noncontig and >= 2-D.
inline Tensor make_input(const tg::Shape& s, uint64_t seed, tg::Dtype dt, tg::Device dev,
                         bool noncontig, bool requires_grad) {
    tg::NoGradGuard g;
    Tensor base = tgtest::from_values(tgtest::random_values(tg::numel_of(s), seed), s, dt);
    Tensor x = noncontig && s.size() >= 2
                   ? base.transpose(-1, -2).contiguous().to(dev).transpose(-1, -2)
                   : base.to(dev);
    x = x.detach();
    if (requires_grad)
        x.requires_grad_(true);
    return x;
}

/// Runs one case on cpu and dev; compares values and input gradients.
inline void run_case(const Case& c, tg::Device dev, tg::Dtype dt, bool noncontig) {
    const double tol = dt == tg::kFloat32 ? 2e-4 : 1e-10;
    BOOST_TEST_CONTEXT(c.name << " " << dt << (noncontig ? " non-contiguous" : "") << " on "
                              << dev) {
        In xc, xd;
        for (size_t k = 0; k < c.shapes.size(); ++k) {
            xc.push_back(make_input(c.shapes[k], 17 + k, dt, tg::Device::cpu(), noncontig, c.grad));
            xd.push_back(make_input(c.shapes[k], 17 + k, dt, dev, noncontig, c.grad));
        }
        const Tensor yc = c.f(xc), yd = c.f(xd);
        BOOST_TEST_REQUIRE(yd.device() == dev);
        tgtest::check_close(yd.to(tg::Device::cpu()), yc, tol, tol);
        if (!c.grad || !yc.requires_grad())
            return;
        const Tensor dyc = make_input(yc.sizes(), 99, dt, tg::Device::cpu(), false, false);
        const Tensor dyd = make_input(yc.sizes(), 99, dt, dev, false, false);
        (yc * dyc).sum().backward();
        (yd * dyd).sum().backward();
        for (size_t k = 0; k < xc.size(); ++k) {
            BOOST_TEST_CONTEXT("gradient of input " << k) {
                BOOST_TEST_REQUIRE(xd[k].grad().defined() == xc[k].grad().defined());
                if (!xc[k].grad().defined())
                    continue;
                BOOST_TEST_REQUIRE(xd[k].grad().device() == dev);
                tgtest::check_close(xd[k].grad().to(tg::Device::cpu()), xc[k].grad(), tol, tol);
            }
        }
    }
}

/// Every case, both float dtypes, contiguous and not.
inline void run_all(tg::Device dev) {
    for (const Case& c : cases())
        for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64})
            for (bool nc : {false, true})
                run_case(c, dev, dt, nc);
}

/// A 2-layer MLP on a synthetic 3-class problem, trained `steps` full-batch Adam steps on dev;
/// returns the loss every 10 steps.
inline std::vector<double> train_mlp(tg::Device dev, int steps) {
    using namespace tg;
    manual_seed(3);
    Tensor x = randn({128, 8});
    Tensor w_true = randn({8, 3});
    Tensor y = argmax(matmul(x, w_true), 1);
    manual_seed(5);
    nn::Sequential model(nn::Linear(8, 32), nn::ReLU(), nn::Linear(32, 3));
    model->to(dev);
    x = x.to(dev);
    y = y.to(dev);
    optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
    std::vector<double> curve;
    for (int s = 0; s < steps; ++s) {
        Tensor loss = cross_entropy(model->forward(x), y);
        opt.zero_grad();
        loss.backward();
        opt.step();
        if (s % 10 == 0)
            curve.push_back(loss.item<double>());
    }
    return curve;
}

/// Bytes moved host<->device by `steps` training steps after a warm-up step, for an optimizer
/// made by make_opt; clip adds clip_grad_norm_. The loss is not read inside the region.
template <class MakeOpt>
tg::memory::Transfers step_transfers(tg::Device dev, MakeOpt make_opt, bool clip, int steps = 3) {
    using namespace tg;
    manual_seed(8);
    Tensor x = randn({32, 6}).to(dev);
    Tensor y = randint(0, 4, {32}, kInt64).to(dev);
    nn::Sequential model(nn::Linear(6, 16), nn::ReLU(), nn::Linear(16, 4));
    model->to(dev);
    auto opt = make_opt(model->parameters());
    Tensor loss;
    auto step = [&] {
        loss = cross_entropy(model->forward(x), y);
        opt.zero_grad();
        loss.backward();
        if (clip)
            nn::utils::clip_grad_norm_(model->parameters(), 0.5);
        opt.step();
    };
    step();
    memory::reset_transfers(dev);
    for (int s = 0; s < steps; ++s)
        step();
    const memory::Transfers t = memory::transfers(dev);
    BOOST_TEST(std::isfinite(loss.item<double>()));
    return t;
}

}  // namespace conformance
