/// Tests of the tape (src/autograd): in-place ops and version counters: a saved tensor modified
/// before backward throws naming the op; in-place ops on leaves, non-leaves, views and their bases
/// are right or throw.
#define BOOST_TEST_MODULE test_engine_inplace
#include <boost/test/unit_test.hpp>
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
