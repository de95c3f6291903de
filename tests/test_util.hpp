#pragma once
/// Shared helpers for the tapegrad Boost.Test suites: deterministic inputs, value comparison and
/// "throws this exception type with a message naming these things" checks.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"

namespace tgtest {

/// Deterministic values in [lo, hi) for a given seed (independent of tg::manual_seed).
inline std::vector<double> random_values(int64_t n, uint64_t seed, double lo = -1, double hi = 1) {
    std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + 12345);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(size_t(n > 0 ? n : 0));
    for (auto& e : v)
        e = dist(gen);
    return v;
}

/// A contiguous tensor of `shape` holding `values` (no grad).
inline tg::Tensor from_values(const std::vector<double>& values, const tg::Shape& shape,
                              tg::Dtype dtype = tg::kFloat64) {
    tg::Tensor flat = tg::tensor(values, tg::TensorOptions(dtype));
    return flat.reshape(shape).contiguous().detach();
}

/// A float64 constant: element i of the flattened tensor is scale·sin(1.3·i + phase), as
/// scripts/libtorch_reference.cpp's wave() builds LibTorch's inputs.
inline tg::Tensor wave(const tg::Shape& shape, double scale = 1, double phase = 0.5) {
    std::vector<double> v(size_t(tg::numel_of(shape)));
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = scale * std::sin(1.3 * double(i) + phase);
    return from_values(v, shape);
}

/// A float64 constant (does not require grad) with values in [lo, hi).
inline tg::Tensor make_const(const tg::Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
    return from_values(random_values(tg::numel_of(shape), seed, lo, hi), shape);
}

/// A float64 leaf that requires grad, values in [lo, hi).
inline tg::Tensor make_input(const tg::Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
    tg::Tensor x = make_const(shape, seed, lo, hi);
    x.requires_grad_(true);
    return x;
}

/// Host copy of any tensor's values as double, in logical (row-major) order.
inline std::vector<double> values_of(const tg::Tensor& t) {
    tg::NoGradGuard guard;
    return t.to(tg::kFloat64).contiguous().to_vector<double>();
}

/// Checks every element of t against expected within atol + rtol*|expected|.
inline void check_close(const tg::Tensor& t, const std::vector<double>& expected,
                        double atol = 1e-9, double rtol = 1e-9) {
    std::vector<double> got = values_of(t);
    BOOST_TEST_REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        double tol = atol + rtol * std::abs(expected[i]);
        BOOST_TEST_CONTEXT("element " << i << ": got " << got[i] << ", expected " << expected[i]) {
            BOOST_TEST(std::abs(got[i] - expected[i]) <= tol);
        }
    }
}

/// Checks two tensors have equal shapes and close values.
inline void check_close(const tg::Tensor& a, const tg::Tensor& b, double atol = 1e-9,
                        double rtol = 1e-9) {
    BOOST_TEST_REQUIRE(tg::shape_str(a.sizes()) == tg::shape_str(b.sizes()));
    check_close(a, values_of(b), atol, rtol);
}

/// Runs f and checks it throws exactly an E (or subclass) whose message contains every needle.
template <class E, class F>
void check_throws(F&& f, const std::vector<std::string>& needles, const std::string& what = "") {
    BOOST_TEST_CONTEXT(what) {
        try {
            f();
            BOOST_ERROR("expected an exception, nothing was thrown");
        } catch (const E& e) {
            std::string msg = e.what();
            for (const auto& n : needles) {
                BOOST_TEST_CONTEXT("message: \"" << msg << "\"") {
                    BOOST_TEST(msg.find(n) != std::string::npos, "message lacks \"" << n << "\"");
                }
            }
        } catch (const std::exception& e) {
            BOOST_ERROR("wrong exception type; message: " << e.what());
        }
    }
}

/// Whether msg contains needle.
inline bool contains(const std::string& msg, const std::string& needle) {
    return msg.find(needle) != std::string::npos;
}

}  // namespace tgtest
