// Note [Memory statistics]: every byte a tensor holds is counted at allocation and release by
// the device's allocator, so current_bytes is exactly what live tensors hold and peak_bytes its
// maximum. Tests and benchmarks read memory here rather than from RSS.
#include "tapegrad/memory.hpp"

#include <atomic>

#include "backend/cpu_allocator.hpp"
#include "memory_internal.hpp"

namespace tg::memory {
namespace {
struct Counters {
    std::atomic<int64_t> current{0}, peak{0}, allocs{0}, to_device{0}, to_host{0};
    std::atomic<int64_t> saved{0}, peak_saved{0};
};
Counters& counters(Device d) {
    static Counters c[3][8];
    return c[int(d.type)][d.index & 7];
}

void raise_peak(std::atomic<int64_t>& peak, int64_t now) {
    int64_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
}
}  // namespace

namespace detail {
void on_alloc(Device d, int64_t bytes) {
    Counters& c = counters(d);
    const int64_t now = c.current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    c.allocs.fetch_add(1, std::memory_order_relaxed);
    raise_peak(c.peak, now);
}
void on_saved(Device d, int64_t bytes) {
    Counters& c = counters(d);
    raise_peak(c.peak_saved, c.saved.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}
void on_free(Device d, int64_t bytes) {
    counters(d).current.fetch_sub(bytes, std::memory_order_relaxed);
}
void on_transfer(Device d, bool to_device, int64_t bytes) {
    Counters& c = counters(d);
    (to_device ? c.to_device : c.to_host).fetch_add(bytes, std::memory_order_relaxed);
}
CacheHooks& hooks(DeviceType t) {
    static CacheHooks h[3];
    return h[int(t)];
}
void set_cache_hooks(DeviceType t, CacheHooks h) {
    hooks(t) = h;
}
}  // namespace detail

Stats stats(Device d) {
    Counters& c = counters(d);
    const detail::CacheHooks& h = detail::hooks(d.type);
    const int64_t cached = d.is_cpu()       ? backend::cpu_cached_bytes()
                           : h.cached_bytes ? h.cached_bytes(d.index)
                                            : 0;
    return {c.current.load(), c.peak.load(),  c.allocs.load(),
            cached,           c.saved.load(), c.peak_saved.load()};
}
void reset_peak(Device d) {
    Counters& c = counters(d);
    c.peak.store(c.current.load());
    c.peak_saved.store(c.saved.load());
}
void empty_cache(Device d) {
    if (d.is_cpu())
        backend::cpu_empty_cache();
    else if (detail::hooks(d.type).empty_cache)
        detail::hooks(d.type).empty_cache(d.index);
}
Transfers transfers(Device d) {
    Counters& c = counters(d);
    return {c.to_device.load(), c.to_host.load()};
}
void reset_transfers(Device d) {
    Counters& c = counters(d);
    c.to_device.store(0);
    c.to_host.store(0);
}

}  // namespace tg::memory
