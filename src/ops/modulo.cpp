// fmod and remainder (Tensor % x): LibTorch's two remainders of a division, one elementwise
// kernel each (kernels.def), with type promotion as the other binary ops.
#include <string>

#include "autograd/record.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using runtime::BinaryOp;

namespace {

/// a op b for the fmod or remainder kernel. Integers stay integers (a zero divisor throws
/// value_error: runtime::binary checks it, Note [Integer division]); the gradients are
/// da = dy, db = -dy·q with q the quotient rounded as the op rounds it (toward zero for fmod,
/// down for remainder), as LibTorch's derivatives.
Tensor modulo(const char* op, BinaryOp kernel, const char* torch_name_, const Tensor& a_in,
              const Tensor& b_in) {
    if (a_in.dtype() == kBool && b_in.dtype() == kBool)
        throw dtype_error(std::string(op) + ": two bool tensors " + shape_str(a_in.sizes()) +
                          " and " + shape_str(b_in.sizes()) + " (LibTorch has no bool " + op + ")");
    const auto ab = promote::both(a_in, b_in);
    const Tensor &a = ab.first, &b = ab.second;
    Tensor y = runtime::binary(kernel, a, b, op);
    if (should_record({&a, &b})) {
        const bool trunc_q = kernel == BinaryOp::fmod;
        record(
            op, {&a, &b}, y,
            [sa = b.requires_grad() ? save(a) : Saved(), sb = b.requires_grad() ? save(b) : Saved(),
             trunc_q](const Tensor& dy, const Node& n) {
                Tensor db;
                if (needs(n, 1)) {
                    const Tensor q = sa.get() / sb.get();
                    db = sum_to(-dy * (trunc_q ? trunc(q) : floor(q)), in_shape(n, 1));
                }
                return Grads{needs(n, 0) ? sum_to(dy, in_shape(n, 0)) : Tensor(), db};
            });
    }
    torch_name(y, torch_name_);
    return y;
}

/// s as a 0-dim tensor of the dtype a computes in with s (LibTorch's result_type(a, s)).
Tensor scalar_like(const Tensor& a, Scalar s) {
    return promote::scalar_tensor(s, TensorOptions(result_type(a, s)).device(a.device()));
}

}  // namespace

Tensor fmod(const Tensor& a, const Tensor& b) {
    return modulo("fmod", BinaryOp::fmod, "FmodBackward1", a, b);
}
Tensor fmod(const Tensor& a, Scalar b) {
    return modulo("fmod", BinaryOp::fmod, "FmodBackward0", a, scalar_like(a, b));
}
Tensor remainder(const Tensor& a, const Tensor& b) {
    return modulo("remainder", BinaryOp::remainder, "RemainderBackward1", a, b);
}
Tensor remainder(const Tensor& a, Scalar b) {
    return modulo("remainder", BinaryOp::remainder, "RemainderBackward0", a, scalar_like(a, b));
}
Tensor remainder(Scalar a, const Tensor& b) {
    // LibTorch's Scalar % Tensor: the scalar filled into b's dtype, then remainder
    return remainder(promote::scalar_tensor(a, b.options()), b);
}
Tensor operator%(const Tensor& a, const Tensor& b) {
    return remainder(a, b);
}
Tensor operator%(const Tensor& a, Scalar b) {
    return remainder(a, b);
}
Tensor operator%(Scalar a, const Tensor& b) {
    return remainder(a, b);
}

}  // namespace tg
