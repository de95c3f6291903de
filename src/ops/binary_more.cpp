// atan2 and hypot (tapegrad/math_ops.hpp): a kernels.def kernel each, so every backend has them,
// with composed VJPs (create_graph differentiates them again) and in-place forms through
// detail::apply_inplace.
#include <string>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "ops/inplace.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

using runtime::BinaryOp;

namespace {
/// y = kernel(a, b), recording da, db = vjp(dy, a, b, y) (broadcast gradients summed back).
template <class Vjp>
Tensor binary_op(const char* op, const char* torch, BinaryOp k, const Tensor& a, const Tensor& b,
                 Vjp vjp) {
    Tensor y = runtime::binary(k, a, b, op);
    if (should_record({&a, &b})) {
        record(op, {&a, &b}, y,
               [sa = save(a), sb = save(b), sy = save_output(y), vjp](const Tensor& dy,
                                                                      const Node& n) {
                   const auto [da, db] = vjp(dy, sa.get(), sb.get(), sy.get());
                   return Grads{needs(n, 0) ? sum_to(da, in_shape(n, 0)) : Tensor(),
                                needs(n, 1) ? sum_to(db, in_shape(n, 1)) : Tensor()};
               });
        torch_name(y, torch);
    }
    return y;
}
}  // namespace

Tensor atan2(const Tensor& a_in, const Tensor& b_in) {
    checks::defined("atan2", a_in);
    checks::defined("atan2", b_in);
    const auto ab = promote::both_floating(a_in, b_in);  // integers: float32
    return binary_op("atan2", "Atan2Backward0", BinaryOp::atan2, ab.first, ab.second,
                     [](const Tensor& dy, const Tensor& a, const Tensor& b, const Tensor&) {
                         const Tensor w = dy / (a * a + b * b);
                         return std::pair<Tensor, Tensor>{w * b, -w * a};
                     });
}
Tensor hypot(const Tensor& a_in, const Tensor& b_in) {
    checks::defined("hypot", a_in);
    checks::defined("hypot", b_in);
    if (!is_floating(result_type(a_in, b_in)))
        throw dtype_error(std::string("hypot: expected floating-point tensors, got ") +
                          dtype_name(a_in.dtype()) + " " + shape_str(a_in.sizes()) + " and " +
                          dtype_name(b_in.dtype()) + " " + shape_str(b_in.sizes()));
    const auto ab = promote::both(a_in, b_in);
    return binary_op("hypot", "HypotBackward0", BinaryOp::hypot, ab.first, ab.second,
                     [](const Tensor& dy, const Tensor& a, const Tensor& b, const Tensor& y) {
                         const Tensor w = dy / y;
                         return std::pair<Tensor, Tensor>{w * a, w * b};
                     });
}
Tensor& atan2_(Tensor& a, const Tensor& b) {
    return detail::apply_inplace(
        a, "atan2_", {&b}, [&](const Tensor& t) { return atan2(t, b); }, true);
}
Tensor& hypot_(Tensor& a, const Tensor& b) {
    return detail::apply_inplace(
        a, "hypot_", {&b}, [&](const Tensor& t) { return hypot(t, b); }, true);
}

namespace detail {
// clang-format off
Tensor TensorMethods::atan2(const Tensor& other) const { return tg::atan2(self(), other); }
Tensor TensorMethods::hypot(const Tensor& other) const { return tg::hypot(self(), other); }
Tensor& TensorMethods::atan2_(const Tensor& other) { return tg::atan2_(self(), other); }
Tensor& TensorMethods::hypot_(const Tensor& other) { return tg::hypot_(self(), other); }
// clang-format on
}  // namespace detail
}  // namespace tg
