/// Bad-input catalogue (tests/bad_inputs.hpp): factories, tensor methods, undefined tensors,
/// devices and memory. The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_tensor
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/memory.hpp"
#include "tapegrad/threads.hpp"

// The out-of-memory row asks for more than the address space holds; under AddressSanitizer the
// allocation must fail, not the process.
extern "C" const char* __asan_default_options() {
    return "allocator_may_return_null=1";
}

using tgtest::check_table;

namespace {
// The fixtures every table uses: a float32 matrix, int64 labels, an undefined tensor.
struct Fixtures {
    tg::Tensor x = tg::zeros({2, 3});
    tg::Tensor l = tg::tensor(std::vector<int64_t>{0, 1});
    tg::Tensor u;
    tg::Tensor w = tg::zeros({3}, tg::TensorOptions().requires_grad(true));
    float buf[4] = {0, 0, 0, 0};
    const double nan = std::nan("");
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(factories, Fixtures) {
    check_table(
        "Factories",
        {
            TG_BAD(tg::zeros({-1, 2}), shape_error, "negative size", "[-1,2]"),
            TG_BAD(tg::ones({2, -3}), shape_error, "[2,-3]"),
            TG_BAD(tg::randn({-2}), shape_error, "[-2]"),
            TG_BAD(tg::zeros({int64_t(1) << 62, 4}), shape_error, "[4611686018427387904,4]"),
            TG_BAD(tg::empty({int64_t(1) << 46}), out_of_memory, "out of memory",
                   "281474976710656 bytes"),
            TG_BAD(tg::zeros({2}, tg::TensorOptions(tg::kInt64).requires_grad(true)), dtype_error,
                   "requires_grad", "int64"),
            TG_BAD(tg::rand({2}, tg::kInt64), dtype_error, "rand", "int64"),
            TG_BAD(tg::randn({2}, tg::kInt64), dtype_error, "randn", "int64"),
            TG_BAD(tg::arange(0, 5, 0), value_error, "arange", "step"),
            TG_BAD(tg::arange(0, nan), value_error, "arange"),
            TG_BAD(tg::randint(3, 3, {2}), value_error, "randint", "[3, 3)"),
            TG_BAD(tg::randperm(-1), value_error, "randperm", "-1"),
            TG_BAD(tg::randperm(int64_t(1) << 25, tg::kFloat32), dtype_error, "randperm",
                   "float32"),
            TG_BAD(tg::bernoulli(l), dtype_error, "bernoulli", "int64"),
            TG_BAD(tg::bernoulli(tg::full({2}, 1.5)), value_error, "bernoulli", "1.5"),
            TG_BAD(tg::multinomial(tg::tensor({-1.0, 2.0}), 1), value_error, "multinomial", "[2]",
                   "-1"),
            TG_BAD(tg::multinomial(tg::tensor({nan, 2.0}), 2, true), value_error, "multinomial",
                   "[2]", "nan"),
            TG_BAD(tg::multinomial(tg::full({2}, INFINITY), 1), value_error, "multinomial", "inf"),
            TG_BAD(tg::multinomial(x, 2), value_error, "multinomial", "[2,3]", "row 0"),
            TG_BAD(tg::multinomial(tg::ones({3}), 4), value_error, "multinomial", "[3]",
                   "without replacement"),
            TG_BAD(tg::multinomial(tg::ones({3}), 0), value_error, "multinomial", "num_samples 0"),
            TG_BAD(tg::multinomial(tg::ones({2, 2, 2}), 1), shape_error, "multinomial", "[2,2,2]"),
            TG_BAD(tg::multinomial(l, 1), dtype_error, "multinomial", "int64"),
            TG_BAD(tg::multinomial(u, 1), value_error, "multinomial", "undefined"),
            TG_BAD(tg::Generator().set_state(tg::zeros({10}, tg::kUInt8)), value_error, "set_state",
                   "[10]", "10 bytes", "5056"),
            TG_BAD(tg::Generator().set_state(x), dtype_error, "set_state", "[2,3]", "float32"),
            TG_BAD(tg::Generator().set_state(tg::zeros({5056}, tg::kUInt8)), value_error,
                   "set_state", "MT19937", "seeded 0"),
            TG_BAD(tg::from_blob(buf, {2}, tg::Device::opencl(0)), device_error, "from_blob"),
            TG_BAD(tg::from_blob(nullptr, {2}), value_error, "from_blob"),
            TG_BAD(tg::zeros({2}, tg::Device::cuda(57)), backend_unavailable, "cuda:57"),
            TG_BAD(tg::zeros({2}, tg::Device::opencl(57)), backend_unavailable, "opencl:57"),
            TG_BAD(tg::zeros({2}, tg::Device::opencl(-1)), backend_unavailable, "opencl:-1"),
        });
}

BOOST_FIXTURE_TEST_CASE(tensor_methods, Fixtures) {
    check_table(
        "Tensor methods",
        {
            TG_BAD(x.size(2), shape_error, "size", "dim 2", "2 dims"),
            TG_BAD(x.stride(-3), shape_error, "stride", "dim -3"),
            TG_BAD(x.item<float>(), shape_error, "item", "[2,3]"),
            TG_BAD(x.data_ptr<double>(), dtype_error, "data_ptr", "float32"),
            TG_BAD(x.data_ptr<int64_t>(), dtype_error, "data_ptr", "[2,3]"),
            TG_BAD(x.view({7}), shape_error, "view", "[2,3]", "[7]"),
            TG_BAD(x.t().view({6}), shape_error, "view", "[3,2]"),
            TG_BAD(x.reshape({4, -1}), shape_error, "reshape", "[2,3]"),
            TG_BAD(x.copy_(tg::zeros({4})), shape_error, "copy_", "[2,3]", "[4]"),
            TG_BAD(tg::zeros({3}).add_(x), shape_error, "add_", "[3]", "[2,3]"),
            TG_BAD(tg::zeros({3}).mul_(x), shape_error, "mul_", "[2,3]"),
            TG_BAD(l.requires_grad_(), dtype_error, "requires_grad_", "int64"),
            TG_BAD((w * 2.0).requires_grad_(false), autograd_error, "requires_grad_(false)"),
            TG_BAD(w.add_(1.0), autograd_error, "add_", "leaf", "[3]"),
            TG_BAD(x.to(tg::Device::cuda(57)), backend_unavailable, "cuda:57"),
            TG_BAD(x.uniform_(2, 1), value_error, "uniform_"),
            TG_BAD(l.uniform_(), dtype_error, "uniform_", "int64"),
            TG_BAD(x.normal_(0, -1), value_error, "normal_", "std"),
            TG_BAD(x.bernoulli_(1.5), value_error, "bernoulli_", "1.5"),
            TG_BAD(x.geometric_(1), value_error, "geometric_", "(0, 1)"),
            TG_BAD(tg::zeros({2}, tg::kBool).geometric_(0.5), dtype_error, "geometric_", "bool"),
            TG_BAD(x.cauchy_(0, 0), value_error, "cauchy_", "sigma"),
            TG_BAD(l.cauchy_(), dtype_error, "cauchy_", "int64"),
            TG_BAD(x.log_normal_(0, -1), value_error, "log_normal_", "std"),
            TG_BAD(x.random_(5, 5), value_error, "random_", "[2,3]", "from 5"),
            TG_BAD(tg::zeros({2}, tg::kUInt8).random_(300), value_error, "random_", "299", "uint8"),
            TG_BAD(tg::zeros({2}, tg::kFloat16).random_(), dtype_error, "random_", "float16"),
            TG_BAD(tg::zeros({1, 3}).expand({4, 3}).uniform_(), value_error, "uniform_",
                   "share memory", "[4,3]"),
        });
}

// Every accessor and op given an undefined tensor (tg::Tensor{}) throws value_error.
BOOST_FIXTURE_TEST_CASE(undefined_tensors, Fixtures) {
    tg::NoGradGuard no_grad;  // in-place ops must check before their kernel runs
    check_table("Undefined tensors", {
                                         TG_BAD(u.sizes(), value_error, "undefined"),
                                         TG_BAD(u.dim(), value_error, "undefined"),
                                         TG_BAD(u.numel(), value_error, "undefined"),
                                         TG_BAD(u.dtype(), value_error, "undefined"),
                                         TG_BAD(u.device(), value_error, "undefined"),
                                         TG_BAD(u.item<float>(), value_error, "undefined"),
                                         TG_BAD(u.to_vector<float>(), value_error, "undefined"),
                                         TG_BAD(u.grad(), value_error, "undefined"),
                                         TG_BAD(u.is_leaf(), value_error, "undefined"),
                                         TG_BAD(u.output_nr(), value_error, "undefined"),
                                         TG_BAD(u.clone(), value_error, "undefined"),
                                         TG_BAD(u.detach(), value_error, "undefined"),
                                         TG_BAD(u.to(tg::kFloat64), value_error, "undefined"),
                                         TG_BAD(u.zero_(), value_error, "fill_", "undefined"),
                                         TG_BAD(u.add_(1.0), value_error, "add_", "undefined"),
                                         TG_BAD(u.copy_(x), value_error, "copy_", "undefined"),
                                         TG_BAD(x.copy_(u), value_error, "undefined"),
                                         TG_BAD(tg::add(x, u), value_error, "undefined"),
                                         TG_BAD(tg::matmul(u, x), value_error, "undefined"),
                                         TG_BAD(tg::cat({x, u}, 0), value_error, "undefined"),
                                         TG_BAD(tg::zeros_like(u), value_error, "undefined"),
                                     });
}

BOOST_AUTO_TEST_CASE(threads) {
    check_table("Threads", {
                               TG_BAD(tg::set_num_threads(0), value_error, "set_num_threads", "0"),
                               TG_BAD(tg::set_num_threads(-3), value_error, "-3 threads"),
                           });
}

// Tensors on two devices in one op (needs a second device: the OpenCL one when it is built).
BOOST_FIXTURE_TEST_CASE(mixed_devices, Fixtures) {
    const tg::Device cl = tg::Device::opencl(0);
    if (!tg::is_available(cl)) {
        BOOST_TEST_MESSAGE("no OpenCL device: the mixed-device rows are not run");
        return;
    }
    const tg::Tensor xc = x.to(cl), lc = l.to(cl);
    check_table(
        "Mixed devices",
        {
            TG_BAD(tg::add(x, xc), device_error, "add", "cpu", "opencl:0"),
            TG_BAD(x * xc, device_error, "mul", "opencl:0"),
            TG_BAD(tg::matmul(x, xc.t()), device_error, "matmul", "opencl:0"),
            TG_BAD(tg::linear(x, xc), device_error, "linear", "opencl:0"),
            TG_BAD(tg::cat({x, xc}, 0), device_error, "cat", "opencl:0"),
            TG_BAD(tg::where(tg::gt(x, 0.0), x, xc), device_error, "where", "opencl:0"),
            TG_BAD(tg::index_select(x, 0, lc), device_error, "index_select", "opencl:0"),
            TG_BAD(tg::cross_entropy(x, lc), device_error, "cross_entropy", "opencl:0"),
            TG_BAD(x.copy_(xc), device_error, "copy_", "opencl:0"),
            TG_BAD(xc.data_ptr<float>(), device_error, "data_ptr", "opencl:0"),
            TG_BAD(tg::from_blob(buf, {2}, cl), device_error, "from_blob"),
            TG_BAD((w * 2.0).backward(tg::ones({3}).to(cl)), device_error, "backward", "opencl:0"),
            TG_BAD(w.set_grad(tg::ones({3}).to(cl)), autograd_error, "set_grad", "opencl:0"),
        });
    // larger than the device's largest buffer (CL_INVALID_BUFFER_SIZE) or than its memory
    const std::vector<tgtest::BadInput> memory = {
        TG_BAD(tg::empty({int64_t(1) << 40}, cl), out_of_memory, "opencl:0", "out of memory",
               "4398046511104 bytes"),
    };
    check_table("Device memory", memory);
}
