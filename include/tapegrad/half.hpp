#pragma once
/// tg::Half (IEEE float16) and tg::BFloat16 (the upper half of a float32): the element types of
/// kFloat16 and kBFloat16 tensors, as LibTorch's at::Half and at::BFloat16. Both convert from
/// float rounding to nearest, ties to even (a float beyond Half's range becomes ±inf, a NaN stays
/// NaN), and to float exactly. A double converts through float first, as in LibTorch.
#include <cstdint>
#include <cstring>
#pragma GCC visibility push(default)

#ifdef __CUDACC__
#define TG_HOST_DEVICE __host__ __device__
#else
#define TG_HOST_DEVICE
#endif

namespace tg {

namespace detail {
TG_HOST_DEVICE inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
TG_HOST_DEVICE inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
/// float -> IEEE half bits, round to nearest even; integer operations only, so that the CPU, CUDA
/// and the OpenCL copy of this function (backend/opencl/source.cpp) give the same bits.
TG_HOST_DEVICE inline uint16_t half_bits_from_float(float f) {
    const uint32_t u = float_bits(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)  // NaN: a quiet NaN
        return uint16_t(sign | 0x7E00u);
    if (a >= 0x477FF000u)  // 65520 and above (inf too) round to inf
        return uint16_t(sign | 0x7C00u);
    if (a >= 0x38800000u) {  // a normal half: rebias the exponent, round the 13 dropped bits
        const uint32_t r = a - 0x38000000u + 0xFFFu + ((a >> 13) & 1u);
        return uint16_t(sign | (r >> 13));
    }
    // a subnormal half (units of 2^-24) or zero: the 24-bit significand shifted right
    const uint32_t e = a >> 23;
    if (e < 102)  // below 2^-25: rounds to zero
        return sign;
    const uint32_t m = (a & 0x7FFFFFu) | 0x800000u, shift = 126 - e;  // shift in [14, 24]
    const uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    return uint16_t(sign | (q + ((rest > half || (rest == half && (q & 1u))) ? 1u : 0u)));
}
TG_HOST_DEVICE inline float float_from_half_bits(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F)
        return bits_float(sign | 0x7F800000u | (m << 13));
    if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float
        const float v = float(m) * 5.9604644775390625e-08f;
        return bits_float(sign | float_bits(v));
    }
    return bits_float(sign | ((e + 112) << 23) | (m << 13));
}
/// float -> bfloat16 bits, round to nearest even; NaN -> 0x7FC0.
TG_HOST_DEVICE inline uint16_t bfloat16_bits_from_float(float f) {
    const uint32_t u = float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return 0x7FC0u;
    return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
TG_HOST_DEVICE inline float float_from_bfloat16_bits(uint16_t b) {
    return bits_float(uint32_t(b) << 16);
}
}  // namespace detail

/// IEEE 754 half precision: 1 sign, 5 exponent, 10 significand bits (largest finite 65504).
struct Half {
    uint16_t x = 0;
    struct from_bits_t {};
    static constexpr from_bits_t from_bits() { return {}; }
    Half() = default;
    constexpr TG_HOST_DEVICE Half(uint16_t bits, from_bits_t) : x(bits) {}
    TG_HOST_DEVICE Half(float f) : x(detail::half_bits_from_float(f)) {}  // NOLINT: implicit
    TG_HOST_DEVICE operator float() const { return detail::float_from_half_bits(x); }  // NOLINT
};
/// bfloat16: float32's sign and 8 exponent bits with 7 significand bits.
struct BFloat16 {
    uint16_t x = 0;
    struct from_bits_t {};
    static constexpr from_bits_t from_bits() { return {}; }
    BFloat16() = default;
    constexpr TG_HOST_DEVICE BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
    TG_HOST_DEVICE BFloat16(float f) : x(detail::bfloat16_bits_from_float(f)) {}           // NOLINT
    TG_HOST_DEVICE operator float() const { return detail::float_from_bfloat16_bits(x); }  // NOLINT
};

}  // namespace tg

#pragma GCC visibility pop
