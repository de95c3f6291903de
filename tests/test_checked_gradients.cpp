/// Note [Checked gradients] (src/autograd/engine.hpp): what a hook returns and what set_grad
/// stores get the same shape/dtype/device check as what a backward returns, and no .grad() has
/// elements that share memory.
#define BOOST_TEST_MODULE test_checked_gradients
#include <boost/test/unit_test.hpp>
#include <vector>

#include "tapegrad/nn.hpp"
#include "test_util.hpp"

using tgtest::check_throws;
using tgtest::make_input;

BOOST_AUTO_TEST_CASE(leaf_hook_result_is_checked) {
    tg::Tensor w = tg::ones({1, 3}, tg::TensorOptions().requires_grad(true));
    w.register_hook([](const tg::Tensor&) { return tg::ones({1}); });
    check_throws<tg::autograd_error>([&] { (w * 2.0).sum().backward(); },
                                     {"hook 0", "leaf [1,3]", "got [1]", "expected [1,3]"},
                                     "wrong shape");
    BOOST_TEST(!w.grad().defined());  // nothing reached .grad(), so SGD cannot broadcast it
    tg::Tensor v = tg::ones({2}, tg::TensorOptions().requires_grad(true));
    v.register_hook([](const tg::Tensor& g) { return g; });
    v.register_hook([](const tg::Tensor& g) { return g.to(tg::kFloat64); });
    check_throws<tg::autograd_error>([&] { (v * 2.0).sum().backward(); },
                                     {"hook 1", "leaf [2]", "float64", "float32"}, "wrong dtype");
    BOOST_TEST(!v.grad().defined());
}

BOOST_AUTO_TEST_CASE(non_leaf_hook_result_is_checked) {
    tg::Tensor x = make_input({2, 3}, 5);
    tg::Tensor y = x * 2.0;
    y.register_hook([](const tg::Tensor&) { return tg::ones({5}, tg::kFloat64); });
    // the message blames the hook, not the backward of the op that receives its result
    check_throws<tg::autograd_error>([&] { y.sum().backward(); },
                                     {"hook 0 of the tensor [2,3]", "'mul'", "got [5]"});
    BOOST_TEST(!x.grad().defined());
}

BOOST_AUTO_TEST_CASE(hook_may_return_a_valid_replacement) {
    tg::Tensor x = make_input({3}, 6);
    x.register_hook([](const tg::Tensor& g) { return g * 3.0; });
    x.register_hook([](const tg::Tensor&) { return tg::Tensor(); });  // undefined: keep g
    (x * 2.0).sum().backward();
    tgtest::check_close(x.grad(), {6, 6, 6});
    check_throws<tg::value_error>([&] { x.register_hook(nullptr); }, {"register_hook", "[3]"},
                                  "empty hook");
}

BOOST_AUTO_TEST_CASE(set_grad_is_checked) {
    tg::Tensor w = tg::ones({1, 3}, tg::TensorOptions().requires_grad(true));
    check_throws<tg::autograd_error>([&] { w.set_grad(tg::ones({1})); },
                                     {"set_grad", "[1,3]", "got [1]"}, "shape");
    check_throws<tg::autograd_error>(
        [&] {
            w.set_grad(tg::ones({1, 3}, tg::kFloat64));
        },
        {"set_grad", "float64", "float32"}, "dtype");
    BOOST_TEST(!w.grad().defined());
    if (tg::is_available(tg::Device::opencl(0)))
        check_throws<tg::autograd_error>(
            [&] {
                w.set_grad(tg::ones({1, 3}, tg::Device::opencl(0)));
            },
            {"set_grad", "opencl:0", "cpu"}, "device");
    // an expand() view would take every in-place write (accumulation, clipping) once per alias
    tg::Tensor w2 = tg::ones({2, 3}, tg::TensorOptions().requires_grad(true));
    check_throws<tg::autograd_error>(
        [&] {
            w2.set_grad(tg::ones({3}).expand({2, 3}));
        },
        {"set_grad", "[2,3]", "expand"}, "aliased elements");
    check_throws<tg::autograd_error>(
        [&] {
            w.set_grad(tg::ones({1}).expand({3}).reshape({1, 3}));
        },
        {"set_grad", "expand"}, "aliased elements, same shape");
    w.set_grad(tg::full({1, 3}, 2.0));
    (w * 1.0).sum().backward();
    tgtest::check_close(w.grad(), {3, 3, 3});
    w.set_grad({});
    BOOST_TEST(!w.grad().defined());
}

BOOST_AUTO_TEST_CASE(create_graph_grad_accumulates_correctly) {
    // sum's gradient is an expand() view of the scalar seed; stored as .grad() by a create_graph
    // pass, the next backward's in-place add used to hit its one element three times
    tg::Tensor x = make_input({3}, 7);
    x.sum().backward({}, false, true);
    x.sum().backward();
    tgtest::check_close(x.grad(), {2, 2, 2});
    tg::Tensor y = make_input({2, 2}, 8);
    y.sum().backward({}, false, true);
    tg::nn::utils::clip_grad_norm_({y}, 1.0);  // norm 2: scales each element by 0.5, once
    tgtest::check_close(y.grad(), {0.5, 0.5, 0.5, 0.5}, 1e-6, 1e-6);
}

BOOST_AUTO_TEST_CASE(create_graph_grads_are_not_shared) {
    // add's backward sends one gradient to both inputs; a create_graph pass stored it as both
    // leaves' .grad(), and the next backward's in-place add then hit both leaves twice
    tg::Tensor a = make_input({3}, 9), b = make_input({3}, 10);
    const tg::Tensor c = tg::full({3}, 2.0, tg::kFloat64);
    ((a + b) * c).sum().backward({}, false, true);
    BOOST_TEST(a.grad().impl() != b.grad().impl());
    ((a + b) * c).sum().backward();
    tgtest::check_close(a.grad(), {4, 4, 4});
    tgtest::check_close(b.grad(), {4, 4, 4});
    tg::Tensor x = make_input({2, 3}, 11);
    x.sum().backward({}, false, true);
    BOOST_TEST(x.grad().is_contiguous());
}
