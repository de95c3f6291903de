#pragma once
// The shape of most unary math ops (unary_math.cpp, unary_more.cpp): a kernels.def kernel on a
// floating x (an integer x as float32) and a VJP from x or from y.
#include <string>

#include "autograd/record.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"

namespace tg::detail {

/// y = kernel(x) for a floating x (integers: float32), recording vjp(dy, x, y) when needed.
template <class Vjp>
Tensor unary_op(const char* name, runtime::UnaryOp k, const Tensor& x_in, Vjp vjp,
                bool saves_output) {
    if (!x_in.defined())
        throw value_error(std::string(name) + ": undefined tensor");
    const Tensor x = promote::floating(x_in);
    Tensor y = runtime::unary(k, x);
    if (should_record({&x})) {
        if (saves_output)
            record(name, {&x}, y, [sy = save_output(y), vjp](const Tensor& dy) {
                return Grads{vjp(dy, Tensor(), sy.get())};
            });
        else
            record(name, {&x}, y, [sx = save(x), vjp](const Tensor& dy) {
                return Grads{vjp(dy, sx.get(), Tensor())};
            });
    }
    return y;
}
}  // namespace tg::detail
