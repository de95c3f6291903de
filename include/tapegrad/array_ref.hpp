#pragma once
/// tg::ArrayRef<T> and tg::IntArrayRef, as c10::ArrayRef: a non-owning view of contiguous
/// elements, for programs that take sizes or tensors as an ArrayRef in their own functions.
///
///     int64_t count(tg::IntArrayRef sizes);        // count({2, 3}), count(x.sizes()), count(v)
///     tg::Tensor z = tg::zeros(sizes);              // converts to a Shape or std::vector
///
/// As in LibTorch it does not own its elements: a view of a braced list lives as long as the
/// full-expression it is written in.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "tapegrad/error.hpp"
#include "tapegrad/small_vector.hpp"
#pragma GCC visibility push(default)

namespace tg {

class Tensor;

template <class T>
class ArrayRef {
public:
    using value_type = T;
    using iterator = const T*;
    using const_iterator = const T*;
    using size_type = size_t;

    constexpr ArrayRef() = default;
    /// One element.
    constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: implicit, as c10's
    constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
    constexpr ArrayRef(const T* begin, const T* end) : data_(begin), size_(size_t(end - begin)) {}
    /// Any contiguous container of T: std::vector, tg::Shape (x.sizes()), std::array.
    template <class Container,
              class = std::enable_if_t<
                  std::is_same_v<std::remove_const_t<std::remove_pointer_t<
                                     decltype(std::declval<const Container&>().data())>>,
                                 T>>,
              class = decltype(std::declval<const Container&>().size())>
    ArrayRef(const Container& c) : data_(c.data()), size_(c.size()) {}  // NOLINT: implicit
    template <size_t N>
    constexpr ArrayRef(const T (&a)[N]) : data_(a), size_(N) {}  // NOLINT: implicit
// a view of a braced list, valid for its full-expression, as c10's (GCC warns of exactly that)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
    constexpr ArrayRef(const std::initializer_list<T>& l)  // NOLINT: implicit
        : data_(l.begin() == l.end() ? nullptr : l.begin()), size_(l.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

    constexpr const T* begin() const {
        return data_;
    }
    constexpr const T* end() const {
        return data_ + size_;
    }
    constexpr const T* data() const {
        return data_;
    }
    constexpr size_t size() const {
        return size_;
    }
    constexpr bool empty() const {
        return size_ == 0;
    }
    constexpr const T& operator[](size_t i) const {
        return data_[i];
    }
    /// Element i; throws shape_error past the end, as c10's at() does with its IndexError.
    const T& at(size_t i) const {
        if (i >= size_)
            throw shape_error("ArrayRef: invalid index " + std::to_string(i) + " for a size of " +
                              std::to_string(size_));
        return data_[i];
    }
    /// The first / last element; throws shape_error when empty.
    const T& front() const {
        return at(0);
    }
    const T& back() const {
        return at(size_ - 1);
    }
    /// Elements [n, n + m), or [n, size()); shape_error when out of range.
    ArrayRef slice(size_t n, size_t m) const {
        if (n > size_ || m > size_ - n)
            throw shape_error("ArrayRef: slice(" + std::to_string(n) + ", " + std::to_string(m) +
                              ") out of range for a size of " + std::to_string(size_));
        return ArrayRef(data_ + n, m);
    }
    ArrayRef slice(size_t n) const {
        return slice(n, size_ - std::min(n, size_));
    }
    bool equals(ArrayRef other) const {
        if (size_ != other.size_)
            return false;
        for (size_t i = 0; i < size_; ++i)
            if (!(data_[i] == other.data_[i]))
                return false;
        return true;
    }
    std::vector<T> vec() const {
        return std::vector<T>(begin(), end());
    }
    /// Copies, so that functions taking a std::vector or a tg::Shape accept an ArrayRef.
    operator std::vector<T>() const {
        return vec();
    }  // NOLINT: implicit
    template <size_t N>
    operator SmallVector<T, N>() const {  // NOLINT: implicit
        return SmallVector<T, N>(begin(), end());
    }

private:
    const T* data_ = nullptr;
    size_t size_ = 0;
};

template <class T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
    return a.equals(b);
}
template <class T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) {
    return !a.equals(b);
}
// against sizes (x.sizes() == IntArrayRef{2, 3}) and vectors, as c10's
template <class T, size_t N>
bool operator==(const SmallVector<T, N>& a, ArrayRef<T> b) {
    return ArrayRef<T>(a).equals(b);
}
template <class T, size_t N>
bool operator==(ArrayRef<T> a, const SmallVector<T, N>& b) {
    return a.equals(ArrayRef<T>(b));
}
template <class T, size_t N>
bool operator!=(const SmallVector<T, N>& a, ArrayRef<T> b) {
    return !(a == b);
}
template <class T, size_t N>
bool operator!=(ArrayRef<T> a, const SmallVector<T, N>& b) {
    return !(a == b);
}
template <class T>
bool operator==(const std::vector<T>& a, ArrayRef<T> b) {
    return ArrayRef<T>(a).equals(b);
}
template <class T>
bool operator==(ArrayRef<T> a, const std::vector<T>& b) {
    return a.equals(ArrayRef<T>(b));
}
template <class T>
bool operator!=(const std::vector<T>& a, ArrayRef<T> b) {
    return !(a == b);
}
template <class T>
bool operator!=(ArrayRef<T> a, const std::vector<T>& b) {
    return !(a == b);
}
/// "[1, 2, 3]", as c10 prints an ArrayRef.
template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
    os << "[";
    for (size_t i = 0; i < a.size(); ++i)
        os << (i ? ", " : "") << a[i];
    return os << "]";
}

using IntArrayRef = ArrayRef<int64_t>;
/// at::TensorList.
using TensorList = ArrayRef<Tensor>;

}  // namespace tg

#pragma GCC visibility pop
