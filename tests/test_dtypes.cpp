/// LibTorch's other dtypes: uint8, int8, int16, int32, float16 and bfloat16 beside float32,
/// float64, int64 and bool. Every expected value below was recorded from LibTorch 1.13
/// (scripts/libtorch_reference.cpp, dtypes()): the promotion tables, conversions at the edges
/// (out-of-range floats into integers, rounding into float16), integer arithmetic that wraps,
/// float16 arithmetic rounded per op, printing, and saving. OpenCL round trips: the device suites
/// (tests/backend_device_tests.hpp).
#define BOOST_TEST_MODULE test_dtypes
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tg::Tensor;
using tgtest::check_throws;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
constexpr double kMin32 = -2147483648.0;

/// The dtypes in the order of tg::Dtype (and of the tables recorded from LibTorch).
const tg::Dtype kAll[] = {tg::kFloat32, tg::kFloat64, tg::kInt64, tg::kBool,    tg::kUInt8,
                          tg::kInt8,    tg::kInt16,   tg::kInt32, tg::kFloat16, tg::kBFloat16};

/// t has dtype d and exactly these values (NaN matches NaN).
void check_values(const Tensor& t, tg::Dtype d, const std::vector<double>& expected) {
    BOOST_TEST(t.dtype() == d, "dtype " << t.dtype() << ", expected " << d);
    const std::vector<double> got = tgtest::values_of(t);
    BOOST_TEST_REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i)
        BOOST_TEST((got[i] == expected[i] || (std::isnan(got[i]) && std::isnan(expected[i]))),
                   "element " << i << ": got " << got[i] << ", expected " << expected[i]);
}

std::string printed(const Tensor& t) {
    std::ostringstream os;
    os << t;
    return os.str();
}
}  // namespace

// ============================================================================ names, sizes

BOOST_AUTO_TEST_CASE(constants_names_and_sizes_as_libtorch) {
    BOOST_TEST((tg::kByte == tg::kUInt8 && tg::kU8 == tg::kUInt8));
    BOOST_TEST((tg::kChar == tg::kInt8 && tg::kI8 == tg::kInt8));
    BOOST_TEST((tg::kShort == tg::kInt16 && tg::kI16 == tg::kInt16));
    BOOST_TEST((tg::kInt == tg::kInt32 && tg::kI32 == tg::kInt32));
    BOOST_TEST((tg::kLong == tg::kInt64 && tg::kI64 == tg::kInt64));
    BOOST_TEST((tg::kHalf == tg::kFloat16 && tg::kF16 == tg::kFloat16));
    BOOST_TEST((tg::kFloat == tg::kFloat32 && tg::kF32 == tg::kFloat32));
    BOOST_TEST((tg::kDouble == tg::kFloat64 && tg::kF64 == tg::kFloat64));
    const char* names[] = {"float32", "float64", "int64", "bool",    "uint8",
                           "int8",    "int16",   "int32", "float16", "bfloat16"};
    const char* torch_names[] = {"Float", "Double", "Long", "Bool", "Byte",
                                 "Char",  "Short",  "Int",  "Half", "BFloat16"};
    const size_t sizes[] = {4, 8, 8, 1, 1, 1, 2, 4, 2, 2};
    for (int i = 0; i < tg::kNumDtypes; ++i) {
        BOOST_TEST(tg::dtype_name(kAll[i]) == std::string(names[i]));
        BOOST_TEST(tg::dtype_torch_name(kAll[i]) == std::string(torch_names[i]));
        BOOST_TEST(tg::element_size(kAll[i]) == sizes[i]);
    }
    BOOST_TEST((tg::is_floating(tg::kHalf) && tg::is_floating(tg::kBFloat16)));
    BOOST_TEST((tg::is_integral(tg::kByte) && !tg::is_integral(tg::kBool)));
    BOOST_TEST(tg::is_integral(tg::kBool, true));
    BOOST_TEST((tg::dtype_of<uint8_t>() == tg::kByte && tg::dtype_of<tg::Half>() == tg::kHalf));
    BOOST_TEST(
        (tg::dtype_of<int32_t>() == tg::kInt && tg::dtype_of<tg::BFloat16>() == tg::kBFloat16));
}

// ============================================================================ promotion

BOOST_AUTO_TEST_CASE(promotion_tables_recorded_from_libtorch) {
    const char* promote[10][10] = {{"float32", "float64", "float32", "float32", "float32",
                                    "float32", "float32", "float32", "float32", "float32"},
                                   {"float64", "float64", "float64", "float64", "float64",
                                    "float64", "float64", "float64", "float64", "float64"},
                                   {"float32", "float64", "int64", "int64", "int64", "int64",
                                    "int64", "int64", "float16", "bfloat16"},
                                   {"float32", "float64", "int64", "bool", "uint8", "int8", "int16",
                                    "int32", "float16", "bfloat16"},
                                   {"float32", "float64", "int64", "uint8", "uint8", "int16",
                                    "int16", "int32", "float16", "bfloat16"},
                                   {"float32", "float64", "int64", "int8", "int16", "int8", "int16",
                                    "int32", "float16", "bfloat16"},
                                   {"float32", "float64", "int64", "int16", "int16", "int16",
                                    "int16", "int32", "float16", "bfloat16"},
                                   {"float32", "float64", "int64", "int32", "int32", "int32",
                                    "int32", "int32", "float16", "bfloat16"},
                                   {"float32", "float64", "float16", "float16", "float16",
                                    "float16", "float16", "float16", "float16", "float32"},
                                   {"float32", "float64", "bfloat16", "bfloat16", "bfloat16",
                                    "bfloat16", "bfloat16", "bfloat16", "float32", "bfloat16"}};
    // tensor [2] with the Scalars 2, 2.0, true
    const char* scalar[10][3] = {
        {"float32", "float32", "float32"}, {"float64", "float64", "float64"},
        {"int64", "float32", "int64"},     {"int64", "float32", "bool"},
        {"uint8", "float32", "uint8"},     {"int8", "float32", "int8"},
        {"int16", "float32", "int16"},     {"int32", "float32", "int32"},
        {"float16", "float16", "float16"}, {"bfloat16", "bfloat16", "bfloat16"}};
    // tensor [2] (row) with a 0-dim tensor (column): a 0-dim tensor counts only when it is of a
    // higher kind (bool < integral < floating) or the row is bool
    const char* zero_dim[10][10] = {{"float32", "float32", "float32", "float32", "float32",
                                     "float32", "float32", "float32", "float32", "float32"},
                                    {"float64", "float64", "float64", "float64", "float64",
                                     "float64", "float64", "float64", "float64", "float64"},
                                    {"float32", "float64", "int64", "int64", "int64", "int64",
                                     "int64", "int64", "float16", "bfloat16"},
                                    {"float32", "float64", "int64", "bool", "uint8", "int8",
                                     "int16", "int32", "float16", "bfloat16"},
                                    {"float32", "float64", "uint8", "uint8", "uint8", "uint8",
                                     "uint8", "uint8", "float16", "bfloat16"},
                                    {"float32", "float64", "int8", "int8", "int8", "int8", "int8",
                                     "int8", "float16", "bfloat16"},
                                    {"float32", "float64", "int16", "int16", "int16", "int16",
                                     "int16", "int16", "float16", "bfloat16"},
                                    {"float32", "float64", "int32", "int32", "int32", "int32",
                                     "int32", "int32", "float16", "bfloat16"},
                                    {"float16", "float16", "float16", "float16", "float16",
                                     "float16", "float16", "float16", "float16", "float16"},
                                    {"bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16",
                                     "bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16"}};
    for (int i = 0; i < 10; ++i) {
        const Tensor t = tg::zeros({2}, kAll[i]);
        BOOST_TEST_CONTEXT(tg::dtype_name(kAll[i])) {
            for (int j = 0; j < 10; ++j) {
                BOOST_TEST(tg::dtype_name(tg::promote_types(kAll[i], kAll[j])) ==
                           std::string(promote[i][j]));
                BOOST_TEST(tg::dtype_name(tg::result_type(t, tg::zeros({}, kAll[j]))) ==
                           std::string(zero_dim[i][j]));
            }
            BOOST_TEST(tg::dtype_name(tg::result_type(t, 2)) == std::string(scalar[i][0]));
            BOOST_TEST(tg::dtype_name(tg::result_type(t, 2.0)) == std::string(scalar[i][1]));
            BOOST_TEST(tg::dtype_name(tg::result_type(t, true)) == std::string(scalar[i][2]));
        }
    }
    BOOST_TEST(!tg::can_cast(tg::kFloat32, tg::kInt32));
    BOOST_TEST(!tg::can_cast(tg::kInt64, tg::kBool));
    BOOST_TEST(tg::can_cast(tg::kInt16, tg::kUInt8));
}

// ============================================================================ conversions

BOOST_AUTO_TEST_CASE(conversions_at_the_edges_as_libtorch_on_x86) {
    const std::vector<double> v = {255,           256,   -1,     -129,   1e10,
                                   -1e10,         kNan,  kInf,   -kInf,  2.7,
                                   -2.7,          300.5, 65535,  65536,  2147483648.0,
                                   -2147483649.0, 127.9, -128.9, 9.3e18, 2147483909.0};
    const double m = kMin32, L = double(kMin64);
    // from float64; float32 differs only where the value itself rounds (noted)
    check_values(tg::tensor(v, tg::kFloat64).to(tg::kUInt8), tg::kUInt8,
                 {255, 0, 255, 127, 0, 0, 0, 0, 0, 2, 254, 44, 255, 0, 0, 255, 127, 128, 0, 5});
    check_values(tg::tensor(v, tg::kFloat64).to(tg::kInt8), tg::kInt8,
                 {-1, 0, -1, 127, 0, 0, 0, 0, 0, 2, -2, 44, -1, 0, 0, 0, 127, -128, 0, 0});
    check_values(tg::tensor(v, tg::kFloat64).to(tg::kInt16), tg::kInt16,
                 {255, 256, -1, -129, 0, 0, 0, 0, 0, 2, -2, 300, -1, 0, 0, 0, 127, -128, 0, 0});
    check_values(
        tg::tensor(v, tg::kFloat64).to(tg::kInt32), tg::kInt32,
        {255, 256, -1, -129, m, m, m, m, m, 2, -2, 300, 65535, 65536, m, m, 127, -128, m, m});
    check_values(tg::tensor(v, tg::kFloat64).to(tg::kInt64), tg::kInt64,
                 {255, 256, -1,    -129,  1e10,         -1e10,         L,   L,    L, 2,
                  -2,  300, 65535, 65536, 2147483648.0, -2147483649.0, 127, -128, L, 2147483909.0});
    check_values(tg::tensor(v, tg::kFloat64).to(tg::kFloat16), tg::kFloat16,
                 {255,         256,   -1,   -129, kInf, -kInf, kNan,    kInf,     -kInf, 2.69921875,
                  -2.69921875, 300.5, kInf, kInf, kInf, -kInf, 127.875, -128.875, kInf,  kInf});
    check_values(tg::tensor(v, tg::kFloat64).to(tg::kBFloat16), tg::kBFloat16,
                 {255,
                  256,
                  -1,
                  -129,
                  9999220736,
                  -9999220736,
                  kNan,
                  kInf,
                  -kInf,
                  2.703125,
                  -2.703125,
                  300,
                  65536,
                  65536,
                  2147483648,
                  -2147483648,
                  128,
                  -129,
                  9.2954296308927037e+18,
                  2147483648});
    check_values(tg::tensor(v, tg::kFloat64).to(tg::kBool), tg::kBool, std::vector<double>(20, 1));
    // float32: 2147483909 is 2147483904 there, -2147483649 is -2^31
    check_values(tg::tensor(v, tg::kFloat32).to(tg::kUInt8), tg::kUInt8,
                 {255, 0, 255, 127, 0, 0, 0, 0, 0, 2, 254, 44, 255, 0, 0, 0, 127, 128, 0, 0});
    check_values(tg::tensor(v, tg::kFloat32).to(tg::kInt64), tg::kInt64,
                 {255, 256, -1,    -129,  1e10,         -1e10,         L,   L,    L, 2,
                  -2,  300, 65535, 65536, 2147483648.0, -2147483648.0, 127, -128, L, 2147483904.0});
    // strided and broadcast sources, and a long run (the vectorised loop) convert alike
    const Tensor f = tg::tensor(v, tg::kFloat64);
    check_values(tg::stack({f, f}, 1).select(1, 1).to(tg::kUInt8).narrow(0, 15, 5), tg::kUInt8,
                 {255, 127, 128, 0, 5});
    const Tensor run = tg::cat(std::vector<Tensor>(64, f)).to(tg::kUInt8);
    check_values(run.narrow(0, 1260, 20), tg::kUInt8,
                 {255, 0, 255, 127, 0, 0, 0, 0, 0, 2, 254, 44, 255, 0, 0, 255, 127, 128, 0, 5});
    check_values(f.narrow(0, 4, 1).expand({3}).to(tg::kInt8), tg::kInt8, {0, 0, 0});
    // int64 into narrower integers keeps the low bytes; into floats rounds to nearest
    const Tensor i =
        tg::tensor(std::vector<int64_t>{255, 256, -1, -129, 70000, -70000, 3000000000LL,
                                        -3000000000LL, 9007199254740993LL, 16777217});
    check_values(i.to(tg::kUInt8), tg::kUInt8, {255, 0, 255, 127, 112, 144, 0, 0, 1, 1});
    check_values(i.to(tg::kInt8), tg::kInt8, {-1, 0, -1, 127, 112, -112, 0, 0, 1, 1});
    check_values(i.to(tg::kInt16), tg::kInt16,
                 {255, 256, -1, -129, 4464, -4464, 24064, -24064, 1, 1});
    check_values(i.to(tg::kInt32), tg::kInt32,
                 {255, 256, -1, -129, 70000, -70000, -1294967296, 1294967296, 1, 16777217});
    check_values(i.to(tg::kFloat16), tg::kFloat16,
                 {255, 256, -1, -129, kInf, -kInf, kInf, -kInf, kInf, kInf});
    check_values(
        i.to(tg::kBFloat16), tg::kBFloat16,
        {255, 256, -1, -129, 70144, -70144, 3003121664, -3003121664, 9007199254740992, 16777216});
    check_values(
        i.to(tg::kFloat32), tg::kFloat32,
        {255, 256, -1, -129, 70000, -70000, 3000000000, -3000000000, 9007199254740992, 16777216});
    // rounding into float16 and bfloat16: ties to even, subnormals, overflow at 65520
    const std::vector<double> h = {65504,
                                   65519,
                                   65520,
                                   1e10,
                                   1.0 / 3,
                                   1e-7,
                                   6e-8,
                                   2e-8,
                                   3e-38,
                                   -0.0,
                                   1.00048828125,
                                   1.000732421875,
                                   2.98023223876953125e-8};
    check_values(tg::tensor(h, tg::kFloat64).to(tg::kHalf), tg::kHalf,
                 {65504, 65504, kInf, kInf, 0.333251953125, 1.1920928955078125e-07,
                  5.9604644775390625e-08, 0, 0, -0.0, 1, 1.0009765625, 0});
    check_values(tg::tensor(h, tg::kFloat64).to(tg::kBFloat16), tg::kBFloat16,
                 {65536, 65536, 65536, 9999220736, 0.333984375, 1.0011717677116394e-07,
                  6.0070306062698364e-08, 2.0023435354232788e-08, 2.9938371747505135e-38, -0.0, 1,
                  1, 2.9802322387695312e-08});
    check_values(tg::tensor({2048.0, 0.1, 65504.0, -1.5}, tg::kHalf).to(tg::kUInt8), tg::kUInt8,
                 {0, 0, 224, 255});
    // every pair converts (through float32 where the table says so) and back without loss
    const Tensor small = tg::tensor({0.0, 1.0, 2.0, 100.0});
    for (tg::Dtype a : kAll)
        for (tg::Dtype b : kAll) {
            const Tensor s = (a == tg::kBool || b == tg::kBool) ? small.clamp(0, 1) : small;
            BOOST_TEST_CONTEXT(a << " -> " << b) {
                check_values(s.to(a).to(b).to(a), a, tgtest::values_of(s));
            }
        }
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_types) {
    const tg::Half h(0.1f);
    BOOST_TEST(h.x == 0x2E66);
    BOOST_TEST(float(h) == 0.0999755859375f);
    BOOST_TEST(tg::Half(1e10f).x == 0x7C00);
    BOOST_TEST(float(tg::Half(0x3C00, tg::Half::from_bits())) == 1.0f);
    BOOST_TEST(tg::BFloat16(0.1f).x == 0x3DCD);
    BOOST_TEST(std::isnan(float(tg::BFloat16(float(kNan)))));
    // every float16 converts to float and back to the same bits
    for (uint32_t b = 0; b < 0x10000; ++b) {
        const tg::Half x(uint16_t(b), tg::Half::from_bits());
        if (!std::isnan(float(x)) && tg::Half(float(x)).x != x.x)
            BOOST_FAIL("float16 " << b << " does not round-trip");
    }
}

// ============================================================================ factories, I/O

BOOST_AUTO_TEST_CASE(factories_with_every_dtype) {
    for (tg::Dtype d : kAll) {
        BOOST_TEST_CONTEXT(d) {
            check_values(tg::zeros({2, 2}, d), d, {0, 0, 0, 0});
            check_values(tg::ones({3}, d), d, {1, 1, 1});
            check_values(tg::full({2}, 1, d), d, {1, 1});
            BOOST_TEST(tg::empty({4}, d).dtype() == d);
            BOOST_TEST(tg::empty({4}, d).numel() == 4);
            if (d != tg::kBool) {
                check_values(tg::arange(4, d), d, {0, 1, 2, 3});
                check_values(tg::tensor({1.0, 2.0, 3.0}, d), d, {1, 2, 3});
                check_values(tg::scalar_tensor(7, d), d, {7});
            }
        }
    }
    // LibTorch checks a value into the dtype (-1 wraps into uint8 as an integer) ...
    check_values(tg::full({2}, -1, tg::kUInt8), tg::kUInt8, {255, 255});
    check_values(tg::full({2}, 2.7, tg::kUInt8), tg::kUInt8, {2, 2});
    check_values(tg::zeros({2}, tg::kByte).fill_(-1), tg::kByte, {255, 255});
    check_values(tg::tensor({1.5, 2.5}, tg::kHalf), tg::kHalf, {1.5, 2.5});
    check_values(tg::full({1}, 0.1, tg::kHalf), tg::kHalf, {0.0999755859375});
    check_values(tg::tensor(std::vector<int64_t>{9007199254740993LL}), tg::kInt64,
                 {9007199254740992.0});
    BOOST_TEST(tg::tensor(std::vector<int64_t>{9007199254740993LL}).item<int64_t>() ==
               9007199254740993LL);  // exact, not through a double
    BOOST_TEST(tg::full({1}, int64_t(9007199254740993LL), tg::kInt64).item<int64_t>() ==
               9007199254740993LL);
    // ... but arange wraps, as LibTorch's
    check_values(tg::arange(250, 260, 1, tg::kByte), tg::kByte,
                 {250, 251, 252, 253, 254, 255, 0, 1, 2, 3});
    check_values(tg::arange(0.5, 3, 1, tg::kInt), tg::kInt, {0, 1, 2});
    const Tensor r = tg::randint(0, 256, {1000}, tg::Generator(5), tg::kUInt8);
    check_values(r, tg::kUInt8, tgtest::values_of(tg::randint(0, 256, {1000}, tg::Generator(5))));
    // LibTorch draws float16 and bfloat16 with fewer bits than float32: not replicated, so refused
    check_throws<tg::dtype_error>([] { tg::randn({3}, tg::kHalf); }, {"randn", "float16", ".to("});
    check_throws<tg::dtype_error>([] { tg::ones({3}, tg::kBFloat16).uniform_(); },
                                  {"uniform_", "bfloat16"});
    check_values(tg::randint(0, 5, {3}, tg::Generator(3), tg::kHalf), tg::kHalf,
                 tgtest::values_of(tg::randint(0, 5, {3}, tg::Generator(3))));
}

BOOST_AUTO_TEST_CASE(from_blob_image_bytes_to_float_and_back) {
    // the common LibTorch path: from_blob(bytes, {c, h, w}, kUInt8).to(kFloat) / 255
    std::vector<uint8_t> bytes(3 * 4 * 5);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = uint8_t(i * 37 % 256);
    const Tensor img = tg::from_blob(bytes.data(), {3, 4, 5}, tg::kUInt8);
    BOOST_TEST(img.dtype() == tg::kByte);
    BOOST_TEST(img.data_ptr<uint8_t>() == bytes.data());  // no copy
    const Tensor x = img.to(tg::kFloat) / 255;
    BOOST_TEST(x.dtype() == tg::kFloat32);
    BOOST_TEST(x[2][3][4].item<float>() == float(bytes[59]) / 255.0f);
    // and back: scaled, clamped and truncated as LibTorch's to(kByte)
    const Tensor back = (x * 255).round().clamp(0, 255).to(tg::kU8);
    BOOST_TEST(back.to_vector<uint8_t>() == bytes);
    const Tensor perm = img.permute({1, 2, 0}).contiguous();  // CHW -> HWC
    BOOST_TEST(perm[1][2][0].item<int>() == int(bytes[7]));
    BOOST_TEST(perm[1][2][2].item<int>() == int(bytes[47]));
    bytes[0] = 9;  // the tensor sees the caller's memory
    BOOST_TEST(img[0][0][0].item<int>() == 9);
}

BOOST_AUTO_TEST_CASE(item_to_vector_and_data_ptr_for_every_dtype) {
    const Tensor u = tg::tensor({200.0, 7.0}, tg::kUInt8);
    BOOST_TEST(u[0].item<uint8_t>() == 200);
    BOOST_TEST(u[0].item<int>() == 200);
    BOOST_TEST(u[0].item().isIntegral());
    BOOST_TEST(u[0].item().toLong() == 200);
    BOOST_TEST(u.data_ptr<uint8_t>()[1] == 7);
    BOOST_TEST((u.to_vector<uint8_t>() == std::vector<uint8_t>{200, 7}));
    const Tensor h = tg::tensor({0.1, 2048.0}, tg::kHalf);
    BOOST_TEST(h[0].item<float>() == 0.0999755859375f);
    BOOST_TEST(h[0].item().isFloatingPoint());
    BOOST_TEST(float(h[0].item<tg::Half>()) == 0.0999755859375f);
    BOOST_TEST(h[1].item<int>() == 2048);
    BOOST_TEST(h.data_ptr<tg::Half>()[0].x == 0x2E66);
    BOOST_TEST(float(tg::tensor({3.0}, tg::kBFloat16).to_vector<tg::BFloat16>()[0]) == 3.0f);
    BOOST_TEST(
        (tg::tensor({-5.0, 5.0}, tg::kInt8).to_vector<int8_t>() == std::vector<int8_t>{-5, 5}));
    BOOST_TEST((tg::tensor({-5.0}, tg::kInt16).to_vector<int16_t>()[0] == -5));
    BOOST_TEST((tg::tensor({70000.0}, tg::kInt32).data_ptr<int32_t>()[0] == 70000));
    BOOST_TEST(tg::tensor({1.0}, tg::kBool).item().isBoolean());
    // LibTorch's item<T> checks: a value T cannot hold throws, a fraction truncates
    check_throws<tg::value_error>([&] { (void)tg::tensor(300).item<uint8_t>(); },
                                  {"item", "300", "uint8"});
    check_throws<tg::value_error>([&] { (void)tg::tensor(1e10).item<int>(); }, {"item", "int32"});
    check_throws<tg::value_error>([&] { (void)tg::tensor(kNan).item<int64_t>(); }, {"item", "nan"});
    BOOST_TEST(tg::tensor(-2.7).item<int>() == -2);
    BOOST_TEST(tg::tensor(-1).item<uint8_t>() == 255);  // an integer wraps, as there
}

// ============================================================================ arithmetic

BOOST_AUTO_TEST_CASE(integer_arithmetic_as_libtorch) {
    const Tensor u = tg::tensor({200.0, 10.0, 0.0, 255.0}, tg::kUInt8);
    const Tensor v = tg::tensor({100.0, 20.0, 1.0, 2.0}, tg::kUInt8);
    const Tensor c = tg::tensor({-128.0, 127.0, 5.0, -1.0}, tg::kInt8);
    const Tensor i32 = tg::tensor({7.0, -7.0, 0.0, 3.0}, tg::kInt32);
    const Tensor i64 = tg::tensor(std::vector<int64_t>{2, 2, 2, 2});
    const Tensor f = tg::tensor({0.5, 1.5, -2.5, 3.0});
    check_values(u + v, tg::kUInt8, {44, 30, 1, 1});
    check_values(u - v, tg::kUInt8, {100, 246, 255, 253});
    check_values(u * v, tg::kUInt8, {32, 200, 0, 254});
    check_values(u / v, tg::kFloat32, {2, 0.5, 0, 127.5});
    check_values(u + 300, tg::kUInt8, {244, 54, 44, 43});
    check_values(u * 2, tg::kUInt8, {144, 20, 0, 254});
    check_values(u * 2.0, tg::kFloat32, {400, 20, 0, 510});
    check_values(u + c, tg::kInt16, {72, 137, 5, 254});
    check_values(i32 + i64, tg::kInt64, {9, -5, 2, 5});
    check_values(i32 / i64, tg::kFloat32, {3.5, -3.5, 0, 1.5});
    check_values(-u, tg::kUInt8, {56, 246, 0, 1});
    check_values(-c, tg::kInt8, {-128, -127, -5, 1});
    check_values(c.abs(), tg::kInt8, {-128, 127, 5, 1});
    check_values(u > 300, tg::kBool, {1, 0, 0, 1});  // 300 is 44 as uint8
    check_values(u == -1, tg::kBool, {0, 0, 0, 1});
    check_values(u > -1, tg::kBool, {0, 0, 0, 0});
    check_values(u < 2.5, tg::kBool, {0, 0, 1, 0});
    check_values(u > c, tg::kBool, {1, 0, 0, 1});
    check_values(u.clamp(5, 100), tg::kUInt8, {100, 10, 5, 100});
    check_values(u.clamp(5.5, 100.5), tg::kFloat32, {100.5, 10, 5.5, 100.5});
    check_values(u.sum(), tg::kInt64, {465});
    check_values(c.sum(), tg::kInt64, {3});
    check_values(u.max(), tg::kUInt8, {255});
    check_values(tg::argmax(u), tg::kInt64, {3});
    check_values(u.pow(2), tg::kUInt8, {64, 100, 0, 1});
    check_values(u.pow(2.5), tg::kFloat32, {565685.4375, 316.22775268554688, 0, 1038366});
    check_values(c.pow(2), tg::kInt8, {0, 1, 25, 1});
    check_values(tg::tensor(std::vector<int64_t>{3, -1, 2}).pow(40), tg::kInt64,
                 {-6.2890786146526228e+18, 1, 1099511627776});
    check_values(tg::tensor(std::vector<int64_t>{-1, 1, 2, 3})
                     .pow(tg::tensor(std::vector<int64_t>{-1, -1, -1, 40})),
                 tg::kInt64, {-1, 1, 0, -6.2890786146526228e+18});
    check_values(tg::maximum(u, c), tg::kInt16, {200, 127, 5, 255});
    check_values(tg::where(u > 100, u, f), tg::kFloat32, {200, 1.5, -2.5, 255});
    check_values(tg::cat({u, c}), tg::kInt16, {200, 10, 0, 255, -128, 127, 5, -1});
    check_values(u.masked_fill(u > 100, -1), tg::kUInt8, {255, 10, 0, 255});
    check_values(u.masked_fill(u > 100, 2.7), tg::kUInt8, {2, 10, 0, 2});
    check_values(Tensor(u.clone()).add_(c), tg::kUInt8, {72, 137, 5, 254});
    check_values(Tensor(u.clone()).mul_(2), tg::kUInt8, {144, 20, 0, 254});
    check_values(2 - u, tg::kUInt8, {58, 248, 2, 3});
    check_values(u.exp(), tg::kFloat32, {kInf, 22026.46484375, 1, kInf});
    check_values(i32.sqrt(), tg::kFloat32, {2.6457512378692627, kNan, 0, 1.7320507764816284});
    check_values(tg::tensor(std::vector<int64_t>{16777217}) < 16777217.5, tg::kBool, {1});
    check_values(tg::div(c, tg::full({1}, 2, tg::kInt8), "floor"), tg::kInt8, {-64, 63, 2, -1});
    check_values(tg::div(c, tg::full({1}, 2, tg::kInt8), "trunc"), tg::kInt8, {-64, 63, 2, 0});
    check_values(tg::tensor({1.0, 0.0}, tg::kBool) + 1, tg::kInt64, {2, 1});
    check_values(tg::sign(tg::tensor({-3.0, 0.0, 4.0}, tg::kInt16)), tg::kInt16, {-1, 0, 1});
    check_values(tg::floor(u), tg::kUInt8, {200, 10, 0, 255});
}

BOOST_AUTO_TEST_CASE(float16_arithmetic_rounds_per_op_as_libtorch) {
    const Tensor h = tg::tensor({2048.0, 0.1, 65504.0, -1.5}, tg::kHalf);
    const Tensor bf = tg::tensor({256.0, 0.1, 3.0, -1.5}, tg::kBFloat16);
    const Tensor f = tg::tensor({0.5, 1.5, -2.5, 3.0});
    const Tensor i32 = tg::tensor({7.0, -7.0, 0.0, 3.0}, tg::kInt32);
    check_values(h + 1, tg::kHalf, {2048, 1.099609375, 65504, -0.5});
    check_values(h * 2.0, tg::kHalf, {4096, 0.199951171875, kInf, -3});
    check_values(h + h, tg::kHalf, {4096, 0.199951171875, kInf, -3});
    check_values(h * h, tg::kHalf, {kInf, 0.0099945068359375, kInf, 2.25});
    check_values(h + f, tg::kFloat32, {2048.5, 1.5999755859375, 65501.5, 1.5});
    check_values(i32 + h, tg::kHalf, {2056, -6.8984375, 65504, 1.5});
    check_values(h / 3, tg::kHalf, {682.5, 0.0333251953125, 21840, -0.5});
    check_values(h * 0.1, tg::kHalf, {204.75, 0.0099945068359375, 6548, -0.14990234375});
    check_values(h.sum(), tg::kHalf, {kInf});
    check_values(bf + 1, tg::kBFloat16, {256, 1.1015625, 4, -0.5});
    check_values(bf * bf, tg::kBFloat16, {65536, 0.010009765625, 9, 2.25});
    check_values(bf.sum(), tg::kBFloat16, {258});
    check_values(tg::tensor({0.5, 1.5, 2.5}, tg::kHalf).mean(), tg::kHalf, {1.5});
    check_values(tg::tensor({0.5, 1.5, 2.5}, tg::kHalf).var(), tg::kHalf, {1});
    // float16 is differentiable: its gradients are float16, computed per op in float32
    Tensor x = tg::tensor({0.5, -1.0, 2.0}, tg::kHalf).requires_grad_(true);
    (x * x * 3).sum().backward();
    check_values(x.grad(), tg::kHalf, {3, -6, 12});
    const Tensor s = tg::softmax(tg::tensor({1.0, 2.0, 3.0}, tg::kHalf), 0);
    BOOST_TEST(s.dtype() == tg::kHalf);
    tgtest::check_close(s, {0.0900306, 0.244728, 0.665241}, 1e-3);
}

// ============================================================================ structure

BOOST_AUTO_TEST_CASE(structural_ops_move_every_dtype) {
    for (tg::Dtype d : kAll) {
        BOOST_TEST_CONTEXT(d) {
            const Tensor x = tg::arange(6).to(d).reshape({2, 3});  // 0..5 (bool: 0,1,1,1,1,1)
            const std::vector<double> v = tgtest::values_of(x);
            const auto at = [&](std::initializer_list<int> idx) {
                std::vector<double> r;
                for (int i : idx)
                    r.push_back(v[size_t(i)]);
                return r;
            };
            check_values(x.t().contiguous(), d, at({0, 3, 1, 4, 2, 5}));
            check_values(x.permute({1, 0}).reshape({6}), d, at({0, 3, 1, 4, 2, 5}));
            check_values(x.view({3, 2})[1], d, at({2, 3}));
            check_values(x.narrow(1, 1, 2), d, at({1, 2, 4, 5}));
            check_values(x.select(1, 2), d, at({2, 5}));
            check_values(x.clone(), d, v);
            check_values(tg::cat({x, x}, 1)[1], d, at({3, 4, 5, 3, 4, 5}));
            check_values(tg::stack({x[0], x[1]}), d, v);
            check_values(x.index_select(1, tg::tensor(std::vector<int64_t>{2, 0})), d,
                         at({2, 0, 5, 3}));
            check_values(x.gather(1, tg::tensor(std::vector<int64_t>{1, 1, 0, 2}).reshape({2, 2})),
                         d, at({1, 1, 3, 5}));
            check_values(x.index({tg::tensor(std::vector<int64_t>{1})}), d, at({3, 4, 5}));
            const Tensor mask = tg::tensor({1.0, 0.0, 1.0}, tg::kBool);
            check_values(tg::masked_select(x, mask), d, at({0, 2, 3, 5}));
            check_values(tg::where(mask, x, x.flatten().narrow(0, 0, 3)), d,
                         at({0, 1, 2, 3, 1, 5}));
            check_values(x.expand({2, 2, 3})[1], d, v);
            Tensor y = tg::zeros({2, 3}, d);
            y.copy_(x);
            check_values(y, d, v);
            y.narrow(1, 0, 1).fill_(1);
            check_values(y, d, {1, v[1], v[2], 1, v[4], v[5]});
            y.zero_();
            check_values(y, d, std::vector<double>(6, 0));
            check_values(x.unsqueeze(0).squeeze(0).flatten(), d, v);
        }
    }
}

// ============================================================================ printing, files

BOOST_AUTO_TEST_CASE(printing_names_libtorch_types) {
    const char* footers[] = {"CPUFloatType", "CPUDoubleType",  "CPULongType",  "CPUBoolType",
                             "CPUByteType",  "CPUCharType",    "CPUShortType", "CPUIntType",
                             "CPUHalfType",  "CPUBFloat16Type"};
    // LibTorch 1.13's output for tensor({1.5, 2.0}).to(dtype)
    const char* bodies[] = {" 1.5000\n 2.0000\n", " 1.5000\n 2.0000\n", " 1\n 2\n", " 1\n 1\n",
                            " 1\n 2\n",           " 1\n 2\n",           " 1\n 2\n", " 1\n 2\n",
                            " 1.5000\n 2.0000\n", " 1.5000\n 2.0000\n"};
    for (int i = 0; i < tg::kNumDtypes; ++i)
        BOOST_TEST(printed(tg::tensor({1.5, 2.0}).to(kAll[i])) ==
                   std::string(bodies[i]) + "[ " + footers[i] + "{2} ]");
    BOOST_TEST(printed(tg::tensor({65504.0, 0.1}, tg::kHalf)) ==
               " 6.5504e+04\n 9.9976e-02\n[ CPUHalfType{2} ]");
    BOOST_TEST(tg::repr(tg::zeros({2}, tg::kUInt8)).find("uint8 [2]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(save_and_load_modules_with_every_dtype) {
    struct Holder : tg::nn::Module {
        Holder() {
            register_buffer("image", tg::tensor({0.0, 128.0, 255.0}, tg::kUInt8));
            register_buffer("labels", tg::tensor({-3.0, 70000.0}, tg::kInt32));
            register_buffer("small", tg::tensor({-1.0, 100.0}, tg::kInt8));
            register_buffer("short", tg::tensor({-300.0}, tg::kInt16));
            register_buffer("half", tg::tensor({0.1, 65504.0}, tg::kHalf));
            register_buffer("brain", tg::tensor({0.1, -3e38}, tg::kBFloat16));
            weight = register_parameter("weight", tg::ones({2}, tg::kHalf));
        }
        Tensor weight;
    };
    char dir[] = "/tmp/tg_dtypes_XXXXXX";
    BOOST_TEST_REQUIRE(mkdtemp(dir) != nullptr);
    const std::string path = std::string(dir) + "/m.tgsv";
    auto a = std::make_shared<Holder>();
    tg::save(*a, path);
    auto b = std::make_shared<Holder>();
    for (auto& buf : b->buffers())
        buf.zero_();
    {
        tg::NoGradGuard g;
        b->weight.zero_();
    }
    tg::load(*b, path);
    const auto ba = a->named_buffers(), bb = b->named_buffers();
    BOOST_TEST_REQUIRE(ba.size() == 6u);
    for (size_t i = 0; i < ba.size(); ++i) {
        BOOST_TEST_CONTEXT(ba[i].first) {
            BOOST_TEST(bb[i].first == ba[i].first);
            check_values(bb[i].second, ba[i].second.dtype(), tgtest::values_of(ba[i].second));
        }
    }
    check_values(b->weight, tg::kHalf, {1, 1});
    // a file holding the new dtypes is format version 2; one without them stays version 1,
    // readable by earlier builds
    std::FILE* fp = std::fopen(path.c_str(), "rb");
    unsigned char head[8] = {};
    BOOST_TEST_REQUIRE(std::fread(head, 1, 8, fp) == 8u);
    std::fclose(fp);
    BOOST_TEST(head[4] == 2);
    auto plain = tg::nn::Linear(2, 3);
    tg::save(plain, path);
    fp = std::fopen(path.c_str(), "rb");
    BOOST_TEST_REQUIRE(std::fread(head, 1, 8, fp) == 8u);
    std::fclose(fp);
    BOOST_TEST(head[4] == 1);
    tg::load(plain, path);
    std::remove(path.c_str());
    rmdir(dir);
}

// ============================================================================ bad input

BOOST_AUTO_TEST_CASE(integer_tensors_are_never_differentiable) {
    for (tg::Dtype d : {tg::kUInt8, tg::kInt8, tg::kInt16, tg::kInt32, tg::kInt64, tg::kBool})
        check_throws<tg::dtype_error>([&] { tg::zeros({2}, d).requires_grad_(true); },
                                      {"requires_grad_", tg::dtype_name(d)});
    BOOST_TEST(tg::zeros({2}, tg::kHalf).requires_grad_(true).requires_grad());
    // dropout on float16: a mask of the dtype, then a product (no crash, the same zeros as x * 0)
    const Tensor dropped = tg::dropout(tg::ones({64}, tg::kHalf), 0.5, true, tg::Generator(1));
    BOOST_TEST(dropped.dtype() == tg::kHalf);
    for (double v : tgtest::values_of(dropped))
        BOOST_TEST((v == 0 || v == 2));
    // converting a float that requires grad into an integer gives a tensor without grad
    const Tensor w = tg::ones({2}).requires_grad_(true);
    BOOST_TEST(!w.to(tg::kUInt8).requires_grad());
    BOOST_TEST(w.to(tg::kHalf).requires_grad());
    check_throws<tg::dtype_error>(
        [&] {
            tg::matmul(tg::ones({2, 2}, tg::kHalf), tg::ones({2, 2}, tg::kHalf));
        },
        {"matmul", "float16", ".to(tg::kFloat32)"});
    check_throws<tg::dtype_error>(
        [&] {
            tg::linear(tg::ones({2, 2}, tg::kBFloat16), tg::ones({2, 2}, tg::kBFloat16));
        },
        {"linear", "bfloat16"});
    check_throws<tg::dtype_error>([&] { tg::mean(tg::ones({2}, tg::kInt32)); }, {"mean", "int32"});
    check_throws<tg::dtype_error>([&] { Tensor(tg::ones({2}, tg::kUInt8)).mul_(0.5); },
                                  {"mul_", "float32", "uint8"});
    check_throws<tg::value_error>([&] { tg::full({2}, 300, tg::kUInt8); },
                                  {"full", "300", "uint8"});
}
