// The index-writing ops in LibTorch's form (tapegrad/inplace_ops.hpp): index_add, index_fill,
// index_copy, scatter and scatter_add on a tensor `self`, and their in-place methods. Each is
// composed from the zero-based index_add/scatter_add (index.cpp), where() and masked_fill, so
// each backend that has those runs them and their gradients follow from the composition.
//
// Note [Repeated indices]: index_copy and scatter with a tensor source write one value per
// position. LibTorch leaves unspecified which of two writes to one position wins (its CPU and
// CUDA kernels differ), so a repeated position is a value_error here rather than a silent pick;
// the Scalar scatter and index_fill write one value whatever the repeats, and index_add and
// scatter_add sum them, as LibTorch's.
#include <string>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "ops/inplace.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
void check_self(const char* op, const Tensor& self, const Tensor& index) {
    if (!self.defined() || !index.defined())
        throw value_error(std::string(op) + ": undefined tensor");
    if (self.dim() == 0)
        throw shape_error(std::string(op) + ": cannot index a 0-dim tensor (index " +
                          shape_str(index.sizes()) + ")");
}

/// A 0-D or 1-D index as 1-D, its negative entries counted from the end of dim d (as
/// LibTorch's index_fill and index_copy take them).
Tensor slice_index(const char* op, const Tensor& self, int64_t d, const Tensor& index) {
    if (index.dim() > 1)
        throw shape_error(std::string(op) + ": index must be 0-D or 1-D, got " +
                          shape_str(index.sizes()) + " for self " + shape_str(self.sizes()));
    if (index.dtype() != kInt64)
        throw dtype_error(std::string(op) + ": index must be int64, got " +
                          dtype_name(index.dtype()) + " " + shape_str(index.sizes()));
    NoGradGuard g;
    const Tensor idx = index.reshape({-1});
    return idx + lt(idx, 0).to(kInt64) * self.size(d);
}

/// How many entries of a slice index name each slice along d, shaped to broadcast against self.
Tensor slice_counts(const Tensor& self, int64_t d, const Tensor& idx) {
    NoGradGuard g;
    const Tensor ones = tg::ones({idx.numel()}, TensorOptions(kFloat32).device(self.device()));
    Shape at(size_t(self.dim()), 1);
    at[size_t(d)] = self.size(d);
    return index_add(ones, {self.size(d)}, 0, idx).reshape(at);
}

/// The block of self that index's shape covers: index.size(k) of each dim k but d (LibTorch's
/// scatter takes an index no larger than self there), all of dim d.
Shape block_of(const char* op, const Tensor& self, int64_t d, const Tensor& index) {
    if (index.dim() != self.dim())
        throw shape_error(std::string(op) + ": index " + shape_str(index.sizes()) +
                          " must have as many dims as self " + shape_str(self.sizes()));
    Shape b = self.sizes();
    for (int64_t k = 0; k < self.dim(); ++k)
        if (k != d) {
            if (index.size(k) > self.size(k))
                throw shape_error(std::string(op) + ": index " + shape_str(index.sizes()) +
                                  " is larger than self " + shape_str(self.sizes()) + " in dim " +
                                  std::to_string(k));
            b[size_t(k)] = index.size(k);
        }
    return b;
}

/// t, a block at the origin of self's shape, padded with zeros to that shape.
Tensor grown(Tensor t, const Shape& shape) {
    for (size_t k = 0; k < shape.size(); ++k)
        if (t.size(int64_t(k)) < shape[k]) {
            Shape s = t.sizes();
            s[k] = shape[k];
            t = narrow_scatter(t, s, int64_t(k), 0);
        }
    return t;
}

/// How many entries of index name each position of self (scatter's index, checked).
Tensor position_counts(const char* op, const Tensor& self, int64_t d, const Tensor& index) {
    const Shape block = block_of(op, self, d, index);
    NoGradGuard g;
    const Tensor ones = tg::ones(index.sizes(), TensorOptions(kFloat32).device(self.device()));
    return grown(scatter_add(ones, block, d, index), self.sizes());
}

void no_repeats(const char* op, const Tensor& counts, const Tensor& self, const Tensor& index) {
    NoGradGuard g;
    if (gt(counts, 1).any().item_as<bool>())
        throw value_error(std::string(op) + ": index " + shape_str(index.sizes()) +
                          " names a position of self " + shape_str(self.sizes()) +
                          " more than once: which write wins is undefined in LibTorch "
                          "(Note [Repeated indices])");
}

/// src's leading part of index's shape (scatter reads src only there).
Tensor src_part(const char* op, const Tensor& src, const Tensor& index) {
    if (src.dim() != index.dim())
        throw shape_error(std::string(op) + ": src " + shape_str(src.sizes()) + " and index " +
                          shape_str(index.sizes()) + " must have as many dims");
    Tensor s = src;
    for (int64_t k = 0; k < src.dim(); ++k) {
        if (index.size(k) > src.size(k))
            throw shape_error(std::string(op) + ": index " + shape_str(index.sizes()) +
                              " is larger than src " + shape_str(src.sizes()) + " in dim " +
                              std::to_string(k));
        if (index.size(k) < src.size(k))
            s = s.narrow(k, 0, index.size(k));
    }
    return s;
}
}  // namespace

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
    check_self("index_add", self, index);
    checks::same_dtype("index_add", "self", self, "source", source);
    const int64_t d = wrap_dim(dim, self.dim(), "index_add");
    const ComposedName named;
    const Tensor s = alpha == Scalar(1) ? source : source * alpha;
    return named(self + index_add(s, self.sizes(), d, index.reshape({-1})), "index_add",
                 "IndexAddBackward0");
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
    check_self("index_fill", self, index);
    const int64_t d = wrap_dim(dim, self.dim(), "index_fill");
    const Tensor counts = slice_counts(self, d, slice_index("index_fill", self, d, index));
    const ComposedName named;
    return named(masked_fill(self, gt(counts, 0), value), "index_fill", "IndexFillBackward0");
}
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
    check_self("index_copy", self, index);
    checks::same_dtype("index_copy", "self", self, "source", source);
    const int64_t d = wrap_dim(dim, self.dim(), "index_copy");
    const Tensor idx = slice_index("index_copy", self, d, index);
    const Tensor counts = slice_counts(self, d, idx);
    no_repeats("index_copy", counts, self, index);
    const ComposedName named;
    const Tensor written = index_add(source, self.sizes(), d, idx);
    return named(where(gt(counts, 0), written, self), "index_copy", "IndexCopyBackward0");
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    check_self("scatter", self, index);
    checks::same_dtype("scatter", "self", self, "src", src);
    const int64_t d = wrap_dim(dim, self.dim(), "scatter");
    const Tensor counts = position_counts("scatter", self, d, index);
    no_repeats("scatter", counts, self, index);
    const ComposedName named;
    const Tensor written = grown(
        scatter_add(src_part("scatter", src, index), block_of("scatter", self, d, index), d, index),
        self.sizes());
    return named(where(gt(counts, 0), written, self), "scatter", "ScatterBackward0");
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
    check_self("scatter", self, index);
    const int64_t d = wrap_dim(dim, self.dim(), "scatter");
    const Tensor counts = position_counts("scatter", self, d, index);
    const ComposedName named;
    return named(masked_fill(self, gt(counts, 0), value), "scatter", "ScatterBackward1");
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
    check_self("scatter_add", self, index);
    checks::same_dtype("scatter_add", "self", self, "src", src);
    const int64_t d = wrap_dim(dim, self.dim(), "scatter_add");
    const Shape block = block_of("scatter_add", self, d, index);
    const ComposedName named;
    const Tensor added = scatter_add(src_part("scatter_add", src, index), block, d, index);
    return named(self + grown(added, self.sizes()), "scatter_add", "ScatterAddBackward0");
}

namespace detail {

Tensor& TensorMethods::index_add_(int64_t dim, const Tensor& index, const Tensor& source,
                                  Scalar alpha) {
    return apply_inplace(
        self(), "index_add_", {&source},
        [&](const Tensor& t) { return tg::index_add(t, dim, index, source, alpha); }, false);
}
Tensor& TensorMethods::index_fill_(int64_t dim, const Tensor& index, Scalar value) {
    return apply_inplace(
        self(), "index_fill_", {},
        [&](const Tensor& t) { return tg::index_fill(t, dim, index, value); }, false);
}
Tensor& TensorMethods::index_copy_(int64_t dim, const Tensor& index, const Tensor& source) {
    return apply_inplace(
        self(), "index_copy_", {&source},
        [&](const Tensor& t) { return tg::index_copy(t, dim, index, source); }, false);
}
Tensor& TensorMethods::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
    return apply_inplace(
        self(), "scatter_", {&src},
        [&](const Tensor& t) { return tg::scatter(t, dim, index, src); }, false);
}
Tensor& TensorMethods::scatter_(int64_t dim, const Tensor& index, Scalar value) {
    return apply_inplace(
        self(), "scatter_", {}, [&](const Tensor& t) { return tg::scatter(t, dim, index, value); },
        false);
}
Tensor& TensorMethods::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
    return apply_inplace(
        self(), "scatter_add_", {&src},
        [&](const Tensor& t) { return tg::scatter_add(t, dim, index, src); }, false);
}
Tensor TensorMethods::index_add(int64_t dim, const Tensor& index, const Tensor& source,
                                Scalar alpha) const {
    return tg::index_add(self(), dim, index, source, alpha);
}
Tensor TensorMethods::index_fill(int64_t dim, const Tensor& index, Scalar value) const {
    return tg::index_fill(self(), dim, index, value);
}
Tensor TensorMethods::index_copy(int64_t dim, const Tensor& index, const Tensor& source) const {
    return tg::index_copy(self(), dim, index, source);
}
Tensor TensorMethods::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
    return tg::scatter(self(), dim, index, src);
}
Tensor TensorMethods::scatter(int64_t dim, const Tensor& index, Scalar value) const {
    return tg::scatter(self(), dim, index, value);
}
Tensor TensorMethods::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
    return tg::scatter_add(self(), dim, index, src);
}

}  // namespace detail
}  // namespace tg
