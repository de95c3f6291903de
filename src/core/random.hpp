#pragma once
#include <cstdint>
#include <random>

#include "tapegrad/dtype.hpp"

namespace tg::detail {
/// The global generator behind randn/rand/randint/dropout (manual_seed seeds it).
std::mt19937_64& generator();

/// Writes n samples of element type d to host memory dst: uniform in [a, b) (normal = false) or
/// normal with mean a and standard deviation b, drawn from gen. Every device's random tensors
/// come from here, so one seed gives the same numbers on every device.
void sample(void* dst, Dtype d, int64_t n, bool normal, double a, double b, std::mt19937_64& gen);

/// For its scope, the global generator runs from `state`; the state it had is put back after,
/// exception or not (checkpoint replays a segment's random draws so Dropout recomputes alike).
class ReplayGenerator {
public:
    explicit ReplayGenerator(const std::mt19937_64& state) : outer_(generator()) {
        generator() = state;
    }
    ~ReplayGenerator() { generator() = outer_; }
    ReplayGenerator(const ReplayGenerator&) = delete;
    ReplayGenerator& operator=(const ReplayGenerator&) = delete;

private:
    std::mt19937_64 outer_;
};
}  // namespace tg::detail
