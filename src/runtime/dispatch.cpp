#include "runtime/dispatch.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "backend/registry.hpp"
#include "core/random.hpp"
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

Tensor unary(UnaryOp op, const Tensor& x, double p, double q) {
    Tensor y = empty_as(x);
    be(x).unary(op, view(y), view(x), p, q);
    return y;
}

void unary_into(UnaryOp op, const Tensor& out, const Tensor& x, double p, double q) {
    Shape st;
    be(out).unary(op, view(out), broadcast_view(x, out.sizes(), st), p, q);
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, const char* name, double p, double q) {
    check_same(name, a, b);
    if (a.sizes() == b.sizes()) {
        Tensor y = empty_as(a);
        const backend::View vy = view(y);
        be(a).binary(op, vy, view(a), view(b), p, q);
        return y;
    }
    Tensor y = empty(broadcast_shapes(a.sizes(), b.sizes(), name), a.dtype(), a.device(), name);
    Shape sa, sb;
    be(a).binary(op, view(y), broadcast_view(a, y.sizes(), sa), broadcast_view(b, y.sizes(), sb), p,
                 q);
    return y;
}

void binary_into(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const char* name,
                 double p, double q) {
    check_same(name, out, a);
    check_same(name, out, b);
    const Shape& s = out.sizes();
    if (broadcast_shapes(s, broadcast_shapes(a.sizes(), b.sizes(), name), name) != s)
        throw shape_error(std::string(name) + ": cannot write " + shape_str(a.sizes()) + " and " +
                          shape_str(b.sizes()) + " into " + shape_str(s));
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
    Shape st;
    be(dst).copy(view(dst), broadcast_view(src, dst.sizes(), st));
}

void fill(const Tensor& t, double value) {
    const backend::View v = view(t);
    be(t).unary(UnaryOp::fill, v, v, value, 0);
}

void fill_random(const Tensor& t, bool normal, double a, double b, const Generator* g) {
    detail::Draw draw(g);
    const int64_t n = t.numel();
    const size_t bytes = nbytes_of(t.sizes(), t.dtype(), "fill_random");
    const TensorImpl* i = t.impl();
    const size_t offset = size_t(i->offset) * element_size(t.dtype());
    if (t.device().is_cpu()) {
        detail::sample(static_cast<char*>(i->storage->data) + offset, t.dtype(), n, normal, a, b,
                       draw.engine());
        return;
    }
    std::vector<unsigned char> host(bytes);  // an acknowledged host->device transfer
    detail::sample(host.data(), t.dtype(), n, normal, a, b, draw.engine());
    be(t).from_host(i->storage->data, offset, host.data(), bytes);
}

bool all_finite(const Tensor& t) {
    if (!is_floating(t.dtype()) || t.numel() == 0)
        return true;
    Tensor bad = unary(UnaryOp::not_finite, t);  // 1 where NaN or Inf
    Tensor any = empty({}, t.dtype(), t.device());
    Shape st(size_t(t.dim()), 0);
    const backend::View out{
        any.impl()->storage->data, 0, bad.sizes().data(), st.data(), int(bad.dim()), t.dtype()};
    be(t).reduce(backend::ReduceOp::Max, out, view(bad));
    return any.item<double>() == 0;
}

Tensor compare(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
    Tensor m = binary(op, a, b, name);
    if (m.dtype() == Dtype::Int64)
        return m;
    Tensor r = empty(m.sizes(), Dtype::Int64, m.device(), name);
    be(m).copy(view(r), view(m));
    return r;
}

}  // namespace tg::runtime
