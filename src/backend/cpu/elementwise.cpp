// The CPU's elementwise kernels: the table's unary and binary kernels, copies and where.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "backend/convert.hpp"
#include "backend/cpu/backend.hpp"
#include "backend/cpu/iterate.hpp"
#include "backend/cpu/math.hpp"
#include "core/simd.hpp"

namespace tg::backend::cpu {

namespace {

// TG_SIMD_CLONES: Note [Wider SIMD] in core/simd.hpp.

template <class K>
TG_SIMD_CLONES void unary_flat(float* o, const float* a, int64_t n, float p, float q) {
    for (int64_t i = 0; i < n; ++i)
        o[i] = K::f(a[i], p, q);
}

template <class K>
TG_SIMD_CLONES void binary_flat(float* o, const float* a, const float* b, int64_t n, float p,
                                float q) {
    for (int64_t i = 0; i < n; ++i)
        o[i] = K::f(a[i], b[i], p, q);
}

template <class K, class T>
void unary_loop(const View& out, const View& x, T p, T q) {
    const View* v[2] = {&out, &x};
    T* o = ptr<T>(out);
    const T* a = ptr<T>(x);
    parallel_rows<2>(iter_of<2>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        if (s[0] == 1 && s[1] == 1) {
            if constexpr (std::is_same_v<T, float>)
                unary_flat<K>(po, pa, n, p, q);
            else
                for (int64_t i = 0; i < n; ++i)
                    po[i] = K::f(pa[i], p, q);
        } else {
            for (int64_t i = 0; i < n; ++i)
                po[i * s[0]] = K::f(pa[i * s[1]], p, q);
        }
    });
}

template <class K, class T>
void binary_loop(const View& out, const View& x, const View& y, T p, T q) {
    const View* v[3] = {&out, &x, &y};
    T* o = ptr<T>(out);
    const T* a = ptr<T>(x);
    const T* b = ptr<T>(y);
    parallel_rows<3>(iter_of<3>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        const T* pb = b + off[2];
        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
            if constexpr (std::is_same_v<T, float>)
                binary_flat<K>(po, pa, pb, n, p, q);
            else
                for (int64_t i = 0; i < n; ++i)
                    po[i] = K::f(pa[i], pb[i], p, q);
        } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
            const T bv = pb[0];
            for (int64_t i = 0; i < n; ++i)
                po[i] = K::f(pa[i], bv, p, q);
        } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
            const T av = pa[0];
            for (int64_t i = 0; i < n; ++i)
                po[i] = K::f(av, pb[i], p, q);
        } else {
            for (int64_t i = 0; i < n; ++i)
                po[i * s[0]] = K::f(pa[i * s[1]], pb[i * s[2]], p, q);
        }
    });
}

template <class To, class Ti>
void copy_loop(const View& out, const View& in) {
    const View* v[2] = {&out, &in};
    To* o = ptr<To>(out);
    const Ti* a = ptr<Ti>(in);
    parallel_rows<2>(iter_of<2>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        To* po = o + off[0];
        const Ti* pa = a + off[1];
        if (s[0] == 1 && s[1] == 1) {
            if constexpr (std::is_same_v<To, Ti>)
                std::memcpy(po, pa, size_t(n) * sizeof(To));
            else
                for (int64_t i = 0; i < n; ++i)
                    po[i] = convert<To>(pa[i]);
        } else if (s[0] == 1 && s[1] == 0) {  // a broadcast row: expand().contiguous(), biases
            std::fill(po, po + n, convert<To>(*pa));
        } else {
            for (int64_t i = 0; i < n; ++i)
                po[i * s[0]] = convert<To>(pa[i * s[1]]);
        }
    });
}

}  // namespace

void CpuBackend::copy(const View& out, const View& in) {
    if (out.dtype == in.dtype)  // Note [Byte moves]
        return dispatch_word(element_size(out.dtype),
                             [&](auto w) { copy_loop<decltype(w), decltype(w)>(out, in); });
    dispatch_conversion(out.dtype, in.dtype, [&](auto to, auto ti) {  // Note [Direct conversions]
        copy_loop<decltype(to), decltype(ti)>(out, in);
    });
}

void CpuBackend::unary(UnaryOp op, const View& out, const View& x, double p, double q) {
    dispatch(out.dtype, [&](auto tag) {
        using T = decltype(tag);
        switch (op) {
#define TG_UNARY(name, expr)                                                                    \
    case UnaryOp::name:                                                                         \
        unary_loop<Kernel<cpu_table::U_##name>::type, T>(out, x, convert<T>(p), convert<T>(q)); \
        break;
#include "backend/kernels.def"
        }
    });
}

void CpuBackend::binary(BinaryOp op, const View& out, const View& a, const View& b, double p,
                        double q) {
    dispatch(out.dtype, [&](auto tag) {
        using T = decltype(tag);
        switch (op) {
#define TG_BINARY(name, expr)                                                       \
    case BinaryOp::name:                                                            \
        binary_loop<Kernel<cpu_table::B_##name>::type, T>(out, a, b, convert<T>(p), \
                                                          convert<T>(q));           \
        break;
#include "backend/kernels.def"
        }
    });
}

// Note [Byte moves]: where only moves elements, so it runs per element size, not per dtype (four
// loops for ten dtypes); the runtime hands it a bool condition.
namespace {
template <class W>
void where_loop(const View& out, const View& cond, const View& a, const View& b) {
    const View* v[4] = {&out, &cond, &a, &b};
    W* o = ptr<W>(out);
    const uint8_t* c = ptr<uint8_t>(cond);
    const W* pa = ptr<W>(a);
    const W* pb = ptr<W>(b);
    parallel_rows<4>(iter_of<4>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        for (int64_t i = 0; i < n; ++i)
            o[off[0] + i * s[0]] =
                c[off[1] + i * s[1]] ? pa[off[2] + i * s[2]] : pb[off[3] + i * s[3]];
    });
}
}  // namespace

void CpuBackend::where(const View& out, const View& cond, const View& a, const View& b) {
    if (cond.dtype != Dtype::Bool)
        throw std::logic_error("tapegrad: where's condition reached the CPU kernel as " +
                               std::string(dtype_name(cond.dtype)));
    dispatch_word(element_size(out.dtype),
                  [&](auto w) { where_loop<decltype(w)>(out, cond, a, b); });
}

}  // namespace tg::backend::cpu
