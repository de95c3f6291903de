/// Silent differences from LibTorch (issue 29): calls that compile against both libraries and
/// used to compute something else here. Each case fails on the code before its fix; the
/// numbers are LibTorch 1.13's, printed by scripts/libtorch_reference.cpp ("fidelity").
/// StepLR's timing is checked in test_optim.cpp (step_lr_and_cosine_annealing).
#define BOOST_TEST_MODULE test_libtorch_fidelity
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <string>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;

/// ATen's argument order: batch_norm(input, weight, bias, running_mean, running_var, training,
/// momentum, eps, cudnn_enabled). tapegrad took the running statistics first, so the same call
/// normalised with the weight as the mean.
BOOST_AUTO_TEST_CASE(batch_norm_takes_atens_argument_order) {
    const tg::Tensor x = from_values({0.5, -1.0, 2.0, 0.25, 1.5, -0.5, 3.0, 1.0}, {2, 2, 2});
    const tg::Tensor w = from_values({2.0, -3.0}, {2}), b = from_values({0.5, 0.25}, {2});
    const tg::Tensor rm = from_values({0.1, -0.2}, {2}), rv = from_values({4.0, 0.5}, {2});
    check_close(
        tg::batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5, false),
        {0.89999950000093754, -0.59999862500257817, -9.0837161749673587, -1.6591692176069599,
         1.8999982500032813, -0.099999250001406248, -13.326314436316158, -4.8411179136185591},
        1e-13, 1e-13);
    tg::Tensor rm2 = rm.clone(), rv2 = rv.clone();
    check_close(tg::batch_norm(x, w, b, rm2, rv2, true, 0.3, 1e-3, false),
                {1.2807101446421558, -1.8421304339264672, -1.0157586311664959, 4.0472758934994886,
                 3.3626038636879043, -0.80118357440359289, -3.9089212166899157, 1.8774039543569239},
                1e-13, 1e-13);
    check_close(rm2, {0.10749999999999998, 0.32874999999999999}, 1e-15, 1e-15);
    check_close(rv2, {3.1687499999999997, 0.77968749999999998}, 1e-15, 1e-15);
}

/// LibTorch's torch::load(optimizer, path) restores the state and leaves the options (lr,
/// momentum) as the program constructed or set them: an SGD built with lr 0.7 keeps 0.7 after
/// loading a file saved at lr 0.3. tapegrad used to overwrite the lr.
BOOST_AUTO_TEST_CASE(loading_an_optimizer_keeps_its_learning_rate) {
    const std::string path = "test_libtorch_fidelity_sgd.tgsv";
    tg::Tensor p = tg::zeros({2}, tg::requires_grad());
    tg::optim::SGD saved({p}, tg::optim::SGDOptions(0.3).momentum(0.9));
    p.sum().backward();
    saved.step();
    tg::save(saved, path);
    tg::Tensor q = tg::zeros({2}, tg::requires_grad());
    tg::optim::SGD loaded({q}, tg::optim::SGDOptions(0.7).momentum(0.5));
    tg::load(loaded, path);
    std::remove(path.c_str());
    const auto& o = static_cast<const tg::optim::SGDOptions&>(loaded.param_groups()[0].options());
    BOOST_TEST(o.lr() == 0.7);
    BOOST_TEST(o.momentum() == 0.5);
    // the state did come in: the momentum buffer of the saved step
    BOOST_TEST(loaded.state().count(q.impl()) == 1u);
}

/// where() and masked_fill take bool conditions only, as LibTorch (2's rule for masked_fill;
/// LibTorch 1.13 ignored a float mask silently): a float 0/1 condition used to pick by
/// "nonzero" here.
BOOST_AUTO_TEST_CASE(conditions_must_be_bool) {
    const tg::Tensor a = tg::ones({3}), b = tg::zeros({3});
    const tg::Tensor c = tg::tensor({1.0, 0.0, 1.0});
    check_throws<tg::dtype_error>([&] { (void)tg::where(c, a, b); },
                                  {"where", "condition", "bool", "float32 [3]"});
    check_throws<tg::dtype_error>([&] { (void)a.masked_fill(c, 2.0); },
                                  {"masked_fill", "mask", "bool"});
    check_close(tg::where(tg::gt(c, 0.0), a, b), {1, 0, 1});
}

/// Overloads where LibTorch reads an int, {} or a bool differently from a first guess, each
/// found compiling against both with another meaning here (values from LibTorch 1.13).
BOOST_AUTO_TEST_CASE(ints_braces_and_bools_as_libtorch_reads_them) {
    const tg::Tensor v =
        from_values({1.0, 4.0, -2.0, 0.5, 3.0, 3.0, -1.0, 2.0, 0.0, 5.0, 1.5, -0.5}, {3, 4});
    // var(x, 0) / x.var(1): the dim (tapegrad read the int as unbiased)
    check_close(tg::var(v, 0), {2.3333333333333335, 1, 3.25, 1.5833333333333333}, 1e-15, 1e-15);
    check_close(v.var(1), {6.0625, 3.5833333333333339, 6.166666666666667}, 1e-15, 1e-15);
    // clamp(x, {}, hi): no lower bound (tapegrad clamped at 0); min > max gives max everywhere
    check_close(tg::clamp(v, {}, 2), {1, 2, -2, 0.5, 2, 2, -1, 2, 0, 2, 1.5, -0.5});
    check_close(tg::clamp(v, 3, 1), std::vector<double>(12, 1.0));
    check_close(v.clamp(0), {1, 4, 0, 0.5, 3, 3, 0, 2, 0, 5, 1.5, 0});
    // argsort(x, true): the stable sort along the last dim (tapegrad sorted along dim 1)
    check_close(tg::argsort(v.reshape({2, 3, 2}), true), {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0});
    check_close(v.reshape({2, 3, 2}).argsort(true), {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0});
    // a reduction written {} is ATen's 0, None (tapegrad's enum made it Mean)
    check_close(tg::mse_loss(v, v * 0.5, {}),
                {0.25, 4, 1, 0.0625, 2.25, 2.25, 0.25, 1, 0, 6.25, 0.5625, 0.0625});
    // argmax(x, {}, keepdim): the flat index, every dim kept (tapegrad used dim 0)
    const tg::Tensor am = tg::argmax(v, {}, true);
    BOOST_TEST(tg::shape_str(am.sizes()) == "[1,1]");
    BOOST_TEST(am.item<int64_t>() == 9);
    BOOST_TEST(v.argmax().item<int64_t>() == 9);
    // x.index({true}) adds a dim of size 1, {false} one of size 0 (tapegrad selected row 1, 0)
    BOOST_TEST(tg::shape_str(v.index({true}).sizes()) == "[1,3,4]");
    BOOST_TEST(tg::shape_str(v.index({false}).sizes()) == "[0,3,4]");
}

/// F::dropout with inplace(true) drops out its input (tapegrad ignored the option, leaving the
/// input as it was); DataLoaderOptions' batch_size defaults to 1 (tapegrad's was 64).
BOOST_AUTO_TEST_CASE(options_as_libtorch_defaults_them) {
    namespace F = tg::nn::functional;
    tg::Tensor h = tg::ones({2, 3}, tg::kFloat64);
    F::dropout(h, F::DropoutFuncOptions().p(1.0).inplace(true));
    check_close(h, std::vector<double>(6, 0.0));
    BOOST_TEST(tg::data::DataLoaderOptions().batch_size() == 1);
    const tg::data::DataLoaderOptions implicit = 32;  // implicit, as LibTorch's
    BOOST_TEST(implicit.batch_size() == 32);
}

/// remainder (Tensor % x) and fmod as LibTorch computes them: the sign of the divisor for
/// remainder, of the dividend for fmod; integers stay integers (an int % 2.5 is float32);
/// gradients -dy·floor(a/b) and -dy·trunc(a/b) for b (values from LibTorch 1.13).
BOOST_AUTO_TEST_CASE(remainder_and_fmod) {
    const tg::Tensor a = from_values({5.5, -5.5, 7.0, -7.25, 0.0, 3.0}, {6});
    const tg::Tensor b = from_values({2.0, 2.0, -3.0, -2.0, 1.5, 0.7}, {6});
    check_close(tg::remainder(a, b), {1.5, 0.5, -2, -1.25, 0, 0.20000000000000018}, 0, 0);
    check_close(tg::fmod(a, b), {1.5, -1.5, 1, -1.25, 0, 0.20000000000000018}, 0, 0);
    check_close(a % 2, {1.5, 0.5, 1, 0.75, 0, 1}, 0, 0);
    check_close(a.fmod(-2.5), {0.5, -0.5, 2, -2.25, 0, 0.5}, 0, 0);
    const tg::Tensor i = tg::tensor(std::vector<int64_t>{7, -7, 7, -7, 0, 9});
    const tg::Tensor j = tg::tensor(std::vector<int64_t>{3, 3, -3, -3, 5, 4});
    BOOST_TEST((i % j).dtype() == tg::kInt64);
    BOOST_TEST((i % j).to_vector<int64_t>() == (std::vector<int64_t>{1, 2, -2, -1, 0, 1}),
               boost::test_tools::per_element());
    BOOST_TEST(tg::fmod(i, j).to_vector<int64_t>() == (std::vector<int64_t>{1, -1, 1, -1, 0, 1}),
               boost::test_tools::per_element());
    BOOST_TEST((i % 2.5).dtype() == tg::kFloat32);
    check_close(i % 2.5, {2, 0.5, 2, 0.5, 0, 1.5}, 0, 0);
    check_throws<tg::value_error>([&] { (void)(i % tg::zeros({6}, tg::kInt64)); },
                                  {"remainder", "division by zero"});
    tg::Tensor ar = a.clone().requires_grad_(true), br = b.clone().requires_grad_(true);
    (tg::remainder(ar, br) * tg::arange(6.0, tg::kFloat64)).sum().backward();
    check_close(ar.grad(), {0, 1, 2, 3, 4, 5}, 0, 0);
    check_close(br.grad(), {0, 3, 6, -9, 0, -20}, 0, 0);
    tg::Tensor ar2 = a.clone().requires_grad_(true), br2 = b.clone().requires_grad_(true);
    (tg::fmod(ar2, br2) * tg::arange(6.0, tg::kFloat64)).sum().backward();
    check_close(br2.grad(), {0, 2, 4, -9, 0, -20}, 0, 0);
}

/// Factories infer their dtype from their arguments as LibTorch's do when no dtype is given
/// (LibTorch 1.13, scripts/libtorch_reference.cpp "factory_dtypes"): integer literals make
/// int64, bools bool, floating ones float32. tapegrad made float32 of all, so arange(20000000)
/// rounded its last elements and tensor({1, 2}) printed and divided as floats.
BOOST_AUTO_TEST_CASE(factories_infer_their_dtype) {
    BOOST_TEST(tg::tensor({1, 2, 3}).dtype() == tg::kInt64);
    BOOST_TEST(tg::tensor(std::vector<int>{1, 2}).dtype() == tg::kInt64);
    BOOST_TEST(tg::tensor({true, false}).dtype() == tg::kBool);
    BOOST_TEST(tg::tensor({1.5f, 2.f}).dtype() == tg::kFloat32);
    BOOST_TEST(tg::tensor({1.5, 2.0}).dtype() == tg::kFloat32);
    BOOST_TEST(tg::tensor({1, 2, 3}, tg::kFloat64).dtype() == tg::kFloat64);
    BOOST_TEST(tg::arange(5).dtype() == tg::kInt64);
    BOOST_TEST(tg::arange(0, 5, 1).dtype() == tg::kInt64);
    BOOST_TEST(tg::arange(0., 5).dtype() == tg::kFloat32);
    BOOST_TEST(tg::arange(0, 5, 0.5).dtype() == tg::kFloat32);
    BOOST_TEST(tg::arange(5, tg::kFloat32).dtype() == tg::kFloat32);
    BOOST_TEST(tg::full({2}, 3).dtype() == tg::kInt64);
    BOOST_TEST(tg::full({2}, true).dtype() == tg::kBool);
    BOOST_TEST(tg::full({2}, 3.5).dtype() == tg::kFloat32);
    BOOST_TEST(tg::scalar_tensor(3).dtype() == tg::kFloat32);
    BOOST_TEST(tg::tensor(3).dtype() == tg::kInt64);
    BOOST_TEST(tg::tensor(true).dtype() == tg::kBool);
    const tg::Tensor m = tg::tensor({{1, 2}, {3, 4}});
    BOOST_TEST(m.dtype() == tg::kInt64);
    BOOST_TEST(tg::shape_str(m.sizes()) == "[2,2]");
    BOOST_TEST(m.to_vector<int64_t>() == (std::vector<int64_t>{1, 2, 3, 4}),
               boost::test_tools::per_element());
    check_close(tg::tensor({{1.0, 2.5}, {3.0, 4.0}}), {1, 2.5, 3, 4}, 0, 0);
    // LibTorch: "Expected all elements of the tensor to have the same scalar type"
    check_throws<tg::value_error>(
        [] {
            (void)tg::tensor({1, 2.5});
        },
        {"tensor", "one scalar type", "int64", "float32"});
    BOOST_TEST(tg::arange(20000000)[19999999].item<int64_t>() == 19999999);  // exact in int64
    check_throws<tg::value_error>(
        [] {
            (void)tg::tensor({{1, 2}, {3}});
        },
        {"tensor", "unequal shapes", "[2]", "[1]"});
    check_throws<tg::value_error>([] { (void)tg::tensor({1, 300}, tg::kUInt8); }, {"300"});
}
