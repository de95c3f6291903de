#pragma once
// Element conversions between dtypes (Note [Conversions]), for the backends written in C++ (the
// CPU's copy, CUDA's) and the host code that converts values (factories, fill values, item).
// OpenCL has the same rules in OpenCL C (opencl/source.cpp).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "tapegrad/dtype.hpp"

namespace tg::backend {

// Note [Conversions]: a conversion gives what LibTorch's CPU gives on x86-64, with no undefined
// behaviour on any input (a C++ cast of a float beyond the target's range is undefined; x86's
// cvttss2si/cvttsd2si return the "integer indefinite" value instead, and LibTorch's results show
// it):
//   float -> int64 truncates toward zero; NaN and values outside [-2^63, 2^63) give INT64_MIN.
//   float -> uint8 goes through int64 and keeps the low byte (LibTorch casts to int64 first, so
//     -1.0 gives 255): 1e10 gives 0, 300.5 gives 44, NaN gives 0.
//   float -> int8, int16, int32 go through int32 (NaN and values outside [-2^31, 2^31) give
//     INT32_MIN) and keep the low bytes: 1e10 gives 0 as int8 and int16, INT32_MIN as int32.
//   integer -> narrower integer keeps the low bytes (two's complement wrap: 300 -> 44 as uint8).
//   anything -> bool is "nonzero" (NaN is true); bool -> a number is 0 or 1.
//   -> float16 / bfloat16 converts to float first (int64 and double too) and rounds to nearest
//     even (float16 beyond 65520 is inf); float16 / bfloat16 -> anything converts from float.
// tests/test_dtypes.cpp checks these against values recorded from LibTorch 1.13.
template <class T>
constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <class To, class From>
TG_HOST_DEVICE inline To convert(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_half_v<From>) {
        return convert<To>(float(v));
    } else if constexpr (std::is_same_v<To, bool>) {
        return v != From(0);
    } else if constexpr (is_half_v<To>) {
        return To(float(v));
    } else if constexpr (std::is_floating_point_v<To> || !std::is_floating_point_v<From>) {
        return static_cast<To>(v);  // a float, or an integer that wraps
    } else if constexpr (std::is_same_v<To, int64_t> || std::is_same_v<To, uint8_t>) {
        const double d = double(v);
        const bool fits = d >= -9223372036854775808.0 && d < 9223372036854775808.0;  // not NaN
        return static_cast<To>(fits ? static_cast<int64_t>(d) : INT64_MIN);
    } else {
        const double d = double(v);
        const bool fits = d > -2147483649.0 && d < 2147483648.0;
        return static_cast<To>(fits ? static_cast<int32_t>(d) : INT32_MIN);
    }
}

// Note [Direct conversions]: a backend's copy converts directly only between a dtype and a
// kernel dtype (float32, float64, int64) or bool, either way, and copies any dtype to itself (by
// element size: Note [Byte moves]). A conversion between two other dtypes (uint8 to float16,
// int16 to int8) is two copies through kernel_dtype(from), which give the same values (an
// integer is exact in int64, float16 and bfloat16 convert through float32 anyway):
// runtime::copy_into does that. So the backends hold 60 conversion loops, not 90.
constexpr bool is_direct_dtype(Dtype d) {
    return kernel_dtype(d) == d;  // float32, float64, int64, bool
}
constexpr bool converts_directly(Dtype to, Dtype from) {
    return to == from || is_direct_dtype(to) || is_direct_dtype(from);
}
/// Calls f(To{}, From{}) for a pair that converts directly (to != from); another pair is a bug.
template <class F>
void dispatch_conversion(Dtype to, Dtype from, F&& f) {
    auto direct = [](Dtype d, auto&& g) {
        switch (d) {
            case Dtype::Bool:
                return g(bool{});
            case Dtype::Float32:
                return g(float{});
            case Dtype::Float64:
                return g(double{});
            case Dtype::Int64:
                return g(int64_t{});
            default:
                throw std::logic_error(std::string("tapegrad: ") + dtype_name(d) +
                                       " reached a copy as a direct dtype");
        }
    };
    if (is_direct_dtype(from))
        dispatch_all(to, [&](auto t) { direct(from, [&](auto s) { f(t, s); }); });
    else
        direct(to, [&](auto t) { dispatch_all(from, [&](auto s) { f(t, s); }); });
}
/// The unsigned word of an element size (Note [Byte moves]).
template <size_t Bytes>
using Word = std::conditional_t<
    Bytes == 1, uint8_t,
    std::conditional_t<Bytes == 2, uint16_t, std::conditional_t<Bytes == 4, uint32_t, uint64_t>>>;
template <class F>
void dispatch_word(size_t bytes, F&& f) {
    switch (bytes) {
        case 1:
            return f(Word<1>{});
        case 2:
            return f(Word<2>{});
        case 4:
            return f(Word<4>{});
        default:
            return f(Word<8>{});
    }
}

}  // namespace tg::backend
