#pragma once
#include <random>

namespace tg::detail {
/// The global generator behind randn/rand/randint/dropout (manual_seed seeds it).
std::mt19937_64& generator();

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
