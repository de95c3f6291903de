// chunk, split, unbind, tile/repeat, flip, roll and movedim (tapegrad/split_ops.hpp), composed
// from narrow, select, expand, index_select, cat and permute, so their gradients and every
// backend come with those ops.
#include <algorithm>
#include <string>

#include "autograd/record.hpp"
#include "ops/checks.hpp"
#include "tapegrad/indexing.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
std::string list_str(const std::vector<int64_t>& v) {
    return shape_str(Shape(v.begin(), v.end()));
}
/// dims wrapped, value_error naming op for a repeated one.
std::vector<int64_t> unique_dims(const char* op, const std::vector<int64_t>& dims, int64_t n) {
    std::vector<int64_t> out;
    for (int64_t d : dims) {
        const int64_t w = wrap_dim(d, n, op);
        if (std::find(out.begin(), out.end(), w) != out.end())
            throw value_error(std::string(op) + ": dim " + std::to_string(d) +
                              " appears multiple times in the list of dims " + list_str(dims));
        out.push_back(w);
    }
    return out;
}
}  // namespace

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
    checks::defined("split", x);
    const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "split");
    if (x.dim() == 0)
        throw shape_error("split: expected at least a 1-dimensional tensor, got []");
    const int64_t n = x.size(d);
    if (split_size < 0 || (split_size == 0 && n != 0))
        throw value_error("split: split_size " + std::to_string(split_size) +
                          " must be positive (0 only for a dim of size 0), for " +
                          shape_str(x.sizes()) + " along dim " + std::to_string(d));
    const int64_t pieces =
        split_size == 0 ? 1 : std::max<int64_t>((n + split_size - 1) / split_size, 1);
    std::vector<Tensor> out;
    for (int64_t i = 0; i < pieces; ++i) {
        const int64_t start = i * split_size;
        out.push_back(narrow(x, d, start, std::min(split_size, n - start)));
    }
    return out;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
    checks::defined("split_with_sizes", x);
    if (x.dim() == 0)
        throw shape_error("split_with_sizes: expected at least a 1-dimensional tensor, got []");
    const int64_t d = wrap_dim(dim, x.dim(), "split_with_sizes");
    int64_t total = 0;
    for (int64_t s : sizes) {
        if (s < 0)
            throw value_error("split_with_sizes: split sizes " + list_str(sizes) +
                              " must be non-negative");
        total += s;
    }
    if (total != x.size(d))
        throw shape_error("split_with_sizes: split sizes " + list_str(sizes) +
                          " must sum exactly to " + std::to_string(x.size(d)) + ", the size of " +
                          shape_str(x.sizes()) + " at dim " + std::to_string(d));
    std::vector<Tensor> out;
    int64_t start = 0;
    for (int64_t s : sizes) {
        out.push_back(narrow(x, d, start, s));
        start += s;
    }
    return out;
}
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes,
                                     int64_t dim) {
    return split(x, sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
    checks::defined("chunk", x);
    if (x.dim() == 0)
        throw shape_error("chunk: expected at least a 1-dimensional tensor, got []");
    if (chunks <= 0)
        throw value_error("chunk: expects `chunks` to be greater than 0, got " +
                          std::to_string(chunks) + " for " + shape_str(x.sizes()));
    const int64_t d = wrap_dim(dim, x.dim(), "chunk"), n = x.size(d);
    if (n == 0)  // LibTorch's: `chunks` empty pieces
        return split(x, std::vector<int64_t>(size_t(chunks), 0), d);
    return split(x, (n + chunks - 1) / chunks, d);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
    checks::defined("unbind", x);
    if (x.dim() == 0)
        throw shape_error("unbind: dimension specified as 0 but tensor has no dimensions");
    const int64_t d = wrap_dim(dim, x.dim(), "unbind");
    std::vector<Tensor> out;
    for (int64_t i = 0; i < x.size(d); ++i)
        out.push_back(tg::select(x, d, i));
    return out;
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& dims) {
    checks::defined("tile", x);
    std::vector<int64_t> reps = dims;
    if (int64_t(reps.size()) < x.dim())
        reps.insert(reps.begin(), size_t(x.dim()) - reps.size(), 1);
    return x.repeat(reps);
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
    checks::defined("flip", x);
    const ComposedName named;
    Tensor y = x;
    for (int64_t d : unique_dims("flip", dims, std::max<int64_t>(x.dim(), 1))) {
        if (x.dim() == 0 || x.size(d) <= 1)
            continue;
        const Tensor rev = arange(x.size(d) - 1, -1, -1, TensorOptions(kInt64).device(x.device()));
        y = index_select(y, d, rev);
    }
    return named(y.impl() == x.impl() ? x.clone() : y, "flip", "FlipBackward0");
}

Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims) {
    checks::defined("roll", x);
    if (dims.empty()) {
        if (shifts.size() != 1)
            throw shape_error("roll: shifts " + list_str(shifts) +
                              " must be one shift when no dims are given, for " +
                              shape_str(x.sizes()));
        return roll(x.flatten(), shifts, {0}).view(x.sizes());
    }
    if (shifts.size() != dims.size())
        throw shape_error("roll: shifts " + list_str(shifts) + " and dims " + list_str(dims) +
                          " must have the same length");
    const ComposedName named;
    Tensor y = x;
    for (size_t i = 0; i < dims.size(); ++i) {
        const int64_t d = wrap_dim(dims[i], x.dim(), "roll"), n = x.size(d);
        if (n == 0)
            continue;
        const int64_t s = ((shifts[i] % n) + n) % n;
        if (s != 0)
            y = cat({narrow(y, d, n - s, s), narrow(y, d, 0, n - s)}, d);
    }
    return named(y.impl() == x.impl() ? x.clone() : y, "roll", "RollBackward0");
}

Tensor movedim(const Tensor& x, const std::vector<int64_t>& source,
               const std::vector<int64_t>& destination) {
    checks::defined("movedim", x);
    if (source.size() != destination.size())
        throw shape_error("movedim: invalid source or destination dims: source " +
                          list_str(source) + " and destination " + list_str(destination) +
                          " must have the same number of elements");
    const int64_t n = x.dim();
    const auto src = unique_dims("movedim", source, std::max<int64_t>(n, 1));
    const auto dst = unique_dims("movedim", destination, std::max<int64_t>(n, 1));
    if (n == 0)
        return x.view(x.sizes());
    std::vector<int64_t> perm(size_t(n), -1);
    std::vector<char> used(size_t(n), 0);
    for (size_t i = 0; i < src.size(); ++i) {
        perm[size_t(dst[i])] = src[i];
        used[size_t(src[i])] = 1;
    }
    int64_t next = 0;
    for (auto& p : perm) {
        if (p >= 0)
            continue;
        while (used[size_t(next)])
            ++next;
        p = next++;
    }
    return permute(x, perm);
}
Tensor movedim(const Tensor& x, int64_t source, int64_t destination) {
    return movedim(x, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

namespace detail {

Tensor TensorMethods::repeat(const std::vector<int64_t>& repeats) const {
    const Tensor& x = self();
    checks::defined("repeat", x);
    if (int64_t(repeats.size()) < x.dim())
        throw shape_error("repeat: number of dimensions of repeat dims " + list_str(repeats) +
                          " can not be smaller than number of dimensions of tensor " +
                          shape_str(x.sizes()));
    for (int64_t r : repeats)
        if (r < 0)
            throw value_error("repeat: repeats " + list_str(repeats) + " must be non-negative");
    const size_t lead = repeats.size() - size_t(x.dim());
    Shape inter, wide, out;
    for (size_t k = 0; k < repeats.size(); ++k) {
        const int64_t s = k < lead ? 1 : x.size(int64_t(k - lead));
        inter.push_back(1);
        inter.push_back(s);
        wide.push_back(repeats[k]);
        wide.push_back(s);
        out.push_back(repeats[k] * s);
    }
    const ComposedName named;
    return named(x.reshape(inter).expand(wide).reshape(out).contiguous(), "repeat",
                 "RepeatBackward0");
}
Tensor TensorMethods::tile(const std::vector<int64_t>& dims) const {
    return tg::tile(self(), dims);
}
Tensor TensorMethods::flip(const std::vector<int64_t>& dims) const {
    return tg::flip(self(), dims);
}
Tensor TensorMethods::roll(const std::vector<int64_t>& shifts,
                           const std::vector<int64_t>& dims) const {
    return tg::roll(self(), shifts, dims);
}
Tensor TensorMethods::movedim(const std::vector<int64_t>& source,
                              const std::vector<int64_t>& destination) const {
    return tg::movedim(self(), source, destination);
}
Tensor TensorMethods::movedim(int64_t source, int64_t destination) const {
    return tg::movedim(self(), source, destination);
}
std::vector<Tensor> TensorMethods::chunk(int64_t chunks, int64_t dim) const {
    return tg::chunk(self(), chunks, dim);
}
std::vector<Tensor> TensorMethods::split(int64_t split_size, int64_t dim) const {
    return tg::split(self(), split_size, dim);
}
std::vector<Tensor> TensorMethods::split(const std::vector<int64_t>& sizes, int64_t dim) const {
    return tg::split(self(), sizes, dim);
}
std::vector<Tensor> TensorMethods::unbind(int64_t dim) const {
    return tg::unbind(self(), dim);
}

}  // namespace detail
}  // namespace tg
