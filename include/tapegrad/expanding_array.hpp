#pragma once
/// tg::ExpandingArray<D>, as torch::ExpandingArray: D sizes given as one value for all of them
/// (3), a braced list ({2, 3}), a std::vector or an ArrayRef of exactly D values (else
/// tg::value_error "Expected D values, but instead got n", LibTorch's message). It converts to
/// an ArrayRef, to a tg::Shape and to the IntArg the ops take, so that
///     tg::ExpandingArray<2> stride({2, 2});
///     tg::max_pool2d(x, 3, stride);
/// compiles as in LibTorch.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "tapegrad/array_ref.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/small_vector.hpp"
#pragma GCC visibility push(default)

namespace tg {

template <size_t D, class T = int64_t>
class ExpandingArray {
public:
    ExpandingArray(std::initializer_list<T> list)  // NOLINT: implicit, as LibTorch's
        : ExpandingArray(ArrayRef<T>(list)) {}
    ExpandingArray(std::vector<T> v) : ExpandingArray(ArrayRef<T>(v)) {}  // NOLINT
    ExpandingArray(ArrayRef<T> values) {                                  // NOLINT
        if (values.size() != D)
            throw value_error("ExpandingArray: Expected " + std::to_string(D) +
                              " values, but instead got " + std::to_string(values.size()));
        std::copy(values.begin(), values.end(), values_.begin());
    }
    /// The one value, D times.
    ExpandingArray(T single) { values_.fill(single); }                   // NOLINT
    ExpandingArray(const std::array<T, D>& values) : values_(values) {}  // NOLINT

    std::array<T, D>& operator*() { return values_; }
    const std::array<T, D>& operator*() const { return values_; }
    std::array<T, D>* operator->() { return &values_; }
    const std::array<T, D>* operator->() const { return &values_; }
    operator ArrayRef<T>() const { return ArrayRef<T>(values_.data(), D); }  // NOLINT
    template <size_t N>
    operator SmallVector<T, N>() const {  // NOLINT: a Shape, for reshape(x, shape)
        return SmallVector<T, N>(values_.begin(), values_.end());
    }
    operator std::vector<T>() const { return {values_.begin(), values_.end()}; }  // NOLINT
    size_t size() const noexcept { return D; }

protected:
    std::array<T, D> values_;
};

/// The value alone for D = 1, else "[a, b]", as LibTorch prints it.
template <size_t D, class T>
std::ostream& operator<<(std::ostream& os, const ExpandingArray<D, T>& a) {
    if (D == 1)
        return os << (*a)[0];
    return os << ArrayRef<T>(a);
}

}  // namespace tg

#pragma GCC visibility pop
