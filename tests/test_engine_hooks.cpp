/// Tests of the engine's two doors for data parallelism: post-accumulate-grad hooks (once per
/// pass, after the leaf's last gradient, whether it was added by AccumulateGrad or in place by a
/// BLAS backward; Note [Post-accumulate hooks] in src/autograd/graph.cpp) and
/// autograd::queue_callback (once, when the outermost pass ends).
#define BOOST_TEST_MODULE test_engine_hooks
#include <boost/test/unit_test.hpp>
#include <memory>
#include <tapegrad/checkpoint.hpp>
#include <tapegrad/nn.hpp>
#include <vector>

#include "test_util.hpp"

using tg::Tensor;

namespace {
/// Registers a hook on every parameter that records (parameter index, grad sum at that time).
std::shared_ptr<std::vector<std::pair<size_t, double>>> watch(const std::vector<Tensor>& params) {
    auto log = std::make_shared<std::vector<std::pair<size_t, double>>>();
    for (size_t i = 0; i < params.size(); ++i)
        params[i].register_post_accumulate_grad_hook([log, i](const Tensor& p) {
            log->push_back({i, p.grad().sum().item<double>()});
        });
    return log;
}
}  // namespace

BOOST_AUTO_TEST_CASE(post_accumulate_hook_runs_once_per_pass_after_the_last_gradient) {
    tg::manual_seed(1);
    tg::nn::Linear fc(3, 2);
    fc->to(tg::kFloat64);
    auto params = fc->parameters();
    auto log = watch(params);
    Tensor x = tg::ones({4, 3}, tg::kFloat64);
    // the layer used twice in one graph: one call per parameter, with both uses summed
    (fc(x).sum() + fc(x * 2).sum()).backward();
    BOOST_TEST(log->size() == 2u);
    for (auto& [i, sum] : *log)
        BOOST_TEST(sum == params[i].grad().sum().item<double>());
    // the second pass adds in place into .grad() (linear's BLAS backward, beta = 1): still once
    log->clear();
    fc(x).sum().backward();
    BOOST_TEST(log->size() == 2u);
    BOOST_TEST((*log)[0].second == params[(*log)[0].first].grad().sum().item<double>());
    // bias gradient: 2 outputs x (4 rows x (1 + 1) in the first pass + 4 in the second)
    BOOST_TEST(fc->bias.grad().sum().item<double>() == 2 * (8.0 + 4.0));
    // autograd::grad leaves .grad() alone and runs no hook
    log->clear();
    tg::autograd::grad({fc(x).sum()}, {params[0]});
    BOOST_TEST(log->empty());
}

BOOST_AUTO_TEST_CASE(post_accumulate_hook_once_inside_a_recomputed_checkpoint) {
    tg::manual_seed(2);
    tg::nn::Linear a(3, 3), b(3, 1);
    auto params = a->parameters();
    auto log = watch(params);
    Tensor x = tg::randn({5, 3}).requires_grad_();
    for (int pass = 0; pass < 2; ++pass) {
        log->clear();
        Tensor h =
            tg::checkpoint([&](const std::vector<Tensor>& in) { return tg::tanh(a(in[0])); }, {x});
        b(h).sum().backward();
        BOOST_TEST(log->size() == 2u);
    }
}

BOOST_AUTO_TEST_CASE(post_accumulate_hook_needs_a_leaf_that_requires_grad) {
    Tensor x = tg::ones({2}).requires_grad_();
    BOOST_CHECK_THROW(tg::ones({2}).register_post_accumulate_grad_hook([](const Tensor&) {}),
                      tg::autograd_error);
    BOOST_CHECK_THROW((x * 2).register_post_accumulate_grad_hook([](const Tensor&) {}),
                      tg::autograd_error);
    BOOST_CHECK_THROW(x.register_post_accumulate_grad_hook(nullptr), tg::value_error);
}

BOOST_AUTO_TEST_CASE(queue_callback_runs_once_when_the_outermost_pass_ends) {
    BOOST_CHECK_THROW(tg::autograd::queue_callback([] {}), tg::autograd_error);
    Tensor w = tg::ones({3}).requires_grad_();
    std::vector<std::string> order;
    w.register_post_accumulate_grad_hook([&](const Tensor&) {
        order.push_back("hook");
        tg::autograd::queue_callback([&] {
            order.push_back("callback");
            BOOST_TEST(w.grad().defined());  // gradients are all in
            tg::autograd::queue_callback([&] { order.push_back("queued by a callback"); });
        });
    });
    // the hook runs inside the recomputation pass of a checkpoint; the callback after the
    // outer pass
    Tensor y = tg::checkpoint([&](const std::vector<Tensor>& in) { return (in[0] * w).sum(); },
                              {tg::ones({3}).requires_grad_()});
    (y * 2).backward();
    BOOST_TEST(order == (std::vector<std::string>{"hook", "callback", "queued by a callback"}),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(queue_callback_dropped_when_the_pass_throws) {
    Tensor w = tg::ones({2}).requires_grad_();
    int calls = 0;
    w.register_hook([&](const Tensor& g) {
        tg::autograd::queue_callback([&] { ++calls; });
        if (calls == 0)
            throw tg::value_error("hook failed");
        return g;
    });
    BOOST_CHECK_THROW((w * 3).sum().backward(), tg::value_error);
    BOOST_TEST(calls == 0);
    calls = 1;
    (w * 3).sum().backward();
    BOOST_TEST(calls == 2);  // only the callback of the pass that succeeded
}
