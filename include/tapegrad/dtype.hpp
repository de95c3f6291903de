#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <utility>
#pragma GCC visibility push(default)

namespace tg {

/// Element types. int64 holds labels and indices, bool (one byte, 0 or 1) the results of
/// comparisons and masks; neither is differentiable.
enum class Dtype : uint8_t { Float32, Float64, Int64, Bool };
constexpr Dtype kFloat32 = Dtype::Float32, kFloat = Dtype::Float32;
constexpr Dtype kFloat64 = Dtype::Float64, kDouble = Dtype::Float64;
constexpr Dtype kInt64 = Dtype::Int64, kLong = Dtype::Int64;
constexpr Dtype kBool = Dtype::Bool;

constexpr size_t element_size(Dtype d) {
    return d == Dtype::Float32 ? 4 : d == Dtype::Bool ? 1 : 8;
}
constexpr bool is_floating(Dtype d) {
    return d == Dtype::Float32 || d == Dtype::Float64;
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
template <>
constexpr Dtype dtype_of<bool>() {
    return Dtype::Bool;
}

/// Calls f with a value of the C++ type of d, for the number types: dispatch(d, [&](auto tag) {
/// using T = decltype(tag); }). Arithmetic never sees bool (the ops convert or refuse it first),
/// so bool is a bug here: std::logic_error.
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
            throw std::logic_error("tapegrad: a bool tensor reached a number kernel");
    }
}
/// dispatch for every dtype, bool included (copies, where, byte moves).
template <class F>
decltype(auto) dispatch_all(Dtype d, F&& f) {
    if (d == Dtype::Bool)
        return f(bool{});
    return dispatch(d, std::forward<F>(f));
}

}  // namespace tg

#pragma GCC visibility pop
