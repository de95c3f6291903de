// Shape ops. Most are views (they share storage); each backward maps dy back to x's shape.
#include <numeric>
#include <optional>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
Shape infer_shape(const Tensor& x, Shape s, const char* op) {
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == -1) {
            if (infer >= 0)
                throw shape_error(std::string(op) + ": only one dim can be -1 in " + shape_str(s));
            infer = int64_t(i);
        } else if (s[i] < 0) {
            throw shape_error(std::string(op) + ": invalid size in " + shape_str(s));
        } else {
            known = checked_mul(known, s[i], op, s);
        }
    }
    if (infer >= 0) {
        if (known == 0 || x.numel() % known != 0)
            throw shape_error(std::string(op) + ": shape " + shape_str(s) +
                              " is invalid for input of shape " + shape_str(x.sizes()));
        s[size_t(infer)] = x.numel() / known;
    }
    if (numel_of(s, op) != x.numel())  // also rejects shapes whose strides overflow
        throw shape_error(std::string(op) + ": shape " + shape_str(s) +
                          " is invalid for input of shape " + shape_str(x.sizes()) + " (" +
                          std::to_string(x.numel()) + " elements)");
    return s;
}

/// Strides that view x's memory as `ns`, if any (the chunk-matching rule PyTorch uses).
std::optional<Shape> view_strides(const Tensor& x, const Shape& ns) {
    const Shape &os = x.sizes(), &ost = x.strides();
    if (x.numel() == 0 || os.empty() || x.is_contiguous())
        return contiguous_strides(ns, "view");
    Shape nst(ns.size());
    int64_t view_d = int64_t(ns.size()) - 1;
    int64_t chunk = ost.back(), tensor_numel = 1, view_numel = 1;
    for (int64_t d = int64_t(os.size()) - 1; d >= 0; --d) {
        tensor_numel *= os[size_t(d)];
        if (d == 0 || (os[size_t(d - 1)] != 1 && ost[size_t(d - 1)] != tensor_numel * chunk)) {
            while (view_d >= 0 && (view_numel < tensor_numel || ns[size_t(view_d)] == 1)) {
                nst[size_t(view_d)] = view_numel * chunk;
                view_numel *= ns[size_t(view_d)];
                --view_d;
            }
            if (view_numel != tensor_numel)
                return std::nullopt;
            if (d > 0) {
                chunk = ost[size_t(d - 1)];
                tensor_numel = view_numel = 1;
            }
        }
    }
    if (view_d != -1)
        return std::nullopt;
    return nst;
}

/// A view of x with new geometry whose backward is `back(dy, input shape)`.
template <class Back>
Tensor make_view(const char* name, const Tensor& x, Shape sizes, Shape strides, int64_t offset,
                 Back back) {
    Tensor y = runtime::alias(x, std::move(sizes), std::move(strides), offset, name);
    if (should_record({&x}))
        record(name, {&x}, y,
               [back](const Tensor& dy, const Node& n) { return Grads{back(dy, in_shape(n, 0))}; });
    return y;
}

Tensor reshape_view(const char* name, const Tensor& x, const Shape& s, const Shape& st) {
    return make_view(name, x, s, st, x.storage_offset(),
                     [](const Tensor& dy, const Shape& xs) { return dy.reshape(xs); });
}
}  // namespace

Tensor view(const Tensor& x, Shape shape) {
    Shape s = infer_shape(x, std::move(shape), "view");
    auto st = view_strides(x, s);
    if (!st)
        throw shape_error("view: shape " + shape_str(s) +
                          " is not compatible with input of shape " + shape_str(x.sizes()) +
                          " and strides " + shape_str(x.strides()) +
                          "; use reshape (which copies)");
    Tensor y = reshape_view("view", x, s, *st);
    trace_op("view", {&x}, y);
    return y;
}

Tensor reshape(const Tensor& x, Shape shape) {
    Shape s = infer_shape(x, std::move(shape), "reshape");
    if (s == x.sizes())
        return x;
    const auto st = view_strides(x, s);
    Tensor y = st ? reshape_view("reshape", x, s, *st) : view(x.contiguous(), s);
    trace_op("reshape", {&x}, y);
    return y;
}

Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
    if (x.dim() == 0)
        return x.reshape({1});
    const int64_t s = wrap_dim(start, x.dim(), "flatten"), e = wrap_dim(end, x.dim(), "flatten");
    if (s > e)
        throw shape_error("flatten: start dim " + std::to_string(start) + " after end dim " +
                          std::to_string(end));
    Shape ns(x.sizes().begin(), x.sizes().begin() + s);
    ns.push_back(numel_of(Shape(x.sizes().begin() + s, x.sizes().begin() + e + 1), "flatten"));
    ns.insert(ns.end(), x.sizes().begin() + e + 1, x.sizes().end());
    return reshape(x, ns);
}

Tensor squeeze(const Tensor& x) {
    Shape s;
    for (int64_t n : x.sizes())
        if (n != 1)
            s.push_back(n);
    return reshape(x, s);
}
Tensor squeeze(const Tensor& x, int64_t dim) {
    const int64_t d = wrap_dim(dim, x.dim(), "squeeze");
    if (x.dim() == 0 || x.size(d) != 1)
        return x;
    Shape s = x.sizes();
    s.erase(s.begin() + d);
    const ComposedName named;
    return named(reshape(x, s), "squeeze", "SqueezeBackward1");
}
Tensor unsqueeze(const Tensor& x, int64_t dim) {
    const int64_t d = wrap_dim(dim, x.dim() + 1, "unsqueeze");
    Shape s = x.sizes();
    s.insert(s.begin() + d, 1);
    const ComposedName named;
    return named(reshape(x, s), "unsqueeze", "UnsqueezeBackward0");
}

Tensor expand(const Tensor& x, const Shape& shape) {
    const int64_t nd = int64_t(shape.size()), lead = nd - x.dim();
    if (lead < 0)
        throw shape_error("expand: cannot expand " + shape_str(x.sizes()) + " to fewer dims " +
                          shape_str(shape));
    Shape s(static_cast<size_t>(nd)), st(static_cast<size_t>(nd), 0);
    for (int64_t d = 0; d < nd; ++d) {
        const int64_t want = shape[size_t(d)];
        if (want < -1)
            throw shape_error("expand: negative size " + std::to_string(want) + " in " +
                              shape_str(shape));
        if (d < lead) {
            if (want < 0)
                throw shape_error("expand: -1 not allowed for new leading dims in " +
                                  shape_str(shape));
            s[size_t(d)] = want;
            continue;
        }
        const int64_t have = x.size(d - lead);
        if (want == -1 || want == have) {
            s[size_t(d)] = have;
            st[size_t(d)] = x.stride(d - lead);
        } else if (have == 1) {
            s[size_t(d)] = want;
        } else {
            throw shape_error("expand: cannot expand " + shape_str(x.sizes()) + " to " +
                              shape_str(shape) + " (dim " + std::to_string(d) + ": " +
                              std::to_string(have) + " vs " + std::to_string(want) + ")");
        }
    }
    if (s == x.sizes())
        return x;
    numel_of(s, "expand");  // a stride-0 view can grow past int64 (Note [Checked sizes])
    Tensor y = make_view("expand", x, s, st, x.storage_offset(),
                         [](const Tensor& dy, const Shape& xs) { return sum_to(dy, xs); });
    trace_op("expand", {&x}, y);
    return y;
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
    if (x.dim() == 0)
        return x;
    const int64_t a = wrap_dim(d0, x.dim(), "transpose"), b = wrap_dim(d1, x.dim(), "transpose");
    if (a == b)
        return x;
    Shape s = x.sizes(), st = x.strides();
    std::swap(s[size_t(a)], s[size_t(b)]);
    std::swap(st[size_t(a)], st[size_t(b)]);
    Tensor y = make_view("transpose", x, s, st, x.storage_offset(),
                         [a, b](const Tensor& dy, const Shape&) { return transpose(dy, a, b); });
    if (Trace* tr = trace_slot())
        tr->add("transpose", {&x}, y, {{"dim0", a}, {"dim1", b}});
    return y;
}

Tensor t(const Tensor& x) {
    if (x.dim() > 2)
        throw shape_error("t: expects a tensor with <= 2 dims, got " + shape_str(x.sizes()) +
                          "; use transpose");
    const ComposedName named;
    return named(x.dim() < 2 ? x : transpose(x, 0, 1), "t", "TBackward0");
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
    if (int64_t(dims.size()) != x.dim())
        throw shape_error("permute: " + std::to_string(dims.size()) +
                          " dims given for a tensor of shape " + shape_str(x.sizes()));
    std::vector<int64_t> p(dims.size()), inv(dims.size(), -1);
    Shape s(dims.size()), st(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
        p[i] = wrap_dim(dims[i], x.dim(), "permute");
        if (inv[size_t(p[i])] != -1)
            throw shape_error("permute: repeated dim in permutation of " + shape_str(x.sizes()));
        inv[size_t(p[i])] = int64_t(i);
        s[i] = x.size(p[i]);
        st[i] = x.stride(p[i]);
    }
    Tensor y = make_view("permute", x, s, st, x.storage_offset(),
                         [inv](const Tensor& dy, const Shape&) { return permute(dy, inv); });
    if (Trace* tr = trace_slot())
        tr->add("permute", {&x}, y, {{"dims", p}});
    return y;
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
    const int64_t d = wrap_dim(dim, x.dim(), "narrow");
    const int64_t n = x.size(d);
    // start in [-n, n] (negative counts from the end), then length in [0, n - start]: no sum
    // that could overflow for a start or length near INT64_MAX
    if (start < -n || start > n || length < 0 || length > n - (start < 0 ? start + n : start))
        throw shape_error("narrow: start " + std::to_string(start) + " and length " +
                          std::to_string(length) + " are out of range for dim " +
                          std::to_string(d) + " of " + shape_str(x.sizes()));
    if (start < 0)
        start += n;
    Shape s = x.sizes();
    s[size_t(d)] = length;
    Tensor y = make_view(
        "narrow", x, s, x.strides(), x.storage_offset() + start * x.stride(d),
        [d, start](const Tensor& dy, const Shape& xs) { return narrow_scatter(dy, xs, d, start); });
    if (Trace* tr = trace_slot())
        tr->add("narrow", {&x}, y, {{"dim", d}, {"start", start}, {"length", length}});
    return y;
}

Tensor narrow_scatter(const Tensor& x, const Shape& shape, int64_t dim, int64_t start) {
    Tensor y = zeros(shape, x.options());
    runtime::copy_into(y.detach().narrow(dim, start, x.size(dim)), x);
    if (should_record({&x}))
        record("narrow_scatter", {&x}, y, [dim, start](const Tensor& dy, const Node& n) {
            return Grads{narrow(dy, dim, start, in_shape(n, 0)[size_t(dim)])};
        });
    return y;
}

Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
    if (xs.empty())
        throw shape_error("cat: expected a non-empty list of tensors");
    const Tensor& x0 = xs[0];
    if (x0.dim() == 0)
        throw shape_error("cat: zero-dimensional tensor cannot be concatenated");
    const int64_t d = wrap_dim(dim, x0.dim(), "cat");
    Dtype common = x0.dtype();  // Note [Type promotion]: uint8 with int8 joins as int16
    for (const Tensor& x : xs)
        common = promote_types(common, x.dtype());
    for (const Tensor& x : xs)
        if (x.dtype() != common) {
            std::vector<Tensor> ys;
            for (const Tensor& y : xs)
                ys.push_back(y.dtype() == common ? y : y.to(common));
            return cat(ys, dim);
        }
    Shape s = x0.sizes();
    s[size_t(d)] = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
        runtime::check_same("cat", x0, xs[i]);
        Shape a = xs[i].sizes(), b = x0.sizes();
        if (a.size() != b.size() || (a[size_t(d)] = b[size_t(d)], a != b))
            throw shape_error("cat: tensor " + std::to_string(i) + " has shape " +
                              shape_str(xs[i].sizes()) + ", expected " + shape_str(x0.sizes()) +
                              " except in dim " + std::to_string(d));
        s[size_t(d)] = checked_add(s[size_t(d)], xs[i].size(d), "cat", s);
    }
    Tensor y = runtime::empty(s, x0.dtype(), x0.device(), "cat");
    int64_t off = 0;
    for (const Tensor& x : xs) {
        runtime::copy_into(y.detach().narrow(d, off, x.size(d)), x);
        off += x.size(d);
    }
    if (Trace* tr = trace_slot())
        tr->add("cat", xs, y, {{"dim", d}});
    bool rec = false;
    for (const Tensor& x : xs)
        rec = rec || should_record({&x});
    if (rec) {
        std::vector<int64_t> lens;
        for (const Tensor& x : xs)
            lens.push_back(x.size(d));
        autograd::detail::record_list("cat", xs, {&y}, [d, lens](Grads& dys, const Node& n) {
            Grads dx(lens.size());
            int64_t o = 0;
            for (size_t i = 0; i < lens.size(); o += lens[i], ++i)
                if (needs(n, i))
                    dx[i] = narrow(dys[0], d, o, lens[i]);
            return dx;
        });
        if (autograd::detail::Budget* b = autograd::detail::budget_slot())
            autograd::detail::budget_recorded_outputs(
                *b, "cat", xs, {{&y, [d](const std::vector<Tensor>& in) { return cat(in, d); }}});
    }
    return y;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
    if (xs.empty())
        throw shape_error("stack: expected a non-empty list of tensors");
    const int64_t d = wrap_dim(dim, xs[0].dim() + 1, "stack");
    std::vector<Tensor> us;
    for (const Tensor& x : xs) {
        if (x.sizes() != xs[0].sizes())
            throw shape_error("stack: shapes " + shape_str(xs[0].sizes()) + " and " +
                              shape_str(x.sizes()) + " differ");
        us.push_back(unsqueeze(x, d));
    }
    const ComposedName named;
    return named(cat(us, d), "stack", "StackBackward0");
}

}  // namespace tg
