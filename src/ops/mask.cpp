// Masks: masked_fill, triu, tril. Each is a where() over a mask, so its gradient is dy where the
// input was kept and 0 where it was replaced, recorded by where.
#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "ops/promote.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
    checks::is_bool("masked_fill", "mask", mask);
    checks::same_device("masked_fill", "mask", mask, x);
    checks::broadcasts_to("masked_fill", "mask", mask, x.sizes(), "input");
    const ComposedName named;
    promote::checked_in(x.dtype(), value, "masked_fill");  // 300 into uint8 throws, as LibTorch
    return named(where(mask, promote::scalar_tensor(value, x.options()), x), "masked_fill",
                 "MaskedFillBackward0");
}

namespace {

/// x where (column - row) of the last two dims satisfies keep, 0 elsewhere.
Tensor triangle(const char* op, const Tensor& x, int64_t diagonal, bool upper) {
    if (x.dim() < 2)
        throw shape_error(std::string(op) + ": input " + shape_str(x.sizes()) +
                          " must have at least 2 dims");
    const TensorOptions o = TensorOptions(kInt64).device(x.device());
    const Tensor rows = arange(double(x.size(-2)), o).unsqueeze(1);
    const Tensor cols = arange(double(x.size(-1)), o).unsqueeze(0);
    const Tensor offset = cols - rows;  // [rows, cols]: j - i
    const Tensor keep = upper ? gt(offset, diagonal - 1) : lt(offset, diagonal + 1);
    const ComposedName named;
    return named(where(keep, x, zeros({}, x.options())), op,
                 upper ? "TriuBackward0" : "TrilBackward0");
}

}  // namespace

Tensor triu(const Tensor& x, int64_t diagonal) {
    return triangle("triu", x, diagonal, true);
}

Tensor tril(const Tensor& x, int64_t diagonal) {
    return triangle("tril", x, diagonal, false);
}

}  // namespace tg
