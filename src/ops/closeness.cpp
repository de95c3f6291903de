// isclose, allclose and equal, as LibTorch's (at::isclose's formula: Note [closeness] below).
#include <cmath>
#include <limits>
#include <string>

#include "tapegrad/autograd.hpp"
#include "tapegrad/logical.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
void check_pair(const char* op, const Tensor& a, const Tensor& b) {
    if (!a.defined() || !b.defined())
        throw value_error(std::string(op) + ": undefined tensor");
}
}  // namespace

// Note [closeness]: a and b are close where a == b (so equal infinities are), where both are
// NaN and equal_nan, or where the error |a - b| is finite and <= atol + |rtol·b|, computed in
// a's dtype (integers in float32, LibTorch's default dtype), as LibTorch's isclose.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
    check_pair("isclose", a, b);
    if (a.dtype() != b.dtype())
        throw dtype_error(std::string("isclose: ") + dtype_name(a.dtype()) + " did not match " +
                          dtype_name(b.dtype()));
    if (!(rtol >= 0))
        throw value_error("isclose: rtol must be greater than or equal to zero, but got " +
                          std::to_string(rtol));
    if (!(atol >= 0))
        throw value_error("isclose: atol must be greater than or equal to zero, but got " +
                          std::to_string(atol));
    NoGradGuard guard;
    const Tensor x = a.detach(), y = b.detach();
    Tensor close = eq(x, y);
    if (equal_nan && is_floating(x.dtype()))
        close = logical_or(close, logical_and(ne(x, x), ne(y, y)));
    if (a.dtype() == kBool || (rtol == 0 && atol == 0))
        return close;
    const Tensor fx = is_floating(x.dtype()) ? x : x.to(kFloat32);
    const Tensor fy = is_floating(y.dtype()) ? y : y.to(kFloat32);
    const Tensor allowed = abs(fy * rtol) + atol;
    const Tensor actual = abs(fx - fy);
    const Tensor finite = lt(actual, std::numeric_limits<double>::infinity());  // NaN: false
    return logical_or(close, logical_and(finite, le(actual, allowed)));
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
    return isclose(a, b, rtol, atol, equal_nan).all().item<bool>();
}

bool equal(const Tensor& a, const Tensor& b) {
    check_pair("equal", a, b);
    if (a.device() != b.device())
        throw device_error("equal: tensors on " + a.device().str() + " and " + b.device().str());
    if (a.sizes() != b.sizes())
        return false;
    NoGradGuard guard;
    if (a.dtype() == b.dtype())
        return eq(a.detach(), b.detach()).all().item<bool>();
    // two dtypes: the values compared, as LibTorch does
    return eq(a.detach().to(kFloat64), b.detach().to(kFloat64)).all().item<bool>();
}

Tensor Tensor::isclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
    return tg::isclose(*this, o, rtol, atol, equal_nan);
}
bool Tensor::allclose(const Tensor& o, double rtol, double atol, bool equal_nan) const {
    return tg::allclose(*this, o, rtol, atol, equal_nan);
}
bool Tensor::equal(const Tensor& o) const {
    return tg::equal(*this, o);
}

}  // namespace tg
