// LibTorch's spellings that take their shape, dtype or device from another tensor: expand_as,
// view_as, reshape_as, type_as, and the factories full_like, rand_like, randn_like. Each is the
// op it names (so it records what that op records).
#include "tapegrad/ops.hpp"

namespace tg {

Tensor expand_as(const Tensor& x, const Tensor& other) {
    return expand(x, other.sizes());
}

Tensor view_as(const Tensor& x, const Tensor& other) {
    return view(x, other.sizes());
}

Tensor reshape_as(const Tensor& x, const Tensor& other) {
    return reshape(x, other.sizes());
}

Tensor type_as(const Tensor& x, const Tensor& other) {
    return x.to(other.dtype());
}

Tensor full_like(const Tensor& t, Scalar value) {
    return full(t.sizes(), value, t.options());
}

Tensor rand_like(const Tensor& t) {
    return rand(t.sizes(), t.options());
}

Tensor randn_like(const Tensor& t) {
    return randn(t.sizes(), t.options());
}

}  // namespace tg
