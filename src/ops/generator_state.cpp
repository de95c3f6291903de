// Generator::get_state and set_state (tapegrad/generator.hpp): a generator's state as the bytes of
// LibTorch 1.13's CPUGeneratorImplState.
//
// Note [LibTorch's generator state]: LibTorch saves a CPU generator as the legacy TH layout (the
// seed, MT19937's `left` and `next`, the 624 state words widened to 64 bits, three doubles of
// which normal_y holds the kept normal value, a validity flag), followed by a float and a flag for
// the kept float normal value. Its at::mt19937 counts `left` down to the next twist and reads word
// `next`; tapegrad's engine keeps only the index of the next word (kN: twist first), so
// left = kN + 1 - index and next = index, except that a freshly seeded LibTorch engine has
// left = 1, next = 0 (Mt19937::fresh tells that case apart). States LibTorch's engine cannot reach
// (other left/next pairs) are refused.
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "core/random.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/tensor.hpp"

namespace tg {

namespace {

constexpr int kN = detail::Mt19937::kN;

struct LegacyState {  // THGeneratorStateLegacy
    uint64_t the_initial_seed;
    int32_t left;
    int32_t seeded;
    uint64_t next;
    uint64_t state[kN];
    double normal_x, normal_y, normal_rho;
    int32_t normal_is_valid;
};
struct State {  // CPUGeneratorImplState
    LegacyState legacy;
    float next_float_normal_sample;
    bool is_next_float_normal_sample_valid;
};
static_assert(sizeof(LegacyState) == 5048 && sizeof(State) == 5056, "LibTorch's layout");

}  // namespace

Tensor Generator::get_state() const {
    State s;
    std::memset(&s, 0, sizeof s);  // LibTorch's value-initialised state: padding zero too
    {
        std::lock_guard<std::mutex> lock(impl_->mu);
        const detail::Engine& e = impl_->engine;
        s.legacy.the_initial_seed = impl_->seed;
        const int at = e.mt.position();
        s.legacy.left = e.mt.fresh() ? 1 : kN + 1 - at;
        s.legacy.next = e.mt.fresh() ? 0 : uint64_t(at);
        s.legacy.seeded = 1;
        for (int i = 0; i < kN; ++i)
            s.legacy.state[i] = e.mt.words()[size_t(i)];
        if (e.next_double_normal) {
            s.legacy.normal_is_valid = 1;
            s.legacy.normal_y = *e.next_double_normal;
        }
    }
    Tensor t = empty({int64_t(sizeof s)}, kUInt8);
    std::memcpy(t.data_ptr<uint8_t>(), &s, sizeof s);
    return t;
}

void Generator::set_state(const Tensor& state) {
    if (!state.defined())
        throw value_error("Generator::set_state: undefined state");
    if (state.dtype() != kUInt8)
        throw dtype_error("Generator::set_state: state " + shape_str(state.sizes()) + " " +
                          dtype_name(state.dtype()) + " is not uint8");
    const int64_t n = state.numel();
    if (n != int64_t(sizeof(State)) && n != int64_t(sizeof(LegacyState)))
        throw value_error("Generator::set_state: state " + shape_str(state.sizes()) + " has " +
                          std::to_string(n) + " bytes; LibTorch's CPU generator state has " +
                          std::to_string(sizeof(State)) + " (or " +
                          std::to_string(sizeof(LegacyState)) + " in the legacy layout)");
    State s;
    std::memset(&s, 0, sizeof s);
    const Tensor bytes = state.detach().to(kCPU).contiguous();
    std::memcpy(&s, bytes.data_ptr<uint8_t>(), size_t(n));
    const LegacyState& l = s.legacy;
    const bool fresh = l.left == 1 && l.next == 0;
    if (!l.seeded || l.left < 1 || l.left > kN || (!fresh && l.next != uint64_t(kN + 1 - l.left)))
        throw value_error("Generator::set_state: not a state of LibTorch's MT19937 (left " +
                          std::to_string(l.left) + ", next " + std::to_string(l.next) +
                          ", seeded " + std::to_string(l.seeded) + ")");
    std::array<uint32_t, kN> words;
    for (int i = 0; i < kN; ++i)
        words[size_t(i)] = uint32_t(l.state[i]);
    std::lock_guard<std::mutex> lock(impl_->mu);
    detail::Engine& e = impl_->engine;
    e.mt.set(words, kN + 1 - l.left, fresh);
    e.next_double_normal.reset();
    if (l.normal_is_valid)  // the legacy layout kept Box-Muller's inputs, the current the value
        e.next_double_normal = n == int64_t(sizeof(State))
                                   ? l.normal_y
                                   : l.normal_rho * std::sin(2.0 * M_PI * l.normal_x);
    impl_->seed = l.the_initial_seed;
}

}  // namespace tg
