#pragma once
// MT19937, the 32-bit Mersenne Twister (Matsumoto and Nishimura, 1998): the engine of every
// tapegrad generator, as it is of LibTorch's CPU generator (Note [LibTorch's random streams] in
// core/random.cpp). The same numbers as std::mt19937 for a seed's low 32 bits (tested), with a
// bulk fill() whose loops the compiler vectorises: dropout draws two numbers per element.
#include <array>
#include <cstddef>
#include <cstdint>

namespace tg::detail {

class Mt19937 {
public:
    static constexpr int kN = 624, kM = 397;

    explicit Mt19937(uint64_t seed = 5489) { this->seed(seed); }

    /// Restarts from the low 32 bits of `seed` (as at::mt19937 and std::mt19937 do).
    void seed(uint64_t seed) {
        state_[0] = uint32_t(seed);
        for (int i = 1; i < kN; ++i)
            state_[size_t(i)] =
                1812433253u * (state_[size_t(i - 1)] ^ (state_[size_t(i - 1)] >> 30)) + uint32_t(i);
        next_ = kN;  // the first draw twists
        fresh_ = true;
    }

    /// The state words and the index of the word the next number tempers (kN: twist first), and
    /// whether nothing was drawn since seed() (LibTorch's saved state tells the two apart).
    const std::array<uint32_t, kN>& words() const { return state_; }
    int position() const { return next_; }
    bool fresh() const { return fresh_; }
    void set(const std::array<uint32_t, kN>& words, int position, bool fresh) {
        state_ = words;
        next_ = position;
        fresh_ = fresh;
    }

    uint32_t operator()() {
        if (next_ == kN)
            twist();
        return temper(state_[size_t(next_++)]);
    }

    /// The next n numbers, in order, into out.
    void fill(uint32_t* out, size_t n);

    friend bool operator==(const Mt19937& a, const Mt19937& b) {
        return a.next_ == b.next_ && a.state_ == b.state_;
    }

private:
    static uint32_t temper(uint32_t y) {
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        return y ^ (y >> 18);
    }
    void twist();

    std::array<uint32_t, kN> state_;
    int next_ = kN;  // the state word the next number tempers; kN: twist first
    bool fresh_ = true;
};

}  // namespace tg::detail
