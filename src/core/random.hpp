#pragma once
// The generators behind the random ops (Note [Per-thread generators] in tapegrad/generator.hpp,
// Note [LibTorch's random streams] in random.cpp), and the record/replay of random state that
// checkpointing needs (Note [Replaying random state] in random.cpp). The samplers are in
// core/distributions.hpp.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/mt19937.hpp"
#include "tapegrad/generator.hpp"

namespace tg::detail {

/// A generator's whole state, as LibTorch's CPUGeneratorImpl holds it: the MT19937 engine and
/// the second value of the last Box-Muller pair that normal_distribution<double> keeps for its
/// next call. (LibTorch's float cache is not kept: none of its CPU kernels that tapegrad mirrors
/// uses it.)
struct Engine {
    Mt19937 mt;
    std::optional<double> next_double_normal;

    explicit Engine(uint64_t seed = default_rng_seed_val) : mt(seed) {}
    /// LibTorch's set_current_seed: the engine restarts and the kept normal value is dropped.
    void seed(uint64_t s) {
        mt.seed(s);
        next_double_normal.reset();
    }
    /// LibTorch's random(): one 32-bit draw.
    uint32_t random() { return mt(); }
    /// LibTorch's random64(): two 32-bit draws, the first the high half.
    uint64_t random64() {
        const uint64_t hi = mt();
        return (hi << 32) | mt();
    }
};

struct GeneratorImpl {
    std::mutex mu;  // held while drawing: a Generator may be shared by threads
    Engine engine;
    uint64_t seed = default_rng_seed_val;
};

/// The calling thread's default generator, started at its first use from the seed of the latest
/// manual_seed in any thread.
Engine& generator();
/// tg::manual_seed: reseeds this thread's default generator and sets the seed that other
/// threads' default generators start from.
void seed_default(uint64_t seed);

/// The engine a random op draws from for this object's lifetime: g's when given (locked, and
/// noted by the RecordRandom scopes open on this thread), else this thread's default generator.
class Draw {
public:
    explicit Draw(const Generator* g);
    Engine& engine() { return *engine_; }

private:
    std::unique_lock<std::mutex> lock_;
    Engine* engine_;
};

/// The random state a piece of work started from: this thread's default generator, and each
/// explicit Generator the work drew from as it was before the work's first draw from it.
struct RandomState {
    Engine default_engine;
    std::vector<std::pair<std::shared_ptr<GeneratorImpl>, Engine>> generators;
};

/// For its scope, records into `state` the random state the scope's work starts from: the
/// default generator at once, each Generator at its first draw on this thread.
class RecordRandom {
public:
    explicit RecordRandom(RandomState& state);
    ~RecordRandom();
    RecordRandom(const RecordRandom&) = delete;
    RecordRandom& operator=(const RecordRandom&) = delete;
    /// Notes g's state before a draw, if this scope (or one it is inside) has not yet.
    static void before_draw(const std::shared_ptr<GeneratorImpl>& g);

private:
    RandomState& state_;
    RecordRandom* outer_;
};

/// For its scope, the generators in `state` run from their recorded states (so a recomputation
/// draws what the first run drew); the states they had are put back after, exception or not.
class ReplayRandom {
public:
    explicit ReplayRandom(const RandomState& state);
    ~ReplayRandom();
    ReplayRandom(const ReplayRandom&) = delete;
    ReplayRandom& operator=(const ReplayRandom&) = delete;

private:
    RandomState outer_;
};

/// Sets the generators in `state` back to their recorded states.
void restore(const RandomState& state);

}  // namespace tg::detail
