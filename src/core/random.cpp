// The per-thread default generators, tg::Generator, and the record and replay of random state
// for checkpointing.
//
// Note [LibTorch's random streams]: a LibTorch program ported to tapegrad must draw the same
// numbers, so its initial weights, dropout masks, shuffles and loss curve are LibTorch's. A
// generator is LibTorch 1.13's CPU generator: MT19937 seeded with the seed's low 32 bits
// (core/mt19937.hpp), random() one 32-bit draw, random64() two (the first the high half), and a
// kept second Box-Muller value (Engine). Each random op draws what LibTorch's CPU kernel of the
// same op draws, in the same order and the same arithmetic (core/distributions.cpp,
// core/normal_fill.cpp): uniform_ fuses x·(to - from) + from into one FMA and normal_ fuses
// x·std + mean, as Debian's LibTorch build does (its kernels are compiled for AVX2 with FMA
// contraction); dropout is bernoulli_(1 - p) on a tensor shaped like the input, then 1/(1 - p)
// in the input's dtype; randperm swaps with random() % (n - i). The values are drawn on the host
// and copied to the device, so every device gets the CPU's numbers. Tested value for value
// against LibTorch 1.13 (tests/test_random_libtorch.cpp); what differs is in docs/random.md.
#include "core/random.hpp"

#include <algorithm>
#include <atomic>

namespace tg {

namespace detail {

namespace {
std::atomic<uint64_t> g_seed{default_rng_seed_val};  // the latest manual_seed, in any thread
thread_local RecordRandom* t_recording = nullptr;    // the innermost open RecordRandom
}  // namespace

// Note [Per-thread generators] in tapegrad/generator.hpp: one engine per thread, made at the
// thread's first draw, so the default generator is never shared and needs no lock.
Engine& generator() {
    thread_local Engine e(g_seed.load(std::memory_order_relaxed));
    return e;
}

void seed_default(uint64_t seed) {
    g_seed.store(seed, std::memory_order_relaxed);
    generator().seed(seed);  // and drops a kept normal value, as LibTorch's manual_seed does
}

Draw::Draw(const Generator* g) {
    if (!g) {
        engine_ = &generator();
        return;
    }
    GeneratorImpl& impl = *g->impl();
    lock_ = std::unique_lock<std::mutex>(impl.mu);
    RecordRandom::before_draw(g->impl());
    engine_ = &impl.engine;
}

// Note [Replaying random state]: a checkpointed function runs twice, and the second run must
// draw what the first drew (Dropout's masks) or the gradients are silently wrong. Its first run
// is a RecordRandom scope: the thread's default generator's whole state (the engine and the kept
// normal value, an Engine) is copied when the scope opens, and each explicit Generator's just
// before the scope's first draw from it (Draw calls before_draw with the generator locked).
// Nobody can list the Generators a function will use beforehand, so they are noted as they are
// met. The recomputation runs in a ReplayRandom scope, which sets them all to those states and
// puts back after what they held, so recomputing advances no generator. Scopes nest: a
// checkpoint inside a checkpoint notes a Generator in both.
RecordRandom::RecordRandom(RandomState& state) : state_(state), outer_(t_recording) {
    state_.default_engine = generator();
    state_.generators.clear();
    t_recording = this;
}

RecordRandom::~RecordRandom() {
    t_recording = outer_;
}

void RecordRandom::before_draw(const std::shared_ptr<GeneratorImpl>& g) {
    for (RecordRandom* r = t_recording; r; r = r->outer_) {
        auto& gens = r->state_.generators;
        const bool noted =
            std::any_of(gens.begin(), gens.end(), [&g](const auto& e) { return e.first == g; });
        if (!noted)
            gens.emplace_back(g, g->engine);
    }
}

namespace {
/// Sets each generator in `to` to its state there, first copying what it held into `from`.
void swap_in(const RandomState& to, RandomState* from) {
    if (from)
        from->default_engine = generator();
    generator() = to.default_engine;
    for (const auto& [g, state] : to.generators) {
        std::lock_guard<std::mutex> lock(g->mu);
        if (from)
            from->generators.emplace_back(g, g->engine);
        g->engine = state;
    }
}
}  // namespace

ReplayRandom::ReplayRandom(const RandomState& state) {
    swap_in(state, &outer_);
}

ReplayRandom::~ReplayRandom() {
    swap_in(outer_, nullptr);
}

void restore(const RandomState& state) {
    swap_in(state, nullptr);
}

}  // namespace detail

Generator::Generator(uint64_t seed) : impl_(std::make_shared<detail::GeneratorImpl>()) {
    set_current_seed(seed);
}

void Generator::set_current_seed(uint64_t seed) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->engine.seed(seed);  // drops a kept normal value too
    impl_->seed = seed;
}

uint64_t Generator::current_seed() const {
    std::lock_guard<std::mutex> lock(impl_->mu);
    return impl_->seed;
}

Generator Generator::clone() const {
    Generator c;
    std::lock_guard<std::mutex> lock(impl_->mu);
    c.impl_->engine = impl_->engine;
    c.impl_->seed = impl_->seed;
    return c;
}

Generator make_generator(uint64_t seed) {
    return Generator(seed);
}

}  // namespace tg
