// The per-thread default generators, tg::Generator, the samplers every device's random tensors
// come from, and the record and replay of random state for checkpointing.
#include "core/random.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

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
    generator().seed(seed);
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

namespace {
double uniform01(Engine& g) {
    return double(g() >> 11) * (1.0 / 9007199254740992.0);
}
}  // namespace

void sample(void* dst, Dtype d, int64_t n, bool normal, double a, double b, Engine& gen) {
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

// Note [Replaying random state]: a checkpointed function runs twice, and the second run must
// draw what the first drew (Dropout's masks) or the gradients are silently wrong. Its first run
// is a RecordRandom scope: the thread's default generator is copied when the scope opens, and
// each explicit Generator just before the scope's first draw from it (Draw calls before_draw
// with the generator locked). Nobody can list the Generators a function will use beforehand, so
// they are noted as they are met. The recomputation runs in a ReplayRandom scope, which sets
// them all to those states and puts back after what they held, so recomputing advances no
// generator. Scopes nest: a checkpoint inside a checkpoint notes a Generator in both.
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
    impl_->engine.seed(seed);
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
