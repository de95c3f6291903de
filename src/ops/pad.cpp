// pad (F::pad: constant_pad_nd, and the reflect, replicate and circular modes) and one_hot:
// compositions of cat, narrow, index_select and comparisons, so they record, and run on every
// device, as those do.
#include <algorithm>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"
#include "tapegrad/resampling.hpp"

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

namespace {
/// The source index in [0, n) of each of the n + lo + hi outputs of dim padded as mode says.
std::vector<int64_t> pad_sources(PadMode mode, int64_t n, int64_t lo, int64_t hi) {
    std::vector<int64_t> src(size_t(n + lo + hi));
    for (int64_t j = 0; j < int64_t(src.size()); ++j) {
        int64_t i = j - lo;
        if (mode == kReflect)
            i = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
        else if (mode == kReplicate)
            i = std::min(std::max<int64_t>(i, 0), n - 1);
        else
            i = ((i % n) + n) % n;
        src[size_t(j)] = i;
    }
    return src;
}
}  // namespace

Tensor pad(const Tensor& x, const std::vector<int64_t>& pad, PadMode mode, double value) {
    if (mode == kConstant)
        return constant_pad_nd(x, pad, value);
    const char* what = mode == kReflect ? "reflect" : mode == kReplicate ? "replicate" : "circular";
    const int64_t k = int64_t(pad.size() / 2);
    if (pad.size() % 2 != 0 || k < 1 || k > 3 || x.dim() < k + 1 || x.dim() > k + 2)
        throw shape_error(std::string("pad: ") + what + " mode pads the last 1, 2 or 3 dims of " +
                          "a 2- to 5-dim input; got " + std::to_string(pad.size()) +
                          " padding sizes for the input " + shape_str(x.sizes()));
    const ComposedName named;
    Tensor y = x;
    for (int64_t p = 0; p < k; ++p) {
        const int64_t d = x.dim() - 1 - p;
        int64_t n = x.size(d), lo = pad[size_t(2 * p)], hi = pad[size_t(2 * p + 1)];
        const std::string where = std::string("pad: ") + what + " padding (" + std::to_string(lo) +
                                  ", " + std::to_string(hi) + ") of dim " + std::to_string(d) +
                                  " of " + shape_str(x.sizes());
        if ((mode == kReflect && (lo >= n || hi >= n)) || (mode == kCircular && (lo > n || hi > n)))
            throw shape_error(where + (mode == kReflect ? " must be below the dim's size"
                                                        : " wraps around more than once"));
        if (n + lo + hi < 1 || n == 0)
            throw shape_error(where + " leaves no elements");
        if (mode == kCircular && (lo < 0 || hi < 0)) {  // LibTorch crops, then wraps what is left
            const int64_t start = std::max<int64_t>(-lo, 0);
            const int64_t kept = n - start - std::max<int64_t>(-hi, 0);
            if (kept < 1)
                throw shape_error(where + " leaves no elements to wrap");
            y = narrow(y, d, start, kept);
            n = kept, lo = std::max<int64_t>(lo, 0), hi = std::max<int64_t>(hi, 0);
        }
        y = index_select(
            y, d, tensor(pad_sources(mode, n, lo, hi), TensorOptions(kInt64).device(x.device())));
    }
    static const char* const kNames[3][3] = {
        {"ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0"},
        {"ReplicationPad1DBackward0", "ReplicationPad2DBackward0", "ReplicationPad3DBackward0"},
        {"CopySlices", "CopySlices", "CopySlices"}};  // LibTorch 1.13 composes the circular mode
    const int m = mode == kReflect ? 0 : mode == kReplicate ? 1 : 2;
    static const char* const kOps[3] = {"reflection_pad", "replication_pad", "circular_pad"};
    return named(y, kOps[m], kNames[m][k - 1]);
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
