/// LibTorch's autograd tutorial, ported by renaming torch:: to tg:: (issue 16): requires_grad(),
/// grad_fn names, backward with and without a gradient, NoGradGuard, detach, a gradient of a
/// gradient with autograd::grad, and the tutorial's two custom functions (a linear layer saving
/// its inputs, a product with a constant kept in saved_data). The body is written against the
/// namespace alias `torch`: without that line, against <torch/torch.h> and a check_close for
/// torch::Tensor, this same file passes with LibTorch 1.13 (checked when it was written).
#define BOOST_TEST_MODULE test_libtorch_autograd_program
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
namespace torch = tg;  // the port: one line

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The tutorial's linear function: saves its inputs, returns their gradients.
class LinearFunction : public torch::autograd::Function<LinearFunction> {
public:
    static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                                 torch::Tensor bias = torch::Tensor()) {
        ctx->save_for_backward({input, weight, bias});
        auto output = input.mm(weight.t());
        if (bias.defined())
            output += bias.unsqueeze(0).expand_as(output);
        return output;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        auto saved = ctx->get_saved_variables();
        auto input = saved[0], weight = saved[1], bias = saved[2];
        auto grad_output = grad_outputs[0];
        auto grad_input = grad_output.mm(weight);
        auto grad_weight = grad_output.t().mm(input);
        auto grad_bias = torch::Tensor();
        if (bias.defined())
            grad_bias = grad_output.sum(0);
        return {grad_input, grad_weight, grad_bias};
    }
};

// The tutorial's product with a constant: a non-tensor argument kept in saved_data.
class MulConstant : public torch::autograd::Function<MulConstant> {
public:
    static torch::Tensor forward(AutogradContext* ctx, torch::Tensor tensor, double constant) {
        ctx->saved_data["constant"] = constant;
        return tensor * constant;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(basic_autograd) {
    auto x = torch::ones({2, 2}, torch::requires_grad());
    auto y = x + 2;
    BOOST_TEST(y.grad_fn()->name() == "AddBackward1");
    auto z = y * y * 3;
    auto out = z.mean();
    BOOST_TEST(z.grad_fn()->name() == "MulBackward1");
    BOOST_TEST(out.grad_fn()->name() == "MeanBackward0");
    auto a = torch::arange(1.0, 5.0, 1.0).reshape({2, 2});
    a = ((a * 3) / (a - 5));
    BOOST_TEST(!a.requires_grad());
    a.requires_grad_(true);
    BOOST_TEST(a.requires_grad());
    auto b = (a * a).sum();
    BOOST_TEST(b.grad_fn()->name() == "SumBackward0");
    out.backward();
    check_close(x.grad(), {4.5, 4.5, 4.5, 4.5}, 1e-6, 1e-6);
}

BOOST_AUTO_TEST_CASE(vector_jacobian_products_no_grad_and_detach) {
    auto x = torch::tensor({0.5, -1.0, 2.0}, torch::requires_grad());
    auto y = x * 2;
    while (y.norm().item<double>() < 1000)
        y = y * 2;
    BOOST_TEST(y.grad_fn()->name() == "MulBackward1");
    auto v = torch::tensor({0.1, 1.0, 0.0001}, torch::kFloat);
    y.backward(v);
    check_close(x.grad(), {51.2, 512, 0.0512}, 1e-4, 1e-6);  // 2^9 · v: |y| first passes 1000
    BOOST_TEST(x.requires_grad());
    BOOST_TEST(x.pow(2).requires_grad());
    {
        torch::NoGradGuard no_grad;
        BOOST_TEST(!x.pow(2).requires_grad());
    }
    auto d = x.detach();
    BOOST_TEST(!d.requires_grad());
    BOOST_TEST(x.eq(d).all().item<bool>());
}

BOOST_AUTO_TEST_CASE(a_gradient_of_a_gradient) {
    auto x = torch::tensor({1.0, -2.0, 0.5}, torch::requires_grad());
    auto y = x * x * x;
    auto grad = torch::autograd::grad({y.sum()}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                      /*create_graph=*/true)[0];
    check_close(grad, {3, 12, 0.75});  // 3x²
    grad.sum().backward();
    check_close(x.grad(), {6, -12, 3});  // 6x
}

BOOST_AUTO_TEST_CASE(the_tutorials_custom_functions) {
    auto x = torch::arange(6.0).reshape({2, 3}).requires_grad_();
    auto weight = (torch::arange(12.0) * 0.1).reshape({4, 3}).requires_grad_();
    auto bias = torch::tensor({1.0, -1.0, 0.5, 0.0}, torch::requires_grad());
    auto y = LinearFunction::apply(x, weight, bias);
    check_close(y, {1.5, 0.4, 2.8, 3.2, 2.4, 4.0, 9.1, 12.2}, 1e-5, 1e-5);
    y.sum().backward();
    check_close(x.grad(), {1.8, 2.2, 2.6, 1.8, 2.2, 2.6}, 1e-5, 1e-5);
    check_close(weight.grad(), {3, 5, 7, 3, 5, 7, 3, 5, 7, 3, 5, 7});
    check_close(bias.grad(), {2, 2, 2, 2});
    auto t = torch::tensor({1.0, 2.0}, torch::requires_grad());
    auto m = MulConstant::apply(t, 5.5);
    m.sum().backward();
    check_close(m, {5.5, 11});
    check_close(t.grad(), {5.5, 5.5});
}
