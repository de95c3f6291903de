#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

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
int64_t numel_of(const Shape& s);
/// Contiguous (row-major) strides of a shape.
Shape contiguous_strides(const Shape& s);
/// numpy broadcasting of two shapes; throws shape_error naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// Wraps a possibly negative dim into [0, ndim); throws shape_error naming `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tg

#pragma GCC visibility pop
