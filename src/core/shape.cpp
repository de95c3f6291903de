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
int64_t numel_of(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s)
        n *= d;
    return n;
}
Shape contiguous_strides(const Shape& s) {
    Shape st(s.size());
    int64_t acc = 1;
    for (size_t i = s.size(); i-- > 0;) {
        st[i] = acc;
        acc *= std::max<int64_t>(s[i], 1);
    }
    return st;
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
