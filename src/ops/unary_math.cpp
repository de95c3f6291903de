// Unary math: sqrt rsqrt square exp log log1p expm1 sin cos abs, each forward with its VJP
// (arithmetic.cpp has + - * / pow).
#include <cmath>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

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

Tensor rsqrt(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's rsqrt is float32
    Tensor y = runtime::unary(UnaryOp::rsqrt, x);
    if (should_record({&x}))  // d/dx x^(-1/2) = -y^3 / 2
        record("rsqrt", {&x}, y, [sy = save_output(y)](const Tensor& dy) {
            const Tensor yy = sy.get();
            return Grads{dy * (yy * yy * yy) * -0.5};
        });
    return y;
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

Tensor log1p(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's log1p is float32
    Tensor y = runtime::unary(UnaryOp::log1p, x);
    if (should_record({&x}))
        record("log1p", {&x}, y,
               [sx = save(x)](const Tensor& dy) { return Grads{dy / (sx.get() + 1)}; });
    return y;
}

Tensor expm1(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's expm1 is float32
    Tensor y = runtime::unary(UnaryOp::expm1, x);
    if (should_record({&x}))
        record("expm1", {&x}, y,
               [sy = save_output(y)](const Tensor& dy) { return Grads{dy * (sy.get() + 1)}; });
    return y;
}

Tensor sin(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's sin is float32
    Tensor y = runtime::unary(UnaryOp::sin, x);
    if (should_record({&x}))
        record("sin", {&x}, y,
               [sx = save(x)](const Tensor& dy) { return Grads{dy * cos(sx.get())}; });
    return y;
}

Tensor cos(const Tensor& x_in) {
    const Tensor x = promote::floating(x_in);  // an integer tensor's cos is float32
    Tensor y = runtime::unary(UnaryOp::cos, x);
    if (should_record({&x}))
        record("cos", {&x}, y,
               [sx = save(x)](const Tensor& dy) { return Grads{-dy * sin(sx.get())}; });
    return y;
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
