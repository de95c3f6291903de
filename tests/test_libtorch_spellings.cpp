/// A LibTorch program ports by renaming torch:: to tg:: (issue 16): the spellings LibTorch users
/// write every day compile here and mean what they mean in LibTorch. Expected values are those
/// LibTorch 1.13 gives for the same calls (half-to-even rounding, logsumexp's -inf for an empty
/// sum, the 2-norm's zero subgradient at 0, ...). The ops' gradients are checked by the op table
/// (tests/op_cases_*.hpp); this suite checks the spellings and their semantics.
#define BOOST_TEST_MODULE test_libtorch_spellings
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::values_of;

namespace {
const double kInf = std::numeric_limits<double>::infinity();
tg::Tensor f64(std::vector<double> v, const tg::Shape& s) {
    return tg::tensor(v, tg::kFloat64).reshape(s);
}
}  // namespace

BOOST_AUTO_TEST_CASE(bare_sizes_and_int_dims) {
    BOOST_TEST(tg::shape_str(tg::zeros(3).sizes()) == "[3]");
    BOOST_TEST(tg::shape_str(tg::ones(2, tg::kFloat64).sizes()) == "[2]");
    BOOST_TEST(tg::shape_str(tg::randn(4).sizes()) == "[4]");
    BOOST_TEST(tg::shape_str(tg::rand(int64_t(5)).sizes()) == "[5]");
    BOOST_TEST(tg::shape_str(tg::empty(0).sizes()) == "[0]");
    // a braced list is still a shape: {} a 0-dim tensor, {3} one dim of 3
    BOOST_TEST(tg::shape_str(tg::zeros({}).sizes()) == "[]");
    BOOST_TEST(tg::shape_str(tg::zeros({3}).sizes()) == "[3]");
    const tg::Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
    check_close(x.sum(0), {5, 7, 9});
    check_close(x.sum(1, true), {6, 15});
    BOOST_TEST(tg::shape_str(x.sum(1, true).sizes()) == "[2,1]");
    check_close(tg::sum(x, -1), {6, 15});
    check_close(x.mean(0), {2.5, 3.5, 4.5});
    check_close(x.sum({}), {21});  // {} still means every dim
    check_close(tg::mean(x, {}), {3.5});
}

BOOST_AUTO_TEST_CASE(reduction_constants) {
    const tg::Tensor x = f64({1, 2, 3}, {3}), y = f64({0, 0, 0}, {3});
    check_close(tg::mse_loss(x, y, tg::kSum), {14});
    check_close(tg::mse_loss(x, y, tg::kMean), {14.0 / 3});
    check_close(tg::mse_loss(x, y, tg::kNone), {1, 4, 9});
}

BOOST_AUTO_TEST_CASE(compound_assignment_records_and_is_version_checked) {
    tg::Tensor w = f64({1, 2, 3}, {3}).requires_grad_(true);
    tg::Tensor a = w * 1.0;  // not a leaf: in-place ops on it are recorded
    a += w;                  // 2w
    a *= 3.0;                // 6w
    a -= 1.0;                // 6w - 1
    a /= 2.0;                // 3w - 1/2
    a += 0.5;                // 3w
    a *= w;                  // 3w²
    a /= f64({1, 2, 4}, {3});
    a -= w;  // 3w²/c - w
    check_close(a, {2, 4, 3.75});
    a.sum().backward();
    check_close(w.grad(), {5, 5, 3.5});  // 6w/c - 1

    // an in-place op on a tensor an op saved for backward is refused (LibTorch refuses at
    // backward; tapegrad at the write already, as the storage is shared with the saved copy)
    tg::Tensor v = f64({1, 2}, {2}).requires_grad_(true);
    tg::Tensor h = v * 2.0;
    tg::Tensor e = h.exp();  // saves its output e
    BOOST_CHECK_THROW(
        {
            e += 1.0;
            e.sum().backward();
        },
        tg::autograd_error);
}

BOOST_AUTO_TEST_CASE(rounding_as_libtorch) {
    const tg::Tensor x = f64({0.5, 1.5, 2.5, -0.5, -1.5, -2.7, 2.2}, {7});
    check_close(tg::round(x), {0, 2, 2, -0.0, -2, -3, 2});  // half to even
    check_close(x.floor(), {0, 1, 2, -1, -2, -3, 2});
    check_close(x.ceil(), {1, 2, 3, -0.0, -1, -2, 3});
    check_close(tg::trunc(x), {0, 1, 2, -0.0, -1, -2, 2});
    check_close(tg::sign(f64({-3, 0, 2}, {3})), {-1, 0, 1});
    // int64: the rounding ops copy (no trip through double), sign keeps the type
    const tg::Tensor big = tg::tensor(std::vector<int64_t>{(int64_t(1) << 62) + 1, -7});
    BOOST_TEST(tg::floor(big).to_vector<int64_t>() == big.to_vector<int64_t>(),
               boost::test_tools::per_element());
    BOOST_TEST((tg::sign(big).to_vector<int64_t>() == std::vector<int64_t>{1, -1}));
    // zero gradients, and the graph stays connected
    tg::Tensor w = f64({0.3, 1.7}, {2}).requires_grad_(true);
    (tg::floor(w) + tg::round(w) * w).sum().backward();
    check_close(w.grad(), {0, 2});
}

BOOST_AUTO_TEST_CASE(logsumexp_and_norm_as_libtorch) {
    const tg::Tensor x = f64({1, 2, 3, 1000, 1000, -kInf}, {2, 3});
    const double l3 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
    check_close(tg::logsumexp(x, 1), {l3, 1000 + std::log(2.0)});
    const tg::Tensor neg = f64({-kInf, -kInf}, {1, 2});
    BOOST_TEST(values_of(tg::logsumexp(neg, 1))[0] == -kInf);  // not NaN
    BOOST_TEST(values_of(tg::logsumexp(tg::zeros({0, 2}, tg::kFloat64), 0)) ==
                   std::vector<double>({-kInf, -kInf}),
               boost::test_tools::per_element());

    const tg::Tensor y = f64({3, -4, 0, 0}, {2, 2});
    check_close(tg::norm(y), {5});
    check_close(y.norm(2, {1}), {5, 0});
    check_close(y.norm(1, {1}, true), {7, 0});
    check_close(tg::norm(y, kInf, {0}), {3, 4});
    check_close(tg::norm(f64({1, 2, 2}, {3}), 3), {std::cbrt(17.0)});
    BOOST_CHECK_THROW(tg::norm(y, 0), tg::value_error);
    // the 2-norm's gradient is x / |x|, and 0 (not NaN) where the norm is 0
    tg::Tensor w = f64({3, -4, 0, 0}, {2, 2}).requires_grad_(true);
    w.norm(2, {1}).sum().backward();
    check_close(w.grad(), {0.6, -0.8, 0, 0});
}

BOOST_AUTO_TEST_CASE(matrix_spellings_as_libtorch) {
    const tg::Tensor a = f64({1, 2, 3, 4, 5, 6}, {2, 3}), b = f64({1, 0, 0, 1, 1, 1}, {3, 2});
    check_close(tg::mm(a, b), {4, 5, 10, 11});
    check_close(tg::addmm(f64({1, -1}, {2}), a, b, 0.5, 2.0), {8.5, 9.5, 20.5, 21.5});
    const tg::Tensor nan_c = f64({std::nan(""), 1}, {2});
    check_close(tg::addmm(nan_c, a, b, 0.0), {4, 5, 10, 11});  // beta = 0: c is not read
    check_close(tg::bmm(a.reshape({1, 2, 3}), b.reshape({1, 3, 2})), {4, 5, 10, 11});
    BOOST_CHECK_THROW(tg::mm(a, a), tg::shape_error);
    BOOST_CHECK_THROW(tg::mm(a.reshape({6}), b), tg::shape_error);
    BOOST_CHECK_THROW(tg::bmm(a, b), tg::shape_error);
    BOOST_CHECK_THROW(tg::bmm(tg::zeros({2, 2, 3}), tg::zeros({3, 3, 2})), tg::shape_error);
    BOOST_CHECK_THROW(tg::addmm(tg::zeros({3}), a, b), tg::shape_error);
}

BOOST_AUTO_TEST_CASE(masks_and_likes_as_libtorch) {
    const tg::Tensor x = f64({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
    check_close(x.triu(), {1, 2, 3, 0, 5, 6, 0, 0, 9});
    check_close(x.triu(1), {0, 2, 3, 0, 0, 6, 0, 0, 0});
    check_close(tg::tril(x), {1, 0, 0, 4, 5, 0, 7, 8, 9});
    check_close(x.tril(-1), {0, 0, 0, 4, 0, 0, 7, 8, 0});
    const tg::Tensor m = tg::gt(x, 4.0);
    check_close(x.masked_fill(m, -1.0), {1, 2, 3, 4, -1, -1, -1, -1, -1});
    check_close(x.masked_fill(tg::tensor(std::vector<int64_t>{1, 0, 0}), 0.0),
                {0, 2, 3, 0, 5, 6, 0, 8, 9});
    BOOST_CHECK_THROW(x.masked_fill(tg::ones({2, 3}), 0.0), tg::shape_error);
    BOOST_CHECK_THROW(tg::triu(tg::ones({3})), tg::shape_error);

    const tg::Tensor f = tg::zeros({2, 3});
    BOOST_TEST(tg::full_like(f, 7.0).to_vector<float>() == std::vector<float>(6, 7.f),
               boost::test_tools::per_element());
    BOOST_TEST(tg::shape_str(tg::randn_like(f).sizes()) == "[2,3]");
    BOOST_TEST((tg::rand_like(x).dtype() == tg::kFloat64));
    BOOST_TEST((x.type_as(f).dtype() == tg::kFloat32));
    BOOST_TEST(tg::shape_str(f64({1, 2, 3}, {3}).expand_as(x).sizes()) == "[3,3]");
    BOOST_TEST(tg::shape_str(f64({1, 2, 3, 4, 5, 6}, {6}).view_as(f).sizes()) == "[2,3]");
    BOOST_TEST(tg::shape_str(x.t().reshape_as(tg::zeros({9})).sizes()) == "[9]");
}

BOOST_AUTO_TEST_CASE(devices_as_libtorch_spells_them) {
    BOOST_TEST(tg::Device(tg::kCUDA, 1).str() == "cuda:1");
    BOOST_TEST(tg::Device(tg::kOpenCL).str() == "opencl:0");
    BOOST_TEST(tg::Device(tg::kCPU).str() == "cpu");
    BOOST_TEST((tg::Device("opencl:2") == tg::Device::opencl(2)));
    BOOST_TEST((tg::Device("cuda") == tg::Device::cuda(0)));
    BOOST_TEST((tg::Device(std::string("cpu")) == tg::Device::cpu()));
    BOOST_TEST((tg::Device("cpu:0") == tg::Device::cpu()));
    for (const char* bad : {"gpu", "cuda:", "cuda:x", "cuda:-1", "opencl:99999", "cpu:1", ""})
        BOOST_CHECK_THROW(tg::Device{bad}, tg::device_error);
    BOOST_TEST(tg::cuda::is_available() == (tg::cuda::device_count() > 0));
    BOOST_TEST(tg::cuda::is_available() == tg::is_available(tg::Device(tg::kCUDA, 0)));
    BOOST_TEST(tg::opencl::is_available() == tg::is_available(tg::Device("opencl:0")));
    const tg::Tensor x = tg::ones({2}).to(tg::kCPU);  // a DeviceType converts to a Device
    BOOST_TEST(x.device().is_cpu());
    if (tg::opencl::is_available()) {
        const tg::Tensor y = x.to("opencl:0");
        BOOST_TEST((y.device() == tg::Device(tg::kOpenCL, 0)));
        check_close(y.to(tg::kCPU) * 2.0, {2, 2});
    }
}
