// Dropout's keep masks, filled on the host for every device (Note [Counter-based masks]).
#include "backend/cpu/keep_mask.hpp"

#include <algorithm>

#include "backend/cpu/simd.hpp"
#include "backend/cpu/threads.hpp"

namespace tg::backend::cpu {

namespace {

/// A 32-bit integer hash with good avalanche (Chris Wellons' lowbias32); vectorisable.
inline uint32_t lowbias32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

// Elements [first, first + n) of a mask whose counters share their high 32 bits (in `hi`):
// 32-bit arithmetic only, so that it vectorises (TG_SIMD_CLONES: Note [Wider SIMD]).
TG_SIMD_CLONES void run_f32(float* o, uint32_t first, uint32_t n, uint32_t lo, uint32_t hi,
                            uint32_t limit, float s) {
    for (uint32_t k = 0; k < n; ++k)
        o[k] = lowbias32(lowbias32((first + k) ^ lo) ^ hi) < limit ? s : 0.0f;
}
void run_f64(double* o, uint32_t first, uint32_t n, uint32_t lo, uint32_t hi, uint32_t limit,
             double s) {
    for (uint32_t k = 0; k < n; ++k)
        o[k] = lowbias32(lowbias32((first + k) ^ lo) ^ hi) < limit ? s : 0.0;
}

}  // namespace

void keep_mask(void* dst, Dtype d, int64_t n, double keep, double scale, uint64_t seed) {
    const uint32_t limit = uint32_t(std::min(keep, 1.0) * 4294967295.0);
    auto fill = [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end;) {  // runs that do not cross a multiple of 2³²
            const int64_t stop = std::min(end, ((i >> 32) + 1) << 32);
            const uint32_t lo = uint32_t(seed), hi = uint32_t(seed >> 32) ^ uint32_t(i >> 32);
            if (d == Dtype::Float32)
                run_f32(static_cast<float*>(dst) + i, uint32_t(i), uint32_t(stop - i), lo, hi,
                        limit, float(scale));
            else
                run_f64(static_cast<double*>(dst) + i, uint32_t(i), uint32_t(stop - i), lo, hi,
                        limit, scale);
            i = stop;
        }
    };
    const int parts = n >= kParallelMin ? cpu_threads() : 1;
    cpu_parallel(parts, [&](int p) { fill(n * p / parts, n * (p + 1) / parts); });
}

}  // namespace tg::backend::cpu
