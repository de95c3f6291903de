#include "runtime/dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "backend/convert.hpp"
#include "backend/cpu/threads.hpp"
#include "backend/registry.hpp"
#include "tapegrad/error.hpp"

namespace tg::runtime {

void check_dims(const Shape& s, const char* op) {
    if (s.size() > size_t(backend::kMaxDims))
        throw shape_error(std::string(op) + ": shape " + shape_str(s) + " has more than " +
                          std::to_string(backend::kMaxDims) + " dims");
}

Tensor empty(const Shape& s, Dtype d, Device dev, const char* op) {
    check_dims(s, op);
    const size_t bytes = nbytes_of(s, d, op);  // Note [Checked sizes]
    auto impl = detail::make_pooled<TensorImpl>();
    impl->storage = detail::make_pooled<Storage>(bytes, dev);
    impl->sizes = s;
    impl->strides = contiguous_strides(s, op);
    impl->dtype = d;
    return Tensor(std::move(impl));
}

backend::Backend& be(const Tensor& t) {
    return backend::get(t.device());
}

backend::View view(const Tensor& t) {
    const TensorImpl* i = t.impl();
    return {i->storage->data,     i->offset, i->sizes.data(), i->strides.data(),
            int(i->sizes.size()), i->dtype};
}

backend::View view(const Tensor& t, int64_t offset) {
    backend::View v = view(t);
    v.offset += offset;
    return v;
}

backend::View broadcast_view(const Tensor& t, const Shape& shape, Shape& st) {
    const TensorImpl* i = t.impl();
    const size_t nd = shape.size(), td = i->sizes.size();
    st.assign(nd, 0);
    for (size_t k = 0; k < td; ++k) {
        const size_t d = nd - td + k;
        st[d] = i->sizes[k] == 1 && shape[d] != 1 ? 0 : i->strides[k];
    }
    return {i->storage->data, i->offset, shape.data(), st.data(), int(nd), i->dtype};
}

Tensor alias(const Tensor& base, Shape sizes, Shape strides, int64_t offset, const char* op) {
    check_dims(sizes, op);
    auto impl = detail::make_pooled<TensorImpl>();
    impl->storage = base.impl()->storage;
    impl->sizes = std::move(sizes);
    impl->strides = std::move(strides);
    impl->offset = offset;
    impl->dtype = base.dtype();
    return Tensor(std::move(impl));
}

Tensor converted(const Tensor& t, Dtype d) {
    if (t.dtype() == d)
        return t;
    if (!backend::converts_directly(d, t.dtype()))  // Note [Direct conversions]
        return converted(converted(t, kernel_dtype(t.dtype())), d);
    Tensor y = empty(t.sizes(), d, t.device());
    be(t).copy(view(y), view(t));
    return y;
}

std::string scalar_str(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);  // 0.1 as "0.1", unless that loses digits
    if (std::strtod(buf, nullptr) != v && v == v)
        std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

void check_same(const char* op, const Tensor& a, const Tensor& b) {
    if (a.dtype() != b.dtype())
        throw dtype_error(std::string(op) + ": " + shape_str(a.sizes()) + " " +
                          dtype_name(a.dtype()) + " and " + shape_str(b.sizes()) + " " +
                          dtype_name(b.dtype()) + ": dtypes differ (convert one with .to())");
    if (a.device() != b.device())
        throw device_error(std::string(op) + ": " + shape_str(a.sizes()) + " on " +
                           a.device().str() + " and " + shape_str(b.sizes()) + " on " +
                           b.device().str() + ": tensors are on different devices");
}

void check_floating(const char* op, const Tensor& t) {
    if (!is_floating(t.dtype()))
        throw dtype_error(std::string(op) + ": expected a floating-point tensor, got " +
                          shape_str(t.sizes()) + " " + dtype_name(t.dtype()));
}

void check_float_kernels(const char* op, const Tensor& t) {
    check_floating(op, t);
    if (t.dtype() != Dtype::Float32 && t.dtype() != Dtype::Float64)
        throw dtype_error(
            std::string(op) + ": " + shape_str(t.sizes()) + " " + dtype_name(t.dtype()) +
            ": not implemented for this dtype (tapegrad computes float16 and bfloat16 "
            "in elementwise ops, reductions and softmax only); convert with "
            ".to(tg::kFloat32) first");
}

namespace {
/// Whether any element of the 0/1 mask m is 1 (reads one value back from a device).
bool any_set(const Tensor& m) {
    if (m.numel() == 0)
        return false;
    Tensor any = empty({}, m.dtype(), m.device());
    Shape st(size_t(m.dim()), 0);
    const backend::View out{
        any.impl()->storage->data, 0, m.sizes().data(), st.data(), int(m.dim()), m.dtype()};
    be(m).reduce(backend::ReduceOp::Max, out, view(m), -1);
    return any.item<double>() != 0;
}

// Note [Integer division] (kernels.def): an int64 division by zero throws here, before the
// launch; out_numel is the number of quotients (an empty one divides nothing).
void check_divisor(UnaryOp op, const Tensor& x, double p, int64_t out_numel) {
    if (x.dtype() != Dtype::Int64 || out_numel == 0)
        return;
    if (op == UnaryOp::div_scalar && std::trunc(p) == 0)  // p as the kernel's int64 is 0
        throw value_error("div: integer division by zero in " + shape_str(x.sizes()) + " / " +
                          scalar_str(p) + " (int64)");
    if (op == UnaryOp::rdiv_scalar && any_set(unary(UnaryOp::eq_scalar, x, 0, 0)))
        throw value_error("rdiv: integer division by zero in " + scalar_str(p) + " / " +
                          shape_str(x.sizes()) + " (int64)");
}
void check_divisor(BinaryOp op, const char* name, const Tensor& a, const Tensor& b,
                   int64_t out_numel) {
    const bool divides = op == BinaryOp::div || op == BinaryOp::fmod || op == BinaryOp::remainder;
    if (!divides || b.dtype() != Dtype::Int64 || out_numel == 0)
        return;
    if (any_set(unary(UnaryOp::eq_scalar, b, 0, 0)))
        throw value_error(std::string(name) + ": integer division by zero in " +
                          shape_str(a.sizes()) + " / " + shape_str(b.sizes()) + " (int64)");
}
}  // namespace

// Note [Bool tensors]: bool is a storage type for masks. The backends copy to and from it and
// select with it (where), nothing else: arithmetic and reductions see numbers. So unary kernels
// refuse a bool input; a binary kernel converts a bool operand to the other operand's dtype, as
// PyTorch promotes (mask * x), and refuses two bools (the ops above send mask + mask to
// logical_or, mask * 2.0 to float32: Note [Bool arithmetic] in src/ops/arithmetic.cpp); compare,
// sum, max/min and the index ops convert bool to int64 and back where the result is bool.
void check_not_bool(const char* op, const Tensor& t) {
    if (t.dtype() == Dtype::Bool)
        throw dtype_error(std::string(op) + ": " + shape_str(t.sizes()) +
                          " bool: not defined for bool tensors (convert with .to(tg::kFloat) or "
                          ".to(tg::kLong) first)");
}

namespace {
/// a and b with a bool operand converted to the other's dtype (Note [Bool tensors]).
std::pair<Tensor, Tensor> promote_bool(const Tensor& a, const Tensor& b, const char* name) {
    const bool ab = a.dtype() == Dtype::Bool, bb = b.dtype() == Dtype::Bool;
    if (ab && bb)
        throw dtype_error(std::string(name) + ": " + shape_str(a.sizes()) + " bool and " +
                          shape_str(b.sizes()) +
                          " bool: no arithmetic on two bool tensors (use logical_and, logical_or, "
                          "logical_xor, or convert with .to())");
    if (ab && a.device() == b.device())
        return {a.to(b.dtype()), b};
    if (bb && a.device() == b.device())
        return {a, b.to(a.dtype())};
    return {a, b};
}
}  // namespace

// Note [Kernel dtypes] (tapegrad/dtype.hpp): the kernels compute in float32, float64 and int64.
// The other number dtypes go through kernel_dtype() here: converted, computed, converted back.
// Integers wrap as they would in their own type (the low bytes of an int64 sum, product or
// difference are those of the narrow one), and float16 / bfloat16 round once per op, as
// LibTorch's CPU computes them in float. Only the copy and where kernels see every dtype.
Tensor unary(UnaryOp op, const Tensor& x, double p, double q) {
    check_not_bool(unary_name(op), x);
    const Dtype kd = kernel_dtype(x.dtype());
    if (kd != x.dtype())
        return converted(unary(op, converted(x, kd), p, q), x.dtype());
    check_divisor(op, x, p, x.numel());
    Tensor y = empty_as(x);
    be(x).unary(op, view(y), view(x), p, q);
    return y;
}

void unary_into(UnaryOp op, const Tensor& out, const Tensor& x, double p, double q) {
    check_not_bool(unary_name(op), out);
    check_not_bool(unary_name(op), x);
    const Dtype kd = kernel_dtype(out.dtype());
    if (kd != out.dtype()) {  // Note [Kernel dtypes]
        Tensor t = empty(out.sizes(), kd, out.device());
        unary_into(op, t, converted(x, kd), p, q);
        return copy_into(out, t);
    }
    check_divisor(op, x, p, out.numel());
    Shape st;
    be(out).unary(op, view(out), broadcast_view(x, out.sizes(), st), p, q);
}

Tensor binary(BinaryOp op, const Tensor& a_in, const Tensor& b_in, const char* name, double p,
              double q) {
    if (a_in.dtype() == Dtype::Bool || b_in.dtype() == Dtype::Bool) {
        const auto [a, b] = promote_bool(a_in, b_in, name);
        return binary(op, a, b, name, p, q);
    }
    const Tensor &a = a_in, &b = b_in;
    check_same(name, a, b);
    const Dtype kd = kernel_dtype(a.dtype());
    if (kd != a.dtype())  // Note [Kernel dtypes]
        return converted(binary(op, converted(a, kd), converted(b, kd), name, p, q), a.dtype());
    if (a.sizes() == b.sizes()) {
        check_divisor(op, name, a, b, a.numel());
        Tensor y = empty_as(a);
        const backend::View vy = view(y);
        be(a).binary(op, vy, view(a), view(b), p, q);
        return y;
    }
    Tensor y = empty(broadcast_shapes(a.sizes(), b.sizes(), name), a.dtype(), a.device(), name);
    check_divisor(op, name, a, b, y.numel());
    Shape sa, sb;
    be(a).binary(op, view(y), broadcast_view(a, y.sizes(), sa), broadcast_view(b, y.sizes(), sb), p,
                 q);
    return y;
}

void binary_into(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const char* name,
                 double p, double q) {
    check_not_bool(name, out);
    if (a.dtype() == Dtype::Bool && a.device() == out.device())
        return binary_into(op, out, a.to(out.dtype()), b, name, p, q);
    if (b.dtype() == Dtype::Bool && b.device() == out.device())
        return binary_into(op, out, a, b.to(out.dtype()), name, p, q);
    check_same(name, out, a);
    check_same(name, out, b);
    const Dtype kd = kernel_dtype(out.dtype());
    if (kd != out.dtype()) {  // Note [Kernel dtypes]
        Tensor t = empty(out.sizes(), kd, out.device());
        binary_into(op, t, converted(a, kd), converted(b, kd), name, p, q);
        return copy_into(out, t);
    }
    const Shape& s = out.sizes();
    if (broadcast_shapes(s, broadcast_shapes(a.sizes(), b.sizes(), name), name) != s)
        throw shape_error(std::string(name) + ": cannot write " + shape_str(a.sizes()) + " and " +
                          shape_str(b.sizes()) + " into " + shape_str(s));
    check_divisor(op, name, a, b, out.numel());
    Shape sa, sb;
    be(out).binary(op, view(out), broadcast_view(a, s, sa), broadcast_view(b, s, sb), p, q);
}

void copy_into(const Tensor& dst, const Tensor& src) {
    if (dst.device() != src.device())
        throw device_error("copy_: from " + src.device().str() + " to " + dst.device().str() +
                           " needs .to(device) first");
    if (broadcast_shapes(dst.sizes(), src.sizes(), "copy_") != dst.sizes())
        throw shape_error("copy_: cannot copy " + shape_str(src.sizes()) + " into " +
                          shape_str(dst.sizes()));
    if (!backend::converts_directly(dst.dtype(), src.dtype()))  // Note [Direct conversions]
        return copy_into(dst, converted(src, kernel_dtype(src.dtype())));
    Shape st;
    be(dst).copy(view(dst), broadcast_view(src, dst.sizes(), st));
}

void fill(const Tensor& t, double value) {
    if (t.dtype() == Dtype::Bool) {  // through a one-element int64: nonzero (and NaN) is true
        Tensor one = empty({}, Dtype::Int64, t.device());
        fill(one, value != 0 ? 1 : 0);
        return copy_into(t, one);
    }
    const Dtype kd = kernel_dtype(t.dtype());
    if (kd != t.dtype()) {  // Note [Kernel dtypes]: one element, converted as it is copied
        Tensor one = empty({}, kd, t.device());
        fill(one, value);
        return copy_into(t, one);
    }
    const backend::View v = view(t);
    be(t).unary(UnaryOp::fill, v, v, value, 0);
}

bool all_finite(const Tensor& t) {
    if (!is_floating(t.dtype()))
        return true;
    return !any_set(unary(UnaryOp::not_finite, t));  // 1 where NaN or Inf
}

Tensor compare(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
    if (a.dtype() == Dtype::Bool && b.dtype() == Dtype::Bool)  // mask == mask
        return compare(op, a.to(Dtype::Int64), b.to(Dtype::Int64), name);
    const Dtype kd = kernel_dtype(a.dtype());
    if (a.dtype() == b.dtype() && kd != a.dtype())  // Note [Kernel dtypes]
        return compare(op, converted(a, kd), converted(b, kd), name);
    Tensor m = binary(op, a, b, name);
    Tensor r = empty(m.sizes(), Dtype::Bool, m.device(), name);
    be(m).copy(view(r), view(m));
    return r;
}

void parallel_parts(const Tensor& like, int64_t n, const std::function<void(int64_t)>& f) {
    const int threads = like.device().is_cpu() ? backend::cpu::cpu_threads() : 1;
    if (threads < 2 || n < 2) {
        for (int64_t i = 0; i < n; ++i)
            f(i);
        return;
    }
    const int parts = int(std::min<int64_t>(threads, n));
    backend::cpu::cpu_parallel_blas(parts, [&](int t) {
        for (int64_t i = n * t / parts; i < n * (t + 1) / parts; ++i)
            f(i);
    });
}

}  // namespace tg::runtime
