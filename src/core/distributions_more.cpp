// The geometric, Cauchy, log-normal, unbounded random_ and multinomial-with-replacement samplers
// (core/distributions.hpp). Compiled with -ffp-contract=off as distributions.cpp: each formula is
// LibTorch 1.13's transformation in double, rounded once to the tensor's type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/distributions.hpp"

namespace tg::detail {

namespace {

/// LibTorch's uniform_real_distribution<double>(0, 1): the low 53 bits of random64(), scaled.
double unit_f64(Engine& e) {
    return double(e.random64() & ((uint64_t(1) << 53) - 1)) * 0x1p-53;
}

/// Writes f(e) (a double) to the n elements of dst, rounded to d (float32 or float64 only when
/// `floating_only`).
template <class F>
void each(void* dst, Dtype d, int64_t n, Engine& e, F f) {
    dispatch_all(d, [&](auto tag) {
        using T = decltype(tag);
        T* o = static_cast<T*>(dst);
        for (int64_t i = 0; i < n; ++i)
            o[i] = static_cast<T>(f(e));
    });
}

template <class T>
void cumulative_search(int64_t* out, const T* w, int64_t rows, int64_t cats, int64_t samples,
                       Engine& e) {
    std::vector<T> cum(static_cast<size_t>(cats));
    for (int64_t r = 0; r < rows; ++r) {
        const T* row = w + r * cats;
        T sum = 0;
        for (int64_t j = 0; j < cats; ++j) {
            sum += row[j];
            cum[size_t(j)] = sum;
        }
        for (auto& c : cum)
            c /= sum;
        cum[size_t(cats - 1)] = 1;
        for (int64_t s = 0; s < samples; ++s) {
            const double u = unit_f64(e);
            int64_t lo = 0, hi = cats;  // the first slot whose cumulative sum is >= u
            while (hi > lo) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (double(cum[size_t(mid)]) < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            out[r * samples + s] = lo;
        }
    }
}

}  // namespace

void geometric(void* dst, Dtype d, int64_t n, double p, Engine& e) {
    const double log_q = std::log(1.0 - p);
    each(dst, d, n, e, [log_q](Engine& en) { return std::ceil(std::log(unit_f64(en)) / log_q); });
}

void cauchy(void* dst, Dtype d, int64_t n, double median, double sigma, Engine& e) {
    each(dst, d, n, e, [median, sigma](Engine& en) {
        return median + sigma * std::tan(M_PI * (unit_f64(en) - 0.5));
    });
}

void log_normal(void* dst, Dtype d, int64_t n, double mean, double std, Engine& e) {
    each(dst, d, n, e, [mean, std](Engine& en) { return std::exp(normal_one(mean, std, en)); });
}

void random_full(void* dst, Dtype d, int64_t n, Engine& e) {
    dispatch_all(d, [&](auto tag) {
        using T = decltype(tag);
        T* o = static_cast<T*>(dst);
        for (int64_t i = 0; i < n; ++i) {
            if constexpr (std::is_same_v<T, bool>) {
                o[i] = (e.random() & 1) != 0;
            } else if constexpr (std::is_same_v<T, double>) {
                o[i] = double(e.random64() % ((uint64_t(1) << 53) + 1));
            } else if constexpr (std::is_same_v<T, int64_t>) {
                o[i] = int64_t(e.random64() % (uint64_t(1) << 63));
            } else if constexpr (std::is_floating_point_v<T>) {
                o[i] = T(e.random() % ((uint64_t(1) << std::numeric_limits<T>::digits) + 1));
            } else if constexpr (std::is_integral_v<T>) {
                o[i] = T(e.random() % (uint64_t(std::numeric_limits<T>::max()) + 1));
            } else {  // float16 and bfloat16 are refused before drawing
                o[i] = T(0.0f);
            }
        }
    });
}

void multinomial_replacement(int64_t* out, const void* w, Dtype d, int64_t rows, int64_t cats,
                             int64_t samples, Engine& e) {
    if (d == Dtype::Float32)
        return cumulative_search(out, static_cast<const float*>(w), rows, cats, samples, e);
    cumulative_search(out, static_cast<const double*>(w), rows, cats, samples, e);
}

}  // namespace tg::detail
