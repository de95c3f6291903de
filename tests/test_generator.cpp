/// tg::Generator and the per-thread default generators (Note [Per-thread generators] in
/// tapegrad/generator.hpp): every random op takes a Generator and then draws what the default
/// generator draws after manual_seed of the same seed, without touching the default; a thread's
/// default generator is its own; checkpointing replays explicit generators as it replays the
/// default one (Note [Replaying random state] in src/core/random.cpp).
#define BOOST_TEST_MODULE test_generator
#include <boost/test/unit_test.hpp>
#include <functional>
#include <thread>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;

namespace {

/// What fn draws from the default generator after manual_seed(seed), and what it draws from
/// a fresh Generator(seed) (given as the argument).
void check_same_draws(const char* what, const std::function<Tensor(const tg::Generator*)>& fn) {
    BOOST_TEST_CONTEXT(what) {
        tg::manual_seed(123);
        const std::vector<double> seeded = values_of(fn(nullptr));
        tg::manual_seed(7);
        const std::vector<double> next_default = values_of(tg::rand({4}));
        tg::manual_seed(7);
        tg::Generator g(123);
        const std::vector<double> explicit_ = values_of(fn(&g));
        BOOST_TEST(explicit_ == seeded);
        // the explicit draw left the default generator where it was
        BOOST_TEST(values_of(tg::rand({4})) == next_default);
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_random_op_takes_a_generator) {
    const Tensor x = tg::ones({50, 40}, tg::kFloat64);
    check_same_draws("randn", [](const tg::Generator* g) {
        return g ? tg::randn({7, 9}, *g) : tg::randn({7, 9});
    });
    check_same_draws("rand float64", [](const tg::Generator* g) {
        return g ? tg::rand({33}, *g, tg::kFloat64) : tg::rand({33}, tg::kFloat64);
    });
    check_same_draws("randint", [](const tg::Generator* g) {
        return g ? tg::randint(-5, 9, {40}, *g) : tg::randint(-5, 9, {40});
    });
    check_same_draws("uniform_", [](const tg::Generator* g) {
        Tensor t = tg::zeros({5, 6});
        return g ? t.uniform_(-2, 3, *g) : t.uniform_(-2, 3);
    });
    check_same_draws("normal_", [](const tg::Generator* g) {
        Tensor t = tg::zeros({11});
        return g ? t.normal_(1, 0.5, *g) : t.normal_(1, 0.5);
    });
    check_same_draws("dropout", [&](const tg::Generator* g) {
        return g ? tg::dropout(x, 0.4, true, *g) : tg::dropout(x, 0.4, true);
    });
    check_same_draws("nn::Dropout", [&](const tg::Generator* g) {
        tg::nn::DropoutOptions o(0.4);
        if (g)
            o.generator(*g);
        tg::nn::Dropout d(o);
        return d(x);
    });
    // a real mask: some zeros, the rest scaled
    tg::Generator g(1);
    const std::vector<double> m = values_of(tg::dropout(x, 0.4, true, g));
    size_t zeros = 0;
    for (double v : m)
        zeros += v == 0;
    BOOST_TEST(zeros > 600u);
    BOOST_TEST(zeros < 1000u);
}

BOOST_AUTO_TEST_CASE(handles_share_state_and_clones_do_not) {
    tg::Generator g(99), same = g;
    BOOST_TEST(g.current_seed() == 99u);
    tg::Generator c = g.clone();
    const std::vector<double> a = values_of(tg::rand({5}, g));
    const std::vector<double> b = values_of(tg::rand({5}, same));  // continues g's stream
    BOOST_TEST(values_of(tg::rand({5}, c)) == a);                  // starts where g started
    BOOST_TEST(values_of(tg::rand({5}, c)) == b);
    g.set_current_seed(99);
    BOOST_TEST(values_of(tg::rand({5}, same)) == a);
    BOOST_TEST(tg::make_generator(4).current_seed() == 4u);
    BOOST_TEST(tg::Generator().current_seed() == tg::default_rng_seed_val);
}

BOOST_AUTO_TEST_CASE(a_new_thread_starts_from_the_latest_seed) {
    tg::manual_seed(5);
    const std::vector<double> first = values_of(tg::randn({6}));
    std::vector<double> in_thread, in_thread_after_reseed;
    std::thread([&] { in_thread = values_of(tg::randn({6})); }).join();
    // the thread's draws did not advance this thread's generator
    const std::vector<double> second = values_of(tg::randn({6}));
    tg::Generator ref(5);
    BOOST_TEST(first == values_of(tg::randn({6}, ref)));
    BOOST_TEST(second == values_of(tg::randn({6}, ref)));
    BOOST_TEST(in_thread == first);
    // a thread reseeding itself leaves the others' generators alone
    tg::manual_seed(5);
    std::thread([&] {
        tg::manual_seed(6);
        in_thread_after_reseed = values_of(tg::randn({6}));
    }).join();
    BOOST_TEST(values_of(tg::randn({6})) == first);
    tg::Generator six(6);
    BOOST_TEST(in_thread_after_reseed == values_of(tg::randn({6}, six)));
}

BOOST_AUTO_TEST_CASE(a_shared_generator_hands_out_each_number_once) {
    // Two threads draw from one Generator at once: its lock makes them take turns, so between
    // them they use exactly the first 2 x 50 x 1000 numbers of its stream.
    tg::Generator g(31);
    auto draw = [&g] {
        for (int i = 0; i < 50; ++i)
            (void)tg::rand({1000}, g, tg::kFloat64);
    };
    std::thread a(draw), b(draw);
    a.join();
    b.join();
    tg::Generator ref(31);
    (void)tg::rand({2 * 50 * 1000}, ref, tg::kFloat64);
    BOOST_TEST(values_of(tg::rand({3}, g)) == values_of(tg::rand({3}, ref)));
}

namespace {

/// Gradients of a two-layer dropout net, with fn's body checkpointed (or not); the dropout draws
/// from g. Also returns what g draws next, so the checkpoint's recomputation is seen to leave g
/// where the plain run leaves it.
std::vector<double> grads_with_generator(bool ck, bool reentrant, std::vector<double>* next) {
    const Tensor x = make_const({6, 8}, 1);
    Tensor w1 = make_input({8, 8}, 2), w2 = make_input({8, 4}, 3);
    tg::Generator g(17);
    auto body = [&](const std::vector<Tensor>& in) {
        Tensor h = tg::dropout(tg::tanh(tg::matmul(in[0], w1)), 0.5, true, g);
        return std::vector<Tensor>{tg::dropout(tg::matmul(h, w2), 0.3, true, g)};
    };
    Tensor y = ck ? tg::checkpoint(body, {x}, reentrant)[0] : body({x})[0];
    (y * y).sum().backward();
    *next = values_of(tg::rand({4}, g));
    std::vector<double> out = values_of(w1.grad());
    const std::vector<double> d2 = values_of(w2.grad());
    out.insert(out.end(), d2.begin(), d2.end());
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(checkpoint_replays_explicit_generators) {
    std::vector<double> next_ref, next;
    const std::vector<double> ref = grads_with_generator(false, true, &next_ref);
    for (bool reentrant : {true, false}) {
        BOOST_TEST_CONTEXT("use_reentrant " << reentrant) {
            BOOST_TEST(grads_with_generator(true, reentrant, &next) == ref);  // bit for bit
            BOOST_TEST(next == next_ref);
        }
    }
}

BOOST_AUTO_TEST_CASE(checkpoint_sequential_and_planner_with_a_dropout_generator) {
    tg::Generator g(3);
    tg::nn::Sequential s;
    for (int i = 0; i < 6; ++i) {
        s->push_back(tg::nn::Linear(16, 16));
        s->push_back(tg::nn::Tanh());
        s->push_back(tg::nn::Dropout(tg::nn::DropoutOptions(0.25).generator(g)));
    }
    s->to(tg::kFloat64);
    const Tensor x = make_const({8, 16}, 4);
    auto grads = [&](const std::function<Tensor()>& fwd) {
        s->zero_grad();
        g.set_current_seed(3);
        Tensor y = fwd();
        (y * y).mean().backward();
        std::vector<double> out;
        for (const Tensor& p : s->parameters()) {
            const std::vector<double> v = values_of(p.grad());
            out.insert(out.end(), v.begin(), v.end());
        }
        const std::vector<double> after = values_of(tg::rand({2}, g));
        out.insert(out.end(), after.begin(), after.end());
        return out;
    };
    const std::vector<double> ref = grads([&] { return s->forward(x); });
    BOOST_TEST(grads([&] { return tg::nn::checkpoint_sequential(s, 0, x); }) == ref);
    // profiling runs every layer twice and must leave g where it was
    g.set_current_seed(3);
    (void)tg::nn::profile_sequential(s, x);
    tg::Generator fresh(3);
    BOOST_TEST(values_of(tg::rand({4}, g)) == values_of(tg::rand({4}, fresh)));
}
