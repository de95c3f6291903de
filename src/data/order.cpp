// The row order of an epoch (data/order.hpp).
#include "data/order.hpp"

#include <numeric>
#include <random>
#include <utility>

namespace tg::data::detail {
namespace {

/// splitmix64: turns (seed, epoch) into a well-mixed generator seed.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/// Uniform integer in [0, n) without modulo bias. Written out (not uniform_int_distribution) so
/// the order is the same with every standard library.
uint64_t below(std::mt19937_64& gen, uint64_t n) {
    const uint64_t limit = ~uint64_t(0) - (~uint64_t(0) % n);
    uint64_t r;
    do
        r = gen();
    while (r >= limit);
    return r % n;
}

}  // namespace

std::vector<int64_t> epoch_order(int64_t n, bool shuffle, uint64_t seed, int64_t epoch) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t(0));
    if (shuffle && n > 1) {
        std::mt19937_64 gen(mix(seed ^ mix(uint64_t(epoch))));
        for (int64_t i = n - 1; i > 0; --i)  // Fisher-Yates
            std::swap(order[size_t(i)], order[below(gen, uint64_t(i) + 1)]);
    }
    return order;
}

}  // namespace tg::data::detail
