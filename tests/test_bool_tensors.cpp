/// Bool tensors, masks and advanced indexing as LibTorch has them (issue 16). Every expected
/// value below is what LibTorch 1.13 prints for the same calls (scripts/libtorch_reference.cpp,
/// bool_tensors()); each check runs on the CPU and, when there is one, on the OpenCL device.
#define BOOST_TEST_MODULE test_bool_tensors
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using namespace tg::indexing;

namespace {

std::vector<tg::Device> devices() {
    std::vector<tg::Device> d{tg::kCPU};
    if (tg::opencl::is_available())
        d.push_back(tg::Device("opencl:0"));
    return d;
}

tg::Tensor input(tg::Device dev) {
    return tg::tensor({0.7, -0.2, 1.3, 0.4, -1.1, 0.9, 0.05, -0.6, 2.2, 0.6, -0.3, 0.8},
                      tg::kFloat64)
        .reshape({3, 4})
        .to(dev);
}

tg::Tensor longs(std::vector<int64_t> v, tg::Device dev) {
    return tg::tensor(v, tg::kInt64).to(dev);
}

}  // namespace

BOOST_AUTO_TEST_CASE(comparisons_give_bool_masks_that_reduce_and_combine) {
    for (tg::Device dev : devices()) {
        BOOST_TEST_CONTEXT(dev.str()) {
            const tg::Tensor x = input(dev);
            const tg::Tensor m = x > 0.5;
            BOOST_TEST(m.dtype() == tg::kBool);
            BOOST_TEST((m.device() == dev));
            BOOST_TEST(!m.requires_grad());
            check_close(m, {1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1});
            BOOST_TEST(m.sum().dtype() == tg::kInt64);  // counts, as LibTorch
            BOOST_TEST(m.sum().item<int64_t>() == 6);
            BOOST_TEST(m.any().item<bool>());
            BOOST_TEST(!m.all().item<bool>());
            BOOST_TEST(m.any().item().toBool());
            check_close(m.any(1), {1, 1, 1});
            check_close(m.all(0, true), {0, 0, 0, 0});
            BOOST_TEST(tg::shape_str(m.all(0, true).sizes()) == "[1,4]");
            const tg::Tensor logic = (m & (x < 1.0)).to(tg::kInt64) +
                                     (m | (x < -0.5)).to(tg::kInt64) * 2 + (~m).to(tg::kInt64) * 4 +
                                     (m ^ (x > 0.0)).to(tg::kInt64) * 8;
            check_close(logic, {3, 4, 2, 12, 6, 3, 12, 6, 2, 3, 4, 3});
            check_close(tg::logical_and(x, x > 0.0).to(tg::kInt64) +
                            tg::logical_not(x - 0.7).to(tg::kInt64) * 2,
                        {3, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1});
            check_close(tg::nonzero(m), {0, 0, 0, 2, 1, 1, 2, 0, 2, 1, 2, 3});
            BOOST_TEST(tg::shape_str(m.nonzero().sizes()) == "[6,2]");
            check_close(tg::masked_select(x, x.lt(0)), {-0.2, -1.1, -0.6, -0.3});
            check_close(tg::where(m, x, -x),
                        {0.7, 0.2, 1.3, -0.4, 1.1, 0.9, -0.05, 0.6, 2.2, 0.6, 0.3, 0.8});
            check_close(x.masked_fill(~m, 0.0), {0.7, 0, 1.3, 0, 0, 0.9, 0, 0, 2.2, 0.6, 0, 0.8});
            check_close(m * x, {0.7, 0, 1.3, 0, 0, 0.9, 0, 0, 2.2, 0.6, 0, 0.8});  // promoted
            check_close(longs({0, 1, 2}, dev) < 1.5, {1, 1, 0});  // int64 compares exactly
            check_close(m == (x > 0.6), {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1});
        }
    }
}

BOOST_AUTO_TEST_CASE(bool_conversions_factories_and_printing) {
    for (tg::Device dev : devices()) {
        BOOST_TEST_CONTEXT(dev.str()) {
            const double nan = std::numeric_limits<double>::quiet_NaN();
            const tg::Tensor b =
                tg::tensor({0.0, 2.5, -1.0, nan}, tg::kFloat64).to(dev).to(tg::kBool);
            check_close(b, {0, 1, 1, 1});  // nonzero, NaN too, is true (as C++ and PyTorch)
            check_close(b.to(tg::kFloat32), {0, 1, 1, 1});
            check_close(tg::ones({2}, tg::TensorOptions(tg::kBool).device(dev)), {1, 1});
            check_close(tg::full({2}, 0.25, tg::TensorOptions(tg::kBool).device(dev)), {1, 1});
            check_close(tg::tensor({0.0, 3.0}, tg::TensorOptions(tg::kBool).device(dev)), {0, 1});
            check_close(b.reshape({2, 2}).t().contiguous(), {0, 1, 1, 1});
            check_close(tg::cat({b, b.narrow(0, 0, 2)}), {0, 1, 1, 1, 0, 1});
            BOOST_TEST(b[1].item<bool>());
            BOOST_TEST(!b[0].item<bool>());
        }
    }
    const tg::Tensor b = tg::tensor({1.0, 0.0}, tg::kBool);
    BOOST_TEST(b.data_ptr<bool>()[0]);
    BOOST_TEST(!b.data_ptr<bool>()[1]);
    BOOST_TEST(tg::element_size(tg::kBool) == 1u);
    std::ostringstream os;
    os << b;
    BOOST_TEST(os.str() == " 1\n 0\n[ CPUBoolType{2} ]");
}

BOOST_AUTO_TEST_CASE(bool_arithmetic_as_libtorch) {
    for (tg::Device dev : devices()) {
        BOOST_TEST_CONTEXT(dev.str()) {
            const tg::Tensor m = tg::tensor({1.0, 0.0, 1.0}, tg::kBool).to(dev);
            const tg::Tensor n = tg::tensor({1.0, 1.0, 0.0}, tg::kBool).to(dev);
            BOOST_TEST((m + n).dtype() == tg::kBool);  // or
            check_close(m + n, {1, 1, 1});
            BOOST_TEST((m * n).dtype() == tg::kBool);  // and
            check_close(m * n, {1, 0, 0});
            const tg::Tensor f = m * 2.0;  // a number: float32 (LibTorch: int64 for 2)
            BOOST_TEST(f.dtype() == tg::kFloat32);
            check_close(f, {2, 0, 2});
            check_close(m + 1.0, {2, 1, 2});
            check_close(m / 2.0, {0.5, 0, 0.5});
            const tg::Tensor q = m / n;
            BOOST_TEST(q.dtype() == tg::kFloat32);
            check_close(q.narrow(0, 0, 2), {1, 0});
            BOOST_TEST(std::isinf(q[2].item<double>()));
            const tg::Tensor x = tg::tensor({1.5, 2.5, -1.0}, tg::kFloat64).to(dev);
            check_close(x * m + m, {2.5, 0, 0});  // with a tensor: the tensor's dtype
        }
    }
}

BOOST_AUTO_TEST_CASE(bool_tensors_refuse_what_has_no_meaning) {
    const tg::Tensor m = tg::tensor({1.0, 0.0}, tg::kBool);
    BOOST_CHECK_THROW(m - m, tg::dtype_error);  // as LibTorch: ~ or ^ are meant
    BOOST_CHECK_THROW(m - 1.0, tg::dtype_error);
    BOOST_CHECK_THROW(tg::tensor({1.0, 2.0}) - m, tg::dtype_error);
    BOOST_CHECK_THROW(-m, tg::dtype_error);
    check_close(tg::exp(m), {std::exp(1.0), 1}, 1e-6);  // float32, as LibTorch's
    BOOST_CHECK_THROW(m.mean(), tg::dtype_error);
    BOOST_CHECK_THROW(tg::Tensor(m).requires_grad_(true), tg::error);
    BOOST_CHECK_THROW(tg::rand({2}, tg::kBool), tg::dtype_error);
    BOOST_CHECK_THROW(tg::tensor({1.0, 2.0}) & m, tg::dtype_error);
    BOOST_CHECK_THROW(~tg::tensor({1.0, 2.0}), tg::dtype_error);
    BOOST_CHECK_THROW(tg::matmul(m.reshape({1, 2}), m.reshape({2, 1})), tg::dtype_error);
    // but counts, extremes and selections work, as in LibTorch
    BOOST_TEST(m.max().item<bool>());
    BOOST_TEST(!m.min().item<bool>());
    BOOST_TEST(tg::argmin(m, 0).item<int64_t>() == 1);
    check_close(m.index({longs({1, 1, 0}, tg::kCPU)}), {0, 0, 1});
}

BOOST_AUTO_TEST_CASE(advanced_indexing_follows_pytorch) {
    for (tg::Device dev : devices()) {
        BOOST_TEST_CONTEXT(dev.str()) {
            const tg::Tensor x = input(dev);
            check_close(x.index({x > 0.5}), {0.7, 1.3, 0.9, 2.2, 0.6, 0.8});
            check_close(x.index({tg::tensor({1.0, 0.0, 1.0}, tg::kBool).to(dev)}),
                        {0.7, -0.2, 1.3, 0.4, 2.2, 0.6, -0.3, 0.8});
            check_close(x.index({Slice(), x[0] > 0.0}),
                        {0.7, 1.3, 0.4, -1.1, 0.05, -0.6, 2.2, -0.3, 0.8});
            check_close(x.index({longs({0, 2, -1}, dev), longs({1, 3, 0}, dev)}), {-0.2, 0.8, 2.2});
            const tg::Tensor i2 = longs({0, 2, 1, 0}, dev).reshape({2, 2});
            BOOST_TEST(tg::shape_str(x.index({i2}).sizes()) == "[2,2,4]");
            check_close(x.index({i2}), {0.7, -0.2, 1.3, 0.4, 2.2, 0.6, -0.3, 0.8, -1.1, 0.9, 0.05,
                                        -0.6, 0.7, -0.2, 1.3, 0.4});
            check_close(x.index({Slice(), longs({-1, 0}, dev)}), {0.4, 0.7, -0.6, -1.1, 0.8, 2.2});
            // tensor indices separated by a slice or None: their broadcast dims go first
            const tg::Tensor t3 =
                tg::arange(24.0, tg::kFloat64).to(dev).reshape({2, 3, 4}).requires_grad_(true);
            const tg::Tensor sep =
                t3.index({longs({1, 0, 1}, dev), Slice(), longs({3, 0, 2}, dev)});
            BOOST_TEST(tg::shape_str(sep.sizes()) == "[3,3]");
            check_close(sep, {15, 19, 23, 0, 4, 8, 14, 18, 22});
            (sep * tg::arange(9.0, tg::kFloat64).to(dev).reshape({3, 3})).sum().backward();
            check_close(t3.grad(),
                        {3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0, 0, 6, 0, 0, 0, 7, 1, 0, 0, 8, 2});
            const tg::Tensor sep2 = t3.detach().index(
                {longs({1, 0}, dev), tg::indexing::None, Slice(1, 3), longs({2, 2}, dev)});
            BOOST_TEST(tg::shape_str(sep2.sizes()) == "[2,1,2]");
            check_close(sep2, {18, 22, 6, 10});
            check_close(t3.detach().index({longs({1, 0}, dev), 1, longs({3, 0}, dev)}), {19, 4});
            // gradients flow to the selected elements
            const tg::Tensor xr = x.detach().clone().requires_grad_(true);
            const tg::Tensor sel = xr.index({xr > 0.5});
            (sel * sel).sum().backward();
            check_close(xr.grad(), {1.4, 0, 2.6, 0, 0, 1.8, 0, 0, 4.4, 1.2, 0, 1.6});
            // hostile indices: typed errors naming the problem
            BOOST_CHECK_THROW(x.index({longs({3}, dev)}), tg::shape_error);
            BOOST_CHECK_THROW(x.index({longs({-4}, dev)}), tg::shape_error);
            BOOST_CHECK_THROW(x.index({x[0] > 0.0}), tg::shape_error);  // [4] mask on dim of 3
            BOOST_CHECK_THROW(x.index({longs({0}, dev), Slice(), longs({0}, dev)}),
                              tg::shape_error);  // 3 indices for 2 dims
            BOOST_CHECK_THROW(
                t3.detach().index({longs({0, 1}, dev), Slice(), longs({0, 1, 2}, dev)}),
                tg::shape_error);  // [2] and [3] do not broadcast
            BOOST_CHECK_THROW(x.index({tg::tensor({1.0}, tg::kBool).to(dev).reshape({})}),
                              tg::value_error);
        }
    }
}

BOOST_AUTO_TEST_CASE(index_put_through_masks_tensors_and_steps) {
    for (tg::Device dev : devices()) {
        BOOST_TEST_CONTEXT(dev.str()) {
            tg::Tensor z = input(dev);
            z.index_put_({z < 0}, 0.0);
            check_close(z, {0.7, 0, 1.3, 0.4, 0, 0.9, 0.05, 0, 2.2, 0.6, 0, 0.8});
            z.index_put_({longs({0, 2}, dev), longs({3, 1}, dev)},
                         tg::tensor({-5.0, -6.0}, tg::kFloat64).to(dev));
            check_close(z, {0.7, 0, 1.3, -5, 0, 0.9, 0.05, 0, 2.2, -6, 0, 0.8});
            z.index_put_({Slice(None, None, 2), Slice(1, None, 2)}, 9.0);
            check_close(z, {0.7, 9, 1.3, 9, 0, 0.9, 0.05, 0, 2.2, 9, 0, 9});
            BOOST_CHECK_THROW(z.index_put_({longs({1, 1}, dev)}, 1.0), tg::value_error);
            BOOST_CHECK_THROW(z.index_put_({z > 0}, tg::ones({2}, tg::kFloat64).to(dev)),
                              tg::shape_error);
            // gradients: replaced elements get none, the values get theirs
            const tg::Tensor a = input(dev).requires_grad_(true);
            const tg::Tensor v =
                tg::tensor({10.0, 20.0, 30.0}, tg::kFloat64).to(dev).requires_grad_(true);
            tg::Tensor w = a * 2.0;
            w.index_put_({Slice(), 1}, v);
            w.index_put_({w < 0}, tg::scalar_tensor(0.5, tg::kFloat64).to(dev));
            (w * tg::arange(12.0, tg::kFloat64).to(dev).reshape({3, 4})).sum().backward();
            check_close(a.grad(), {0, 0, 4, 6, 0, 0, 12, 0, 16, 0, 0, 22});
            check_close(v.grad(), {1, 5, 9});
            // accumulate: repeated positions add every time
            const tg::Tensor acc = input(dev).requires_grad_(true);
            const tg::Tensor u =
                tg::tensor({1.0, 2.0, 4.0}, tg::kFloat64).to(dev).requires_grad_(true);
            tg::Tensor c = acc * 1.0;
            c.index_put_({longs({0, 2, 0}, dev), longs({1, 1, 1}, dev)}, u, /*accumulate=*/true);
            check_close(c, {0.7, 4.8, 1.3, 0.4, -1.1, 0.9, 0.05, -0.6, 2.2, 2.6, -0.3, 0.8}, 1e-14,
                        1e-14);
            (c * tg::arange(12.0, tg::kFloat64).to(dev).reshape({3, 4})).sum().backward();
            check_close(u.grad(), {1, 9, 1});
            check_close(acc.grad(), tg::arange(12.0, tg::kFloat64).to_vector<double>());
        }
    }
}

BOOST_AUTO_TEST_CASE(masks_drive_attention_and_multihead_attention) {
    // a bool attn_mask selects exactly as the int64 one it replaced
    const tg::Tensor q = tgtest::make_const({2, 3, 4}, 5).to(tg::kFloat64);
    const tg::Tensor allowed = tg::tril(tg::ones({3, 3}, tg::kInt64)) > 0;
    BOOST_TEST(allowed.dtype() == tg::kBool);
    check_close(tg::scaled_dot_product_attention(q, q, q, allowed),
                tg::scaled_dot_product_attention(q, q, q, {}, 0.0, true), 1e-12, 1e-12);
    tg::nn::MultiheadAttention mha(tg::nn::MultiheadAttentionOptions(4, 2));
    mha->to(tg::kFloat64);
    const tg::Tensor x = q.transpose(0, 1);  // [L, N, E]
    const tg::Tensor pad = tg::tensor({0.0, 0.0, 1.0, 0.0, 1.0, 1.0}, tg::kBool).reshape({2, 3});
    // key_padding_mask true = padding; LibTorch masked_fills it, so it must be bool
    const tg::Tensor y_bool = std::get<0>(mha(x, x, x, pad));
    const tg::Tensor inf = tg::full({}, -std::numeric_limits<double>::infinity(), tg::kFloat64);
    const tg::Tensor add = tg::where(pad, inf, tg::zeros({}, tg::kFloat64));
    // [N,S] -> the [N·H, L, S] form attn_mask takes: the same scores, masked by addition
    const tg::Tensor per_head = add.reshape({2, 1, 1, 3}).expand({2, 2, 3, 3}).reshape({4, 3, 3});
    check_close(y_bool, std::get<0>(mha(x, x, x, tg::Tensor(), true, per_head)), 1e-12, 1e-12);
    BOOST_CHECK_THROW(mha(x, x, x, pad.to(tg::kInt64)), tg::dtype_error);
    // LibTorch's C++ module adds a bool attn_mask (true = +1): refused, not misread
    BOOST_CHECK_THROW(mha(x, x, x, tg::Tensor(), true, tg::ones({3, 3}, tg::kBool)),
                      tg::dtype_error);
}
