/// Tests of tg::autograd::profiler (Note [What the profile times] in tapegrad/profiler.hpp):
/// recorded ops are charged in phase "forward", backward nodes in "backward" under their op's name,
/// RecordFunction scopes (the optimizers' steps) in "scope"; what a backward node runs inside it
/// (a checkpoint's recomputation) is part of it; one profile per thread, and only its thread.
#define BOOST_TEST_MODULE test_profiler
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>
#include <tapegrad/checkpoint.hpp>
#include <tapegrad/nn.hpp>
#include <tapegrad/optim.hpp>
#include <tapegrad/profiler.hpp>
#include <thread>

#include "test_util.hpp"

using tg::Tensor;
namespace profiler = tg::autograd::profiler;

namespace {
/// The entry (name, phase) of a profile, or one with calls = -1.
profiler::OpTime entry(const profiler::Profile& p, const std::string& name,
                       const std::string& phase) {
    for (const auto& e : p.ops())
        if (e.name == name && e.phase == phase)
            return e;
    return {name, phase, -1, 0};
}
int64_t calls(const profiler::Profile& p, const std::string& name, const std::string& phase) {
    return entry(p, name, phase).calls;
}
int64_t forward_calls(const profiler::Profile& p) {
    int64_t n = 0;
    for (const auto& e : p.ops())
        if (e.phase == "forward")
            n += e.calls;
    return n;
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_training_step_is_charged_op_by_op) {
    tg::manual_seed(3);
    tg::nn::Linear fc1(6, 16), fc2(16, 3);
    std::vector<Tensor> params = fc1->parameters();
    for (const Tensor& p : fc2->parameters())
        params.push_back(p);
    tg::optim::SGD opt(params, tg::optim::SGDOptions(0.1));
    const Tensor x = tg::randn({5, 6});
    const auto t0 = std::chrono::steady_clock::now();
    profiler::Profile prof;
    for (int step = 0; step < 3; ++step) {
        opt.zero_grad();
        Tensor loss = fc2(tg::relu(fc1(x))).pow(2).mean();
        loss.backward();
        opt.step();
    }
    prof.stop();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BOOST_TEST(calls(prof, "linear", "forward") == 6);
    BOOST_TEST(calls(prof, "linear", "backward") == 6);
    BOOST_TEST(calls(prof, "relu", "forward") == 3);
    BOOST_TEST(calls(prof, "relu", "backward") == 3);
    BOOST_TEST(calls(prof, "mean", "backward") == 3);
    BOOST_TEST(calls(prof, "Optimizer.step#SGD.step", "scope") == 3);
    BOOST_TEST(calls(prof, "Optimizer.zero_grad", "scope") == 3);
    // the entries cover the profile's wall time, no more
    BOOST_TEST(prof.total_seconds() > 0);
    BOOST_TEST(prof.total_seconds() <= wall);
    double sum = 0;
    for (const auto& e : prof.ops()) {
        BOOST_TEST(e.seconds >= 0);
        sum += e.seconds;
    }
    BOOST_TEST(sum == prof.total_seconds(), boost::test_tools::tolerance(1e-9));
    const std::string table = prof.table(4);
    BOOST_TEST(table.find("total ms") != std::string::npos);
    BOOST_TEST(table.find("more)") != std::string::npos);  // rows past 4 are summed
    // ops() is sorted, largest first
    const auto ops = prof.ops();
    for (size_t i = 1; i < ops.size(); ++i)
        BOOST_TEST(ops[i - 1].seconds >= ops[i].seconds);
}

BOOST_AUTO_TEST_CASE(a_checkpoints_recomputation_is_part_of_its_backward_node) {
    tg::manual_seed(4);
    tg::nn::Linear fc(8, 8);
    const Tensor x = tg::randn({4, 8}).requires_grad_(true);
    profiler::Profile prof;
    Tensor y =
        tg::checkpoint([&](const std::vector<Tensor>& in) { return tg::tanh(fc(in[0])); }, {x})[0];
    Tensor loss = y.sum();
    const int64_t before = forward_calls(prof);
    loss.backward();
    BOOST_TEST(forward_calls(prof) == before);  // the recomputed linear and tanh: not forward ops
    BOOST_TEST(calls(prof, "linear", "backward") == -1);  // nor backward nodes of their own
    BOOST_TEST(calls(prof, "sum", "backward") == 1);
}

BOOST_AUTO_TEST_CASE(one_profile_per_thread_and_only_its_thread) {
    profiler::Profile prof;
    BOOST_CHECK_THROW(profiler::Profile second, tg::autograd_error);
    const Tensor a = tg::randn({3}).requires_grad_(true);
    std::thread other([&] {
        Tensor b = tg::randn({3}).requires_grad_(true);
        (void)tg::exp(b);       // recorded on another thread: not in prof
        profiler::Profile own;  // that thread may have its own
        (void)tg::sin(b);
        BOOST_TEST(calls(own, "sin", "forward") == 1);
    });
    other.join();
    (void)tg::cos(a);
    BOOST_TEST(calls(prof, "exp", "forward") == -1);
    BOOST_TEST(calls(prof, "sin", "forward") == -1);
    BOOST_TEST(calls(prof, "cos", "forward") == 1);
    prof.reset();
    BOOST_TEST(calls(prof, "cos", "forward") == -1);
    prof.stop();
    prof.stop();  // idempotent
    (void)tg::cos(a);
    BOOST_TEST(calls(prof, "cos", "forward") == -1);  // stopped
    profiler::Profile next;                           // the thread is free again
    (void)tg::cos(a);
    BOOST_TEST(calls(next, "cos", "forward") == 1);
}

BOOST_AUTO_TEST_CASE(a_backward_that_throws_leaves_the_profile_consistent) {
    profiler::Profile prof;
    const Tensor x = tg::randn({4}).requires_grad_(true);
    Tensor b = tg::randn({4});
    Tensor y = x * b;  // saves b
    b.add_(1);         // which backward then refuses, inside mul's node
    BOOST_CHECK_THROW(y.sum().backward(), tg::autograd_error);
    // the failed node ended: forward ops are counted again
    (void)tg::exp(x);
    BOOST_TEST(calls(prof, "exp", "forward") == 1);
    {
        profiler::RecordFunction scope("my scope");
        (void)tg::sin(x);
    }
    BOOST_TEST(calls(prof, "my scope", "scope") == 1);
    BOOST_TEST(calls(prof, "sin", "forward") == 1);  // events inside a scope are its own
}

BOOST_AUTO_TEST_CASE(record_function_without_a_profile_does_nothing) {
    profiler::RecordFunction scope("nobody listens");
    const Tensor x = tg::randn({2}).requires_grad_(true);
    BOOST_TEST(tg::exp(x).sum().item<double>() > 0);
}
