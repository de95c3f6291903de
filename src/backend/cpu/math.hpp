#pragma once
// The CPU's kernel functors: kernels.def's (kernel_table.hpp), with vectorisable float32 forms
// of the hot transcendental kernels (Note [Vectorisable float math]).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/kernel_table.hpp"

namespace tg::backend::cpu {

// Note [Vectorisable float math]: glibc's expf/tanhf/erff are scalar calls, so a loop over them
// does not vectorise and tanh alone would cost more than the rest of an MLP step. For float32 the
// exp, tanh, sigmoid, exp_sub and GELU kernels use these branch-free forms (exp: range reduction
// to 2^n * e^r with |r| <= ln2/2 and a degree-6 polynomial, about 1 ulp; erf: its Taylor series
// below 0.5 and Abramowitz-Stegun 7.1.26 above, within 2e-7), which the compiler vectorises.
// float64 keeps the libm functions, so gradcheck runs on the exact ones. The CPU's translation
// units are compiled with -fno-trapping-math -fno-math-errno (CMakeLists.txt): without trapping
// math the compiler may turn the kernels' selects into blends and vectorise them, and without errno
// sqrt is one instruction (sqrtps) instead of a checked libm call. tapegrad never reads FP
// exceptions or errno.
inline float bits_to_float(int32_t i) {
    float f;
    std::memcpy(&f, &i, sizeof f);
    return f;
}
inline float fast_exp(float x) {
    // NaN fails `c > -86.9`, so c is a number: converting a NaN n to int would be undefined
    // behaviour. The NaN itself is returned at the end. The scale is 2^(n-1) times 2p, so that
    // n = 128 (x up to ln FLT_MAX = 88.72284) has an exponent, and larger x (inf too) overflow
    // to inf (clamping at 88 gave e^88 = 1.65e38 for every larger x); below -86.9 the result
    // stays at e^-86.9 = 1.8e-38 (the exact values are smaller, subnormal below -87.34).
    const float c = x > -86.9f ? (x < 89.0f ? x : 89.0f) : -86.9f;
    const float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(c / ln2)
    const float r = (c - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const float y = (p + p) * bits_to_float((int32_t(n) + 126) << 23);
    return x == x ? y : x;
}
inline float fast_tanh(float x) {
    const float a = x < 0 ? -x : x;
    const float e = fast_exp(2 * a);
    const float big = 1.0f - 2.0f / (e + 1.0f);
    const float x2 = x * x;  // tanh x = x - x³/3 + 2x⁵/15 - 17x⁷/315 near 0
    const float small = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
    return a < 0.125f ? small : (x < 0 ? -big : big);
}

inline float fast_erf(float x) {
    const float a = x < 0 ? -x : x, x2 = x * x;
    // |x| < 0.5: 2/√π (x - x³/3 + x⁵/10 - x⁷/42 + x⁹/216 - x¹¹/1320)
    const float small =
        1.12837916709551257f * x *
        (1.0f +
         x2 * (-1.0f / 3 +
               x2 * (1.0f / 10 + x2 * (-1.0f / 42 + x2 * (1.0f / 216 + x2 * (-1.0f / 1320))))));
    const float t = 1.0f / (1.0f + 0.3275911f * a);
    const float poly =
        t * (0.254829592f +
             t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    const float big = 1.0f - poly * fast_exp(-x2);
    return a < 0.5f ? small : (x < 0 ? -big : big);
}
inline float fast_gelu(float x) {
    return x * (fast_erf(x * 0.70710678118654752440f) + 1) * 0.5f;
}

/// The functor the CPU runs for table kernel K: K itself, or a fast float32 form of it.
template <class K>
struct Kernel {
    using type = K;
};
/// A table kernel K with a fast float32 form Fast: Fast(x) for a unary kernel, Fast(a, b) for a
/// binary one (the scalar parameters p, q are unused by the fast forms).
template <class K, auto Fast>
struct FastFloat {
    template <class T>
    static T f(T x, T p, T q) {
        if constexpr (std::is_same_v<T, float>)
            return Fast(x);
        else
            return K::f(x, p, q);
    }
    template <class T>
    static T f(T a, T b, T p, T q) {
        if constexpr (std::is_same_v<T, float>)
            return Fast(a, b);
        else
            return K::f(a, b, p, q);
    }
};
inline float fast_sigmoid(float x) {
    return 1.0f / (1.0f + fast_exp(-x));
}
template <>
struct Kernel<cpu_table::U_exp> {
    using type = FastFloat<cpu_table::U_exp, fast_exp>;
};
template <>
struct Kernel<cpu_table::U_tanh> {
    using type = FastFloat<cpu_table::U_tanh, fast_tanh>;
};
template <>
struct Kernel<cpu_table::U_sigmoid> {
    using type = FastFloat<cpu_table::U_sigmoid, fast_sigmoid>;
};

template <>
struct Kernel<cpu_table::U_gelu> {
    using type = FastFloat<cpu_table::U_gelu, fast_gelu>;
};
inline float fast_gelu_backward(float dy, float x) {
    return dy * ((fast_erf(x * 0.70710678118654752440f) + 1) * 0.5f +
                 x * fast_exp(-x * x * 0.5f) * 0.39894228040143267794f);
}
inline float fast_exp_sub(float a, float b) {  // e^(a-b), 0 for masked scores
    const float d = a - b;
    return d < -87.0f ? 0.0f : fast_exp(d);
}
template <>
struct Kernel<cpu_table::B_gelu_backward> {
    using type = FastFloat<cpu_table::B_gelu_backward, fast_gelu_backward>;
};
template <>
struct Kernel<cpu_table::B_exp_sub> {
    using type = FastFloat<cpu_table::B_exp_sub, fast_exp_sub>;
};

// Fast float32 forms of the activations of src/ops/activation_more.cpp (Note [Vectorisable float
// math]); p and q are the kernels' scalar parameters.
/// A table kernel K whose fast float32 form Fast also takes the parameters p, q.
template <class K, auto Fast>
struct FastFloatPQ {
    template <class T>
    static T f(T x, T p, T q) {
        if constexpr (std::is_same_v<T, float>)
            return Fast(x, p, q);
        else
            return K::f(x, p, q);
    }
    template <class T>
    static T f(T a, T b, T p, T q) {
        if constexpr (std::is_same_v<T, float>)
            return Fast(a, b, p, q);
        else
            return K::f(a, b, p, q);
    }
};
/// log(1 + e) for e in [0, 1]: 2·atanh(z), z = e/(2 + e) <= 1/3, by its series to z¹⁵ (the next
/// term is below 2e-8 relative).
inline float fast_log1p_unit(float e) {
    const float z = e / (2.0f + e), z2 = z * z;
    const float s =
        1.0f + z2 * (1.0f / 3 +
                     z2 * (1.0f / 5 +
                           z2 * (1.0f / 7 +
                                 z2 * (1.0f / 9 +
                                       z2 * (1.0f / 11 + z2 * (1.0f / 13 + z2 * (1.0f / 15)))))));
    return 2.0f * z * s;
}
/// exp(x) - 1: its Taylor series for |x| < 0.25 (where exp(x) - 1 would lose digits), else
/// fast_exp(x) - 1.
inline float fast_expm1(float x) {
    const float small =
        x * (1.0f +
             x * (0.5f + x * (1.0f / 6 + x * (1.0f / 24 + x * (1.0f / 120 + x * (1.0f / 720))))));
    const float a = x < 0 ? -x : x;
    return a < 0.25f ? small : fast_exp(x) - 1.0f;
}
inline float fast_silu(float x, float, float) {
    return x * fast_sigmoid(x);
}
inline float fast_silu_backward(float dy, float x, float, float) {
    const float s = fast_sigmoid(x);
    return dy * s * (1.0f + x * (1.0f - s));
}
inline float fast_elu(float x, float alpha, float q) {
    return x > 0 ? x : alpha * fast_expm1(x * q);
}
inline float fast_elu_backward(float dy, float x, float alpha, float q) {
    return x > 0 ? dy : dy * alpha * q * fast_exp(x * q);
}
/// tanh(softplus(x)) = n / (n + 2) with n = eˣ(eˣ + 2); 1 above x = 20, as in float it is.
inline float tanh_softplus(float x) {
    const float e = fast_exp(x < 20.0f ? x : 20.0f), n = e * (e + 2.0f);
    return x < 20.0f ? n / (n + 2.0f) : 1.0f;
}
inline float fast_mish(float x, float, float) {
    return x * tanh_softplus(x);
}
inline float fast_mish_backward(float dy, float x, float, float) {
    const float t = tanh_softplus(x);
    return dy * (t + x * fast_sigmoid(x) * (1.0f - t * t));
}
inline float fast_log_sigmoid(float x, float, float) {
    const float a = x < 0 ? -x : x;
    return (x < 0 ? x : 0.0f) - fast_log1p_unit(fast_exp(-a));
}
inline float fast_log_sigmoid_backward(float dy, float x, float, float) {
    return dy * fast_sigmoid(-x);
}
#define TG_FAST_PQ(kernel, fast)                           \
    template <>                                            \
    struct Kernel<cpu_table::kernel> {                     \
        using type = FastFloatPQ<cpu_table::kernel, fast>; \
    }
TG_FAST_PQ(U_silu, fast_silu);
TG_FAST_PQ(B_silu_backward, fast_silu_backward);
TG_FAST_PQ(U_elu, fast_elu);
TG_FAST_PQ(B_elu_backward, fast_elu_backward);
TG_FAST_PQ(U_mish, fast_mish);
TG_FAST_PQ(B_mish_backward, fast_mish_backward);
TG_FAST_PQ(U_log_sigmoid, fast_log_sigmoid);
TG_FAST_PQ(B_log_sigmoid_backward, fast_log_sigmoid_backward);
#undef TG_FAST_PQ

}  // namespace tg::backend::cpu
