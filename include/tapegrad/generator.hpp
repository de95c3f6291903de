#pragma once
/// tg::Generator: a random number generator the random ops can be given, as torch::Generator.
/// Every generator is LibTorch 1.13's CPU generator (MT19937), and every random op draws from it
/// what LibTorch's CPU kernel of the op draws: after tg::manual_seed(s) a program gets the
/// numbers, initial weights, dropout masks and shuffles LibTorch gives after torch::manual_seed(s)
/// (docs/random.md lists what is matched and the few differences).
///
///     tg::Generator g(42);                 // or tg::make_generator(42)
///     auto w = tg::randn({3, 4}, g);       // what manual_seed(42); randn({3, 4}) draws
///     auto y = tg::dropout(x, 0.5, true, g);
///     tg::nn::Dropout drop(tg::nn::DropoutOptions(0.5).generator(g));
///
/// Note [Per-thread generators]: an op given no Generator draws from the calling thread's
/// default generator. Every thread has its own, so threads never share one and what a thread
/// draws does not depend on what other threads do meanwhile:
///   - tg::manual_seed(s) reseeds the calling thread's default generator, and sets the seed that
///     a thread's default generator starts from at that thread's first random draw
///     (default_rng_seed_val before any manual_seed; LibTorch seeds its one default generator
///     from the operating system's entropy instead, so a program that never seeds has no
///     LibTorch numbers to match). It never changes the default generator of another thread that
///     has already drawn.
///   - So a thread that calls manual_seed(s) and then trains draws exactly what the
///     single-threaded program draws after manual_seed(s), whichever threads run beside it, and
///     so does a new thread that draws without seeding after the program called manual_seed(s).
///   - Threads that do not seed themselves therefore draw the same numbers as each other. For
///     different streams, seed each thread (manual_seed(s + rank)) or give each its own
///     Generator.
///   - LibTorch has one default generator for all threads. The difference shows only when several
///     threads draw from the default generator: a single-threaded program, and the thread that
///     seeds and trains, draw LibTorch's numbers either way. DataLoader workers that draw (random
///     augmentations) draw their own thread's stream here, LibTorch's shared one there.
/// A Generator is a handle: copies share one state (clone() makes an independent one). Its draws
/// are locked, so threads may share one without a data race, but which thread draws which
/// numbers then depends on the order they run in. tg::checkpoint replays the default generator
/// and every Generator that the checkpointed function drew from.
#include <cstdint>
#include <memory>
#pragma GCC visibility push(default)

namespace tg {

class Tensor;

namespace detail {
struct GeneratorImpl;
}

/// The seed of every thread's default generator before tg::manual_seed, and of Generator():
/// LibTorch's c10::default_rng_seed_val (67280421310721).
constexpr uint64_t default_rng_seed_val = 67280421310721ull;

class Generator {
public:
    /// A generator seeded with `seed`: it draws what a thread's default generator draws after
    /// tg::manual_seed(seed).
    explicit Generator(uint64_t seed = default_rng_seed_val);
    /// Restarts the generator from `seed`.
    void set_current_seed(uint64_t seed);
    /// The seed it was last started from.
    uint64_t current_seed() const;
    /// The whole state as LibTorch 1.13's CPUGeneratorImpl::get_state() gives it: a [5056] uint8
    /// CPU tensor holding its CPUGeneratorImplState, byte for byte (the seed, the MT19937 words
    /// and position, the kept normal value; LibTorch's kept float normal is never set here).
    Tensor get_state() const;
    /// Restores a state from get_state(), tapegrad's or LibTorch's (its 5056-byte layout, or the
    /// 5048-byte legacy one); value_error for another size or an invalid engine state, dtype_error
    /// unless uint8. A kept float normal value in it is ignored (no mirrored kernel uses one).
    void set_state(const Tensor& state);
    /// An independent generator in the same state: both then draw the same numbers.
    Generator clone() const;
    const std::shared_ptr<detail::GeneratorImpl>& impl() const { return impl_; }

private:
    std::shared_ptr<detail::GeneratorImpl> impl_;
};

/// Generator(seed), spelt as LibTorch's at::make_generator.
Generator make_generator(uint64_t seed = default_rng_seed_val);

}  // namespace tg

#pragma GCC visibility pop
