#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tapegrad/dtype.hpp"
#include "tapegrad/small_vector.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// Sizes or strides: vector-like (converts to and from std::vector<int64_t>), with up to 6
/// dims stored inline.
using Shape = SmallVector<int64_t, 6>;

/// "[2,3]": how shapes appear in every error message.
std::string shape_str(const Shape& s);
inline std::ostream& operator<<(std::ostream& os, const Shape& s) {
    return os << shape_str(s);
}

// Size arithmetic is checked (Note [Checked sizes] in src/core/shape.cpp): every product or sum
// of sizes, strides and byte counts goes through these and throws shape_error naming the op and
// the shape instead of wrapping.

/// Throws shape_error "<op>: <what> overflows int64 for shape <s>".
[[noreturn]] void throw_size_overflow(const char* op, const Shape& s, const char* what = "size");
/// a * b for sizes, strides and byte counts; throws as throw_size_overflow on overflow.
inline int64_t checked_mul(int64_t a, int64_t b, const char* op, const Shape& s) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        throw_size_overflow(op, s, "size product");
    return r;
}
/// a + b for sizes and offsets; throws as throw_size_overflow on overflow.
inline int64_t checked_add(int64_t a, int64_t b, const char* op, const Shape& s) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        throw_size_overflow(op, s, "size sum");
    return r;
}
/// The product of sizes[0, n) (a backend's dims), checked as checked_mul.
inline int64_t checked_prod(const int64_t* sizes, int n, const char* op) {
    int64_t p = 1;
    for (int d = 0; d < n; ++d)
        if (__builtin_mul_overflow(p, sizes[d], &p))
            throw_size_overflow(op, Shape(sizes, sizes + n), "size product");
    return p;
}
/// The number of elements of s. Throws shape_error naming op and s when a size is negative or
/// when the sizes, each taken as max(size, 1), multiply past int64 (so that contiguous_strides
/// of a shape numel_of accepts cannot overflow either, even when numel is 0).
int64_t numel_of(const Shape& s, const char* op = "numel");
/// Contiguous (row-major) strides of a shape; throws as numel_of.
Shape contiguous_strides(const Shape& s, const char* op = "strides");
/// Bytes held by a contiguous tensor of shape s and dtype d; throws as numel_of, and when the
/// byte count overflows int64.
size_t nbytes_of(const Shape& s, Dtype d, const char* op);
/// numpy broadcasting of two shapes; throws shape_error naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// Wraps a possibly negative dim into [0, ndim); throws shape_error naming `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tg

#pragma GCC visibility pop
