/// cumsum, sort, argsort, topk and max/min along a dim as LibTorch 1.13 gives them (issue 16): the
/// expected values are LibTorch's output for the same calls (scripts/libtorch_reference.cpp,
/// ordering()). Gradients and devices are checked by the op table (tests/op_cases_reductions.hpp).
#define BOOST_TEST_MODULE test_ordering
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::from_values;

BOOST_AUTO_TEST_CASE(cumsum_sort_argsort_topk) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const tg::Tensor v = from_values({3.0, 1.0, nan, 1.0, -2.0, 3.0, 0.5, 1.0}, {2, 4});
    auto [sv, si] = v.sort(1);  // ties keep their order, NaN sorts last
    check_close(si, {1, 3, 0, 2, 0, 2, 3, 1});
    BOOST_TEST(std::isnan(sv[0][3].item<double>()));
    check_close(sv.index({1}), {-2, 0.5, 1, 3});
    auto [dv, di] = v.sort(1, true);
    check_close(di, {2, 0, 1, 3, 1, 3, 2, 0});
    check_close(dv.index({1}), {3, 1, 0.5, -2});
    check_close(tg::argsort(v, 0), {1, 0, 1, 0, 0, 1, 0, 1});
    const tg::Tensor w = tg::tensor({0.3, 2.5, -1.0, 2.5, 0.7, 4.0}, tg::kFloat64);
    auto [tv, ti] = w.topk(3);
    check_close(tv, {4, 2.5, 2.5});
    BOOST_TEST(ti[0].item<int64_t>() == 5);  // LibTorch gives 5 3 1: the order of ties is
    BOOST_TEST(ti[1].item<int64_t>() + ti[2].item<int64_t>() == 4);  // unspecified
    check_close(std::get<1>(w.topk(2, 0, false)), {2, 0});
    BOOST_CHECK_THROW(w.topk(7), tg::value_error);
    check_close(tg::tensor(std::vector<int64_t>{1, 2, 3, 4, 5}).cumsum(0), {1, 3, 6, 10, 15});
    BOOST_TEST((w > 1.0).cumsum(0).dtype() == tg::kInt64);
    check_close((w > 1.0).cumsum(0), {0, 1, 1, 2, 2, 3});
    const tg::Tensor c =
        from_values({0.5, -1.0, 2.0, 0.25, 1.5, -0.75}, {2, 3}).requires_grad_(true);
    (c.cumsum(1) * tg::tensor({1.0, 2.0, 3.0}, tg::kFloat64)).sum().backward();
    check_close(c.grad(), {6, 5, 3, 6, 5, 3});
}

BOOST_AUTO_TEST_CASE(max_min_along_a_dim_return_values_and_indices) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const tg::Tensor e = from_values({1.0, nan, 3.0, 2.0, 2.0, -1.0}, {2, 3});
    auto [mv, mi] = e.max(1);  // a NaN wins, as in LibTorch
    BOOST_TEST(std::isnan(mv[0].item<double>()));
    BOOST_TEST(mv[1].item<double>() == 2.0);
    check_close(mi, {1, 0});
    auto [nv, ni] = tg::min(e, 0, true);
    BOOST_TEST(nv.sizes() == tg::Shape({1, 3}));
    BOOST_TEST(std::isnan(nv[0][1].item<double>()));
    check_close(ni, {0, 0, 1});
    const tg::Tensor g = from_values({1.0, 3.0, 3.0, 2.0, 2.0, 1.0}, {2, 3}).requires_grad_(true);
    std::get<0>(g.max(1)).sum().backward();  // the first max takes the gradient
    check_close(g.grad(), {0, 1, 0, 1, 0, 0});
    g.grad().zero_();
    g.amax({1}).sum().backward();  // amax shares it among ties
    check_close(g.grad(), {0, 0.5, 0.5, 0.5, 0.5, 0});
    const tg::Tensor m = tg::max(e, tg::tensor({0.0, 2.5, 2.5}, tg::kFloat64));
    BOOST_TEST(std::isnan(m[0][1].item<double>()));
    check_close(m.index({1}), {2, 2.5, 2.5});
    check_close(m[0][0], {1});
}
