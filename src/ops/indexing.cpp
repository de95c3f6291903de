// Indexing as LibTorch spells it (tapegrad/indexing.hpp): select, slice, index, index_put_,
// operator[]. Compositions of narrow, squeeze, unsqueeze and index_select, which record.
#include "tapegrad/indexing.hpp"

#include <algorithm>
#include <string>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
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
    const ComposedName named;
    return named(squeeze(narrow(x, d, index < 0 ? index + n : index, 1), d), "select",
                 "SelectBackward0");
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
    const ComposedName named;
    return named(index_select(x, d, idx), "slice", "SliceBackward0");
}

namespace {

/// How many dims of x an entry consumes (None 0, Ellipsis the rest, a bool mask its dims).
int64_t consumed(const TensorIndex& i) {
    const auto& v = i.get();
    if (auto* t = std::get_if<Tensor>(&v))
        return t->dtype() == kBool ? t->dim() : 1;
    return std::holds_alternative<std::monostate>(v) ||
                   std::holds_alternative<EllipsisIndexType>(v) || std::holds_alternative<bool>(v)
               ? 0
               : 1;
}

/// The int64 indices into dims d, d+1, ... of y of a run of adjacent tensor entries (a bool
/// mask gives one per dim it covers: its nonzero positions), checked and wrapped.
std::vector<Tensor> run_indices(const Tensor& y, int64_t d, const std::vector<Tensor>& run) {
    std::vector<Tensor> out;
    for (const Tensor& t : run) {
        checks::same_device("index", "index tensor", t, y);
        if (t.dtype() == kBool) {
            if (t.dim() == 0)
                throw value_error("index: a 0-dim bool index is not supported (input " +
                                  shape_str(y.sizes()) + ")");
            for (int64_t k = 0; k < t.dim(); ++k)
                if (t.size(k) != y.size(d + k))
                    throw shape_error("index: mask " + shape_str(t.sizes()) +
                                      " does not match dims " + std::to_string(d) + ".." +
                                      std::to_string(d + t.dim() - 1) + " of " +
                                      shape_str(y.sizes()));
            const Tensor nz = nonzero(t);  // [n, t.dim()]
            for (int64_t k = 0; k < t.dim(); ++k)
                out.push_back(nz.select(1, k));
            d += t.dim();
            continue;
        }
        if (t.dtype() != kInt64)
            throw dtype_error("index: a tensor index must be int64 or bool, got " +
                              std::string(dtype_name(t.dtype())) + " " + shape_str(t.sizes()));
        const int64_t n = y.size(d);
        const Tensor bad = logical_or(lt(t, -n), ge(t, n));
        if (any(bad).item<bool>())
            throw shape_error("index: index " +
                              std::to_string(masked_select(t, bad)[0].item<int64_t>()) +
                              " is out of range for dim " + std::to_string(d) + " of size " +
                              std::to_string(y.size(d)) + " of " + shape_str(y.sizes()));
        out.push_back(where(lt(t, 0), t + n, t));
        ++d;
    }
    return out;
}

/// y indexed at dims d.. by idx (broadcast together, PyTorch's advanced indexing): the dims they
/// index become the broadcast shape. One index_select over those dims flattened.
Tensor advanced(const Tensor& y, int64_t d, const std::vector<Tensor>& idx, int64_t& out_dims) {
    const int64_t m = int64_t(idx.size());
    Shape b;
    for (const Tensor& t : idx)
        b = broadcast_shapes(b, t.sizes(), "index");
    Tensor lin;
    int64_t stride = 1;
    for (int64_t k = m; k-- > 0;) {
        const Tensor term = stride == 1 ? idx[size_t(k)] : idx[size_t(k)] * stride;
        lin = lin.defined() ? lin + term : term;
        stride *= y.size(d + k);
    }
    const Tensor flat = m > 1 ? flatten(y, d, d + m - 1) : y;
    const Tensor r = index_select(flat, d, lin.expand(b).reshape({-1}));
    Shape out(r.sizes().begin(), r.sizes().begin() + d);
    out.insert(out.end(), b.begin(), b.end());
    out.insert(out.end(), r.sizes().begin() + d + 1, r.sizes().end());
    out_dims = int64_t(b.size());
    return r.reshape(out);
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
    const ComposedName named;
    Tensor y = x;
    int64_t d = 0;  // the dim of y the next entry indexes
    // The basic entries first (as PyTorch does); tensor entries keep their dims, noted here.
    std::vector<Tensor> tensors;
    std::vector<int64_t> first_dim, covered;
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
        } else if (auto* b = std::get_if<bool>(&v)) {  // as None, of size 0 for false
            y = unsqueeze(y, d);
            if (!*b)
                y = narrow(y, d, 0, 0);
            ++d;
        } else if (std::holds_alternative<EllipsisIndexType>(v)) {
            d += x.dim() - used;
        } else {
            tensors.push_back(std::get<Tensor>(v));
            first_dim.push_back(d);
            covered.push_back(consumed(i));
            d += covered.back();
        }
    }
    if (tensors.empty())
        return y;
    // Adjacent tensor indices put their broadcast shape where they stood; separated ones (a
    // slice or None between them) put it first, their dims moved to the front (PyTorch's rule).
    bool adjacent = true;
    for (size_t k = 1; k < tensors.size(); ++k)
        adjacent = adjacent && first_dim[k] == first_dim[k - 1] + covered[k - 1];
    int64_t at = first_dim[0];
    if (!adjacent) {
        std::vector<int64_t> order;
        std::vector<bool> indexed(size_t(y.dim()), false);
        for (size_t k = 0; k < tensors.size(); ++k)
            for (int64_t c = 0; c < covered[k]; ++c) {
                order.push_back(first_dim[k] + c);
                indexed[size_t(first_dim[k] + c)] = true;
            }
        for (int64_t e = 0; e < y.dim(); ++e)
            if (!indexed[size_t(e)])
                order.push_back(e);
        y = permute(y, order);
        at = 0;
    }
    int64_t out_dims = 0;
    y = advanced(y, at, run_indices(y, at, tensors), out_dims);
    return named(y, "index", "IndexBackward0");
}

Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, const Tensor& value,
                   bool accumulate) {
    bool is_view = true;  // integers, step-1 slices, None and Ellipsis index a view
    for (const TensorIndex& i : indices) {
        const auto& v = i.get();
        const Slice* s = std::get_if<Slice>(&v);
        is_view = is_view && !std::holds_alternative<Tensor>(v) && !(s && s->step != 1);
    }
    // A view of a recorded tensor cannot be written in place (the engine does not rebase a
    // view's history), so with gradients involved x itself is written, through a copy.
    if (is_view && !accumulate && !x.requires_grad() && !value.requires_grad()) {
        Tensor part = index(x, indices);
        part.copy_(value);
        return x;
    }
    // Note [Putting through a copy]: tensor indices and steps select a copy, not a view, so the
    // positions they select are found by indexing the positions 0..numel-1 of x, and x becomes
    // where(selected, value scattered to those positions, x): one recorded copy_, whose
    // gradient is dy where x was kept and, for value, the selected elements of dy.
    const TensorOptions io = TensorOptions(kInt64).device(x.device());
    const Tensor pos = index(arange(double(x.numel()), io).reshape(x.sizes()), indices);
    checks::same_device("index_put_", "value", value, x);
    checks::broadcasts_to("index_put_", "value", value, pos.sizes(), "indexed shape");
    const Shape all{x.numel()};
    const Tensor p = pos.reshape({-1});
    const Tensor v = value.to(x.dtype()).expand(pos.sizes()).reshape({-1});
    const ComposedName named;
    if (accumulate) {  // x + the values added at their positions: dx = dy, dvalue = dy there
        x.copy_(x + index_add(v, all, 0, p).reshape(x.sizes()));
        named(x, "index_put_", "IndexPutBackward0");
        return x;
    }
    const Tensor count = index_add(ones({p.numel()}, io), all, 0, p);
    if (any(gt(count, 1)).item<bool>())  // PyTorch leaves which value wins undefined
        throw value_error("index_put_: the index selects an element of " + shape_str(x.sizes()) +
                          " more than once");
    const Tensor hit = ne(count, 0).reshape(x.sizes());
    const Tensor scattered = index_add(v, all, 0, p).reshape(x.sizes());
    x.copy_(where(hit, scattered, x));
    named(x, "index_put_", "IndexPutBackward0");
    return x;
}

Tensor& index_put_(Tensor& x, const std::vector<TensorIndex>& indices, Scalar value,
                   bool accumulate) {
    return index_put_(x, indices, full({}, value, x.options()), accumulate);
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
Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& v,
                           bool accumulate) {
    return tg::index_put_(*this, indices, v, accumulate);
}
Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar v,
                           bool accumulate) {
    return tg::index_put_(*this, indices, v, accumulate);
}

}  // namespace tg
