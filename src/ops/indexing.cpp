// Indexing as LibTorch spells it (tapegrad/indexing.hpp): select, slice, index, index_put_,
// operator[]. Compositions of narrow, squeeze, unsqueeze and index_select, which record.
#include "tapegrad/indexing.hpp"

#include <algorithm>
#include <string>

#include "tapegrad/ops.hpp"

namespace tg {

using indexing::EllipsisIndexType;
using indexing::Slice;
using indexing::TensorIndex;

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
    const int64_t d = wrap_dim(dim, x.dim(), "select");
    const int64_t n = x.size(d);
    if (index < -n || index >= n)
        throw shape_error("select: index " + std::to_string(index) + " is out of range for dim " +
                          std::to_string(d) + " of size " + std::to_string(n) + " of " +
                          shape_str(x.sizes()));
    return squeeze(narrow(x, d, index < 0 ? index + n : index, 1), d);
}

Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> stop, int64_t step) {
    const int64_t d = wrap_dim(dim, x.dim(), "slice");
    if (step < 1)
        throw value_error("slice: step " + std::to_string(step) + " must be >= 1");
    const int64_t n = x.size(d);
    auto clamp_end = [n](std::optional<int64_t> v, int64_t def) {  // Python's rules
        if (!v)
            return def;
        const int64_t e = *v < 0 ? *v + n : *v;
        return std::min(std::max(e, int64_t(0)), n);
    };
    const int64_t b = clamp_end(start, 0), e = std::max(b, clamp_end(stop, n));
    if (step == 1)
        return narrow(x, d, b, e - b);
    const Tensor idx =
        arange(double(b), double(e), double(step), TensorOptions(kInt64).device(x.device()));
    return index_select(x, d, idx);
}

namespace {

/// How many dims of x an entry consumes (None 0, Ellipsis the rest).
int64_t consumed(const TensorIndex& i) {
    const auto& v = i.get();
    return std::holds_alternative<std::monostate>(v) || std::holds_alternative<EllipsisIndexType>(v)
               ? 0
               : 1;
}

}  // namespace

Tensor index(const Tensor& x, const std::vector<TensorIndex>& indices) {
    int64_t used = 0, ellipses = 0;
    for (const TensorIndex& i : indices) {
        used += consumed(i);
        ellipses += std::holds_alternative<EllipsisIndexType>(i.get());
    }
    if (ellipses > 1)
        throw value_error("index: more than one Ellipsis in the index of " + shape_str(x.sizes()));
    if (used > x.dim())
        throw shape_error("index: " + std::to_string(used) + " indices for the " +
                          std::to_string(x.dim()) + " dims of " + shape_str(x.sizes()));
    Tensor y = x;
    int64_t d = 0;  // the dim of y the next entry indexes
    for (const TensorIndex& i : indices) {
        const auto& v = i.get();
        if (auto* k = std::get_if<int64_t>(&v)) {
            y = select(y, d, *k);
        } else if (auto* s = std::get_if<Slice>(&v)) {
            y = slice(y, d, s->start, s->stop, s->step);
            ++d;
        } else if (std::holds_alternative<std::monostate>(v)) {
            y = unsqueeze(y, d);
            ++d;
        } else if (std::holds_alternative<EllipsisIndexType>(v)) {
            d += x.dim() - used;
        } else {
            const Tensor& t = std::get<Tensor>(v);
            if (t.dtype() != kInt64 || t.dim() != 1)
                throw dtype_error("index: a tensor index must be a 1-D int64 tensor, got " +
                                  std::string(dtype_name(t.dtype())) + " " + shape_str(t.sizes()) +
                                  " (boolean masks need a bool dtype, not yet in tapegrad)");
            y = index_select(y, d, t);
            ++d;
        }
    }
    return y;
}

Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& value) {
    for (const TensorIndex& i : indices) {
        const auto& v = i.get();
        const Slice* s = std::get_if<Slice>(&v);
        if (std::holds_alternative<Tensor>(v) || (s && s->step != 1))
            throw value_error(
                "index_put_: only integers, step-1 slices, None and Ellipsis "
                "index a part of " +
                shape_str(x.sizes()) +
                " in place (a tensor index or a step is "
                "not supported yet)");
    }
    Tensor part = index(x, indices);
    part.copy_(value);
    return x;
}

Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, Scalar value) {
    return index_put_(x, indices, full({}, value, x.options()));
}

// ---- Tensor method spellings
Tensor Tensor::operator[](int64_t i) const {
    return tg::select(*this, 0, i);
}
Tensor Tensor::select(int64_t dim, int64_t i) const {
    return tg::select(*this, dim, i);
}
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop,
                     int64_t step) const {
    return tg::slice(*this, dim, start, stop, step);
}
Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
    return tg::index(*this, indices);
}
Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& v) {
    return tg::index_put_(*this, indices, v);
}
Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar v) {
    return tg::index_put_(*this, indices, v);
}

}  // namespace tg
