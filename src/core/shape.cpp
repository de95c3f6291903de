// Shape helpers: how shapes print, multiply out, broadcast and wrap dims.
#include "tapegrad/shape.hpp"

#include <algorithm>

#include "tapegrad/error.hpp"

namespace tg {

std::string shape_str(const Shape& s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i)
        r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}
// Note [Checked sizes]: a tensor's shape is valid when every size is >= 0 and the sizes, each
// taken as max(size, 1), multiply to at most INT64_MAX. Then its element count, its contiguous
// strides and every sub-product of its sizes fit int64, and so do the element offsets of any
// view of it. Shapes that come from users (factories, reshape, expand, from_blob) or from
// arithmetic on other shapes (broadcasting, cat, matmul) are checked where they are made, with
// checked_mul / checked_add, and the failure is a shape_error naming the op and the shape, never
// a wrapped product (a wrapped element count allocates a small buffer that kernels then write
// far past, or reports numel() == 0 for a tensor that is not empty). Byte counts are checked the
// same way (nbytes_of), and the allocator refuses what no device can hold (Note [Caching
// allocator]).
void throw_size_overflow(const char* op, const Shape& s, const char* what) {
    throw shape_error(std::string(op) + ": " + what + " overflows int64 for shape " + shape_str(s));
}

int64_t numel_of(const Shape& s, const char* op) {
    int64_t n = 1, bound = 1;  // n <= bound, so only bound can overflow
    for (int64_t d : s) {
        if (d < 0)
            throw shape_error(std::string(op) + ": negative size " + std::to_string(d) +
                              " in shape " + shape_str(s));
        bound = checked_mul(bound, std::max<int64_t>(d, 1), op, s);
        n *= d;
    }
    return n;
}
Shape contiguous_strides(const Shape& s, const char* op) {
    Shape st(s.size());
    int64_t acc = 1;
    for (size_t i = s.size(); i-- > 0;) {
        if (s[i] < 0)
            numel_of(s, op);  // throws, naming the negative size
        st[i] = acc;
        acc = checked_mul(acc, std::max<int64_t>(s[i], 1), op, s);
    }
    return st;
}
size_t nbytes_of(const Shape& s, Dtype d, const char* op) {
    const int64_t n = numel_of(s, op);
    int64_t bytes = 0;
    if (__builtin_mul_overflow(n, int64_t(element_size(d)), &bytes))
        throw shape_error(std::string(op) + ": shape " + shape_str(s) + " of " + dtype_name(d) +
                          " needs more bytes than int64 can count");
    return size_t(bytes);
}
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
    if (a == b)
        return a;
    const size_t n = std::max(a.size(), b.size());
    Shape r(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (x != y && x != 1 && y != 1)
            throw shape_error(std::string(op) + ": shapes " + shape_str(a) + " and " +
                              shape_str(b) + " cannot be broadcast (dim " + std::to_string(i) +
                              ": " + std::to_string(x) + " vs " + std::to_string(y) + ")");
        r[i] = x == 1 ? y : x;
    }
    return r;
}
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
    const int64_t n = std::max<int64_t>(ndim, 1);
    if (dim < -n || dim >= n)
        throw shape_error(std::string(op) + ": dim " + std::to_string(dim) +
                          " is out of range for a tensor with " + std::to_string(ndim) + " dims");
    return dim < 0 ? dim + n : dim;
}

}  // namespace tg
