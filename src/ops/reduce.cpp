// Reductions: sum (the primitive), max/min, norm, and the compositions mean, var, logsumexp,
// sum_to; argmax.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
/// Wrapped, sorted, unique dims; empty means all.
std::vector<int64_t> norm_dims(const Tensor& x, const std::vector<int64_t>& dims, const char* op) {
    std::vector<int64_t> r;
    if (dims.empty()) {
        for (int64_t d = 0; d < x.dim(); ++d)
            r.push_back(d);
        return r;
    }
    for (int64_t d : dims)
        r.push_back(wrap_dim(d, x.dim(), op));
    std::sort(r.begin(), r.end());
    if (std::adjacent_find(r.begin(), r.end()) != r.end())
        throw shape_error(std::string(op) + ": dim repeated in the reduction list of a " +
                          shape_str(x.sizes()) + " tensor");
    return r;
}

Shape kept_shape(const Tensor& x, const std::vector<int64_t>& dims) {
    Shape s = x.sizes();
    for (int64_t d : dims)
        s[size_t(d)] = 1;
    return s;
}

Shape dropped_shape(const Tensor& x, const std::vector<int64_t>& dims) {
    Shape s;
    for (int64_t d = 0; d < x.dim(); ++d)
        if (!std::binary_search(dims.begin(), dims.end(), d))
            s.push_back(x.size(d));
    return s;
}

/// The number of elements each output of a reduction over dims sums.
int64_t reduced_count(const Tensor& x, const std::vector<int64_t>& dims) {
    Shape s;
    for (int64_t d : dims)
        s.push_back(x.size(d));
    return numel_of(s);
}

/// Runs the backend reduction into a keepdim-shaped tensor.
Tensor reduce_keep(backend::ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims) {
    const Dtype kd = kernel_dtype(x.dtype());
    if (kd != x.dtype())  // Note [Kernel dtypes]: float16 sums in float32, rounded once
        return runtime::converted(reduce_keep(op, runtime::converted(x, kd), dims), x.dtype());
    Tensor y = runtime::empty(kept_shape(x, dims), x.dtype(), x.device());
    Shape st = y.strides();
    for (int64_t d : dims)
        st[size_t(d)] = 0;
    backend::View out{
        y.impl()->storage->data, 0, x.sizes().data(), st.data(), int(x.dim()), y.dtype()};
    runtime::be(x).reduce(op, out, runtime::view(x), -1);
    return y;
}

/// The gradient of max/min: dy spread evenly over the elements equal to the result.
Tensor extremum_grad(const Tensor& dy_keep, const Tensor& x, const Tensor& y_keep,
                     const std::vector<int64_t>& dims) {
    const Tensor mask = eq(x, y_keep).to(x.dtype());
    return dy_keep * mask / sum(mask, dims, true);
}

Tensor extremum(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim, bool is_max) {
    if (x.dtype() == kBool)  // Note [Bool tensors]
        return extremum(x.to(kInt64), dims_in, keepdim, is_max).to(kBool);
    const char* name = is_max ? "max" : "min";
    const auto dims = norm_dims(x, dims_in, name);
    // an empty reduction has no identity here (sum's is 0); the kept dims may be empty
    for (int64_t d : dims)
        if (x.size(d) == 0)
            throw shape_error(std::string(name) + ": cannot reduce over dim " + std::to_string(d) +
                              " of size 0 of the empty tensor " + shape_str(x.sizes()));
    Tensor yk = reduce_keep(is_max ? backend::ReduceOp::Max : backend::ReduceOp::Min, x, dims);
    Tensor y = keepdim ? yk : yk.view(dropped_shape(x, dims));
    if (should_record({&x}))
        record(name, {&x}, y,
               [sx = save(x), syk = save_output(yk), dims](const Tensor& dy, const Node& n) {
                   const Tensor dyk = dy.reshape(kept_shape(sx.get(), dims));
                   (void)n;
                   return Grads{extremum_grad(dyk, sx.get(), syk.get(), dims)};
               });
    return y;
}
}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
    if (is_integral(x.dtype(), true) && x.dtype() != kInt64)  // bool counts; LibTorch: int64
        return sum(x.to(kInt64), dims_in, keepdim);
    const auto dims = norm_dims(x, dims_in, "sum");
    // The CPU splits a reduction over its threads by the outermost dim, which must be kept: with
    // dim 0 reduced along with others but not all (batch norm's statistics over N, H, W; a
    // bias's gradient), the other dims are summed first, split by dim 0, then dim 0 (a small
    // sum). The same two stages on every device and any thread count.
    Tensor yk;
    if (dims.size() >= 2 && dims[0] == 0 && dims.size() < size_t(x.dim()) &&
        x.numel() >= (int64_t(1) << 16)) {
        const Tensor part = reduce_keep(backend::ReduceOp::Sum, x,
                                        std::vector<int64_t>(dims.begin() + 1, dims.end()));
        yk = reduce_keep(backend::ReduceOp::Sum, part, {0});
    } else {
        yk = reduce_keep(backend::ReduceOp::Sum, x, dims);
    }
    Tensor y = keepdim ? yk
                       : runtime::alias(yk, dropped_shape(x, dims),
                                        contiguous_strides(dropped_shape(x, dims)), 0);
    if (Trace* tr = trace_slot())
        tr->add("sum", {&x}, y, {{"dims", dims}, {"keepdim", keepdim}});
    if (should_record({&x}))
        record("sum", {&x}, y, [dims](const Tensor& dy, const Node& n) {
            const Shape& xs = in_shape(n, 0);
            Shape ks = xs;
            for (int64_t d : dims)
                ks[size_t(d)] = 1;
            return Grads{expand(dy.reshape(ks), xs)};
        });
    if (dims_in.empty())
        torch_name(y, "SumBackward0");
    return y;
}
Tensor sum(const Tensor& x) {
    return sum(x, {}, false);
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
    runtime::check_floating("mean", x);
    if (is_reduced_floating(x.dtype()))  // Note [Reduced floats]
        return mean(x.to(kFloat32), dims_in, keepdim).to(x.dtype());
    const auto dims = norm_dims(x, dims_in, "mean");
    const double n = double(reduced_count(x, dims));
    const ComposedName named;
    return named(sum(x, dims, keepdim) * (1.0 / n),  // 0/0 = NaN over an empty dim, as PyTorch
                 "mean", dims_in.empty() ? "MeanBackward0" : "MeanBackward1");
}
Tensor mean(const Tensor& x) {
    return mean(x, {}, false);
}

Tensor max(const Tensor& x) {
    Tensor y = extremum(x, {}, false, true);
    torch_name(y, "MaxBackward1");
    return y;
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims_in, bool keepdim) {
    runtime::check_floating("logsumexp", x);
    if (is_reduced_floating(x.dtype()))  // Note [Reduced floats]
        return logsumexp(x.to(kFloat32), dims_in, keepdim).to(x.dtype());
    const ComposedName named;
    const auto dims = norm_dims(x, dims_in, "logsumexp");
    const Shape out = keepdim ? kept_shape(x, dims) : dropped_shape(x, dims);
    if (reduced_count(x, dims) == 0)  // the empty sum: log 0
        return full(out, -std::numeric_limits<double>::infinity(), x.options());
    // shifted by the (constant) maximum, whose gradient cancels; a row that is all -inf (or has
    // +inf) is shifted by 0 instead, so it gives -inf (+inf) rather than NaN
    Tensor m = extremum(x.detach(), dims, true, true);
    m = where(lt(abs(m), std::numeric_limits<double>::infinity()), m, zeros({}, m.options()));
    const Tensor y = log(sum(exp(x - m), dims, true)) + m;
    return named(keepdim ? y : y.reshape(out), "logsumexp", "LogsumexpBackward0");
}

namespace {
Tensor norm_of(const Tensor& x, Scalar p, const std::vector<int64_t>& dims_in, bool keepdim) {
    runtime::check_floating("norm", x);
    if (is_reduced_floating(x.dtype()))  // Note [Reduced floats]
        return norm_of(x.to(kFloat32), p, dims_in, keepdim).to(x.dtype());
    const auto dims = norm_dims(x, dims_in, "norm");
    if (std::isinf(p) && p > 0)
        return extremum(abs(x), dims, keepdim, true);
    if (!(p > 0))
        throw value_error("norm: p = " + std::to_string(p) +
                          ": only p > 0 and p = inf are supported");
    if (p == 1)
        return sum(abs(x), dims, keepdim);
    if (p != 2)
        return pow(sum(pow(abs(x), p), dims, keepdim), 1 / p);
    // the 2-norm, one node: dx = dy * x / y, and 0 where y = 0 (PyTorch's subgradient; the
    // composition sqrt(sum(x²)) would give NaN there)
    const Tensor xd = x.detach();
    Tensor y = sqrt(sum(xd * xd, dims, keepdim));
    if (should_record({&x}))
        record("norm", {&x}, y, [sx = save(x), sy = save_output(y), dims](const Tensor& dy) {
            const Tensor xx = sx.get();
            const Shape ks = kept_shape(xx, dims);
            const Tensor yk = sy.get().reshape(ks), dyk = dy.reshape(ks);
            const Tensor r = where(gt(yk, 0), dyk / yk, zeros({}, yk.options()));
            return Grads{xx * r};
        });
    return y;
}
}  // namespace

Tensor norm(const Tensor& x, Scalar p, const std::vector<int64_t>& dims_in, bool keepdim) {
    const ComposedName named;
    return named(norm_of(x, p, dims_in, keepdim), "norm",
                 dims_in.empty() ? "NormBackward0" : "NormBackward1");
}
Tensor norm(const Tensor& x, Scalar p) {
    return norm(x, p, {}, false);
}
Tensor min(const Tensor& x) {
    Tensor y = extremum(x, {}, false, false);
    torch_name(y, "MinBackward1");
    return y;
}
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
    Tensor y = extremum(x, dims, keepdim, true);
    torch_name(y, "AmaxBackward0");
    return y;
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
    Tensor y = extremum(x, dims, keepdim, false);
    torch_name(y, "AminBackward0");
    return y;
}
Tensor max(const Tensor& a, const Tensor& b) {
    return maximum(a, b);
}
Tensor min(const Tensor& a, const Tensor& b) {
    return minimum(a, b);
}

Tensor var(const Tensor& x, const std::vector<int64_t>& dims_in, bool unbiased, bool keepdim) {
    runtime::check_floating("var", x);
    if (is_reduced_floating(x.dtype()))  // Note [Reduced floats]
        return var(x.to(kFloat32), dims_in, unbiased, keepdim).to(x.dtype());
    const auto dims = norm_dims(x, dims_in, "var");
    const int64_t n = reduced_count(x, dims);
    const ComposedName named;
    const Tensor c = x - mean(x, dims, true);
    // with no more elements than the correction the divisor is 0: NaN (0/0), as in PyTorch
    const double div = double(std::max<int64_t>(n - (unbiased ? 1 : 0), 0));
    return named(sum(c * c, dims, keepdim) * (1.0 / div), "var", "VarBackward0");
}
Tensor var(const Tensor& x, std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) {
    return var(x, std::vector<int64_t>(dims), unbiased, keepdim);
}
Tensor var(const Tensor& x, bool unbiased) {
    return var(x, {}, unbiased, false);
}
Tensor var(const Tensor& x, int dim) {
    return var(x, std::vector<int64_t>{dim}, true, false);
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
    if (x.sizes() == shape)
        return x;
    const int64_t lead = x.dim() - int64_t(shape.size());
    if (lead < 0)
        throw shape_error("sum_to: cannot reduce " + shape_str(x.sizes()) + " to " +
                          shape_str(shape));
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x.dim(); ++d)
        if (d < lead || (shape[size_t(d - lead)] == 1 && x.size(d) != 1))
            dims.push_back(d);
    Tensor r = dims.empty() ? x : sum(x, dims, true);
    return r.reshape(shape);
}

namespace {
/// The index of the first largest (is_max) or smallest element along dim.
Tensor arg_reduce(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
    const char* op = is_max ? "argmax" : "argmin";
    if (kernel_dtype(x.dtype()) != x.dtype() || x.dtype() == kBool)  // Note [Kernel dtypes]
        return arg_reduce(
            runtime::converted(x, x.dtype() == kBool ? kInt64 : kernel_dtype(x.dtype())), dim,
            keepdim, is_max);
    const int64_t d = wrap_dim(dim, x.dim(), op);
    if (x.dim() == 0)
        return zeros({}, TensorOptions(kInt64).device(x.device()));
    if (x.size(d) == 0)
        throw shape_error(std::string(op) + ": empty dim " + std::to_string(d) + " of " +
                          shape_str(x.sizes()));
    Tensor y = runtime::empty(kept_shape(x, {d}), kInt64, x.device());
    Shape st = y.strides();
    st[size_t(d)] = 0;
    backend::View out{
        y.impl()->storage->data, 0, x.sizes().data(), st.data(), int(x.dim()), kInt64};
    runtime::be(x).reduce(is_max ? backend::ReduceOp::ArgMax : backend::ReduceOp::ArgMin, out,
                          runtime::view(x), int(d));
    return keepdim ? y : y.squeeze(d);
}
}  // namespace

namespace {
/// Without a dim, the index into the flattened x (with keepdim, every dim kept as 1).
Tensor arg_reduce(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
    if (dim)
        return arg_reduce(x, *dim, keepdim, is_max);
    Tensor flat = arg_reduce(x.detach().reshape({-1}), 0, false, is_max);
    return keepdim ? flat.reshape(Shape(size_t(x.dim()), 1)) : flat;
}
}  // namespace

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
    return arg_reduce(x, dim, keepdim, true);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
    return arg_reduce(x, dim, keepdim, false);
}

namespace {
/// max(x, dim) / min(x, dim): the first best index, and the values gathered there (gather's
/// gradient puts dy at that index alone, as PyTorch's value-selecting reductions do).
std::tuple<Tensor, Tensor> value_index(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
    const char* name = is_max ? "max" : "min";
    if (x.dtype() == kBool) {  // Note [Bool tensors]
        auto [v, i] = value_index(x.to(kInt64), dim, keepdim, is_max);
        return {v.to(kBool), i};
    }
    const int64_t d = wrap_dim(dim, x.dim(), name);
    if (x.dim() > 0 && x.size(d) == 0)
        throw shape_error(std::string(name) + ": cannot reduce over dim " + std::to_string(d) +
                          " of size 0 of the empty tensor " + shape_str(x.sizes()));
    const ComposedName named;
    if (x.dim() == 0)
        return {named(x.reshape({}), name, is_max ? "MaxBackward0" : "MinBackward0"),
                arg_reduce(x, d, keepdim, is_max)};
    const Tensor i = arg_reduce(x.detach(), d, true, is_max);
    const Tensor v = gather(x, d, i);
    return {named(keepdim ? v : v.squeeze(d), name, is_max ? "MaxBackward0" : "MinBackward0"),
            keepdim ? i : i.squeeze(d)};
}
}  // namespace

std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
    return value_index(x, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
    return value_index(x, dim, keepdim, false);
}

}  // namespace tg
