// checkpoint() (the reentrant form) and saved_report(): gradients with and without
// checkpointing must be bit-identical (same kernels, same order), and checkpointing must keep
// less alive; the activation memory (memory::stats().saved_bytes) counted once and freed with
// the graph. checkpoint(fn, inputs, false): test_checkpoint_non_reentrant.cpp.
#define BOOST_TEST_MODULE checkpoint
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "checkpoint_mlp.hpp"
#include "test_util.hpp"

using ckpt_test::check_doubled;
using ckpt_test::forward;
using ckpt_test::Mlp;
using tg::Tensor;

BOOST_AUTO_TEST_CASE(gradients_bit_identical_with_dropout) {
    Mlp m(6);
    const Tensor x = tg::randn({8, 16}, tg::kFloat64);
    std::vector<double> ref, got;
    for (bool ck : {false, true}) {
        m.zero();
        tg::manual_seed(11);
        forward(m, x, 3, 2, ck, 0.3).backward();
        (ck ? got : ref) = m.grads();
    }
    BOOST_TEST(ref.size() == got.size());
    BOOST_TEST(ref == got);  // exact equality, not a tolerance
}

BOOST_AUTO_TEST_CASE(checkpoint_keeps_less_alive) {
    Mlp m(8, 64);
    const Tensor x = tg::randn({32, 64}, tg::kFloat64);
    const auto plain = tg::autograd::saved_report(forward(m, x, 2, 4, false, 0)).total_bytes;
    const auto ckpt = tg::autograd::saved_report(forward(m, x, 2, 4, true, 0)).total_bytes;
    BOOST_TEST_MESSAGE("saved bytes plain " << plain << ", checkpointed " << ckpt);
    BOOST_TEST(ckpt * 3 < plain);  // 2 segment boundaries kept instead of 8 layer outputs
    // live memory after forward, measured by the allocator
    const int64_t before = tg::memory::stats().current_bytes;
    Tensor lp = forward(m, x, 2, 4, false, 0);
    const int64_t with_plain = tg::memory::stats().current_bytes - before;
    lp = Tensor();
    Tensor lc = forward(m, x, 2, 4, true, 0);
    const int64_t with_ckpt = tg::memory::stats().current_bytes - before;
    BOOST_TEST(with_ckpt * 3 < with_plain);
}

BOOST_AUTO_TEST_CASE(parameters_inside_need_no_input_grad) {
    // the input needs no gradient, but the weights inside do: the output must still record
    Mlp m(2);
    const Tensor x = tg::randn({4, 16}, tg::kFloat64);
    Tensor y = tg::checkpoint(
        [&](const std::vector<Tensor>& in) { return m.layer(1, m.layer(0, in[0], 0), 0); }, {x});
    BOOST_TEST(y.requires_grad());
    y.sum().backward();
    BOOST_TEST(m.w[0].grad().defined());
    BOOST_TEST(m.b[1].grad().defined());
}

BOOST_AUTO_TEST_CASE(several_inputs_and_outputs_gradcheck) {
    auto fn = [](const std::vector<Tensor>& v) {
        auto outs = tg::checkpoint(
            tg::CheckpointFn([](const std::vector<Tensor>& in) {
                return std::vector<Tensor>{tg::tanh(in[0] * in[1]), tg::exp(in[0]) + in[1]};
            }),
            {v[0], v[1]});
        return (outs[0] * 2 + outs[1]).sum();
    };
    auto o = tg::TensorOptions().dtype(tg::kFloat64).requires_grad(true);
    BOOST_TEST(tg::gradcheck(fn, {tg::randn({3, 2}, o), tg::randn({3, 2}, o)}));
}

BOOST_AUTO_TEST_CASE(nested_checkpoints_and_accumulation) {
    Mlp m(4);
    const Tensor x = tg::randn({5, 16}, tg::kFloat64);
    auto inner = [&](const std::vector<Tensor>& in) { return m.layer(1, m.layer(0, in[0], 0), 0); };
    auto outer = [&](const std::vector<Tensor>& in) {
        return m.layer(3, m.layer(2, tg::checkpoint(inner, in), 0), 0);
    };
    m.zero();
    outer({x}).sum().backward();
    const auto ref = m.grads();
    m.zero();
    tg::checkpoint(outer, {x}).sum().backward();
    BOOST_TEST(m.grads() == ref);
    tg::checkpoint(outer, {x}).sum().backward();  // a second pass accumulates
    check_doubled(ref, m.grads());
}

BOOST_AUTO_TEST_CASE(no_grad_is_a_plain_call_and_retain_graph_works) {
    Mlp m(2);
    const Tensor x = tg::randn({3, 16}, tg::kFloat64);
    auto seg = [&](const std::vector<Tensor>& in) { return m.layer(1, m.layer(0, in[0], 0), 0); };
    {
        tg::NoGradGuard g;
        BOOST_TEST(!tg::checkpoint(seg, {x}).requires_grad());
    }
    m.zero();
    Tensor loss = tg::checkpoint(seg, {x}).sum();
    loss.backward({}, true);
    const auto once = m.grads();
    loss.backward();
    check_doubled(once, m.grads());
    BOOST_CHECK_THROW(loss.backward(), tg::autograd_error);
}

BOOST_AUTO_TEST_CASE(autograd_grad_reaches_parameters_inside_and_leaves_grad_alone) {
    // Note [Checkpoint edges]: the weights used inside fn are reachable from autograd::grad, the
    // gradients are the plain graph's bit for bit, and no .grad() is written
    Mlp m(4);
    const Tensor x = tg::randn({5, 16}, tg::kFloat64).requires_grad_();
    auto seg = [&](const std::vector<Tensor>& in) { return m.layer(1, m.layer(0, in[0], 0), 0); };
    auto loss = [&](const Tensor& h) {
        const Tensor y = m.layer(3, m.layer(2, h, 0), 0);
        return (y * y).sum();
    };
    const std::vector<Tensor> wrt{x, m.w[0], m.b[1], m.w[3]};
    m.zero();
    m.w[0].set_grad(tg::full({16, 16}, 7.0, tg::kFloat64));
    const auto plain = tg::autograd::grad({loss(seg({x}))}, wrt);
    const auto ckpt = tg::autograd::grad({loss(tg::checkpoint(seg, {x}))}, wrt);
    BOOST_TEST_REQUIRE(ckpt.size() == wrt.size());
    for (size_t i = 0; i < wrt.size(); ++i) {
        BOOST_TEST_REQUIRE(ckpt[i].defined());
        BOOST_TEST(ckpt[i].to_vector<double>() == plain[i].to_vector<double>());
    }
    BOOST_TEST(m.w[0].grad().to_vector<double>() == std::vector<double>(256, 7.0));
    BOOST_TEST(!m.b[1].grad().defined());
    BOOST_TEST(!m.w[1].grad().defined());
    BOOST_TEST(!x.grad().defined());
}

BOOST_AUTO_TEST_CASE(double_backward_through_checkpoint) {
    // a gradient penalty: d/dW of |dL/dx|², through a checkpointed segment (create_graph)
    Mlp m(2);
    const Tensor x = tg::randn({3, 16}, tg::kFloat64).requires_grad_();
    auto seg = [&](const std::vector<Tensor>& in) { return m.layer(1, m.layer(0, in[0], 0), 0); };
    std::vector<double> ref;
    for (bool ck : {false, true}) {
        m.zero();
        const Tensor y = ck ? tg::checkpoint(seg, {x}) : seg({x});
        const Tensor gx = tg::autograd::grad({(y * y).sum()}, {x}, {}, true, true)[0];
        (gx * gx).sum().backward();
        if (!ck) {
            ref = m.grads();
            continue;
        }
        const auto got = m.grads();
        BOOST_TEST_REQUIRE(got.size() == ref.size());
        for (size_t i = 0; i < ref.size(); ++i)
            BOOST_TEST(got[i] == ref[i], boost::test_tools::tolerance(1e-12));
    }
}

BOOST_AUTO_TEST_CASE(captured_tensor_with_history) {
    // fn uses h, computed outside and not passed in, and h is also used by an op recorded before
    // the checkpoint: the graph below h must run once, in the enclosing pass, after that op has
    // sent its part (Note [Checkpoint edges])
    const Tensor a = tg::randn({4, 3}, tg::kFloat64).requires_grad_();
    const Tensor w = tg::randn({3, 3}, tg::kFloat64).requires_grad_();
    const Tensor x = tg::randn({4, 3}, tg::kFloat64);
    std::vector<double> ref_a, ref_w;
    for (bool ck : {false, true}) {
        a.set_grad({});
        w.set_grad({});
        const Tensor h = tg::tanh(a * 2);
        const Tensor z = h * 3;
        auto fn = [&h, &w](const std::vector<Tensor>& in) { return tg::matmul(in[0] + h, w); };
        const Tensor y = ck ? tg::checkpoint(fn, {x}) : fn({x});
        BOOST_TEST(y.requires_grad());
        BOOST_CHECK_NO_THROW(((y * y).sum() + z.sum()).backward());
        if (!ck) {
            ref_a = a.grad().to_vector<double>();
            ref_w = w.grad().to_vector<double>();
            continue;
        }
        BOOST_TEST_REQUIRE(a.grad().defined());
        const auto ga = a.grad().to_vector<double>(), gw = w.grad().to_vector<double>();
        BOOST_TEST(ga == ref_a, boost::test_tools::tolerance(1e-12)
                                    << boost::test_tools::per_element());
        BOOST_TEST(gw == ref_w, boost::test_tools::tolerance(1e-12)
                                    << boost::test_tools::per_element());
    }
}

BOOST_AUTO_TEST_CASE(recomputation_that_differs_throws_naming_shapes) {
    // fn that computes something else when it runs again (state it reads changed): a typed
    // error naming both shapes, not gradients of the wrong thing
    const Tensor x = tg::randn({4, 3}, tg::kFloat64).requires_grad_();
    int calls = 0;
    Tensor y = tg::checkpoint(
        [&calls](const std::vector<Tensor>& in) {
            return ++calls == 1 ? in[0] * 2 : tg::narrow(in[0], 0, 0, 2) * 2;
        },
        {x});
    tgtest::check_throws<tg::autograd_error>([&] { y.sum().backward(); },
                                             {"checkpoint", "[2,3]", "[4,3]", "same"}, "shape");
    int runs = 0;
    auto outs = tg::checkpoint(tg::CheckpointFn([&runs](const std::vector<Tensor>& in) {
                                   return ++runs == 1 ? std::vector<Tensor>{in[0] * 2, in[0] * 3}
                                                      : std::vector<Tensor>{in[0] * 2};
                               }),
                               {x});
    tgtest::check_throws<tg::autograd_error>([&] { (outs[0] + outs[1]).sum().backward(); },
                                             {"checkpoint", "1 outputs", "first run 2"}, "count");
}

BOOST_AUTO_TEST_CASE(modified_input_is_caught) {
    Tensor x = tg::randn({3}, tg::kFloat64).requires_grad_();
    Tensor h = x * 2;
    Tensor y = tg::checkpoint([](const std::vector<Tensor>& in) { return tg::exp(in[0]); }, {h});
    {
        tg::NoGradGuard g;
        h.add_(1);
    }
    BOOST_CHECK_THROW(y.sum().backward(), tg::autograd_error);
}

BOOST_AUTO_TEST_CASE(saved_report_names_ops_and_scopes) {
    Tensor w = tg::randn({4, 4}).requires_grad_();
    Tensor x = tg::randn({2, 4});
    Tensor y;
    {
        tg::autograd::RecordScope s("fc1");
        y = tg::tanh(tg::matmul(x, w));
    }
    auto r = tg::autograd::saved_report(y.sum());
    BOOST_TEST_REQUIRE(r.entries.size() == 2u);
    BOOST_TEST(r.entries[0].op == "mm");
    BOOST_TEST(r.entries[0].scope == "fc1");
    BOOST_TEST(r.entries[1].op == "tanh");
    // mm saves only x (32 B: dW needs it; x needs no gradient, so w is not kept);
    // tanh saves its output (32 B)
    BOOST_TEST(r.entries[0].bytes == 32);
    BOOST_TEST(r.total_bytes == 32 + 32);
}

BOOST_AUTO_TEST_CASE(saved_bytes_count_activations_once_and_free_with_the_graph) {
    // Linear(64,64) + tanh, twice, on [32,64] float64 (16 KiB per activation). Activation
    // memory: both tanh outputs (the first is also the second linear's input, the second the
    // loss's input: one buffer each); not x or the weights, leaves the caller holds anyway.
    Mlp m(2, 64);
    const Tensor x = tg::randn({32, 64}, tg::kFloat64);
    const int64_t act = 32 * 64 * 8;
    const auto s0 = tg::memory::stats();
    Tensor loss = forward(m, x, 1, 2, false, 0);
    const auto s1 = tg::memory::stats();
    BOOST_TEST(s1.saved_bytes - s0.saved_bytes == 2 * act);
    BOOST_TEST(s1.peak_saved_bytes >= s1.saved_bytes);
    loss.backward();
    BOOST_TEST(tg::memory::stats().saved_bytes == s0.saved_bytes);  // freed with the graph
    tg::memory::reset_peak();
    BOOST_TEST(tg::memory::stats().peak_saved_bytes == s0.saved_bytes);

    // eight layers, plain: eight tanh outputs, all alive when backward starts
    Mlp m8(8, 64);
    tg::memory::reset_peak();
    forward(m8, x, 1, 8, false, 0).backward();
    BOOST_TEST(tg::memory::stats().peak_saved_bytes - s0.saved_bytes == 8 * act);
    // in two checkpointed segments of four: the forward keeps the second segment's input and
    // the loss's input; backward recomputes one segment at a time, keeping its four recomputed
    // tanh outputs and the second segment's input (the loss has let go of its input by then)
    tg::memory::reset_peak();
    Tensor lc = forward(m8, x, 2, 4, true, 0);
    BOOST_TEST(tg::memory::stats().saved_bytes - s0.saved_bytes == 2 * act);
    lc.backward();
    BOOST_TEST(tg::memory::stats().saved_bytes == s0.saved_bytes);
    BOOST_TEST(tg::memory::stats().peak_saved_bytes - s0.saved_bytes == 5 * act);
}

BOOST_AUTO_TEST_CASE(saved_bytes_count_loss_intermediates_and_dropout_masks_as_bits) {
    Tensor w = tg::randn({64, 64}, tg::kFloat64).requires_grad_();
    const Tensor x = tg::randn({32, 64}, tg::kFloat64);
    const int64_t act = 32 * 64 * 8;
    const int64_t s0 = tg::memory::stats().saved_bytes;
    Tensor y = tg::tanh(tg::matmul(x, w));  // keeps y (x and w are leaves it was given)
    BOOST_TEST(tg::memory::stats().saved_bytes - s0 == act);
    // keeps its mask as bits, one per element (Note [Dropout masks]), not y again
    Tensor z = tg::dropout(y, 0.5, true);
    const int64_t bits = 32 * 64 / 8;
    BOOST_TEST(tg::memory::stats().saved_bytes - s0 == act + bits);
    BOOST_TEST(std::string(z.grad_fn()->op()) == "dropout");
    // cross_entropy keeps its log-softmax (an intermediate) and its input z
    Tensor loss = tg::cross_entropy(z, tg::zeros({32}, tg::kInt64));
    BOOST_TEST(tg::memory::stats().saved_bytes - s0 == 3 * act + bits);
    loss.backward();
    BOOST_TEST(tg::memory::stats().saved_bytes == s0);
    BOOST_TEST(w.grad().defined());
    // a view of a parameter is the parameter's memory, not an activation: matmul(h, w.t())
    // keeps h (counted by tanh already) and w.t() (not counted)
    Tensor h = tg::tanh(tg::matmul(x, w));
    Tensor v = tg::matmul(h, w.t());
    BOOST_TEST(tg::memory::stats().saved_bytes - s0 == act);
}
