#include "ops/checks.hpp"

#include <string>

namespace tg::checks {

void defined(const char* op, const Tensor& t) {
    if (!t.defined())
        throw value_error(std::string(op) + ": undefined tensor");
}

void same_dtype(const char* op, const char* a_name, const Tensor& a, const char* b_name,
                const Tensor& b) {
    if (!b.defined())
        throw value_error(std::string(op) + ": undefined " + b_name);
    if (a.dtype() != b.dtype())
        throw dtype_error(std::string(op) + ": " + a_name + " (" + dtype_name(a.dtype()) + " " +
                          shape_str(a.sizes()) + ") and " + b_name + " (" + dtype_name(b.dtype()) +
                          " " + shape_str(b.sizes()) + ") must have the same scalar type");
}

void same_device(const char* op, const char* what, const Tensor& t, const Tensor& x) {
    if (t.device() != x.device())
        throw device_error(std::string(op) + ": " + what + " on " + t.device().str() +
                           ", input on " + x.device().str());
}

void broadcasts_to(const char* op, const char* what, const Tensor& t, const Shape& target,
                   const char* target_name) {
    bool fits = false;
    try {
        fits = broadcast_shapes(t.sizes(), target, op) == target;
    } catch (const shape_error&) {  // name the argument, not just the two shapes
    }
    if (!fits)
        throw shape_error(std::string(op) + ": " + what + " " + shape_str(t.sizes()) +
                          " cannot be broadcast to the " + target_name + " " + shape_str(target));
}

void is_bool(const char* op, const char* what, const Tensor& t) {
    if (t.dtype() != kBool)
        throw dtype_error(std::string(op) + ": " + what + " must be a bool tensor, got " +
                          dtype_name(t.dtype()) + " " + shape_str(t.sizes()) +
                          " (compare it: " + what + " != 0)");
}

}  // namespace tg::checks
