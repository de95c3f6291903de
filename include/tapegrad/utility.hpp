#pragma once
/// The small vocabulary of c10 that LibTorch programs use unqualified after
/// `using namespace torch`, under tapegrad's namespace: tg::optional / tg::nullopt /
/// tg::make_optional (std::optional's, as c10::optional is in LibTorch 2), tg::string_view,
/// tg::irange (c10::irange: `for (auto i : tg::irange(n))`, `irange(a, b)`; an empty range
/// when end <= begin) and tg::ScalarType (= tg::Dtype, as torch::Dtype is at::ScalarType).
#include <cstddef>
#include <iterator>
#include <optional>
#include <string_view>
#include <type_traits>

#include "tapegrad/dtype.hpp"
#pragma GCC visibility push(default)

namespace tg {

template <class T>
using optional = std::optional<T>;
using std::make_optional;
using std::nullopt;
using std::nullopt_t;
using string_view = std::string_view;
using ScalarType = Dtype;

/// The integers [begin, end) in order, as c10::irange.
template <class I>
class IntegerRange {
public:
    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = I;
        using difference_type = std::ptrdiff_t;
        using pointer = const I*;
        using reference = I;
        explicit iterator(I v) : v_(v) {}
        I operator*() const { return v_; }
        iterator& operator++() {
            ++v_;
            return *this;
        }
        iterator operator++(int) {
            iterator old = *this;
            ++v_;
            return old;
        }
        bool operator==(const iterator& o) const { return v_ == o.v_; }
        bool operator!=(const iterator& o) const { return v_ != o.v_; }

    private:
        I v_;
    };
    IntegerRange(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
    iterator begin() const { return iterator(begin_); }
    iterator end() const { return iterator(end_); }

private:
    I begin_, end_;
};

/// [0, end).
template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
IntegerRange<I> irange(I end) {
    return IntegerRange<I>(I(0), end);
}
/// [begin, end), in the type of end (c10's rule).
template <class I1, class I2,
          class = std::enable_if_t<std::is_integral_v<I1> && std::is_integral_v<I2>>>
IntegerRange<I2> irange(I1 begin, I2 end) {
    return IntegerRange<I2>(I2(begin), end);
}

}  // namespace tg

#pragma GCC visibility pop
