// The global generator behind randn, rand, randint and dropout, and the samplers every device's
// random tensors come from.
#include "core/random.hpp"

#include <cmath>

namespace tg {

namespace detail {

std::mt19937_64& generator() {
    static std::mt19937_64 g(5489u);
    return g;
}

namespace {
double uniform01(std::mt19937_64& g) {
    return double(g() >> 11) * (1.0 / 9007199254740992.0);
}
}  // namespace

void sample(void* dst, Dtype d, int64_t n, bool normal, double a, double b, std::mt19937_64& gen) {
    dispatch(d, [&](auto tag) {
        using T = decltype(tag);
        T* o = static_cast<T*>(dst);
        if (!normal) {
            for (int64_t i = 0; i < n; ++i)
                o[i] = static_cast<T>(a + (b - a) * uniform01(gen));
            return;
        }
        for (int64_t i = 0; i < n; i += 2) {  // Box-Muller: two samples per pair of uniforms
            const double u1 = 1.0 - uniform01(gen), u2 = uniform01(gen);
            const double r = std::sqrt(-2.0 * std::log(u1));
            o[i] = static_cast<T>(a + b * r * std::cos(6.283185307179586 * u2));
            if (i + 1 < n)
                o[i + 1] = static_cast<T>(a + b * r * std::sin(6.283185307179586 * u2));
        }
    });
}

}  // namespace detail

}  // namespace tg
