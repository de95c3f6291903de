#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "tapegrad/half.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// Element types, LibTorch's (c10::ScalarType) without the complex and quantized ones. Floating:
/// float32, float64, float16 and bfloat16; integral: uint8, int8, int16, int32, int64 (labels
/// and indices); bool (one byte, 0 or 1) holds comparisons and masks. Only floating tensors are
/// differentiable. Note [Kernel dtypes]: the backends compute in float32, float64 and int64
/// only; the other dtypes are storage that the runtime converts to kernel_dtype() around each
/// computation (src/runtime/dispatch.cpp).
enum class Dtype : uint8_t {
    Float32,
    Float64,
    Int64,
    Bool,
    UInt8,
    Int8,
    Int16,
    Int32,
    Float16,
    BFloat16
};
/// LibTorch's constants, every spelling: kFloat32 = kFloat = kF32, kUInt8 = kByte = kU8, ...
constexpr Dtype kFloat32 = Dtype::Float32, kFloat = Dtype::Float32, kF32 = Dtype::Float32;
constexpr Dtype kFloat64 = Dtype::Float64, kDouble = Dtype::Float64, kF64 = Dtype::Float64;
constexpr Dtype kFloat16 = Dtype::Float16, kHalf = Dtype::Float16, kF16 = Dtype::Float16;
constexpr Dtype kBFloat16 = Dtype::BFloat16;
constexpr Dtype kInt64 = Dtype::Int64, kLong = Dtype::Int64, kI64 = Dtype::Int64;
constexpr Dtype kInt32 = Dtype::Int32, kInt = Dtype::Int32, kI32 = Dtype::Int32;
constexpr Dtype kInt16 = Dtype::Int16, kShort = Dtype::Int16, kI16 = Dtype::Int16;
constexpr Dtype kInt8 = Dtype::Int8, kChar = Dtype::Int8, kI8 = Dtype::Int8;
constexpr Dtype kUInt8 = Dtype::UInt8, kByte = Dtype::UInt8, kU8 = Dtype::UInt8;
constexpr Dtype kBool = Dtype::Bool;
constexpr int kNumDtypes = 10;

constexpr size_t element_size(Dtype d) {
    switch (d) {
        case Dtype::Float64:
        case Dtype::Int64:
            return 8;
        case Dtype::Float32:
        case Dtype::Int32:
            return 4;
        case Dtype::Int16:
        case Dtype::Float16:
        case Dtype::BFloat16:
            return 2;
        default:
            return 1;
    }
}
constexpr bool is_floating(Dtype d) {
    return d == Dtype::Float32 || d == Dtype::Float64 || d == Dtype::Float16 ||
           d == Dtype::BFloat16;
}
/// LibTorch's isIntegralType(d, include_bool).
constexpr bool is_integral(Dtype d, bool include_bool = false) {
    return !is_floating(d) && (include_bool || d != Dtype::Bool);
}
/// float16 and bfloat16 (LibTorch's isReducedFloatingType). Note [Reduced floats]: an op on them
/// computes in float32 and rounds its result once, as LibTorch's CPU kernels do: elementwise ops
/// through kernel_dtype(), and the composed ones (mean, var, norm, logsumexp, softmax) by
/// converting their input to float32 and their result back.
constexpr bool is_reduced_floating(Dtype d) {
    return d == Dtype::Float16 || d == Dtype::BFloat16;
}
/// Note [Kernel dtypes]: the dtype the backends compute d in: int64 for the integral dtypes,
/// float32 for float16 and bfloat16 (computed in float and rounded per op, as LibTorch's CPU
/// does), d itself for float32, float64 and bool.
constexpr Dtype kernel_dtype(Dtype d) {
    return d == Dtype::Float16 || d == Dtype::BFloat16 ? Dtype::Float32
           : is_integral(d)                            ? Dtype::Int64
                                                       : d;
}
/// LibTorch's promote_types: the smallest dtype both convert to without losing their kind
/// (uint8 and int8 meet at int16; float16 and bfloat16 at float32; any float beats any integer).
constexpr Dtype promote_types(Dtype a, Dtype b) {
    if (a == b || b == Dtype::Bool)
        return a;
    if (a == Dtype::Bool)
        return b;
    if (is_floating(a) != is_floating(b))
        return is_floating(a) ? a : b;
    if (is_floating(a)) {
        if (a == Dtype::Float64 || b == Dtype::Float64)
            return Dtype::Float64;
        return Dtype::Float32;  // float32 with anything, or float16 with bfloat16
    }
    if (a == Dtype::UInt8 || b == Dtype::UInt8) {  // with a signed integer
        const Dtype s = a == Dtype::UInt8 ? b : a;
        return s == Dtype::Int8 ? Dtype::Int16 : s;
    }
    return element_size(a) >= element_size(b) ? a : b;
}
/// "float32", "uint8", "bfloat16", ...
const char* dtype_name(Dtype d);
inline std::ostream& operator<<(std::ostream& os, Dtype d) {
    return os << dtype_name(d);
}
/// LibTorch's toString(ScalarType): "Float", "Byte", "Half", "BFloat16", ... (its type names).
const char* dtype_torch_name(Dtype d);

template <class T>
struct DtypeOf;
#define TG_DTYPE_OF(T, D)                        \
    template <>                                  \
    struct DtypeOf<T> {                          \
        static constexpr Dtype value = Dtype::D; \
    };
TG_DTYPE_OF(float, Float32)
TG_DTYPE_OF(double, Float64)
TG_DTYPE_OF(int64_t, Int64)
TG_DTYPE_OF(bool, Bool)
TG_DTYPE_OF(uint8_t, UInt8)
TG_DTYPE_OF(int8_t, Int8)
TG_DTYPE_OF(int16_t, Int16)
TG_DTYPE_OF(int32_t, Int32)
TG_DTYPE_OF(Half, Float16)
TG_DTYPE_OF(BFloat16, BFloat16)
#undef TG_DTYPE_OF
/// The dtype whose elements are T (float, double, int64_t, bool, uint8_t, int8_t, int16_t,
/// int32_t, Half, BFloat16).
template <class T>
constexpr Dtype dtype_of() {
    return DtypeOf<T>::value;
}

/// Calls f with a value of the C++ type of d, for the kernel dtypes (Note [Kernel dtypes]):
/// dispatch(d, [&](auto tag) { using T = decltype(tag); }). The runtime converts every other
/// dtype first, so another one here is a bug: std::logic_error.
template <class F>
decltype(auto) dispatch(Dtype d, F&& f) {
    switch (d) {
        case Dtype::Float32:
            return f(float{});
        case Dtype::Float64:
            return f(double{});
        case Dtype::Int64:
            return f(int64_t{});
        default:
            throw std::logic_error(std::string("tapegrad: a ") + dtype_name(d) +
                                   " tensor reached a number kernel");
    }
}
/// dispatch for every dtype (copies, conversions, byte moves).
template <class F>
decltype(auto) dispatch_all(Dtype d, F&& f) {
    switch (d) {
        case Dtype::Bool:
            return f(bool{});
        case Dtype::UInt8:
            return f(uint8_t{});
        case Dtype::Int8:
            return f(int8_t{});
        case Dtype::Int16:
            return f(int16_t{});
        case Dtype::Int32:
            return f(int32_t{});
        case Dtype::Float16:
            return f(Half{});
        case Dtype::BFloat16:
            return f(BFloat16{});
        default:
            return dispatch(d, std::forward<F>(f));
    }
}

}  // namespace tg

#pragma GCC visibility pop
