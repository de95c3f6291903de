// Ordering along a dim: cumsum and cumprod (scans) and sort, argsort, topk. The scan runs on the
// tensor's device; the sorts order each row on the host (Note [Sorting on the host]).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "autograd/record.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

/// Note [Scanning in log steps]: y = x; for s = 1, 2, 4, ... < n: y[s:] = y[s:] + y[:-s]
/// (Hillis-Steele), each step one elementwise add on the device into a second buffer, so a
/// cumsum of n along a dim costs log2(n) passes over the tensor on every backend and needs no
/// scan kernel. Each output is a tree of sums: the same bits for any thread count.
namespace {
/// The scan of Note [Scanning in log steps] with the kernel k (add: cumsum, mul: cumprod), on a
/// copy of x; d is wrapped.
Tensor scan(const Tensor& x, int64_t d, runtime::BinaryOp k, const char* op) {
    const int64_t n = x.dim() ? x.size(d) : 1;
    Tensor y = runtime::empty(x.sizes(), x.dtype(), x.device(), op);
    runtime::copy_into(y, x);
    if (n > 1 && x.numel() > 0) {
        Tensor other = runtime::empty(x.sizes(), x.dtype(), x.device(), op);
        for (int64_t s = 1; s < n; s *= 2) {
            runtime::copy_into(other.narrow(d, 0, s), y.narrow(d, 0, s));
            runtime::binary_into(k, other.narrow(d, s, n - s), y.narrow(d, s, n - s),
                                 y.narrow(d, 0, n - s), op, 0, 0);
            std::swap(y, other);
        }
    }
    return y;
}
/// x for a scan: reduced floats scan in float32 (Note [Reduced floats]), integers and bool in
/// int64, as PyTorch's, unless a dtype is asked for.
Tensor scan_input(const Tensor& x, std::optional<Dtype> dtype) {
    if (dtype)
        return x.to(*dtype);
    return is_integral(x.dtype(), true) ? x.to(kInt64) : x;
}

/// Note [cumprod's gradient]: dx_i = Σ_{k >= i} dy_k·Π_{j <= k, j != i} x_j. Without zeros in x
/// that is (Σ_{k >= i} dy_k·y_k) / x_i, two passes; a zero makes it 0/0, so then each i's
/// products of x_(i, k] come from a cumprod of the [n, n] matrix holding x_j where j > i and 1
/// elsewhere (O(n²) memory per row, only when x has a zero). Both forms are composed, so
/// create_graph differentiates them again.
Tensor cumprod_backward(const Tensor& dy, const Tensor& x, const Tensor& y, int64_t d) {
    const int64_t n = x.size(d);
    if (x.numel() == 0 || n == 1)
        return dy;
    bool has_zero;
    {
        NoGradGuard g;
        has_zero = eq(x, 0).any().item<bool>();
    }
    if (!has_zero) {
        const Tensor w = dy * y;
        return (sum(w, {d}, true) - cumsum(w, d) + w) / x;
    }
    const Tensor xm = x.movedim(d, -1).unsqueeze(-2);    // [..., 1, n]: x_j
    const Tensor dym = dy.movedim(d, -1).unsqueeze(-2);  // [..., 1, n]: dy_k
    const TensorOptions o = TensorOptions(x.dtype()).device(x.device());
    const Tensor after = triu(ones({n, n}, o), 1).to(kBool);  // [i, j]: j > i
    const Tensor upto = triu(ones({n, n}, o), 0);             // [i, k]: k >= i
    // [..., i, k]: Π_{i < j <= k} x_j where k >= i, else 0
    const Tensor runs = cumprod(where(after, xm, ones({}, o)), -1) * upto;
    const Tensor xr = x.movedim(d, -1);  // Π_{j < i} x_j from the cumprod of [1, x_0, ...]
    const Tensor before = cat({ones_like(xr.narrow(-1, 0, 1)), xr.narrow(-1, 0, n - 1)}, -1);
    return (cumprod(before, -1) * sum(runs * dym, {-1})).movedim(-1, d);
}
}  // namespace

Tensor cumsum(const Tensor& x_in, int64_t dim) {
    if (is_reduced_floating(x_in.dtype()))  // Note [Reduced floats]
        return cumsum(x_in.to(kFloat32), dim).to(x_in.dtype());
    const Tensor x = scan_input(x_in, std::nullopt);
    const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "cumsum");
    Tensor y = scan(x, d, runtime::BinaryOp::add, "cumsum");
    if (should_record({&x}))  // dx_i = Σ_{j >= i} dy_j = Σ dy - cumsum(dy) + dy
        record("cumsum", {&x}, y,
               [d](const Tensor& dy) { return Grads{sum(dy, {d}, true) - cumsum(dy, d) + dy}; });
    return y;
}

Tensor cumprod(const Tensor& x_in, int64_t dim, std::optional<Dtype> dtype) {
    if (!x_in.defined())
        throw value_error("cumprod: undefined tensor");
    if (!dtype && is_reduced_floating(x_in.dtype()))  // Note [Reduced floats]
        return cumprod(x_in.to(kFloat32), dim).to(x_in.dtype());
    const Tensor x = scan_input(x_in, dtype);
    const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "cumprod");
    Tensor y = scan(x, d, runtime::BinaryOp::mul, "cumprod");
    if (should_record({&x}))  // Note [cumprod's gradient]
        record("cumprod", {&x}, y, [sx = save(x), sy = save_output(y), d](const Tensor& dy) {
            const Tensor xx = sx.get();
            if (xx.dim() == 0)
                return Grads{dy};
            return Grads{cumprod_backward(dy, xx, sy.get(), d)};
        });
    torch_name(y, "CumprodBackward0");
    return y;
}

namespace {

/// Note [Sorting on the host]: sort, argsort and topk read the tensor back, order each row with
/// std::stable_sort (ties keep their order, as LibTorch's CPU sort; NaN sorts above every
/// number, as PyTorch's), and upload the indices; the values are gather(x, indices), which is
/// what makes them differentiable. A device kernel would save the round trip (not yet).
template <class T>
std::vector<int64_t> order_rows(const std::vector<T>& v, int64_t rows, int64_t n, int64_t k,
                                bool descending) {
    std::vector<int64_t> out(static_cast<size_t>(rows * k)), idx(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
        const T* row = v.data() + r * n;
        auto above = [](T a, T b) {  // a sorts after b (NaN last)
            if constexpr (std::is_floating_point_v<T>)
                if (std::isnan(a) || std::isnan(b))
                    return std::isnan(a) && !std::isnan(b);
            return a > b;
        };
        std::iota(idx.begin(), idx.end(), int64_t(0));
        std::stable_sort(idx.begin(), idx.end(), [&](int64_t i, int64_t j) {
            return descending ? above(row[i], row[j]) : above(row[j], row[i]);
        });
        std::copy(idx.begin(), idx.begin() + k, out.begin() + r * k);
    }
    return out;
}

/// The indices of the first k of each row along dim in sorted order (int64, x's shape with k
/// along dim).
Tensor order(const Tensor& x_in, int64_t dim, int64_t k, bool descending, const char* op) {
    const Tensor x = x_in.dim() ? x_in : x_in.reshape({1});
    const int64_t d = wrap_dim(dim, x.dim(), op), n = x.size(d);
    if (k < 0 || k > n)
        throw value_error(std::string(op) + ": k " + std::to_string(k) +
                          " is out of range for dim " + std::to_string(d) + " of size " +
                          std::to_string(n) + " of " + shape_str(x_in.sizes()));
    const Tensor rows = x.detach().transpose(d, -1).contiguous();  // [..., n]
    const int64_t nrows = n ? rows.numel() / n : 0;
    std::vector<int64_t> idx;
    if (is_floating(x.dtype()))
        idx = order_rows(rows.to_vector<double>(), nrows, n, k, descending);
    else
        idx = order_rows(rows.to_vector<int64_t>(), nrows, n, k, descending);
    Shape s = rows.sizes();
    s.back() = k;
    const Tensor t = tensor(idx, TensorOptions(kInt64).device(x.device())).reshape(s);
    const Tensor r = t.transpose(d, -1).contiguous();
    return x_in.dim() ? r : r.reshape({});
}

std::tuple<Tensor, Tensor> values_and(const Tensor& x, int64_t dim, const Tensor& idx,
                                      const char* op, const char* torch) {
    const ComposedName named;
    return {named(x.dim() ? gather(x, dim, idx) : x.clone(), op, torch), idx};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
    const int64_t n = x.dim() ? x.size(wrap_dim(dim, x.dim(), "sort")) : 1;
    return values_and(x, dim, order(x, dim, n, descending, "sort"), "sort", "SortBackward0");
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
    const int64_t n = x.dim() ? x.size(wrap_dim(dim, x.dim(), "argsort")) : 1;
    return order(x, dim, n, descending, "argsort");
}
Tensor argsort(const Tensor& x, int dim, bool descending) {
    return argsort(x, int64_t(dim), descending);
}
Tensor argsort(const Tensor& x, bool /*stable: ours always is*/, int64_t dim, bool descending) {
    return argsort(x, dim, descending);
}
Tensor argsort(const Tensor& x, bool stable) {
    return argsort(x, stable, -1, false);
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
    (void)sorted;  // always sorted: a valid "unsorted" order too
    return values_and(x, dim, order(x, dim, k, largest, "topk"), "topk", "TopkBackward0");
}

}  // namespace tg
