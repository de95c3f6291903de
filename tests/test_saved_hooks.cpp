// tg::autograd::SavedTensorsHooks and save_on_cpu (Note [Public saved-tensor hooks] in
// src/autograd/saved_hooks.cpp): pack sees every saved tensor, hooks that keep the tensor, a
// clone or an index give the plain gradients bit for bit, scopes nest, double backward works
// through unpacked tensors, errors are typed and leave the hooks as they were, checkpoint
// composes with them, two threads keep their own hooks (scripts/tsan.sh runs this suite). On a
// device: backend_device_saved_hooks.hpp.
#define BOOST_TEST_MODULE saved_hooks
#include <any>
#include <boost/test/unit_test.hpp>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "checkpoint_mlp.hpp"
#include "test_util.hpp"

using ckpt_test::forward;
using ckpt_test::Mlp;
using tg::Tensor;
using tg::autograd::SavedTensorsHooks;

namespace {

/// Hooks that count and keep what they are given (pack: the tensor, or a clone).
struct Counting {
    int packs = 0, unpacks = 0;
    bool clone = false;
    SavedTensorsHooks::PackHook pack() {
        return [this](const Tensor& t) -> std::any {
            ++packs;
            return clone ? t.clone() : t;
        };
    }
    SavedTensorsHooks::UnpackHook unpack() {
        return [this](const std::any& p) {
            ++unpacks;
            return std::any_cast<Tensor>(p);
        };
    }
};

/// How many tensors the nodes of root's graph saved (Node::saved_, what saved_report reads).
size_t saved_count(const Tensor& root) {
    std::set<const tg::Node*> seen;
    std::vector<const tg::Node*> todo{root.grad_fn().get()};
    size_t n = 0;
    while (!todo.empty()) {
        const tg::Node* node = todo.back();
        todo.pop_back();
        if (!node || !seen.insert(node).second)
            continue;
        n += node->saved_.size();
        for (const auto& e : node->next_functions())
            todo.push_back(e.fn.get());
    }
    return n;
}

/// The MLP's gradients after one step (dropout: the same masks every run).
std::vector<double> step(Mlp& m, const Tensor& x, bool ckpt = false, bool reentrant = true) {
    m.zero();
    tg::manual_seed(5);
    forward(m, x, 2, 2, ckpt, 0.25, reentrant).backward();
    return m.grads();
}

struct Thrown : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace

BOOST_AUTO_TEST_CASE(pack_sees_every_saved_tensor) {
    // PyTorch's pack_hook sees every saved tensor, the parameters and the input batch too: as
    // many as the plain graph's nodes keep
    Mlp m(4);
    const Tensor x = tg::randn({8, 16}, tg::kFloat64);
    tg::manual_seed(5);
    const size_t plain = saved_count(forward(m, x, 2, 2, false, 0.25));
    BOOST_TEST(plain >= 12u);  // linear: input and weight; tanh: output; mul: both sides
    Counting c;
    {
        SavedTensorsHooks hooks(c.pack(), c.unpack());
        tg::manual_seed(5);
        forward(m, x, 2, 2, false, 0.25).backward();
        BOOST_TEST(size_t(c.packs) == plain);
    }
    BOOST_TEST(c.unpacks > 0);
    // per op: mul keeps both inputs; tanh its output, given as a detached alias of it
    const Tensor a = tg::randn({3}, tg::kFloat64).requires_grad_(),
                 b = tg::randn({3}, tg::kFloat64).requires_grad_();
    Counting d;
    std::vector<Tensor> given;
    SavedTensorsHooks hooks(
        [&](const Tensor& t) -> std::any {
            given.push_back(t);
            return d.pack()(t);
        },
        d.unpack());
    const Tensor y = tg::tanh(a * b);
    BOOST_TEST_REQUIRE(d.packs == 3);
    BOOST_TEST(given[0].requires_grad());  // an input as it is
    BOOST_TEST(!given[2].requires_grad());
    BOOST_TEST((given[2].to_vector<double>() == y.to_vector<double>()));
    // cross_entropy keeps an intermediate (the log-softmax) and its input
    given.clear();
    const Tensor logits = tg::randn({4, 5}, tg::kFloat64).requires_grad_();
    (void)tg::cross_entropy(logits, tg::tensor({0, 3, 1, 4}, tg::kInt64));
    BOOST_TEST_REQUIRE(given.size() == 2u);
    BOOST_TEST(
        (given[0].to_vector<double>() == tg::log_softmax(logits.detach(), 1).to_vector<double>()));
    BOOST_TEST(given[1].impl() == logits.impl());
}

BOOST_AUTO_TEST_CASE(hooks_that_keep_clone_or_index_give_plain_gradients) {
    Mlp m(4);
    const Tensor x = tg::randn({8, 16}, tg::kFloat64);
    const std::vector<double> plain = step(m, x);
    Counting keep, clone;
    clone.clone = true;
    {
        SavedTensorsHooks hooks(keep.pack(), keep.unpack());
        BOOST_TEST((step(m, x) == plain));
    }
    {
        SavedTensorsHooks hooks(clone.pack(), clone.unpack());
        BOOST_TEST((step(m, x) == plain));
    }
    std::vector<Tensor> store;
    {
        SavedTensorsHooks hooks(
            [&](const Tensor& t) -> std::any {
                store.push_back(t.clone());
                return store.size() - 1;
            },
            [&](const std::any& i) { return store.at(std::any_cast<size_t>(i)); });
        BOOST_TEST((step(m, x) == plain));
    }
    BOOST_TEST(store.size() == size_t(keep.packs));
    BOOST_TEST(clone.packs == keep.packs);
    BOOST_TEST(tg::memory::stats().saved_bytes == 0);
}

BOOST_AUTO_TEST_CASE(scopes_nest_and_hooks_outlive_their_scope) {
    const Tensor x = tg::randn({4}, tg::kFloat64).requires_grad_();
    Counting outer, inner;
    Tensor y;
    {
        SavedTensorsHooks a(outer.pack(), outer.unpack());
        y = tg::tanh(x);  // 1 to outer
        {
            SavedTensorsHooks b(inner.pack(), inner.unpack());
            y = tg::exp(y);  // 1 to inner
        }
        y = y * x;  // 2 to outer
    }
    y = tg::sin(y);  // no hooks
    BOOST_TEST(outer.packs == 3);
    BOOST_TEST(inner.packs == 1);
    y.sum().backward();  // each saved tensor unpacked by the hooks that packed it
    BOOST_TEST(outer.unpacks == 3);
    BOOST_TEST(inner.unpacks == 1);
    const Tensor ref = x.detach().requires_grad_();
    tg::sin(tg::exp(tg::tanh(ref)) * ref).sum().backward();
    BOOST_TEST((x.grad().to_vector<double>() == ref.grad().to_vector<double>()));
}

BOOST_AUTO_TEST_CASE(the_hooks_own_ops_are_not_offered) {
    // pack and unpack run without hooks: an op they record saves plainly, no recursion
    const Tensor x = tg::randn({4}, tg::kFloat64).requires_grad_();
    int packs = 0;
    SavedTensorsHooks hooks(
        [&](const Tensor& t) -> std::any {
            ++packs;
            tg::AutoGradMode on(true);
            const Tensor own = tg::tanh(x);  // records and saves its output
            BOOST_TEST(own.grad_fn()->saved_.size() == 1u);
            return t;
        },
        [](const std::any& p) { return std::any_cast<Tensor>(p); });
    tg::exp(x).sum().backward();
    BOOST_TEST(packs == 1);
}

BOOST_AUTO_TEST_CASE(double_backward_through_unpacked_tensors) {
    // create_graph: the unpacked tensors carry the saved history (a leaf, a non-leaf input, an
    // output), so the second derivative is the plain one, bit for bit
    auto run = [](bool hooked) {
        const Tensor x = tg::tensor({0.3, -1.2, 2.0}, tg::kFloat64).requires_grad_();
        Counting c;
        c.clone = true;
        std::unique_ptr<SavedTensorsHooks> hooks;
        if (hooked)
            hooks = std::make_unique<SavedTensorsHooks>(c.pack(), c.unpack());
        const Tensor z = x * 3.0;
        const Tensor y = (tg::exp(z) * tg::tanh(z) * x).sum();
        const Tensor g = tg::autograd::grad({y}, {x}, {}, true, true)[0];
        const Tensor gg = tg::autograd::grad({(g * g).sum()}, {x})[0];
        BOOST_TEST((c.unpacks > 0) == hooked);
        auto v = g.to_vector<double>(), w = gg.to_vector<double>();
        v.insert(v.end(), w.begin(), w.end());
        return v;
    };
    BOOST_TEST((run(true) == run(false)));
}

BOOST_AUTO_TEST_CASE(in_place_after_save) {
    // identity hooks: the saved buffer itself comes back, modified: the version check throws, as
    // without hooks. Hooks that cloned give the gradient of the values saved.
    const Tensor x = tg::tensor({0.5, -0.25}, tg::kFloat64).requires_grad_();
    Counting keep, clone;
    clone.clone = true;
    {
        SavedTensorsHooks hooks(keep.pack(), keep.unpack());
        const Tensor y = tg::tanh(x);
        {
            tg::NoGradGuard no_grad;
            Tensor(y).mul_(2.0);
        }
        tgtest::check_throws<tg::autograd_error>([&] { y.sum().backward(); },
                                                 {"tanh", "modified by an in-place", "version"});
    }
    x.set_grad({});
    {
        SavedTensorsHooks hooks(clone.pack(), clone.unpack());
        const Tensor y = tg::tanh(x);
        {
            tg::NoGradGuard no_grad;
            Tensor(y).mul_(2.0);
        }
        y.sum().backward();
    }
    const Tensor t = tg::tanh(x.detach());
    tgtest::check_close(x.grad(), (1.0 - t * t).to_vector<double>(), 1e-15);
}

BOOST_AUTO_TEST_CASE(exceptions_propagate_and_leave_the_hooks_consistent) {
    const Tensor x = tg::randn({3}, tg::kFloat64).requires_grad_();
    int packs = 0;
    bool fail_unpack = false;
    {
        SavedTensorsHooks hooks(
            [&](const Tensor& t) -> std::any {
                if (++packs == 2)
                    throw Thrown("pack failed");
                return t;
            },
            [&](const std::any& p) {
                if (fail_unpack)
                    throw Thrown("unpack failed");
                return std::any_cast<Tensor>(p);
            });
        BOOST_CHECK_THROW(x * x, Thrown);  // mul's second saved tensor
        const Tensor y = tg::exp(x);       // the hooks are still installed
        BOOST_TEST(packs == 3);
        BOOST_TEST(y.grad_fn()->saved_.empty());  // and nothing of mul's leaked into exp's node
        fail_unpack = true;
        BOOST_CHECK_THROW(y.sum().backward(), Thrown);
    }
    // gone with their scope: a plain graph saves plainly and runs backward
    const Tensor y = tg::exp(x);
    BOOST_TEST(packs == 3);
    BOOST_TEST(y.grad_fn()->saved_.size() == 1u);
    x.set_grad({});
    y.sum().backward();
    BOOST_TEST((x.grad().to_vector<double>() == y.to_vector<double>()));
}

BOOST_AUTO_TEST_CASE(typed_errors) {
    using SH = SavedTensorsHooks;
    const Tensor x = tg::randn({2, 3}, tg::kFloat64).requires_grad_();
    auto keep = [](const Tensor& t) -> std::any { return t; };
    auto backward_with = [&](SH::UnpackHook unpack) {
        SH hooks(keep, std::move(unpack));
        tg::tanh(x).sum().backward();
    };
    auto get = [](const std::any& p) { return std::any_cast<Tensor>(p); };
    tgtest::check_throws<tg::shape_error>(
        [&] { backward_with([&](const std::any& p) {
                  return get(p).reshape({3, 2});
              }); },
        {"unpack", "tanh", "[2,3]", "[3,2]"});
    tgtest::check_throws<tg::dtype_error>(
        [&] { backward_with([&](const std::any& p) { return get(p).to(tg::kFloat32); }); },
        {"unpack", "tanh", "float64", "float32"});
    tgtest::check_throws<tg::value_error>(
        [&] { backward_with([](const std::any&) { return Tensor(); }); }, {"tanh", "undefined"});
    tgtest::check_throws<tg::value_error>([&] { SH h(keep, nullptr); }, {"unpack", "empty"});
    tgtest::check_throws<tg::value_error>([&] { SH h(nullptr, get); }, {"pack", "empty"});
    // pack must not modify what it is given (PyTorch's check too)
    SH bad([](const Tensor& t) -> std::any { return Tensor(t).mul_(2.0); }, get);
    tgtest::check_throws<tg::autograd_error>([&] { (void)tg::tanh(x); },
                                             {"pack", "in place", "[2,3]"});
}

BOOST_AUTO_TEST_CASE(with_checkpoint_hooks_outside_and_inside) {
    Mlp m(4);
    const Tensor x = tg::randn({8, 16}, tg::kFloat64);
    const std::vector<double> plain = step(m, x);
    for (bool reentrant : {true, false}) {
        // outside: the checkpoint keeps its segments' inputs, its own hooks take fn's
        // activations, the user's what is saved outside (the loss)
        Counting c;
        c.clone = true;
        {
            SavedTensorsHooks hooks(c.pack(), c.unpack());
            BOOST_TEST((step(m, x, true, reentrant) == plain));
        }
        BOOST_TEST(c.packs > 0);
        BOOST_TEST(c.unpacks > 0);
    }
    // inside fn: the user's hooks take what fn saves in their scope, in the forward and again
    // in a recomputation (whose handles are never unpacked)
    Counting in;
    in.clone = true;
    m.zero();
    tg::manual_seed(5);
    Tensor h = x;
    for (int s = 0; s < 2; ++s)
        h = tg::checkpoint(
            [&, s](const std::vector<Tensor>& xs) {
                Tensor y = m.layer(2 * s, xs[0], 0.25);
                SavedTensorsHooks hooks(in.pack(), in.unpack());
                return std::vector<Tensor>{m.layer(2 * s + 1, y, 0.25)};
            },
            {h}, false)[0];
    const int forward_packs = in.packs;
    BOOST_TEST(forward_packs > 0);
    (h * h).mean().backward();
    BOOST_TEST((m.grads() == plain));
    BOOST_TEST(in.unpacks > 0);
    BOOST_TEST(in.packs >= forward_packs);
}

BOOST_AUTO_TEST_CASE(save_on_cpu_keeps_cpu_tensors) {
    Mlp m(4);
    const Tensor x = tg::randn({8, 16}, tg::kFloat64);
    const std::vector<double> plain = step(m, x);
    int64_t allocs = tg::memory::stats().num_allocs;
    step(m, x);
    const int64_t plain_allocs = tg::memory::stats().num_allocs - allocs;
    tg::autograd::save_on_cpu offload(/*pin_memory=*/true);  // accepted, a no-op
    allocs = tg::memory::stats().num_allocs;
    BOOST_TEST((step(m, x) == plain));
    BOOST_TEST(tg::memory::stats().num_allocs - allocs == plain_allocs);  // no copies on the CPU
}

BOOST_AUTO_TEST_CASE(two_threads_two_hooks) {
    // each thread's hooks see that thread's saved tensors only (TSan: scripts/tsan.sh)
    Mlp m0(4), m1(4);
    const Tensor x = tg::randn({8, 16}, tg::kFloat64);
    const std::vector<double> plain = step(m0, x);
    tg::manual_seed(5);
    const size_t per_step = saved_count(forward(m0, x, 2, 2, false, 0.25));
    std::vector<double> got[2];
    Counting c[2];
    c[1].clone = true;
    std::vector<std::thread> ts;
    for (int i = 0; i < 2; ++i)
        ts.emplace_back([&, i] {
            Mlp& m = i ? m1 : m0;
            SavedTensorsHooks hooks(c[i].pack(), c[i].unpack());
            for (int k = 0; k < 3; ++k)
                got[i] = step(m, x);
        });
    for (auto& t : ts)
        t.join();
    for (int i = 0; i < 2; ++i) {
        BOOST_TEST((got[i] == plain));
        BOOST_TEST(size_t(c[i].packs) == 3 * per_step);
    }
}
