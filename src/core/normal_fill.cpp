// normal_ (core/distributions.hpp), as LibTorch 1.13's CPU kernel draws it.
//
// Note [LibTorch's float32 normal]: LibTorch fills a contiguous tensor of >= 16 elements with n
// uniforms, then turns each 16 of them into normals with Box-Muller: u1 = 1 - x[j] and
// u2 = x[j + 8] give x[j] = r·cos θ and x[j + 8] = r·sin θ (r = sqrt(-2 log u1), θ = 2π u2),
// scaled and shifted with one FMA; when 16 does not divide n the last 16 are drawn again and
// redone. For float64 that is libm's log, sin and cos in double. For float32, LibTorch's AVX2
// kernel (the one it runs on any x86-64 CPU with AVX2 and FMA) computes in float with Cephes'
// single-precision logf and sincosf (Stephen Moshier's range reductions and polynomials, which
// LibTorch takes from avx_mathfun.h), every multiply-add of them fused by the compiler. The
// float32 functions below are the same algorithms with FMAs where that build has them: they
// give the bits of LibTorch's code (avx_mathfun.h compiled as Debian compiles it) for every one
// of the 2²⁴ inputs a 24-bit uniform can make, and randn of >= 16 float32 elements is LibTorch's
// bit for bit (tests/test_random_libtorch.cpp; 4M values checked against LibTorch once). (On a CPU
// without AVX2 LibTorch itself falls back to libm in float, and gives other last bits than it does
// on this one; tapegrad always gives the AVX2 kernel's.) Smaller or non-contiguous tensors are
// filled one element at a time from normal_distribution<double>, whose Box-Muller pair keeps its
// second value in the generator. Compiled with -ffp-contract=off: exactly the FMAs written here.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/distributions.hpp"

namespace tg::detail {

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

inline uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

/// Cephes' logf for x in (0, 1] (the argument a uniform's 1 - u1 can be): x = m·2^e with m in
/// [√½, √2), log x = e·ln 2 + log m, log m by a degree-9 polynomial in m - 1; ln 2 in two parts.
float log_f32(float x) {
    const uint32_t b = bits_of(x);
    float e = float(int32_t(b >> 23) - 127) + 1.0f;
    float m = float_of((b & 0x807fffffu) | 0x3f000000u);  // in [0.5, 1)
    if (m < 0.707106781186547524f) {
        e -= 1.0f;
        m = m + (m - 1.0f);
    } else {
        m = m - 1.0f;
    }
    const float z = m * m;
    float y = 7.0376836292e-2f;
    y = std::fma(y, m, -1.1514610310e-1f);
    y = std::fma(y, m, 1.1676998740e-1f);
    y = std::fma(y, m, -1.2420140846e-1f);
    y = std::fma(y, m, 1.4249322787e-1f);
    y = std::fma(y, m, -1.6668057665e-1f);
    y = std::fma(y, m, 2.0000714765e-1f);
    y = std::fma(y, m, -2.4999993993e-1f);
    y = std::fma(y, m, 3.3333331174e-1f);
    y = std::fma(y * m, z, e * -2.12194440e-4f);
    y = std::fma(-z, 0.5f, y);
    return std::fma(e, 0.693359375f, m + y);
}

/// Cephes' sincosf for t >= 0 (θ = 2π u2): t reduced by the nearest even multiple j of π/4 (π/4
/// in three parts), then sine and cosine polynomials on [-π/4, π/4], swapped and signed by j.
void sincos_f32(float t, float* s, float* c) {
    int32_t j = int32_t(t * 1.27323954473516f);  // 4/π
    j = (j + 1) & ~1;
    const float y = float(j);
    float x = std::fma(y, -0.78515625f, t);
    x = std::fma(y, -2.4187564849853515625e-4f, x);
    x = std::fma(y, -3.77489497744594108e-8f, x);
    const float z = x * x;
    float cp = 2.443315711809948e-5f;
    cp = std::fma(cp, z, -1.388731625493765e-3f);
    cp = std::fma(cp, z, 4.166664568298827e-2f);
    cp = std::fma(cp * z, z, -(z * 0.5f)) + 1.0f;
    float sp = -1.9515295891e-4f;
    sp = std::fma(sp, z, 8.3321608736e-3f);
    sp = std::fma(sp, z, -1.6666654611e-1f);
    sp = std::fma(sp * z, x, x);
    const bool sine_poly = (j & 2) == 0;
    float sv = sine_poly ? sp : cp, cv = sine_poly ? cp : sp;
    if (j & 4)
        sv = -sv;
    if (((j - 2) & 4) == 0)
        cv = -cv;
    *s = sv;
    *c = cv;
}

void box_muller_16(float* d, float mean, float std) {
    for (int j = 0; j < 8; ++j) {
        const float r = std::sqrt(-2.0f * log_f32(1.0f - d[j]));
        float s, c;
        sincos_f32(float(kTwoPi) * d[j + 8], &s, &c);
        d[j] = std::fma(r * c, std, mean);
        d[j + 8] = std::fma(r * s, std, mean);
    }
}

void box_muller_16(double* d, double mean, double std) {
    for (int j = 0; j < 8; ++j) {
        const double r = std::sqrt(-2.0 * std::log(1.0 - d[j]));
        const double theta = kTwoPi * d[j + 8];
        d[j] = std::fma(r * std::cos(theta), std, mean);
        d[j + 8] = std::fma(r * std::sin(theta), std, mean);
    }
}

/// LibTorch's normal_fill: n >= 16 uniforms in [0, 1), Box-Muller on each 16, the last 16 drawn
/// again and redone when 16 does not divide n.
template <class T>
void fill(T* d, int64_t n, T mean, T std, Engine& e) {
    const Dtype dt = dtype_of<T>();
    uniform(d, dt, n, 0, 1, e);
    for (int64_t i = 0; i + 16 <= n; i += 16)
        box_muller_16(d + i, mean, std);
    if (n % 16 != 0) {
        T* last = d + n - 16;
        uniform(last, dt, 16, 0, 1, e);
        box_muller_16(last, mean, std);
    }
}

}  // namespace

double normal_one(double mean, double std, Engine& e) {
    if (e.next_double_normal) {
        const double r = *e.next_double_normal;
        e.next_double_normal.reset();
        return std::fma(r, std, mean);
    }
    double u[2];
    uniform(u, Dtype::Float64, 2, 0, 1, e);
    const double r = std::sqrt(-2.0 * std::log(1.0 - u[1]));
    const double theta = kTwoPi * u[0];
    e.next_double_normal = r * std::sin(theta);
    return std::fma(r * std::cos(theta), std, mean);
}

void normal(void* dst, Dtype d, int64_t n, double mean, double std, bool contiguous, Engine& e) {
    if (n >= 16 && contiguous) {
        if (d == Dtype::Float32)
            return fill(static_cast<float*>(dst), n, float(mean), float(std), e);
        return fill(static_cast<double*>(dst), n, mean, std, e);
    }
    if (d == Dtype::Float32) {
        float* o = static_cast<float*>(dst);
        for (int64_t i = 0; i < n; ++i)
            o[i] = float(normal_one(mean, std, e));
        return;
    }
    double* o = static_cast<double*>(dst);
    for (int64_t i = 0; i < n; ++i)
        o[i] = normal_one(mean, std, e);
}

}  // namespace tg::detail
