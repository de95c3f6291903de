// checkpoint(fn, inputs, use_reentrant=false): bit-identical gradients with dropout, less kept
// alive and freed, recomputation of only what backward needs, autograd::grad, nesting,
// retain_graph and errors. The reentrant form: test_checkpoint.cpp.
#define BOOST_TEST_MODULE checkpoint_non_reentrant
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "checkpoint_mlp.hpp"
#include "test_util.hpp"

using ckpt_test::check_doubled;
using ckpt_test::forward;
using ckpt_test::Mlp;
using tg::Tensor;

// ------------------------------------------------------- checkpoint(fn, inputs, false)
// Note [Recomputed saved tensors] in src/autograd/recompute.cpp

BOOST_AUTO_TEST_CASE(non_reentrant_bit_identical_with_dropout) {
    Mlp m(6);
    const Tensor x = tg::randn({8, 16}, tg::kFloat64).requires_grad_();
    std::vector<double> ref, got, ref_x, got_x;
    for (bool ck : {false, true}) {
        m.zero();
        x.set_grad({});
        tg::manual_seed(11);
        forward(m, x, 3, 2, ck, 0.3, false).backward();
        (ck ? got : ref) = m.grads();
        (ck ? got_x : ref_x) = x.grad().to_vector<double>();
    }
    BOOST_TEST(ref.size() == got.size());
    BOOST_TEST(ref == got);  // exact equality
    BOOST_TEST(ref_x == got_x);
}

BOOST_AUTO_TEST_CASE(non_reentrant_keeps_less_alive_and_frees_it) {
    Mlp m(8, 64);
    const Tensor x = tg::randn({32, 64}, tg::kFloat64);
    const int64_t s0 = tg::memory::stats().saved_bytes;
    int64_t kept[2];
    for (bool ck : {false, true}) {
        Tensor loss = forward(m, x, 4, 2, ck, 0, false);
        kept[ck] = tg::memory::stats().saved_bytes - s0;
        loss.backward();
        BOOST_TEST(tg::memory::stats().saved_bytes == s0);
    }
    // plain: 2 tanh outputs per layer-pair... 8 layers of 32x64 doubles; checkpointed: the 3
    // inner segment inputs and the output the loss keeps
    const int64_t buf = 32 * 64 * 8;
    BOOST_TEST(kept[0] == 8 * buf);
    BOOST_TEST(kept[1] == 4 * buf);
}

BOOST_AUTO_TEST_CASE(non_reentrant_recomputes_only_what_backward_needs) {
    // one segment of 3 layers: the backward needs the outputs of layers 0 and 1 (the inputs of
    // the next linear); layer 2's output is the segment's output, which the loss keeps alive,
    // so the recomputation stops after layer 1. The reentrant checkpoint runs all 3 again.
    Mlp m(3);
    const Tensor x = tg::randn({4, 16}, tg::kFloat64);
    for (bool reentrant : {false, true}) {
        int calls = 0;
        auto seg = [&](const std::vector<Tensor>& in) {
            Tensor y = in[0];
            for (int i = 0; i < 3; ++i) {
                ++calls;  // layers started
                y = m.layer(i, y, 0);
            }
            return y;
        };
        m.zero();
        Tensor y = tg::checkpoint(seg, {x}, reentrant);
        BOOST_TEST(calls == 3);
        (y * y).sum().backward();
        BOOST_TEST(calls == (reentrant ? 6 : 5));
        BOOST_TEST(m.w[0].grad().defined());
    }
}

BOOST_AUTO_TEST_CASE(non_reentrant_autograd_grad_nested_and_retain_graph) {
    Mlp m(4);
    const Tensor x = tg::randn({5, 16}, tg::kFloat64).requires_grad_();
    auto inner = [&](const std::vector<Tensor>& in) { return m.layer(1, m.layer(0, in[0], 0), 0); };
    auto outer = [&](const std::vector<Tensor>& in) {
        return m.layer(3, m.layer(2, tg::checkpoint(inner, in, false), 0), 0);
    };
    auto loss = [](const Tensor& y) { return (y * y).sum(); };
    const std::vector<Tensor> wrt{x, m.w[0], m.b[3]};
    const auto plain = tg::autograd::grad({loss(outer({x}))}, wrt);
    const auto ckpt = tg::autograd::grad({loss(tg::checkpoint(outer, {x}, false))}, wrt);
    for (size_t i = 0; i < wrt.size(); ++i)
        BOOST_TEST(ckpt[i].to_vector<double>() == plain[i].to_vector<double>());
    BOOST_TEST(!m.w[0].grad().defined());
    m.zero();
    Tensor l = loss(tg::checkpoint(outer, {x}, false));
    l.backward({}, true);
    const auto once = m.grads();
    l.backward();
    check_doubled(once, m.grads());
}

BOOST_AUTO_TEST_CASE(non_reentrant_errors) {
    Mlp m(2);
    const Tensor x = tg::randn({3, 16}, tg::kFloat64).requires_grad_();
    auto seg = [&](const std::vector<Tensor>& in) { return m.layer(1, m.layer(0, in[0], 0), 0); };
    // create_graph: the recomputed tensors do not carry the graph's history
    Tensor y = tg::checkpoint(seg, {x}, false);
    tgtest::check_throws<tg::autograd_error>(
        [&] { tg::autograd::grad({(y * y).sum()}, {x}, {}, true, true); },
        {"use_reentrant=false", "create_graph"}, "create_graph");
    // a recomputation that makes fewer saved tensors
    int calls = 0;
    Tensor z = tg::checkpoint(
        [&](const std::vector<Tensor>& in) {
            return ++calls == 1 ? tg::tanh(tg::tanh(in[0])) * 2 : in[0] * 2;
        },
        {x}, false);
    tgtest::check_throws<tg::autograd_error>([&] { (z * z).sum().backward(); },
                                             {"checkpoint", "same"}, "differs");
    // an input modified in place before the backward
    Tensor h = x * 2;
    Tensor w = tg::checkpoint([](const std::vector<Tensor>& in) { return tg::exp(tg::exp(in[0])); },
                              {h}, false);
    {
        tg::NoGradGuard g;
        h.add_(1);
    }
    BOOST_CHECK_THROW(w.sum().backward(), tg::autograd_error);
}
