/// Tests of the tape (src/autograd): in-place ops and version counters: a saved tensor modified
/// before backward throws naming the op; in-place ops on leaves, non-leaves, views and their bases
/// are right or throw.
#define BOOST_TEST_MODULE test_engine_inplace
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::make_const;
using tgtest::make_input;
using tgtest::values_of;

namespace {
std::vector<double> scaled(std::vector<double> v, double s) {
    for (auto& e : v)
        e *= s;
    return v;
}
}  // namespace

// ============================================================================ version counter

BOOST_AUTO_TEST_CASE(modified_saved_input_throws_naming_op) {
    tg::Tensor x = make_input({3}, 29);
    tg::Tensor a = make_const({3}, 30);
    tg::Tensor y = x * a;
    uint32_t v0 = a._version();
    a.mul_(2.0);
    BOOST_TEST(a._version() > v0);
    check_throws<tg::autograd_error>([&] { y.sum().backward(); }, {"mul"}, "saved input modified");
}

BOOST_AUTO_TEST_CASE(modified_saved_output_throws_naming_op) {
    tg::Tensor x = make_input({3}, 31);
    tg::Tensor y = tg::exp(x);
    {
        tg::NoGradGuard guard;
        y.add_(1.0);
    }
    check_throws<tg::autograd_error>([&] { y.sum().backward(); }, {"exp"}, "saved output modified");
}

BOOST_AUTO_TEST_CASE(unsaved_tensor_may_be_modified) {
    // add saves nothing, so changing its input afterwards is fine
    tg::Tensor x = make_input({3}, 32);
    tg::Tensor a = make_const({3}, 33);
    tg::Tensor y = x + a;
    a.mul_(2.0);
    BOOST_CHECK_NO_THROW(y.sum().backward());
    check_close(x.grad(), {1.0, 1.0, 1.0});
}

BOOST_AUTO_TEST_CASE(in_place_on_leaf_requiring_grad_throws) {
    tg::Tensor x = make_input({3}, 34);
    check_throws<tg::autograd_error>([&] { x.add_(1.0); }, {}, "add_ on leaf");
    check_throws<tg::autograd_error>([&] { x.mul_(2.0); }, {}, "mul_ on leaf");
    check_throws<tg::autograd_error>([&] { x.zero_(); }, {}, "zero_ on leaf");
}

BOOST_AUTO_TEST_CASE(in_place_on_non_leaf_rebases_history) {
    // Note [In-place ops]: the op records its out-of-place form and the tensor takes it over
    tg::Tensor x = make_input({3}, 45);
    tg::Tensor y = x * 2.0;
    y.add_(1.0);
    y.mul_(3.0);
    (y * y).sum().backward();  // d/dx (3(2x+1))^2 = 36(2x+1)
    std::vector<double> e;
    for (double v : values_of(x))
        e.push_back(36 * (2 * v + 1));
    check_close(x.grad(), e, 1e-10, 1e-12);

    x.set_grad(tg::Tensor());
    tg::Tensor c = make_const({3}, 46);
    tg::Tensor z = x * 2.0;
    z.mul_(c);  // c needs no grad: the overwritten z is not needed by backward
    z.sum().backward();
    check_close(x.grad(), scaled(values_of(c), 2.0), 1e-12, 0);

    // copy_ into a tensor that needs no grad makes it part of the graph
    x.set_grad(tg::Tensor());
    tg::Tensor buf = tg::zeros({3}, tg::kFloat64);
    buf.copy_(x * 4.0);
    BOOST_TEST(buf.requires_grad());
    buf.sum().backward();
    check_close(x.grad(), {4.0, 4.0, 4.0});
}

BOOST_AUTO_TEST_CASE(in_place_mul_needing_overwritten_value_is_right_or_throws) {
    // z.mul_(c) with c requiring grad: dc needs the old z, which the write destroys; the op
    // keeps a copy of it (as PyTorch keeps the original self), so the gradients are right
    tg::Tensor x = make_input({3}, 47), c = make_input({3}, 48);
    tg::Tensor z = x * 2.0;
    z.mul_(c);
    z.sum().backward();
    check_close(x.grad(), scaled(values_of(c), 2.0), 1e-12, 0);
    check_close(c.grad(), scaled(values_of(x), 2.0), 1e-12, 0);
    // div_ likewise: d(z/c)/dc = -z/c^2 with the old z
    tg::Tensor x2 = make_input({3}, 49), c2 = make_input({3}, 50);
    tg::Tensor z2 = x2 * 2.0;
    z2.div_(c2);
    z2.sum().backward();
    std::vector<double> want;
    const auto xv = values_of(x2), cv = values_of(c2);
    for (size_t i = 0; i < xv.size(); ++i)
        want.push_back(-2.0 * xv[i] / (cv[i] * cv[i]));
    check_close(c2.grad(), want, 1e-12, 0);
}

BOOST_AUTO_TEST_CASE(in_place_on_view_of_recorded_tensor_is_right_or_throws) {
    // Writing through a view changes its base: y[0:2] *= 2 makes dy.sum()/dx = [2,2,1].
    // Either the base's history is updated (PyTorch's CopySlices) or the library reports it;
    // a silently stale gradient ([1,1,1]) is wrong.
    tg::Tensor x = make_input({3}, 49);
    tg::Tensor y = x * 1.0;
    try {
        tg::Tensor v = y.narrow(0, 0, 2);
        v.mul_(2.0);
        check_close(y, {2 * values_of(x)[0], 2 * values_of(x)[1], values_of(x)[2]}, 1e-12, 0);
        y.sum().backward();
        check_close(x.grad(), {2.0, 2.0, 1.0});
    } catch (const tg::autograd_error& e) {
        BOOST_TEST_MESSAGE("reported: " << e.what());
    }
}

BOOST_AUTO_TEST_CASE(in_place_on_base_of_recorded_view_is_right_or_throws) {
    // The other direction: v = y[0:2]; y *= 3; then d v.sum() / dx = [3,3,0].
    tg::Tensor x = make_input({3}, 50);
    tg::Tensor y = x * 1.0;
    try {
        tg::Tensor v = y.narrow(0, 0, 2);
        y.mul_(3.0);
        check_close(v, {3 * values_of(x)[0], 3 * values_of(x)[1]}, 1e-12, 0);
        v.sum().backward();
        check_close(x.grad(), {3.0, 3.0, 0.0});
    } catch (const tg::autograd_error& e) {
        BOOST_TEST_MESSAGE("reported: " << e.what());
    }
}

// ============================================================================ LibTorch's in-place
// spellings (tapegrad/tensor_methods.hpp): the values LibTorch 1.13 gives, recorded with a probe

BOOST_AUTO_TEST_CASE(inplace_spellings_write_into_self_and_bump_the_version) {
    tg::Tensor x = tg::tensor({-1.5, 0.25, 4.0});
    const uint32_t v0 = x._version();
    tg::Tensor& r = x.relu_();
    BOOST_TEST(&r == &x);
    BOOST_TEST(x._version() > v0);
    check_close(x, {0, 0.25, 4.0});
    x.sqrt_().neg_().abs_();
    check_close(x, {0, 0.5, 2.0});
    x.clamp_(0.25, 1.0).reciprocal_();
    check_close(x, {4, 2, 1});
    x.addcmul_(x, x, 0.5);  // reads x's old value for both factors
    check_close(x, {12, 4, 1.5});
    x.lerp_(tg::zeros({3}), 0.5).masked_fill_(tg::gt(x, 5.0), -1.0);
    check_close(x, {-1, 2, 0.75});
    x.index_fill_(0, tg::tensor({int64_t(-1)}), 9.0);  // a negative index counts from the end
    check_close(x, {-1, 2, 9});
    tg::Tensor i = tg::tensor({int64_t(-4), int64_t(9)});
    tg::abs_(i).clamp_(1);  // integer results stay int64
    BOOST_TEST(i.dtype() == tg::kInt64);
    BOOST_TEST(i[0].item_as<int64_t>() == 4);
}

BOOST_AUTO_TEST_CASE(index_writes_match_libtorch) {
    tg::Tensor onehot = tg::zeros({2, 3}, tg::kInt64);
    onehot.scatter_(1, tg::tensor({int64_t(0), int64_t(2)}).reshape({2, 1}), 1);
    BOOST_TEST(onehot.dtype() == tg::kInt64);
    check_close(onehot.to(tg::kFloat64), {1, 0, 0, 0, 0, 1});
    tg::Tensor a = tg::zeros({3});
    a.index_add_(0, tg::tensor({int64_t(0), int64_t(0)}), tg::ones({2}), 2.0);  // repeats add
    check_close(a.to(tg::kFloat64), {4, 0, 0});
    tg::Tensor s = tg::zeros({2, 3});
    s.scatter_add_(1, tg::tensor({int64_t(0), int64_t(0)}).reshape({1, 2}), tg::ones({2, 2}));
    check_close(s.to(tg::kFloat64), {2, 0, 0, 0, 0, 0});
    tg::Tensor c = tg::zeros({2, 3});
    c.index_copy_(1, tg::tensor({int64_t(2), int64_t(0)}),
                  tg::tensor({1.f, 2.f, 3.f, 4.f}).reshape({2, 2}));
    check_close(c.to(tg::kFloat64), {2, 0, 1, 4, 0, 3});
    tg::Tensor w = tg::zeros({2, 3});
    w.scatter_(1, tg::tensor({int64_t(0), int64_t(2), int64_t(2), int64_t(1)}).reshape({2, 2}),
               tg::tensor({1.f, 2.f, 3.f, 4.f}).reshape({2, 2}));
    check_close(w.to(tg::kFloat64), {1, 0, 2, 0, 4, 3});
}

BOOST_AUTO_TEST_CASE(inplace_spellings_throw_as_libtorch_does) {
    tg::Tensor i = tg::tensor({int64_t(4), int64_t(9)});
    check_throws<tg::dtype_error>([&] { i.sqrt_(); }, {"sqrt_", "int64"}, "int sqrt_");
    check_throws<tg::dtype_error>([&] { i.clamp_(0.5); }, {"clamp_"}, "int clamp_ by 0.5");
    check_throws<tg::dtype_error>([&] { i.pow_(0.5); }, {"pow_"}, "int pow_ 0.5");
    check_close(i.to(tg::kFloat64), {4, 9});  // nothing written by the failed calls
    tg::Tensor x = tg::zeros({2});
    check_throws<tg::shape_error>(
        [&] {
            x.masked_fill_(tg::ones({3, 2}, tg::kBool), 1.0);
        },
        {"masked_fill", "[3,2]", "[2]"}, "mask broadcasting x");
    check_throws<tg::shape_error>(
        [&] {
            x.masked_fill_(tg::tensor({true, false}), tg::tensor({1.f, 2.f}));
        },
        {"0-dimensional"}, "1-D value");
    check_throws<tg::dtype_error>(
        [&] { x.index_add_(0, tg::tensor({int64_t(0)}), tg::ones({1}, tg::kFloat64)); },
        {"index_add", "same scalar type"}, "index_add_ of another dtype");
    check_throws<tg::dtype_error>([&] { x.lerp_(tg::ones({2}), tg::ones({2}, tg::kFloat64)); },
                                  {"lerp", "weight"}, "lerp_ weight of another dtype");
    check_throws<tg::dtype_error>([&] { tg::frac(i); }, {"frac"}, "int frac");
    check_throws<tg::dtype_error>([&] { tg::addcdiv(i, i, i); }, {"addcdiv", "integer division"},
                                  "int addcdiv");
    // Note [Repeated indices]: LibTorch leaves the winner unspecified; tapegrad refuses
    check_throws<tg::value_error>(
        [&] {
            x.index_copy_(0, tg::tensor({int64_t(1), int64_t(1)}), tg::ones({2}));
        },
        {"index_copy", "more than once"}, "index_copy_ repeated");
    check_throws<tg::value_error>(
        [&] {
            tg::zeros({2, 3}).scatter_(1, tg::zeros({1, 2}, tg::kInt64), tg::ones({1, 2}));
        },
        {"scatter", "more than once"}, "scatter_ repeated");
    tg::zeros({2, 3}).scatter_(1, tg::zeros({1, 2}, tg::kInt64), 5.0);  // one value: allowed
    check_throws<tg::shape_error>(
        [&] {
            tg::zeros({2, 3}).scatter_(1, tg::zeros({3, 1}, tg::kInt64), 5.0);
        },
        {"scatter", "larger than self"}, "scatter_ index too large");

    tg::Tensor leaf = tg::ones({2}, tg::TensorOptions(tg::kFloat64).requires_grad(true));
    check_throws<tg::autograd_error>([&] { leaf.relu_(); }, {"relu_", "leaf"}, "relu_ on leaf");
    {
        tg::NoGradGuard g;
        leaf.clamp_(-0.5, 0.5);  // allowed without recording, as in LibTorch
    }
    check_close(leaf.detach(), {0.5, 0.5});
}

BOOST_AUTO_TEST_CASE(inplace_spellings_on_non_leaves_take_over_history) {
    tg::Tensor l = tg::ones({2}, tg::TensorOptions(tg::kFloat32).requires_grad(true));
    tg::Tensor y = l * 2.0;
    y.relu_();
    BOOST_TEST(std::string(y.grad_fn()->name()) == "ReluBackward0");
    tg::Tensor z = l * 2.0;
    z.log_();  // its backward reads the old value: kept in a copy (LibTorch's grad: 1, 1)
    z.sum().backward();
    check_close(l.grad().to(tg::kFloat64), {1, 1});
    // an operand that requires grad makes a tensor that did not part of the graph
    tg::Tensor acc = tg::zeros({3});
    acc.index_add_(0, tg::tensor({int64_t(2), int64_t(0)}), l);
    BOOST_TEST(acc.requires_grad());
    (acc * tg::tensor({1.f, 2.f, 3.f})).sum().backward();
    check_close(l.grad().to(tg::kFloat64), {4, 2});  // 1 + 3, 1 + 1
}

// ================================================= Note [Gradients written in place]

namespace {
/// x's gradient through batch_norm, relu and max_pool2d (the CNN's block), float32; with
/// `hold`, hooks keep the gradients reaching relu's and batch_norm's backwards (so neither may
/// write over them), and the test checks that they kept their values.
tg::Tensor block_grad(bool hold) {
    tg::Tensor x = make_const({2, 3, 6, 6}, 41).to(tg::kFloat32).requires_grad_();
    const tg::Tensor w = tg::ones({3}), b = tg::zeros({3});
    tg::Tensor bn = tg::batch_norm(x, w, b, tg::zeros({3}), tg::ones({3}), true, 0.1, 1e-5, false);
    tg::Tensor r = tg::relu(bn);
    std::vector<tg::Tensor> seen(2), copies(2);
    if (hold) {
        bn.register_hook([&](const tg::Tensor& g) {
            seen[0] = g;
            copies[0] = g.clone();
            return tg::Tensor();
        });
        r.register_hook([&](const tg::Tensor& g) {
            seen[1] = g;
            copies[1] = g.clone();
            return tg::Tensor();
        });
    }
    tg::max_pool2d(r, 2).backward(make_const({2, 3, 3, 3}, 42).to(tg::kFloat32));
    for (int i = 0; hold && i < 2; ++i)
        BOOST_TEST(seen[i].equal(copies[i]));  // the held gradients were not overwritten
    return x.grad();
}
}  // namespace

BOOST_AUTO_TEST_CASE(gradients_are_written_in_place_only_where_nobody_else_holds_them) {
    // the same bits whether relu's and batch_norm's backwards write over their dy or not
    BOOST_TEST(block_grad(false).equal(block_grad(true)));
    // a gradient the caller holds, or memory of the caller's (from_blob), stays as it was
    tg::Tensor x = make_const({4, 5}, 43).to(tg::kFloat32).requires_grad_();
    const tg::Tensor g = make_const({4, 5}, 44).to(tg::kFloat32), g0 = g.clone();
    tg::relu(x).backward(g);
    BOOST_TEST(g.equal(g0));
    std::vector<float> buf(20, -1.0f);
    tg::relu(x).backward(tg::from_blob(buf.data(), {4, 5}));
    for (float v : buf)
        BOOST_TEST(v == -1.0f);
    // relu's dx = dy where x > 0, else 0: here two backwards of -1 and g
    check_close(x.grad(), values_of(tg::where(x > 0, g - 1, tg::zeros_like(g))), 1e-6);
}
