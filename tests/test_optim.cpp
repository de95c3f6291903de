// tg::optim against hand-computed steps of the published update rules; parameter groups,
// schedulers, clip_grad_norm_, and small networks that must learn (XOR, two moons).
#define BOOST_TEST_MODULE optim
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/threads.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::values_of;

namespace {

// Every reference run starts from p = [1, -2] (float64) and applies these gradients in turn.
const std::vector<std::vector<double>> kGrads = {{0.5, -1.0}, {0.1, 0.3}, {-0.2, 0.4}};
using Steps = std::vector<std::vector<double>>;  // expected p after each step

tg::Tensor start_param() {
    tg::Tensor p = tg::tensor({1.0, -2.0}, tg::kFloat64);
    p.requires_grad_(true);
    return p;
}

/// Sets p.grad() to exactly g by backpropagating sum(p * g).
void set_grad(const tg::Tensor& p, const std::vector<double>& g) {
    (p * tg::tensor(g, tg::kFloat64)).sum().backward();
}

void run_reference(tg::optim::Optimizer& opt, const tg::Tensor& p, const Steps& expected) {
    for (size_t s = 0; s < kGrads.size(); ++s) {
        opt.zero_grad();
        set_grad(p, kGrads[s]);
        opt.step();
        BOOST_TEST_CONTEXT("step " << s + 1) {
            check_close(p, expected[s], 1e-14, 1e-13);
        }
    }
}

}  // namespace

// SGD: p -= lr·g.  Step 1: 1 - 0.1·0.5 = 0.95, -2 - 0.1·(-1) = -1.9; then 0.95 - 0.01, ...
BOOST_AUTO_TEST_CASE(sgd_plain) {
    tg::Tensor p = start_param();
    tg::optim::SGD opt({p}, tg::optim::SGDOptions(0.1));
    run_reference(opt, p, {{0.95, -1.9}, {0.94, -1.93}, {0.96, -1.97}});
}

// d = g + 0.01·p; b = d (step 1), b = 0.9·b + 0.9·d; p -= 0.1·b.
// Step 1: d = [0.51, -1.02], p = [0.949, -1.898].
BOOST_AUTO_TEST_CASE(sgd_momentum_dampening_weight_decay) {
    tg::Tensor p = start_param();
    tg::optim::SGD opt({p},
                       tg::optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(0.01));
    run_reference(
        opt, p,
        {{0.949, -1.898}, {0.8932458999999999, -1.8314918}, {0.8602632886899999, -1.80598607738}});
}

// Nesterov: d = g + 0.1·p; b = 0.9·b + d; p -= 0.1·(d + 0.9·b).
// Step 1: d = [0.6, -1.2], b = d, p = 1 - 0.1·(0.6 + 0.54) = 0.886.
BOOST_AUTO_TEST_CASE(sgd_nesterov_weight_decay) {
    tg::Tensor p = start_param();
    tg::optim::SGD opt({p},
                       tg::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.1));
    run_reference(opt, p, {{0.886, -1.772}, {0.801566, -1.698132}, {0.765319646, -1.664334292}});
    // the update must not write into .grad
    check_close(p.grad(), kGrads[2], 0, 0);
}

// Adam (β = 0.9, 0.999, eps 1e-8). Step 1: m = 0.05, v = 0.00025, m̂ = 0.5, v̂ = 0.25,
// p = 1 - 0.1·0.5/(0.5 + 1e-8) = 0.900000002.
BOOST_AUTO_TEST_CASE(adam_default) {
    tg::Tensor p = start_param();
    tg::optim::Adam opt({p}, tg::optim::AdamOptions(0.1));
    run_reference(opt, p,
                  {{0.900000002, -1.900000001},
                   {0.8196959063846517, -1.8572151424292265},
                   {0.7852605318354889, -1.8492092384765841}});
    auto& st = static_cast<tg::optim::AdamParamState&>(*opt.state().at(p.impl()));
    BOOST_TEST(st.step() == 3);
    BOOST_TEST(!st.max_exp_avg_sq.defined());
}

// Adam with L2 weight decay 0.1, β = (0.8, 0.9), amsgrad: g += 0.1·p; v̂max = max(v̂max, v).
// v shrinks at step 3 for element 0 (and at step 2 for element 1), where amsgrad differs.
BOOST_AUTO_TEST_CASE(adam_weight_decay_amsgrad) {
    tg::Tensor p = start_param();
    tg::optim::Adam opt(
        {p}, tg::optim::AdamOptions(0.1).betas({0.8, 0.9}).weight_decay(0.1).amsgrad(true));
    run_reference(opt, p,
                  {{0.9000000016666667, -1.9000000008333333},
                   {0.814499723535862, -1.8457572170099905},
                   {0.7675657111912095, -1.8196374031667482}});
    // without amsgrad the same run ends at [0.766065947341422, -1.8147713396002054]
}

// AdamW: p *= 1 - lr·wd (wd = 0.1), then the Adam step on the raw gradient.
// Step 1: p = 0.99 - 0.1·0.5/(0.5 + 1e-8) = 0.890000002.
BOOST_AUTO_TEST_CASE(adamw) {
    tg::Tensor p = start_param();
    tg::optim::AdamW opt({p}, tg::optim::AdamWOptions(0.1).weight_decay(0.1));
    run_reference(opt, p,
                  {{0.890000002, -1.880000001},
                   {0.8007959063646517, -1.8184151424192265},
                   {0.7583525727518424, -1.792225087042392}});
    BOOST_TEST(tg::optim::AdamWOptions().weight_decay() == 1e-2);
}

BOOST_AUTO_TEST_CASE(adamw_amsgrad) {
    tg::Tensor p = start_param();
    tg::optim::AdamW opt(
        {p}, tg::optim::AdamWOptions(0.1).betas({0.8, 0.9}).weight_decay(0.1).amsgrad(true));
    run_reference(opt, p,
                  {{0.890000002, -1.880000001},
                   {0.8045219554683876, -1.822910977206416},
                   {0.7695703228085435, -1.8046818674343519}});
}

namespace {

/// Parameters of these sizes (tails, one above the kernels' threading threshold), with the same
/// values twice: contiguous (the fused CPU step, Note [Multi-tensor optimizer steps]) and every
/// second element of a buffer (strided: the composed tensor ops).
struct TwinParams {
    std::vector<tg::Tensor> fused, composed;
    TwinParams(tg::Dtype dtype, uint64_t seed) {
        for (int64_t n : {2, 5, 33, 70000}) {
            const std::vector<double> v = tgtest::random_values(n, seed + uint64_t(n), -2, 2);
            std::vector<double> wide(size_t(2 * n), 7.0);
            for (int64_t i = 0; i < n; ++i)
                wide[size_t(2 * i)] = v[size_t(i)];
            fused.push_back(tgtest::from_values(v, {n}, dtype).requires_grad_(true));
            tg::Tensor strided = tgtest::from_values(wide, {n, 2}, dtype).select(1, 0).detach();
            composed.push_back(strided.requires_grad_(true));
        }
    }
    /// The same gradients for both, a different draw each step; step 3 shrinks them (v drops).
    void set_grads(int step) {
        for (size_t i = 0; i < fused.size(); ++i) {
            const int64_t n = fused[i].numel();
            std::vector<double> g = tgtest::random_values(n, uint64_t(100 * step) + i, -1, 1);
            for (double& e : g)
                e *= step == 3 ? 1e-3 : 1.0;
            fused[i].set_grad(tgtest::from_values(g, {n}, fused[i].dtype()));
            composed[i].set_grad(tgtest::from_values(g, {n}, fused[i].dtype()));
        }
    }
    void check_identical(int step) const {
        for (size_t i = 0; i < fused.size(); ++i) {
            BOOST_TEST_CONTEXT("step " << step << ", parameter " << i) {
                BOOST_TEST(fused[i].is_contiguous());
                BOOST_TEST(!composed[i].is_contiguous());
                BOOST_TEST(values_of(fused[i]) == values_of(composed[i]));
            }
        }
    }
};

template <class Opt, class Options>
void check_fused_matches_composed(const Options& options) {
    const int threads = tg::get_num_threads();
    for (int t : {1, 2}) {
        tg::set_num_threads(t);
        for (tg::Dtype dtype : {tg::kFloat32, tg::kFloat64}) {
            BOOST_TEST_CONTEXT(t << " threads, " << tg::dtype_name(dtype)) {
                TwinParams w(dtype, 11);
                Opt fused(w.fused, options), composed(w.composed, options);
                for (int step = 1; step <= 4; ++step) {
                    w.set_grads(step);
                    fused.step();
                    composed.step();
                    w.check_identical(step);
                }
            }
        }
    }
    tg::set_num_threads(threads);
}

}  // namespace

// The fused multi-tensor steps on the CPU give the composed tensor ops' bits, every option.
BOOST_AUTO_TEST_CASE(fused_steps_are_the_composed_steps_bits) {
    using namespace tg::optim;
    check_fused_matches_composed<SGD>(SGDOptions(0.1));
    check_fused_matches_composed<SGD>(
        SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(0.01));
    check_fused_matches_composed<SGD>(
        SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.1));
    check_fused_matches_composed<Adam>(AdamOptions(0.1));
    check_fused_matches_composed<Adam>(
        AdamOptions(0.01).betas({0.8, 0.9}).weight_decay(0.1).amsgrad(true));
    check_fused_matches_composed<AdamW>(AdamWOptions(0.01).weight_decay(0.1));
    check_fused_matches_composed<AdamW>(
        AdamWOptions(0.01).betas({0.8, 0.9}).weight_decay(0.1).amsgrad(true));
}

BOOST_AUTO_TEST_CASE(zero_grad_and_parameters_without_grad) {
    tg::Tensor a = start_param(), b = start_param();
    tg::optim::SGD opt({a, b}, tg::optim::SGDOptions(0.1).momentum(0.5));
    set_grad(a, {1.0, 1.0});
    opt.step();  // b has no gradient: untouched, no state
    check_close(a, {0.9, -2.1}, 1e-15, 0);
    check_close(b, {1.0, -2.0}, 0, 0);
    BOOST_TEST(opt.state().count(a.impl()) == 1u);
    BOOST_TEST(opt.state().count(b.impl()) == 0u);
    opt.zero_grad(false);
    BOOST_TEST_REQUIRE(a.grad().defined());
    check_close(a.grad(), {0.0, 0.0}, 0, 0);
    opt.zero_grad();
    BOOST_TEST(!a.grad().defined());
}

BOOST_AUTO_TEST_CASE(parameter_groups_have_their_own_lr) {
    tg::Tensor a = start_param(), b = start_param(), c = start_param();
    tg::optim::SGD opt({tg::optim::OptimizerParamGroup({a}, tg::optim::SGDOptions(0.5)),
                        tg::optim::OptimizerParamGroup({b})},
                       tg::optim::SGDOptions(0.1));
    opt.add_param_group(tg::optim::OptimizerParamGroup({c}, tg::optim::SGDOptions(0.01)));
    BOOST_TEST(opt.param_groups().size() == 3u);
    for (auto& t : {a, b, c})
        set_grad(t, {1.0, 1.0});
    opt.step();
    check_close(a, {0.5, -2.5}, 1e-15, 0);
    check_close(b, {0.9, -2.1}, 1e-15, 0);
    check_close(c, {0.99, -2.01}, 1e-15, 0);
    BOOST_TEST(opt.param_groups()[1].options().get_lr() == 0.1);
    check_throws<tg::error>([&] { opt.add_param_group(tg::optim::OptimizerParamGroup({a})); },
                            {"more than one group"}, "duplicate parameter");
    tg::Tensor d = start_param();
    check_throws<tg::error>(
        [&] {
            tg::optim::SGD bad({tg::optim::OptimizerParamGroup({d}, tg::optim::AdamOptions(0.1))},
                               tg::optim::SGDOptions(0.1));
        },
        {"SGD", "options"}, "options of another optimizer");
    check_throws<tg::error>(
        [&] { tg::optim::SGD bad({d}, tg::optim::SGDOptions(0.1).nesterov(true)); }, {"nesterov"},
        "nesterov without momentum");
    check_throws<tg::error>(
        [&] {
            tg::optim::Adam bad({d}, tg::optim::AdamOptions(0.1).betas({1.0, 0.9}));
        },
        {"beta1"}, "beta1 = 1");
}

/// LibTorch's StepLR (values recorded from LibTorch 1.13, scripts/libtorch_reference.cpp
/// "fidelity"): the first step() leaves the lr, then every step_size-th call multiplies the
/// current lr by gamma, so a changed lr carries on. PyTorch's Python closed form decays one call
/// earlier ({0.5, 0.5, 0.25, ...} here), which a ported C++ program must not get.
BOOST_AUTO_TEST_CASE(step_lr_and_cosine_annealing) {
    tg::Tensor a = start_param(), b = start_param();
    tg::optim::SGD opt({tg::optim::OptimizerParamGroup({a}, tg::optim::SGDOptions(1.0)),
                        tg::optim::OptimizerParamGroup({b}, tg::optim::SGDOptions(0.1))},
                       tg::optim::SGDOptions(1.0));
    tg::optim::StepLR sched(opt, /*step_size=*/2, /*gamma=*/0.5);
    std::vector<double> got, want = {1.0, 1.0, 0.5, 0.5, 0.25, 0.25};
    for (int e = 0; e < 6; ++e) {
        sched.step();
        got.push_back(sched.get_last_lr()[0]);
        BOOST_TEST(std::abs(sched.get_last_lr()[1] - 0.1 * want[size_t(e)]) < 1e-15);
    }
    BOOST_TEST(got == want, boost::test_tools::per_element());
    BOOST_TEST(sched.step_count() == 6u);
    // a changed lr carries on: after lr = 2, LibTorch gives 1, 1, 0.5 (the 7th call decays it)
    opt.param_groups()[0].options().set_lr(2.0);
    std::vector<double> carried;
    for (int e = 0; e < 3; ++e) {
        sched.step();
        carried.push_back(sched.get_last_lr()[0]);
    }
    BOOST_TEST(carried == (std::vector<double>{1.0, 1.0, 0.5}), boost::test_tools::per_element());

    tg::Tensor c = start_param();
    tg::optim::Adam adam({c}, tg::optim::AdamOptions(1.0));
    tg::optim::CosineAnnealingLR cos(adam, /*T_max=*/4, /*eta_min=*/0.1);
    // the k-th call (k = 0..5) sets η = 0.1 + 0.9·(1 + cos(π·k/4))/2
    std::vector<double> cos_want = {1.0,  0.1 + 0.45 * (1 + std::sqrt(0.5)),
                                    0.55, 0.1 + 0.45 * (1 - std::sqrt(0.5)),
                                    0.1,  0.1 + 0.45 * (1 - std::sqrt(0.5))};
    for (double w : cos_want) {
        cos.step();
        BOOST_TEST(std::abs(adam.param_groups()[0].options().get_lr() - w) < 1e-12);
    }
    check_throws<tg::error>([&] { tg::optim::StepLR bad(opt, 0); }, {"StepLR"}, "step_size 0");
}

namespace {
/// A scheduler of one's own, written as for LibTorch: get_lrs() from step_count_.
class HalveEveryStep : public tg::optim::LRScheduler {
public:
    using LRScheduler::LRScheduler;

protected:
    std::vector<double> get_lrs() override {
        std::vector<double> lrs = get_current_lrs();
        if (step_count_ > 0)
            for (double& lr : lrs)
                lr /= 2;
        return lrs;
    }
};
class WrongCount : public tg::optim::LRScheduler {
public:
    using LRScheduler::LRScheduler;

protected:
    std::vector<double> get_lrs() override { return {1.0, 2.0}; }
};
}  // namespace

BOOST_AUTO_TEST_CASE(scheduler_of_ones_own) {
    tg::Tensor a = start_param();
    tg::optim::SGD opt({a}, tg::optim::SGDOptions(0.8));
    HalveEveryStep halve(opt);
    for (int e = 0; e < 3; ++e)
        halve.step();
    BOOST_TEST(opt.param_groups()[0].options().get_lr() == 0.2);
    WrongCount wrong(opt);
    check_throws<tg::error>([&] { wrong.step(); }, {"LRScheduler", "2 learning rates", "1 "},
                            "get_lrs of the wrong size");
    BOOST_TEST(opt.param_groups()[0].options().get_lr() == 0.2);
}

BOOST_AUTO_TEST_CASE(clip_grad_norm) {
    tg::Tensor a = tg::zeros({2}, tg::kFloat64), b = tg::zeros({1}, tg::kFloat64);
    a.requires_grad_(true);
    b.requires_grad_(true);
    auto grads = [&] {
        a.impl()->grad.reset();
        b.impl()->grad.reset();
        set_grad(a, {3.0, 4.0});
        set_grad(b, {12.0});
    };
    grads();
    double norm = tg::nn::utils::clip_grad_norm_({a, b}, 6.5);  // ‖(3,4,12)‖ = 13
    BOOST_TEST(std::abs(norm - 13.0) < 1e-12);
    double coef = 6.5 / (13.0 + 1e-6);
    check_close(a.grad(), {3 * coef, 4 * coef}, 1e-14, 1e-14);
    check_close(b.grad(), {12 * coef}, 1e-14, 1e-14);

    grads();  // a large max_norm leaves the gradients as they are
    tg::nn::utils::clip_grad_norm_({a, b}, 100.0);
    check_close(a.grad(), {3.0, 4.0}, 0, 0);

    grads();
    norm = tg::nn::utils::clip_grad_norm_({a, b}, 6.0, tg::nn::utils::inf);
    BOOST_TEST(norm == 12.0);
    check_close(b.grad(), {12.0 * 6.0 / (12.0 + 1e-6)}, 1e-14, 1e-14);

    grads();
    norm = tg::nn::utils::clip_grad_norm_({a, b}, 100.0, 1.0);
    BOOST_TEST(std::abs(norm - 19.0) < 1e-12);

    tg::nn::utils::clip_grad_value_({a, b}, 3.5);
    check_close(a.grad(), {3.0, 3.5}, 0, 0);
    check_close(b.grad(), {3.5}, 0, 0);
}

BOOST_AUTO_TEST_CASE(mlp_learns_xor) {
    tg::manual_seed(0);
    tg::Tensor x = tgtest::from_values({0, 0, 0, 1, 1, 0, 1, 1}, {4, 2}, tg::kFloat32);
    tg::Tensor y = tgtest::from_values({0, 1, 1, 0}, {4, 1}, tg::kFloat32);
    tg::nn::Sequential net(tg::nn::Linear(2, 8), tg::nn::Tanh(), tg::nn::Linear(8, 1));
    tg::nn::BCEWithLogitsLoss loss_fn;
    tg::optim::Adam opt(net->parameters(), tg::optim::AdamOptions(0.05));
    double loss = 1;
    for (int it = 0; it < 400; ++it) {
        opt.zero_grad();
        tg::Tensor l = loss_fn(net(x), y);
        l.backward();
        opt.step();
        loss = l.item<float>();
    }
    BOOST_TEST_MESSAGE("XOR: final loss " << loss);
    BOOST_TEST(loss < 0.05);
    std::vector<double> out = values_of(tg::sigmoid(net(x)));
    BOOST_TEST(out[0] < 0.5);
    BOOST_TEST(out[1] > 0.5);
    BOOST_TEST(out[2] > 0.5);
    BOOST_TEST(out[3] < 0.5);
}

namespace {
/// n points of two interleaved noisy half circles (as sklearn's make_moons): x [n,2], y [n].
std::pair<tg::Tensor, tg::Tensor> make_moons(int64_t n, uint64_t seed) {
    std::vector<double> noise = tgtest::random_values(2 * n, seed, -0.1, 0.1), xs;
    std::vector<int64_t> labels;
    const double pi = std::acos(-1.0);
    for (int64_t i = 0; i < n; ++i) {
        double t = pi * double(i / 2) / double(n / 2 - 1);
        bool upper = i % 2 == 0;
        xs.push_back((upper ? std::cos(t) : 1 - std::cos(t)) + noise[size_t(2 * i)]);
        xs.push_back((upper ? std::sin(t) : 0.5 - std::sin(t)) + noise[size_t(2 * i + 1)]);
        labels.push_back(upper ? 0 : 1);
    }
    return {tgtest::from_values(xs, {n, 2}, tg::kFloat32), tg::tensor(labels)};
}
}  // namespace

BOOST_AUTO_TEST_CASE(mlp_learns_two_moons) {
    auto [x, y] = make_moons(400, 7);
    auto [x_test, y_test] = make_moons(200, 8);  // held out
    tg::manual_seed(1);
    tg::nn::Sequential net(tg::nn::Linear(2, 32), tg::nn::ReLU(), tg::nn::Linear(32, 32),
                           tg::nn::ReLU(), tg::nn::Linear(32, 2));
    tg::nn::CrossEntropyLoss loss_fn;
    tg::optim::SGD opt(net->parameters(), tg::optim::SGDOptions(0.1).momentum(0.9));
    for (int it = 0; it < 500; ++it) {
        opt.zero_grad();
        loss_fn(net(x), y).backward();
        opt.step();
    }
    tg::NoGradGuard guard;
    auto accuracy = [&](const tg::Tensor& xs, const tg::Tensor& ys) {
        double acc = 0;
        std::vector<double> correct = values_of(tg::eq(net(xs).argmax(1), ys));
        for (double c : correct)
            acc += c / double(correct.size());
        return acc;
    };
    double train_acc = accuracy(x, y), test_acc = accuracy(x_test, y_test);
    BOOST_TEST_MESSAGE("two moons: accuracy " << train_acc << " (train), " << test_acc
                                              << " (held out)");
    BOOST_TEST(train_acc > 0.95);
    BOOST_TEST(test_acc > 0.95);
}
