// Rounding and sign: floor ceil round trunc sign. Each is piecewise constant, so its gradient is
// zero wherever it exists; as in PyTorch (FloorBackward0 returns zeros), the op is recorded and
// passes zeros back, so a graph through it stays connected and backward() does not fail.
// On integer tensors the four rounding ops are the identity (a copy), as PyTorch's are (and sign
// of a bool tensor: it is itself); round is
// half to even (torch.round: 0.5 -> 0, 1.5 -> 2, -2.5 -> -2).
#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using runtime::UnaryOp;

namespace {

Tensor piecewise_constant(const char* op, UnaryOp k, const Tensor& x) {
    const bool identity = (is_integral(x.dtype()) && k != UnaryOp::sign) ||
                          (x.dtype() == kBool && k == UnaryOp::sign);
    if (identity)
        return x.clone();
    Tensor y = runtime::unary(k, x);
    if (should_record({&x}))
        record(op, {&x}, y, [](const Tensor& dy) { return Grads{zeros_like(dy)}; });
    return y;
}

}  // namespace

Tensor floor(const Tensor& x) {
    return piecewise_constant("floor", UnaryOp::floor, x);
}

Tensor ceil(const Tensor& x) {
    return piecewise_constant("ceil", UnaryOp::ceil, x);
}

Tensor round(const Tensor& x) {
    return piecewise_constant("round", UnaryOp::round, x);
}

Tensor trunc(const Tensor& x) {
    return piecewise_constant("trunc", UnaryOp::trunc, x);
}

Tensor sign(const Tensor& x) {
    return piecewise_constant("sign", UnaryOp::sign, x);
}

}  // namespace tg
