// MT19937's twist and bulk fill (core/mt19937.hpp).
#include "core/mt19937.hpp"

#include <algorithm>

#include "core/simd.hpp"

namespace tg::detail {

namespace {
/// The recurrence's step: word k's next value from words k, k + 1 and k + kM. Branch-free, so
/// that the loops below vectorise.
inline uint32_t next_word(uint32_t k, uint32_t k1, uint32_t km) {
    const uint32_t y = (k & 0x80000000u) | (k1 & 0x7fffffffu);
    return km ^ (y >> 1) ^ ((0u - (k1 & 1u)) & 0x9908b0dfu);
}

// The first kN - kM words read only words not yet rewritten in this pass, the rest read words
// rewritten kN - kM = 227 steps before: both loops vectorise (TG_SIMD_CLONES: Note [Wider SIMD]
// in core/simd.hpp).
TG_SIMD_CLONES void twist_words(uint32_t* s) {
    constexpr int kN = Mt19937::kN, kM = Mt19937::kM;
    for (int k = 0; k < kN - kM; ++k)
        s[k] = next_word(s[k], s[k + 1], s[k + kM]);
    for (int k = kN - kM; k < kN - 1; ++k)
        s[k] = next_word(s[k], s[k + 1], s[k + kM - kN]);
    s[kN - 1] = next_word(s[kN - 1], s[0], s[kM - 1]);
}

TG_SIMD_CLONES void temper_words(uint32_t* out, const uint32_t* s, size_t n) {
    for (size_t k = 0; k < n; ++k) {
        uint32_t y = s[k];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        out[k] = y ^ (y >> 18);
    }
}

}  // namespace

void Mt19937::twist() {
    twist_words(state_.data());
    next_ = 0;
    fresh_ = false;
}

void Mt19937::fill(uint32_t* out, size_t n) {
    while (n > 0) {
        if (next_ == kN)
            twist();
        const size_t run = std::min(n, size_t(kN - next_));
        temper_words(out, state_.data() + next_, run);
        next_ += int(run);
        out += run;
        n -= run;
    }
}

}  // namespace tg::detail
