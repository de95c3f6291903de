// Unary math: sqrt rsqrt square exp log log1p expm1 sin cos abs, each forward with its VJP
// (arithmetic.cpp has + - * / pow; unary_more.cpp the rest of the trigonometry).
#include <cmath>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "ops/promote.hpp"
#include "ops/unary_op.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using detail::unary_op;
using runtime::BinaryOp;
using runtime::UnaryOp;

Tensor sqrt(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's sqrt is float32
    Tensor y = runtime::unary(UnaryOp::sqrt, x);
    trace_op("sqrt", {&x_in}, y);
    if (should_record({&x}))
        record("sqrt", {&x}, y, [sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get();
            if (GradMode::is_enabled())
                return Grads{dy / (yy * 2)};
            return Grads{runtime::binary(BinaryOp::sqrt_backward, dy, yy, "sqrt")};
        });
    return y;
}

Tensor rsqrt(const Tensor& x) {  // d/dx x^(-1/2) = -y^3 / 2
    return unary_op(
        "rsqrt", UnaryOp::rsqrt, x,
        [](const Tensor& dy, const Tensor&, const Tensor& y) { return dy * (y * y * y) * -0.5; },
        true);
}

Tensor square(const Tensor& x) {
    return pow(x, 2);
}

Tensor exp(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's exp is float32
    Tensor y = runtime::unary(UnaryOp::exp, x);
    trace_op("exp", {&x_in}, y);
    if (should_record({&x}))
        record("exp", {&x}, y,
               [sy = save_output(y)](const Tensor& dy) { return Grads{dy * sy.get()}; });
    return y;
}

Tensor log(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's log is float32
    Tensor y = runtime::unary(UnaryOp::log, x);
    trace_op("log", {&x_in}, y);
    if (should_record({&x}))
        record("log", {&x}, y, [sx = save(x)](const Tensor& dy) { return Grads{dy / sx.get()}; });
    return y;
}

Tensor log1p(const Tensor& x) {
    return unary_op(
        "log1p", UnaryOp::log1p, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy / (xx + 1); }, false);
}

Tensor expm1(const Tensor& x) {
    return unary_op(
        "expm1", UnaryOp::expm1, x,
        [](const Tensor& dy, const Tensor&, const Tensor& y) { return dy * (y + 1); }, true);
}

Tensor sin(const Tensor& x) {
    return unary_op(
        "sin", UnaryOp::sin, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return dy * cos(xx); }, false);
}

Tensor cos(const Tensor& x) {
    return unary_op(
        "cos", UnaryOp::cos, x,
        [](const Tensor& dy, const Tensor& xx, const Tensor&) { return -dy * sin(xx); }, false);
}

Tensor abs(const Tensor& x) {
    Tensor y = runtime::unary(UnaryOp::abs, x);
    if (should_record({&x}))
        record("abs", {&x}, y, [sx = save(x)](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (GradMode::is_enabled())
                return Grads{dy * runtime::unary(UnaryOp::sign, xx)};
            return Grads{runtime::binary(BinaryOp::abs_backward, dy, xx, "abs")};
        });
    return y;
}

}  // namespace tg
