// The uniform, integer, permutation and Bernoulli samplers (core/distributions.hpp); normal is
// in normal_fill.cpp. Compiled with -ffp-contract=off: the one fused multiply-add LibTorch's
// kernels have (uniform's) is written out with std::fma, and nothing else may be fused.
#include "core/distributions.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "core/simd.hpp"
#include "tapegrad/error.hpp"

namespace tg::detail {

namespace {

constexpr int64_t kChunk = 2048;  // elements drawn per engine fill

/// The uniform in [0, 1) of LibTorch's uniform_real_distribution<float>: the low 24 bits of one
/// draw, scaled (exact).
inline float unit_f32(uint32_t r) {
    return float(r & 0xFFFFFFu) * 0x1p-24f;
}
/// The low 53 bits of random64() from its two 32-bit draws (hi drawn first).
inline uint64_t bits53(uint32_t hi, uint32_t lo) {
    return (uint64_t(hi & 0x1FFFFFu) << 32) | lo;
}

/// out[k] = one when element k of the chunk keeps, else zero. Its uniform is b·2⁻⁵³ for its
/// 53-bit draw b, and b·2⁻⁵³ < p exactly when b < t = ceil(p·2⁵³): an integer comparison, done
/// on the two 32-bit halves so that it vectorises.
template <class T>
void keep_chunk(T* out, const uint32_t* r, int64_t n, uint32_t t_hi, uint32_t t_lo, T one) {
    for (int64_t k = 0; k < n; ++k) {
        const uint32_t hi = r[2 * k] & 0x1FFFFFu, lo = r[2 * k + 1];
        out[k] = (hi < t_hi || (hi == t_hi && lo < t_lo)) ? one : T(0);
    }
}
/// keep_chunk for float32, dropout's hot loop, also compiled for AVX2 and AVX-512 (Note [Wider
/// SIMD] in core/simd.hpp).
TG_SIMD_CLONES void keep_chunk_f32(float* out, const uint32_t* r, int64_t n, uint32_t t_hi,
                                   uint32_t t_lo, float one) {
    keep_chunk(out, r, n, t_hi, t_lo, one);
}

/// keep_chunk as 0/1 bytes, for dropout's masks kept as bits; compiled as keep_chunk_f32 is.
TG_SIMD_CLONES void keep_chunk_u8(uint8_t* out, const uint32_t* r, int64_t n, uint32_t t_hi,
                                  uint32_t t_lo) {
    keep_chunk<uint8_t>(out, r, n, t_hi, t_lo, 1);
}

void check_p(double p, const char* op) {
    if (!(p >= 0 && p <= 1))
        throw value_error(std::string(op) + ": p " + std::to_string(p) + " is not in [0, 1]");
}

/// out[k] = x[k] · (one or 0, as keep_chunk), compiled as keep_chunk_f32 is.
template <class T>
void keep_mul_chunk(T* out, const T* x, const uint32_t* r, int64_t n, uint32_t t_hi, uint32_t t_lo,
                    T one) {
    for (int64_t k = 0; k < n; ++k) {
        const uint32_t hi = r[2 * k] & 0x1FFFFFu, lo = r[2 * k + 1];
        out[k] = x[k] * ((hi < t_hi || (hi == t_hi && lo < t_lo)) ? one : T(0));
    }
}
TG_SIMD_CLONES void keep_mul_chunk_f32(float* out, const float* x, const uint32_t* r, int64_t n,
                                       uint32_t t_hi, uint32_t t_lo, float one) {
    keep_mul_chunk(out, x, r, n, t_hi, t_lo, one);
}

}  // namespace

void uniform(void* dst, Dtype d, int64_t n, double from, double to, Engine& e) {
    uint32_t r[2 * kChunk];
    if (d == Dtype::Float32) {  // LibTorch casts from and to to the tensor's type first
        const float lo = float(from), width = float(to) - lo;
        float* o = static_cast<float*>(dst);
        for (int64_t i = 0; i < n; i += kChunk) {
            const int64_t c = std::min(kChunk, n - i);
            e.mt.fill(r, size_t(c));
            for (int64_t k = 0; k < c; ++k)
                o[i + k] = std::fma(unit_f32(r[k]), width, lo);
        }
        return;
    }
    const double width = to - from;
    double* o = static_cast<double*>(dst);
    for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t c = std::min(kChunk, n - i);
        e.mt.fill(r, size_t(2 * c));
        for (int64_t k = 0; k < c; ++k)
            o[i + k] = std::fma(double(bits53(r[2 * k], r[2 * k + 1])) * 0x1p-53, width, from);
    }
}

void exponential(void* dst, Dtype d, int64_t n, double lambd, Engine& e) {
    uint32_t r[2 * kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t c = std::min(kChunk, n - i);
        e.mt.fill(r, size_t(2 * c));
        for (int64_t k = 0; k < c; ++k) {
            const double u = double(bits53(r[2 * k], r[2 * k + 1])) * 0x1p-53;
            const double v = -1.0 / lambd * std::log(1 - u);
            if (d == Dtype::Float32)
                static_cast<float*>(dst)[i + k] = float(v);
            else
                static_cast<double*>(dst)[i + k] = v;
        }
    }
}

void random_from_to(void* dst, Dtype d, int64_t n, uint64_t range, int64_t base, Engine& e) {
    const bool wide = range >= (uint64_t(1) << 32) && d != Dtype::Bool;
    dispatch_all(d, [&](auto tag) {
        using T = decltype(tag);
        T* o = static_cast<T*>(dst);
        for (int64_t i = 0; i < n; ++i) {
            const uint64_t v = wide ? e.random64() : uint64_t(e.random());
            o[i] = static_cast<T>(static_cast<int64_t>(v % range + uint64_t(base)));
        }
    });
}

void randperm(int64_t* dst, int64_t n, Engine& e) {
    for (int64_t i = 0; i < n; ++i)
        dst[i] = i;
    for (int64_t i = 0; i + 1 < n; ++i) {
        const int64_t z = int64_t(e.random()) % (n - i);
        std::swap(dst[i], dst[i + z]);
    }
}

void bernoulli(void* dst, Dtype d, int64_t n, double p, double one, Engine& e) {
    const uint64_t t = uint64_t(std::ceil(p * 0x1p53));  // exact: p in [0, 1]
    const uint32_t t_hi = uint32_t(t >> 32), t_lo = uint32_t(t);
    uint32_t r[2 * kChunk];
    dispatch_all(d, [&](auto tag) {
        using T = decltype(tag);
        T* o = static_cast<T*>(dst);
        for (int64_t i = 0; i < n; i += kChunk) {
            const int64_t c = std::min(kChunk, n - i);
            e.mt.fill(r, size_t(2 * c));
            if constexpr (std::is_same_v<T, float>)
                keep_chunk_f32(o + i, r, c, t_hi, t_lo, float(one));
            else
                keep_chunk<T>(o + i, r, c, t_hi, t_lo, static_cast<T>(one));
        }
    });
}

void bernoulli_mul(void* out, const void* x, Dtype d, int64_t n, double p, double one, Engine& e) {
    const uint64_t t = uint64_t(std::ceil(p * 0x1p53));
    const uint32_t t_hi = uint32_t(t >> 32), t_lo = uint32_t(t);
    uint32_t r[2 * kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t c = std::min(kChunk, n - i);
        e.mt.fill(r, size_t(2 * c));
        if (d == Dtype::Float32)
            keep_mul_chunk_f32(static_cast<float*>(out) + i, static_cast<const float*>(x) + i, r, c,
                               t_hi, t_lo, float(one));
        else
            keep_mul_chunk(static_cast<double*>(out) + i, static_cast<const double*>(x) + i, r, c,
                           t_hi, t_lo, one);
    }
}

void bernoulli(void* dst, Dtype d, const void* p, Dtype pd, int64_t n, Engine& e, const char* op) {
    const float* pf = static_cast<const float*>(p);
    const double* pg = static_cast<const double*>(p);
    for (int64_t i = 0; i < n; ++i)
        check_p(pd == Dtype::Float32 ? double(pf[i]) : pg[i], op);
    dispatch_all(d, [&](auto tag) {
        using T = decltype(tag);
        T* o = static_cast<T*>(dst);
        for (int64_t i = 0; i < n; ++i) {
            bool keep;
            if (pd == Dtype::Float32) {
                keep = unit_f32(e.random()) < pf[i];
            } else {
                const uint32_t hi = e.random(), lo = e.random();
                keep = double(bits53(hi, lo)) * 0x1p-53 < pg[i];
            }
            o[i] = static_cast<T>(keep);
        }
    });
}

void bernoulli_bits(uint64_t* out, int64_t n, double p, Engine& e) {
    const uint64_t t = uint64_t(std::ceil(p * 0x1p53));
    const uint32_t t_hi = uint32_t(t >> 32), t_lo = uint32_t(t);
    uint32_t r[2 * kChunk];
    uint8_t keep[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {  // kChunk is a multiple of 64
        const int64_t c = std::min(kChunk, n - i);
        e.mt.fill(r, size_t(2 * c));
        keep_chunk_u8(keep, r, c, t_hi, t_lo);
        std::fill(keep + c, keep + (c + 63) / 64 * 64, uint8_t(0));
        // eight 0/1 bytes to eight bits, byte k to bit k: the product puts byte k's bit at bit
        // 56 + k (each byte's terms land on distinct bits, so nothing carries)
        static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "bytes read as a word");
        for (int64_t w = 0; w < (c + 63) / 64; ++w) {
            uint64_t word = 0;
            for (int b = 0; b < 8; ++b) {
                uint64_t v;
                std::memcpy(&v, keep + w * 64 + b * 8, 8);
                word |= ((v * 0x0102040810204080ull) >> 56) << (8 * b);
            }
            out[i / 64 + w] = word;
        }
    }
}

}  // namespace tg::detail
