// constant_pad_nd (F::pad's constant mode) and one_hot: compositions of cat, narrow and
// comparisons, so they record, and run on every device, as those do.
#include <string>

#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

Tensor constant_pad_nd(const Tensor& x, const std::vector<int64_t>& pad, Scalar value) {
    if (pad.size() % 2 != 0 || int64_t(pad.size()) > 2 * x.dim())
        throw shape_error("pad: " + std::to_string(pad.size()) + " padding sizes for the input " +
                          shape_str(x.sizes()) + " (expected pairs, at most two per dim)");
    const ComposedName named;
    Tensor y = x;
    for (size_t k = 0; k < pad.size() / 2; ++k) {  // pairs from the last dim backwards
        const int64_t d = x.dim() - 1 - int64_t(k), lo = pad[2 * k], hi = pad[2 * k + 1];
        if (y.size(d) + lo + hi < 0)
            throw shape_error("pad: padding (" + std::to_string(lo) + ", " + std::to_string(hi) +
                              ") of dim " + std::to_string(d) + " of " + shape_str(x.sizes()) +
                              " leaves a negative size");
        if (lo < 0 || hi < 0) {  // negative padding crops
            const int64_t start = lo < 0 ? -lo : 0;
            const int64_t len = y.size(d) - start - (hi < 0 ? -hi : 0);
            y = narrow(y, d, start, std::max<int64_t>(len, 0));
        }
        std::vector<Tensor> parts;
        auto block = [&](int64_t n) {
            Shape s = y.sizes();
            s[size_t(d)] = n;
            parts.push_back(full(s, value, y.options()));
        };
        if (lo > 0)
            block(lo);
        parts.push_back(y);
        if (hi > 0)
            block(hi);
        if (parts.size() > 1)
            y = cat(parts, d);
    }
    return named(y, "constant_pad_nd", "ConstantPadNdBackward0");
}

Tensor one_hot(const Tensor& labels, int64_t num_classes) {
    if (labels.dtype() != kInt64)
        throw dtype_error("one_hot: labels must be int64, got " +
                          std::string(dtype_name(labels.dtype())) + " " +
                          shape_str(labels.sizes()));
    const bool any_label = labels.numel() > 0;
    if (any_label && min(labels).item<int64_t>() < 0)
        throw value_error("one_hot: negative label in " + shape_str(labels.sizes()));
    const int64_t top = any_label ? max(labels).item<int64_t>() : -1;
    if (num_classes < 0) {
        if (!any_label)
            throw value_error("one_hot: cannot infer num_classes from the empty labels " +
                              shape_str(labels.sizes()));
        num_classes = top + 1;
    }
    if (top >= num_classes)
        throw value_error("one_hot: label " + std::to_string(top) + " is not below num_classes " +
                          std::to_string(num_classes));
    const Tensor classes =
        arange(double(num_classes), TensorOptions(kInt64).device(labels.device()));
    return eq(labels.unsqueeze(-1), classes).to(kInt64);
}

}  // namespace tg
