/// Sizes: checked size arithmetic (Note [Checked sizes] in src/core/shape.cpp), narrow's
/// bounds, integer division (Note [Integer division] in src/backend/kernels.def), arange's
/// validation, typed out-of-memory errors, and the zero-size behaviour the op table's *_empty*
/// rows (op_cases_*.hpp) cannot state: accumulated gradients, NaN means, errors. The division
/// and allocation checks run on OpenCL too when it is available (int64 kernels only, so the
/// test builds one device program).
#define BOOST_TEST_MODULE test_sizes
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tapegrad/nn.hpp"
#include "test_util.hpp"

using tg::Tensor;
using tgtest::check_throws;

namespace {
constexpr int64_t k32 = int64_t(1) << 32, k40 = int64_t(1) << 40, k62 = int64_t(1) << 62;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

/// The CPU, and the OpenCL device when there is one.
std::vector<tg::Device> devices() {
    std::vector<tg::Device> d{tg::Device::cpu()};
    if (tg::is_available(tg::Device::opencl(0)))
        d.push_back(tg::Device::opencl(0));
    return d;
}

Tensor longs(const std::vector<int64_t>& v, tg::Device dev) {
    return tg::tensor(v).to(dev);
}

std::vector<int64_t> host_longs(const Tensor& t) {
    return t.to(tg::Device::cpu()).to_vector<int64_t>();
}
}  // namespace

// ============================================================================ checked sizes

BOOST_AUTO_TEST_CASE(factories_reject_shapes_whose_sizes_overflow) {
    // 2^62 float32 elements are 2^64 bytes: the element count fits, the byte count does not
    check_throws<tg::shape_error>([] { tg::zeros({k62}); }, {"zeros", "[4611686018427387904]"});
    check_throws<tg::shape_error>(
        [] {
            tg::zeros({k40, k40});
        },
        {"zeros", "overflows", "[1099511627776,1099511627776]"});
    // no elements, but the contiguous strides multiply past int64
    check_throws<tg::shape_error>(
        [] {
            tg::zeros({k32, k32, 0});
        },
        {"zeros", "[4294967296,4294967296,0]"});
    check_throws<tg::shape_error>([] { tg::ones({k62, 4}, tg::kInt64); }, {"ones"});
    check_throws<tg::shape_error>([] { tg::full({-1, 3}, 2.0); }, {"full", "negative", "[-1,3]"});
    check_throws<tg::shape_error>([] { tg::empty({3, -2}); }, {"empty", "[3,-2]"});
    check_throws<tg::shape_error>([] { tg::randn({k40, k40}); }, {"randn"});
    check_throws<tg::shape_error>([] { tg::randint(0, 5, {-4}); }, {"randint", "[-4]"});
    check_throws<tg::shape_error>([] { tg::zeros(tg::Shape(17, 1)); }, {"zeros", "16 dims"});
    float buf[4] = {};
    check_throws<tg::shape_error>([&] { tg::from_blob(buf, {-2, -2}); }, {"from_blob", "[-2,-2]"});
    check_throws<tg::shape_error>([&] { tg::from_blob(buf, {k40, k40}); }, {"from_blob"});
    BOOST_TEST(tg::from_blob(buf, {2, 2}).sum().item<float>() == 0.0f);
}

BOOST_AUTO_TEST_CASE(views_and_joins_reject_shapes_whose_sizes_overflow) {
    const Tensor e = tg::zeros({0});
    check_throws<tg::shape_error>(
        [&] {
            e.reshape({k32, k32});
        },
        {"reshape", "[4294967296,4294967296]"});
    check_throws<tg::shape_error>([&] { e.reshape({k32, k32, 0}); }, {"reshape"});
    check_throws<tg::shape_error>([&] { e.view({k32, -1, k32}); }, {"view"});
    check_throws<tg::shape_error>([&] { e.reshape({-2, 0}); }, {"reshape", "[-2,0]"});
    Tensor deep = tg::zeros({2});
    check_throws<tg::shape_error>(
        [&] {
            for (int i = 0; i < 16; ++i)
                deep = deep.unsqueeze(0);
        },
        {"16 dims"});
    const Tensor one = tg::ones({1, 1});
    check_throws<tg::shape_error>(
        [&] {
            one.expand({k40, k40});
        },
        {"expand", "[1099511627776,1099511627776]"});
    check_throws<tg::shape_error>([&] { one.expand({-2, 1}); }, {"expand", "-2"});
    check_throws<tg::shape_error>([&] { one.expand({k32, k32, 0}); }, {"expand"});
    // stride-0 views may be huge, but what is made of them must still fit
    const Tensor big = tg::ones({1}).expand({k62});
    BOOST_TEST(big.numel() == k62);
    check_throws<tg::shape_error>([&] { tg::cat({big, big}); }, {"cat"});
    check_throws<tg::shape_error>([&] { big.contiguous(); }, {"clone", "[4611686018427387904]"});
    const Tensor col = tg::ones({1, 1}).expand({k40, 1}), row = tg::ones({1, 1}).expand({1, k40});
    check_throws<tg::shape_error>([&] { (void)(col + row); },
                                  {"add", "[1099511627776,1099511627776]"});
    check_throws<tg::shape_error>([&] { tg::matmul(col, row); }, {"matmul"});
    check_throws<tg::shape_error>(
        [&] {
            tg::where(tg::ones({1, 1}, tg::kBool), col, row);
        },
        {"where"});
    const Tensor many = tg::zeros({1}, tg::kInt64).expand({k32});
    check_throws<tg::shape_error>([&] { tg::index_select(col, 1, many); }, {"index_select"});
}

BOOST_AUTO_TEST_CASE(index_ops_check_the_shapes_their_kernels_read) {
    const Tensor idx = longs({0, 1}, tg::Device::cpu());
    // the source must be the target with the indexed dim as long as the index
    check_throws<tg::shape_error>(
        [&] {
            tg::index_add(tg::ones({2, 2}), {5, 4}, 0, idx);
        },
        {"index_add", "[2,2]", "[2,4]"});
    check_throws<tg::shape_error>([&] { tg::index_add(tg::ones({2}), {}, 0, idx); },
                                  {"index_add", "0-dim"});
    check_throws<tg::shape_error>([&] { tg::index_select(tg::scalar_tensor(1.0), 0, idx); },
                                  {"index_select", "0-dim"});
    check_throws<tg::shape_error>([&] { tg::gather(tg::scalar_tensor(1.0), 0, idx); },
                                  {"gather", "0-dim"});
    tgtest::check_close(
        tg::index_add(tg::ones({2, 3}), {4, 3}, 0, longs({3, 1}, tg::Device::cpu())),
        {0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1});
}

BOOST_AUTO_TEST_CASE(narrow_checks_its_bounds_without_overflow) {
    const Tensor x = tg::arange(0, 4, 1, tg::kFloat64);
    check_throws<tg::shape_error>([&] { x.narrow(0, kMax, 2); },
                                  {"narrow", "start 9223372036854775807", "length 2", "[4]"});
    check_throws<tg::shape_error>([&] { x.narrow(0, 2, kMax); }, {"narrow", "[4]"});
    check_throws<tg::shape_error>([&] { x.narrow(0, kMin, 1); }, {"narrow"});
    check_throws<tg::shape_error>([&] { x.narrow(0, -5, 1); }, {"narrow"});
    check_throws<tg::shape_error>([&] { x.narrow(0, 1, -1); }, {"narrow"});
    check_throws<tg::shape_error>([&] { x.narrow(0, -1, 2); }, {"narrow"});
    check_throws<tg::shape_error>([&] { tg::narrow_scatter(x, {5}, 0, 2); }, {"narrow"});
    tgtest::check_close(x.narrow(0, -3, 2), {1, 2});
    tgtest::check_close(x.narrow(0, 1, 3), {1, 2, 3});
    BOOST_TEST(x.narrow(0, 4, 0).numel() == 0);
    BOOST_TEST(x.narrow(0, -4, 0).numel() == 0);
}

// ========================================================================== integer division

BOOST_AUTO_TEST_CASE(integer_division_as_libtorch_on_every_device) {
    for (const tg::Device dev : devices()) {
        BOOST_TEST_CONTEXT("on " << dev) {
            const Tensor a = longs({7, -7, 9}, dev), b = longs({2, 0, 1}, dev);
            // a / b is true division in float32, as LibTorch's: no integer ever divides by 0
            const Tensor q = a / b;
            BOOST_TEST(q.dtype() == tg::kFloat32);
            const std::vector<float> qf = q.to_vector<float>();
            BOOST_TEST(qf[0] == 3.5f);
            BOOST_TEST((std::isinf(qf[1]) && qf[1] < 0));
            BOOST_TEST((a / 2).to_vector<float>() == (std::vector<float>{3.5f, -3.5f, 4.5f}));
            // LibTorch C++'s s / t and t.div_() fill or write an int64 tensor: float cannot be
            check_throws<tg::dtype_error>([&] { (void)(100.0 / b); }, {"div_", "float32", "int64"});
            check_throws<tg::dtype_error>([&] { Tensor(a.clone()).div_(b); }, {"div_", "[3]"});
            check_throws<tg::dtype_error>([&] { Tensor(a.clone()).div_(2); }, {"div_"});
            // rounding_mode "trunc" runs the int64 kernel (Note [Integer division]): a zero
            // divisor throws value_error before the launch, INT64_MIN / -1 wraps
            check_throws<tg::value_error>([&] { tg::div(a, b, "trunc"); },
                                          {"div", "integer division by zero", "[3] / [3]"});
            check_throws<tg::value_error>(
                [&] {
                    tg::div(a.reshape({3, 1}), b, "floor");
                },
                {"div", "[3,1] / [3]"});
            const Tensor c = longs({2, 2, -4}, dev);
            BOOST_TEST(host_longs(tg::div(a, c, "trunc")) == (std::vector<int64_t>{3, -3, -2}));
            BOOST_TEST(host_longs(tg::div(a, c, "floor")) == (std::vector<int64_t>{3, -4, -3}));
            BOOST_TEST((tg::div(longs({}, dev).reshape({0, 1}), b, "trunc")).numel() == 0);
            const Tensor m = longs({kMin, kMin, 6}, dev);
            BOOST_TEST(host_longs(tg::div(m, longs({-1, 1, -1}, dev), "trunc")) ==
                       (std::vector<int64_t>{kMin, kMin, -6}));
            check_throws<tg::value_error>([&] { tg::div(a, b, "round"); }, {"div", "round"});
        }
    }
    // floating point division by zero is still IEEE; "trunc" truncates the quotient
    const std::vector<float> f = (tg::tensor({1.0, -1.0}) / tg::zeros({2})).to_vector<float>();
    BOOST_TEST((std::isinf(f[0]) && f[0] > 0 && std::isinf(f[1]) && f[1] < 0));
    tgtest::check_close(tg::div(tg::tensor({7.5, -7.5}), tg::tensor({2.0, 2.0}), "trunc"), {3, -3});
    check_throws<tg::dtype_error>([] { tg::div(tg::tensor({7.5}), tg::tensor({2.0}), "floor"); },
                                  {"div", "floor", "float32"});
}

// ============================================================================ arange

BOOST_AUTO_TEST_CASE(arange_validates_bounds_step_and_count) {
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    check_throws<tg::value_error>([&] { tg::arange(0, nan); }, {"arange", "nan", "finite"});
    check_throws<tg::value_error>([&] { tg::arange(nan, 3); }, {"arange", "nan"});
    check_throws<tg::value_error>([&] { tg::arange(0, inf); }, {"arange", "inf"});
    check_throws<tg::value_error>([&] { tg::arange(0, 1, nan); }, {"arange", "step=nan"});
    check_throws<tg::shape_error>([&] { tg::arange(0, 1e30); }, {"arange", "1e+30", "elements"});
    check_throws<tg::shape_error>([&] { tg::arange(-1e308, 1e308); }, {"arange", "elements"});
    check_throws<tg::shape_error>([&] { tg::arange(0, double(k62)); }, {"arange"});
    check_throws<tg::value_error>([&] { tg::arange(0, 1, 0); }, {"arange", "step=0"});
    check_throws<tg::value_error>([&] { tg::arange(0, 1, -1); }, {"arange"});
    tgtest::check_close(tg::arange(-1.5, 1, 0.5, tg::kFloat64), {-1.5, -1, -0.5, 0, 0.5});
    BOOST_TEST(tg::arange(2, 2).numel() == 0);
}

// ============================================================================ out of memory

BOOST_AUTO_TEST_CASE(impossible_allocations_throw_out_of_memory) {
    for (const tg::Device dev : devices()) {
        BOOST_TEST_CONTEXT("on " << dev) {
            const int64_t before = tg::memory::stats(dev).current_bytes;
            // more than 2^62 bytes: refused before any allocator sees the request
            check_throws<tg::out_of_memory>(
                [&] {
                    tg::empty({(int64_t(1) << 59) + 1},
                              tg::TensorOptions(tg::kFloat64).device(dev));
                },
                {dev.str(), "4611686018427387912 bytes"});
#ifndef __SANITIZE_ADDRESS__  // ASan aborts on an impossible request instead of failing it
            // 2^61 bytes, more than any address space: the system allocation itself fails
            check_throws<tg::out_of_memory>(
                [&] { tg::zeros({int64_t(1) << 58}, tg::TensorOptions(tg::kFloat64).device(dev)); },
                {dev.str(), "out of memory"});
#endif
            BOOST_TEST(tg::memory::stats(dev).current_bytes == before);
        }
    }
}

// ============================================================================ zero-size

// The op table's *_empty* rows run these ops on the devices too (backend_conformance.hpp); the
// empty-product cases are done device-independently (Note [Empty products]), so the CPU shows
// them here without building another device program.
BOOST_AUTO_TEST_CASE(linear_on_an_empty_batch_has_zero_parameter_gradients) {
    for (const tg::Device dev : {tg::Device::cpu()}) {
        BOOST_TEST_CONTEXT("on " << dev) {
            const auto opt = tg::TensorOptions().device(dev).requires_grad(true);
            Tensor w = tg::ones({3, 4}, opt), b = tg::ones({3}, opt);
            { const Tensor stale = tg::full({3}, 7.0, dev); }  // freed memory full of 7s
            tg::linear(tg::zeros({0, 4}, dev), w, b).sum().backward();
            tgtest::check_close(b.grad(), {0, 0, 0}, 0, 0);
            BOOST_TEST(w.grad().sum().item<float>() == 0.0f);
            // with .grad() defined, an empty batch adds nothing (the in-place path)
            tg::linear(tg::ones({2, 4}, dev), w, b).sum().backward();
            tg::linear(tg::zeros({0, 4}, dev), w, b).sum().backward();
            tgtest::check_close(b.grad(), {2, 2, 2}, 0, 0);
            BOOST_TEST(w.grad().sum().item<float>() == 24.0f);
            // the layer, with its batch folded from [2, 0, 4]
            tg::nn::Linear layer(4, 3);
            layer->to(dev);
            const Tensor y = layer->forward(tg::zeros({2, 0, 4}, dev));
            BOOST_TEST(y.sizes() == tg::Shape({2, 0, 3}));
            y.sum().backward();
            tgtest::check_close(layer->bias.grad(), {0, 0, 0}, 0, 0);
        }
    }
}

BOOST_AUTO_TEST_CASE(reductions_over_empty_dims) {
    for (const tg::Device dev : {tg::Device::cpu()}) {
        BOOST_TEST_CONTEXT("on " << dev) {
            const Tensor x = tg::zeros({0, 3}, dev), y = tg::ones({3, 0}, tg::kFloat64).to(dev);
            BOOST_TEST(x.sum().item<float>() == 0.0f);  // the identity
            tgtest::check_close(x.sum({0}), {0, 0, 0}, 0, 0);
            tgtest::check_close(tg::matmul(y, y.t()), std::vector<double>(9, 0.0), 0, 0);
            for (double m : tgtest::values_of(x.mean({0})))
                BOOST_TEST(std::isnan(m));  // 0/0, as in PyTorch
            for (double v : tgtest::values_of(tg::var(y, {1}, false)))
                BOOST_TEST(std::isnan(v));
            BOOST_TEST(std::get<0>(tg::max(x, 1)).sizes() == tg::Shape({0}));
            BOOST_TEST(tg::argmin(y, 0).sizes() == tg::Shape({0}));
            check_throws<tg::shape_error>([&] { tg::max(x, 0); }, {"max", "dim 0", "[0,3]"});
            check_throws<tg::shape_error>([&] { tg::min(x); }, {"min", "[0,3]"});
            check_throws<tg::shape_error>([&] { tg::argmax(y, 1); }, {"argmax", "[3,0]"});
        }
    }
}
