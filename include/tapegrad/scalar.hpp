#pragma once
/// tg::Scalar: a number argument (x * 2, full(s, 0.5), clamp(x, 0, 255)) and what item()
/// returns without a type, as LibTorch's c10::Scalar: it remembers whether it is a bool, an
/// integer or a floating-point number, which decides the dtype of a result (a uint8 tensor * 2
/// stays uint8, * 2.0 is float32: tapegrad/promotion.hpp).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "tapegrad/dtype.hpp"
#include "tapegrad/error.hpp"
#pragma GCC visibility push(default)

namespace tg {

class Scalar {
public:
    Scalar() = default;  // the integer 0, as LibTorch's
    template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
    Scalar(T v) : d_(double(v)) {  // NOLINT: implicit, as a number
        if constexpr (std::is_same_v<T, bool>)
            i_ = v, kind_ = Kind::Bool;
        else if constexpr (std::is_integral_v<T>)
            i_ = static_cast<int64_t>(v), kind_ = Kind::Int;
        else
            kind_ = Kind::Double;
    }
    Scalar(Half v) : d_(float(v)), kind_(Kind::Double) {}      // NOLINT: implicit
    Scalar(BFloat16 v) : d_(float(v)), kind_(Kind::Double) {}  // NOLINT: implicit
    /// The value as a double (so a Scalar reads as a number: s * 2, std::isfinite(s)).
    operator double() const { return d_; }  // NOLINT: implicit
    /// -s of the same kind (an integer stays an integer, so x - 2 on a uint8 tensor stays uint8).
    Scalar operator-() const {
        if (kind_ == Kind::Double)
            return Scalar(-d_);
        return Scalar(static_cast<int64_t>(uint64_t(0) - uint64_t(i_)));  // wraps at INT64_MIN
    }
    double toDouble() const { return d_; }
    float toFloat() const { return to<float>(); }
    /// Integer conversions are checked, as LibTorch's: a NaN or a value beyond the type's range
    /// throws value_error (a negative integer converts to an unsigned type by wrapping, as there).
    int64_t toLong() const { return to<int64_t>(); }
    int toInt() const { return to<int>(); }
    bool toBool() const { return kind_ == Kind::Double ? d_ != 0 : i_ != 0; }
    bool isIntegral(bool include_bool = false) const {
        return kind_ == Kind::Int || (include_bool && kind_ == Kind::Bool);
    }
    bool isFloatingPoint() const { return kind_ == Kind::Double; }
    bool isBoolean() const { return kind_ == Kind::Bool; }
    /// The dtype LibTorch gives the Scalar: int64, float64 or bool.
    Dtype type() const {
        return kind_ == Kind::Int ? kInt64 : kind_ == Kind::Bool ? kBool : kFloat64;
    }
    /// The value converted to T (any arithmetic type, Half, BFloat16), checked as LibTorch's
    /// Scalar::to<T>: value_error when it does not fit (a float beyond the type's largest finite
    /// value, but not ±inf; any NaN or float beyond an integer type's range).
    template <class T>
    T to() const {
        if constexpr (std::is_same_v<T, bool>) {
            return toBool();
        } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
            if constexpr (std::is_same_v<T, Half>)
                check_fits(65504.0, "float16");
            else
                check_fits(3.3895313892515355e38, "bfloat16");
            return T(float(d_));
        } else if constexpr (std::is_floating_point_v<T>) {
            check_fits(double(std::numeric_limits<T>::max()),
                       sizeof(T) == 4 ? "float32" : "float64");
            return static_cast<T>(d_);
        } else {
            static_assert(std::is_integral_v<T>, "Scalar::to<T>: T must be a number type");
            using L = std::numeric_limits<T>;
            if (kind_ == Kind::Double) {
                // LibTorch's test (a NaN fails it too), and below 2^digits: int64's max is 2^63
                // as a double, and converting 2^63 to int64 would be undefined
                if (!(d_ >= double(L::lowest()) && d_ <= double(L::max()) &&
                      d_ < std::ldexp(1.0, L::digits)))
                    overflow(type_name<T>());
                return static_cast<T>(d_);
            }
            const bool wraps = !L::is_signed && i_ < 0 &&
                               uint64_t(0) - uint64_t(i_) <= uint64_t(L::max());  // -1 -> 255
            if (!wraps &&
                (i_ < int64_t(L::lowest()) || (i_ > 0 && uint64_t(i_) > uint64_t(L::max()))))
                overflow(type_name<T>());
            return static_cast<T>(i_);
        }
    }

private:
    enum class Kind : uint8_t { Double, Int, Bool };
    double d_ = 0;
    int64_t i_ = 0;
    Kind kind_ = Kind::Int;

    /// Throws unless the value lies within ±max (or is ±inf or NaN, which floats hold).
    void check_fits(double max, const char* type) const {
        if (std::isfinite(d_) && (d_ > max || d_ < -max))
            overflow(type);
    }
    template <class T>
    static std::string type_name() {
        return std::string(std::numeric_limits<T>::is_signed ? "int" : "uint") +
               std::to_string(sizeof(T) * 8);
    }
    [[noreturn]] void overflow(const std::string& type) const {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.15g", d_);
        const std::string v = kind_ == Kind::Double ? std::string(buf) : std::to_string(i_);
        throw value_error("value " + v + " cannot be converted to type " + type +
                          " without overflow");
    }
};

/// What item() returns without a type: a Scalar (the name tapegrad used before Scalar was one).
using ScalarValue = Scalar;

}  // namespace tg

#pragma GCC visibility pop
