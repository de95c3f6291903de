#pragma once
/// tg::Scalar (a number argument) and tg::ScalarValue (what item() returns without a type).
#include <cstdint>
#include <type_traits>
#pragma GCC visibility push(default)

namespace tg {

using Scalar = double;

/// What item() returns without a type (LibTorch's Scalar): the element, kept exactly as an int64
/// for int64 tensors, converting like LibTorch's Scalar (and implicitly to double).
class ScalarValue {
public:
    ScalarValue(double v) : d_(v) {}                                   // NOLINT: implicit
    ScalarValue(int64_t v) : d_(double(v)), i_(v), integral_(true) {}  // NOLINT
    operator double() const { return d_; }  // NOLINT: implicit, as a number
    double toDouble() const { return d_; }
    float toFloat() const { return float(d_); }
    int64_t toLong() const { return integral_ ? i_ : int64_t(d_); }
    int toInt() const { return int(toLong()); }
    bool toBool() const { return integral_ ? i_ != 0 : d_ != 0; }
    bool isIntegral() const { return integral_; }
    bool isFloatingPoint() const { return !integral_; }
    template <class T>
    T to() const {
        if constexpr (std::is_same_v<T, bool>)
            return toBool();
        else if constexpr (std::is_integral_v<T>)
            return static_cast<T>(toLong());
        else
            return static_cast<T>(d_);
    }

private:
    double d_ = 0;
    int64_t i_ = 0;
    bool integral_ = false;
};

}  // namespace tg

#pragma GCC visibility pop
