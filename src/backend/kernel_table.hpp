#pragma once
// The kernels of kernels.def as C++ functors, for the backends written in C++ (CPU, CUDA):
// U_<name>::f(x, p, q) and B_<name>::f(a, b, p, q), templated on the element type, the math
// functions of the table for float, double and int64 (through double), and the row kernels both
// backends run (softmax, arg-max/min). CUDA's copy is
// __device__ and lives in a namespace of its own, so host and device definitions never meet.
#include <math.h>

#include <cstdint>

#ifdef __CUDACC__
#define TG_KERNEL_FN __device__
#define TG_KERNEL_NS cuda_table
#else
#define TG_KERNEL_FN
#define TG_KERNEL_NS cpu_table
#endif

namespace tg::backend::TG_KERNEL_NS {

/// A double as int64 without undefined behaviour: NaN and values beyond int64 give INT64_MIN, as
/// x86's conversion does (Note [Conversions] in backend/convert.hpp).
TG_KERNEL_FN inline int64_t to_int64(double v) {
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? static_cast<int64_t>(v)
                                                                    : INT64_MIN;
}
/// Integer powers exactly, wrapping as the integer type does (LibTorch's): by squaring in
/// uint64; a negative exponent gives 1 / a truncated (1 for 1, ±1 for -1, else 0).
TG_KERNEL_FN inline int64_t int_pow(int64_t a, int64_t b) {
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t r = 1, x = static_cast<uint64_t>(a);
    for (; b > 0; b >>= 1, x *= x)
        if (b & 1)
            r *= x;
    return static_cast<int64_t>(r);
}
/// C's a % b (the sign of a), 0 for b = 0 and b = -1 (INT64_MIN % -1 traps on x86): the ops
/// check for a zero divisor first (Note [Integer division] in kernels.def).
TG_KERNEL_FN inline int64_t int_fmod(int64_t a, int64_t b) {
    return b == 0 || b == -1 ? 0 : a % b;
}
/// atan2 and hypot of integers through double (the ops promote integers to floating point first;
/// these only complete the table).
TG_KERNEL_FN inline int64_t int_atan2(int64_t a, int64_t b) {
    return to_int64(::atan2(double(a), double(b)));
}
TG_KERNEL_FN inline int64_t int_hypot(int64_t a, int64_t b) {
    return to_int64(::hypot(double(a), double(b)));
}
// float calls the C library's fn##f (expf), double fn; int64 goes through double (one-argument
// functions) or int_<fn> (two-argument ones: int_pow, int_fmod).
#define TG_MATH1(fn)                            \
    TG_KERNEL_FN inline float fn(float x) {     \
        return ::fn##f(x);                      \
    }                                           \
    TG_KERNEL_FN inline double fn(double x) {   \
        return ::fn(x);                         \
    }                                           \
    TG_KERNEL_FN inline int64_t fn(int64_t x) { \
        return to_int64(::fn(double(x)));       \
    }
#define TG_MATH2(fn)                                       \
    TG_KERNEL_FN inline float fn(float a, float b) {       \
        return ::fn##f(a, b);                              \
    }                                                      \
    TG_KERNEL_FN inline double fn(double a, double b) {    \
        return ::fn(a, b);                                 \
    }                                                      \
    TG_KERNEL_FN inline int64_t fn(int64_t a, int64_t b) { \
        return int_##fn(a, b);                             \
    }
/// The table's division (Note [Integer division] in kernels.def): plain for floating point;
/// for int64, 0 for b = 0 and INT64_MIN / -1 wraps, so that no kernel traps.
template <class T>
TG_KERNEL_FN inline T tg_div(T a, T b) {
    return a / b;
}
TG_KERNEL_FN inline int64_t tg_div(int64_t a, int64_t b) {
    return b == 0 ? 0 : b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b;
}
#define TG_UNARY(name, expr)                     \
    struct U_##name {                            \
        template <class T>                       \
        TG_KERNEL_FN static T f(T x, T p, T q) { \
            (void)x;                             \
            (void)p;                             \
            (void)q;                             \
            return static_cast<T>(expr);         \
        }                                        \
    };
#define TG_BINARY(name, expr)                         \
    struct B_##name {                                 \
        template <class T>                            \
        TG_KERNEL_FN static T f(T a, T b, T p, T q) { \
            (void)p;                                  \
            (void)q;                                  \
            return static_cast<T>(expr);              \
        }                                             \
    };
#include "backend/kernels.def"

/// One row of a (log-)softmax over cols elements: max-shifted, the sum accumulated in double.
template <class T>
TG_KERNEL_FN void softmax_row(T* y, const T* x, int64_t cols, bool lg) {
    T m = x[0];
    for (int64_t j = 1; j < cols; ++j)
        m = x[j] > m ? x[j] : m;
    double sum = 0;
    for (int64_t j = 0; j < cols; ++j) {
        const T e = exp(T(x[j] - m));
        sum += e;
        if (!lg)
            y[j] = e;
    }
    if (lg) {
        const T lse = m + T(log(sum));
        for (int64_t j = 0; j < cols; ++j)
            y[j] = x[j] - lse;
    } else {
        const T inv = T(1.0 / sum);
        for (int64_t j = 0; j < cols; ++j)
            y[j] *= inv;
    }
}

/// The index of the first largest (smallest) of len elements `stride` apart; the first NaN wins,
/// as in PyTorch (so max(x, dim) can gather its values from these indices).
template <class T>
TG_KERNEL_FN int64_t arg_best(const T* p, int64_t len, int64_t stride, bool is_max) {
    int64_t best = 0;
    T bv = p[0];
    for (int64_t j = 1; j < len && bv == bv; ++j) {
        const T x = p[j * stride];
        if (x != x || (is_max ? x > bv : x < bv))
            bv = x, best = j;
    }
    return best;
}

}  // namespace tg::backend::TG_KERNEL_NS
