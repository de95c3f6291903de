#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#pragma GCC visibility push(default)

namespace tg {

/// Element types. int64 holds labels and indices and is never differentiable.
enum class Dtype : uint8_t { Float32, Float64, Int64 };
constexpr Dtype kFloat32 = Dtype::Float32, kFloat = Dtype::Float32;
constexpr Dtype kFloat64 = Dtype::Float64, kDouble = Dtype::Float64;
constexpr Dtype kInt64 = Dtype::Int64, kLong = Dtype::Int64;

constexpr size_t element_size(Dtype d) {
    return d == Dtype::Float32 ? 4 : 8;
}
constexpr bool is_floating(Dtype d) {
    return d != Dtype::Int64;
}
const char* dtype_name(Dtype d);
inline std::ostream& operator<<(std::ostream& os, Dtype d) {
    return os << dtype_name(d);
}

template <class T>
constexpr Dtype dtype_of();
template <>
constexpr Dtype dtype_of<float>() {
    return Dtype::Float32;
}
template <>
constexpr Dtype dtype_of<double>() {
    return Dtype::Float64;
}
template <>
constexpr Dtype dtype_of<int64_t>() {
    return Dtype::Int64;
}

/// Calls f with a value of the C++ type of d: dispatch(d, [&](auto tag) { using T = decltype(tag);
/// });
template <class F>
decltype(auto) dispatch(Dtype d, F&& f) {
    switch (d) {
        case Dtype::Float32:
            return f(float{});
        case Dtype::Float64:
            return f(double{});
        default:
            return f(int64_t{});
    }
}

}  // namespace tg

#pragma GCC visibility pop
