/// Bad inputs throw the right typed exception (include/tapegrad/error.hpp), at the call site, with
/// a message naming the op and the shapes involved (DESIGN.md §1.6).
#define BOOST_TEST_MODULE test_errors
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tapegrad/memory.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "test_util.hpp"

// allocation_failure_throws_out_of_memory asks for more memory than the address space holds;
// under AddressSanitizer that must fail the call, not the process.
extern "C" const char* __asan_default_options() {
    return "allocator_may_return_null=1";
}

using tgtest::check_throws;
using tgtest::make_const;
using tgtest::make_input;

BOOST_AUTO_TEST_CASE(exception_hierarchy) {
    // every typed error is a tg::error is a std::runtime_error
    BOOST_CHECK_THROW(throw tg::shape_error("x"), tg::error);
    BOOST_CHECK_THROW(throw tg::dtype_error("x"), tg::error);
    BOOST_CHECK_THROW(throw tg::autograd_error("x"), std::runtime_error);
    BOOST_CHECK_THROW(throw tg::io_error("x"), tg::error);
    BOOST_CHECK_THROW(throw tg::backend_unavailable("x"), tg::error);
    BOOST_CHECK_THROW(throw tg::device_error("x"), tg::error);
    BOOST_CHECK_THROW(throw tg::value_error("x"), tg::error);
    BOOST_CHECK_THROW(throw tg::out_of_memory("x"), tg::error);
}

BOOST_AUTO_TEST_CASE(matmul_inner_dim_mismatch) {
    tg::Tensor a = tg::zeros({2, 3}), b = tg::zeros({4, 5});
    check_throws<tg::shape_error>([&] { tg::matmul(a, b); }, {"matmul", "[2,3]", "[4,5]"}, "2-D");
    check_throws<tg::shape_error>([&] { a.matmul(b); }, {"matmul", "[2,3]", "[4,5]"}, "method");
    check_throws<tg::shape_error>([&] { tg::matmul(a, tg::zeros({4})); },
                                  {"matmul", "[2,3]", "[4]"}, "matrix-vector");
    check_throws<tg::shape_error>([&] { tg::matmul(tg::zeros({3}), tg::zeros({4})); },
                                  {"matmul", "[3]", "[4]"}, "dot");
    check_throws<tg::shape_error>(
        [&] {
            tg::matmul(tg::zeros({2, 2, 3}), tg::zeros({3, 2, 4}));
        },
        {"matmul", "[2,2,3]", "[3,2,4]"}, "batch mismatch");
}

BOOST_AUTO_TEST_CASE(linear_shape_mismatch) {
    tg::Tensor x = tg::zeros({64, 100}), w = tg::zeros({10, 784}), b = tg::zeros({10});
    check_throws<tg::shape_error>([&] { tg::linear(x, w, b); }, {"linear", "[64,100]", "[10,784]"});
    check_throws<tg::shape_error>(
        [&] {
            tg::linear(tg::zeros({4, 784}), w, tg::zeros({7}));
        },
        {"linear", "[7]"}, "bias");
}

BOOST_AUTO_TEST_CASE(broadcast_mismatch) {
    tg::Tensor a = tg::zeros({2, 3}), b = tg::zeros({4});
    check_throws<tg::shape_error>([&] { tg::add(a, b); }, {"add", "[2,3]", "[4]"}, "add");
    check_throws<tg::shape_error>([&] { a + b; }, {"add", "[2,3]", "[4]"}, "operator+");
    check_throws<tg::shape_error>(
        [&] {
            tg::mul(a, tg::zeros({3, 3}));
        },
        {"mul", "[2,3]", "[3,3]"}, "mul");
    check_throws<tg::shape_error>([&] { tg::sub(a, b); }, {"sub", "[2,3]", "[4]"}, "sub");
    check_throws<tg::shape_error>([&] { tg::div(a, b); }, {"div", "[2,3]", "[4]"}, "div");
    check_throws<tg::shape_error>(
        [&] {
            tg::broadcast_shapes({2, 3}, {4}, "myop");
        },
        {"myop", "[2,3]", "[4]"}, "broadcast_shapes");
    check_throws<tg::shape_error>(
        [&] {
            tg::zeros({3, 1}).expand({3, 4, 2});
        },
        {"expand", "[3,1]"}, "expand");
    check_throws<tg::shape_error>(
        [&] {
            tg::zeros({3, 2}).expand({3, 4});
        },
        {"expand", "[3,2]", "[3,4]"}, "expand non-1 dim");
    check_throws<tg::shape_error>(
        [&] {
            tg::mse_loss(a, tg::zeros({3, 2}));
        },
        {"[2,3]", "[3,2]"}, "mse");
}

BOOST_AUTO_TEST_CASE(dtype_mismatch) {
    tg::Tensor f = tg::zeros({2}, tg::kFloat32), d = tg::zeros({2}, tg::kFloat64);
    // arithmetic promotes, as LibTorch's (tests/test_dtypes.cpp); matrix products do not
    BOOST_TEST(tg::add(f, d).dtype() == tg::kFloat64);
    BOOST_TEST((f * d).dtype() == tg::kFloat64);
    check_throws<tg::dtype_error>(
        [&] {
            tg::matmul(tg::zeros({2, 2}), tg::zeros({2, 2}, tg::kFloat64));
        },
        {"matmul"}, "matmul f32 f64");
}

BOOST_AUTO_TEST_CASE(int64_cannot_require_grad) {
    tg::Tensor i = tg::tensor(std::vector<int64_t>{1, 2, 3});
    check_throws<tg::dtype_error>([&] { i.requires_grad_(); }, {"requires_grad"}, "requires_grad_");
    check_throws<tg::dtype_error>(
        [&] { tg::zeros({2}, tg::TensorOptions(tg::kInt64).requires_grad(true)); }, {}, "factory");
    BOOST_CHECK_NO_THROW(i.requires_grad_(false));
}

BOOST_AUTO_TEST_CASE(out_of_range_dims) {
    tg::Tensor x = tg::zeros({2, 3});
    check_throws<tg::shape_error>([&] { tg::sum(x, {2}); }, {"sum", "dim 2"}, "sum dim 2");
    check_throws<tg::shape_error>([&] { tg::sum(x, {-3}); }, {"sum"}, "sum dim -3");
    check_throws<tg::shape_error>([&] { tg::softmax(x, 2); }, {"softmax", "dim 2"}, "softmax");
    check_throws<tg::shape_error>([&] { tg::log_softmax(x, -3); }, {"log_softmax"}, "log_softmax");
    check_throws<tg::shape_error>([&] { tg::transpose(x, 0, 2); }, {"transpose", "dim 2"},
                                  "transpose");
    check_throws<tg::shape_error>([&] { tg::max(x, 5); }, {"max"}, "max");
    check_throws<tg::shape_error>([&] { tg::mean(x, {7}); }, {"mean"}, "mean");
    check_throws<tg::shape_error>([&] { x.unsqueeze(4); }, {"unsqueeze"}, "unsqueeze");
    check_throws<tg::shape_error>(
        [&] {
            tg::permute(x, {0, 0});
        },
        {"permute"}, "permute repeated dim");
    check_throws<tg::shape_error>([&] { tg::permute(x, {0}); }, {"permute"},
                                  "permute wrong length");
    check_throws<tg::shape_error>([&] { tg::narrow(x, 1, 2, 2); }, {"narrow", "[2,3]"},
                                  "narrow past end");
    check_throws<tg::shape_error>([&] { tg::wrap_dim(3, 2, "myop"); }, {"myop"}, "wrap_dim");
    check_throws<tg::shape_error>([&] { tg::t(tg::zeros({2, 3, 4})); }, {"[2,3,4]"}, "t of 3-D");
}

BOOST_AUTO_TEST_CASE(out_of_range_indices) {
    tg::Tensor x = tg::zeros({3, 4});
    tg::Tensor bad = tg::tensor(std::vector<int64_t>{0, 3});
    check_throws<tg::shape_error>([&] { tg::index_select(x, 0, bad); }, {"index_select"},
                                  "index 3 of 3");
    check_throws<tg::shape_error>(
        [&] { tg::index_select(x, 1, tg::tensor(std::vector<int64_t>{-1})); }, {"index_select"},
        "negative index");
    tg::Tensor gi = tg::tensor(std::vector<int64_t>{0, 4, 1, 1}).reshape({2, 2});
    check_throws<tg::shape_error>([&] { tg::gather(x, 1, gi); }, {"gather"}, "gather index 4 of 4");
    check_throws<tg::shape_error>(
        [&] {
            tg::cross_entropy(x, tg::tensor(std::vector<int64_t>{0, 1, 4}));
        },
        {"cross_entropy"}, "label 4 of 4 classes");
    check_throws<tg::shape_error>(
        [&] {
            tg::nll_loss(x, tg::tensor(std::vector<int64_t>{0, 1, 9}));
        },
        {"nll_loss"}, "nll label out of range");
    check_throws<tg::shape_error>(
        [&] {
            tg::cross_entropy(x, tg::tensor(std::vector<int64_t>{0, 1}));
        },
        {"cross_entropy", "[3,4]", "[2]"}, "label count");
}

BOOST_AUTO_TEST_CASE(index_dtype_must_be_int64) {
    tg::Tensor x = tg::zeros({3, 4});
    check_throws<tg::dtype_error>([&] { tg::index_select(x, 0, tg::zeros({2})); },
                                  {"index_select"});
    check_throws<tg::dtype_error>([&] { tg::gather(x, 1, tg::zeros({3, 1})); }, {"gather"});
}

BOOST_AUTO_TEST_CASE(backward_errors) {
    tg::Tensor x = make_input({3}, 1);
    tg::Tensor y = x * 2.0;
    check_throws<tg::autograd_error>([&] { y.backward(); }, {"[3]"}, "non-scalar without gradient");
    tg::Tensor c = make_const({3}, 2);
    check_throws<tg::autograd_error>([&] { c.sum().backward(); }, {}, "backward of no-grad tensor");
    // shape_error or autograd_error are both reasonable; the shapes must be named
    check_throws<tg::error>([&] { (x * 2.0).backward(tg::ones({4}, tg::kFloat64)); },
                            {"[4]", "[3]"}, "gradient of wrong shape");
}

BOOST_AUTO_TEST_CASE(autograd_misuse) {
    tg::Tensor x = make_input({3}, 3);
    tg::Tensor y = x * 2.0;
    check_throws<tg::autograd_error>([&] { y.requires_grad_(false); }, {"requires_grad_"},
                                     "requires_grad_(false) on non-leaf");
    tg::Tensor c = make_const({3}, 4);
    check_throws<tg::autograd_error>(
        [&] { c.register_hook([](const tg::Tensor& g) { return g; }); }, {"register_hook"},
        "hook on tensor without grad");
    check_throws<tg::autograd_error>([&] { tg::autograd::grad({y.sum()}, {c}); }, {"[3]"},
                                     "grad w.r.t. a tensor without grad");
}

BOOST_AUTO_TEST_CASE(item_on_multi_element_tensor) {
    check_throws<tg::shape_error>([&] { tg::zeros({2, 2}).item<float>(); }, {"item", "[2,2]"});
    BOOST_TEST(tg::full({1, 1}, 2.5).item<float>() == 2.5f);
}

BOOST_AUTO_TEST_CASE(view_needs_viewable_strides) {
    tg::Tensor x = tg::zeros({3, 4});
    check_throws<tg::shape_error>([&] { x.t().view({12}); }, {"view", "[4,3]"},
                                  "view of transposed");
    BOOST_CHECK_NO_THROW(x.t().reshape({12}));
}

BOOST_AUTO_TEST_CASE(reshape_wrong_numel) {
    tg::Tensor x = tg::zeros({3, 4});
    check_throws<tg::shape_error>([&] { x.reshape({5, 2}); }, {"reshape", "[3,4]", "[5,2]"});
    check_throws<tg::shape_error>([&] { x.view({7}); }, {"view", "[3,4]", "[7]"});
    check_throws<tg::shape_error>([&] { x.reshape({-1, -1}); }, {"reshape"}, "two -1");
    check_throws<tg::shape_error>(
        [&] {
            x.reshape({5, -1});
        },
        {"reshape", "[3,4]"}, "-1 not integral");
}

BOOST_AUTO_TEST_CASE(loss_label_dtype) {
    tg::Tensor logits = tg::zeros({2, 3});
    check_throws<tg::dtype_error>(
        [&] {
            tg::cross_entropy(logits, tg::tensor({0.0, 1.0}));
        },
        {"cross_entropy"}, "float labels");
    check_throws<tg::dtype_error>(
        [&] {
            tg::nll_loss(logits, tg::tensor({0.0, 1.0}));
        },
        {"nll_loss"}, "nll float labels");
}

BOOST_AUTO_TEST_CASE(cat_and_stack_mismatch) {
    check_throws<tg::shape_error>(
        [&] {
            tg::cat({tg::zeros({2, 3}), tg::zeros({2, 4})}, 0);
        },
        {"cat", "[2,3]", "[2,4]"}, "cat dim0");
    check_throws<tg::shape_error>(
        [&] {
            tg::cat({tg::zeros({2, 3}), tg::zeros({2})}, 0);
        },
        {"cat"}, "cat rank");
    check_throws<tg::shape_error>([&] { tg::cat({}, 0); }, {"cat"}, "cat empty");
    check_throws<tg::shape_error>(
        [&] {
            tg::stack({tg::zeros({2, 3}), tg::zeros({3, 2})}, 0);
        },
        {}, "stack");
    // dtypes promote, as LibTorch's
    BOOST_TEST(tg::cat({tg::zeros({2}), tg::zeros({2}, tg::kFloat64)}, 0).dtype() == tg::kFloat64);
}

BOOST_AUTO_TEST_CASE(data_ptr_dtype) {
    tg::Tensor f = tg::zeros({2});
    check_throws<tg::dtype_error>([&] { f.data_ptr<double>(); }, {tg::dtype_name(tg::kFloat32)},
                                  "data_ptr<double>");
    check_throws<tg::dtype_error>([&] { f.data_ptr<int64_t>(); }, {}, "data_ptr<int64_t>");
    BOOST_TEST(f.data_ptr<float>() != nullptr);
}

BOOST_AUTO_TEST_CASE(undefined_tensor_use) {
    tg::Tensor u;
    BOOST_TEST(!u.defined());
    BOOST_CHECK_THROW(u.sizes(), tg::error);
    BOOST_CHECK_THROW(tg::add(u, tg::zeros({2})), tg::error);
}

BOOST_AUTO_TEST_CASE(unavailable_device) {
    if (!tg::is_available(tg::Device::cuda(0))) {
        check_throws<tg::backend_unavailable>([&] { tg::zeros({2}, tg::Device::cuda(0)); }, {});
    }
    check_throws<tg::backend_unavailable>([&] { tg::zeros({2}).to(tg::Device::cuda(57)); }, {});
}

BOOST_AUTO_TEST_CASE(gradcheck_input_requirements) {
    auto fn = [](const std::vector<tg::Tensor>& v) { return v[0].sum(); };
    BOOST_CHECK_THROW(tg::gradcheck(fn, {tg::zeros({2}, tg::TensorOptions().requires_grad(true))}),
                      tg::error);  // float32 input: gradcheck needs float64
}

// Out-of-domain options and arguments are value_error (PyTorch's ValueError), not the base
// tg::error, and NaN is out of every domain.
BOOST_AUTO_TEST_CASE(out_of_domain_arguments_throw_value_error) {
    tg::Tensor w = tg::ones({2}, tg::TensorOptions().requires_grad(true));
    using tg::optim::SGDOptions;
    check_throws<tg::value_error>([&] { tg::optim::SGD o({w}, SGDOptions(-0.5)); },
                                  {"SGD", "lr", "-0.5"}, "negative lr");
    check_throws<tg::value_error>([&] { tg::optim::SGD o({w}, SGDOptions(std::nan(""))); },
                                  {"SGD", "lr", "nan"}, "NaN lr");
    check_throws<tg::value_error>(
        [&] { tg::optim::SGD o({w}, SGDOptions(0.1).momentum(0.9).dampening(std::nan(""))); },
        {"SGD", "dampening"}, "NaN dampening");
    check_throws<tg::value_error>(
        [&] { tg::optim::Adam o({w}, tg::optim::AdamOptions(0.1).eps(std::nan(""))); },
        {"Adam", "eps"}, "NaN eps");
    check_throws<tg::value_error>([] { tg::nn::Dropout d(1.5); }, {"Dropout", "1.5"}, "Dropout");
    check_throws<tg::value_error>([&] { tg::dropout(tg::ones({2}), std::nan(""), true); },
                                  {"dropout", "nan"}, "dropout op, NaN p");
    w.set_grad(tg::ones({2}));
    check_throws<tg::value_error>([&] { tg::nn::utils::clip_grad_norm_({w}, -1.0); },
                                  {"clip_grad_norm_", "max_norm"}, "negative max_norm");
    tgtest::check_close(w.grad(), std::vector<double>{1, 1});  // not flipped
    check_throws<tg::value_error>([&] { tg::clamp(w, std::nan(""), 1.0); }, {"clamp", "nan"},
                                  "NaN bound");
    tg::Tensor t = tg::zeros({2, 2});
    check_throws<tg::value_error>([&] { tg::nn::init::normal_(t, 0, -1); }, {"normal_", "std"},
                                  "negative std");
}

BOOST_AUTO_TEST_CASE(undefined_tensor_is_value_error) {
    tg::Tensor u;
    check_throws<tg::value_error>([&] { u.sizes(); }, {"undefined"}, "sizes");
    check_throws<tg::value_error>(
        [&] {
            tg::NoGradGuard g;
            u.zero_();  // used to dereference the missing storage
        },
        {"fill_", "undefined"}, "zero_ without recording");
    check_throws<tg::value_error>([&] { tg::nn::init::zeros_(u); }, {"undefined"}, "init");
    check_throws<tg::value_error>([&] { (void)u.output_nr(); }, {"undefined"}, "output_nr");
}

BOOST_AUTO_TEST_CASE(allocation_failure_throws_out_of_memory) {
    const int64_t peak = tg::memory::stats().peak_bytes;
    // 2^46 float32 elements: 256 TiB, more than a 47-bit address space, so it fails everywhere
    check_throws<tg::out_of_memory>([] { tg::empty({int64_t(1) << 46}); },
                                    {"cpu", "out of memory", "281474976710656 bytes"});
    BOOST_TEST(tg::memory::stats().peak_bytes == peak);  // a failed allocation is no peak
    BOOST_CHECK_NO_THROW(tg::empty({16}));
}
