// tg::memory: each device's counters (Note [Memory statistics] in backend/backend.hpp) and its
// backend's cache. A device whose backend was never made has held nothing.
#include "tapegrad/memory.hpp"

#include "backend/registry.hpp"

namespace tg::memory {

Stats stats(Device d) {
    backend::Backend* b = backend::existing(d);
    if (!b)
        return {};
    backend::MemoryCounters& c = b->counters();
    return {c.current.load(),  c.peak.load(),  c.allocs.load(),
            b->cached_bytes(), c.saved.load(), c.peak_saved.load()};
}

void reset_peak(Device d) {
    if (backend::Backend* b = backend::existing(d)) {
        backend::MemoryCounters& c = b->counters();
        c.peak.store(c.current.load());
        c.peak_saved.store(c.saved.load());
    }
}

void set_limit(int64_t bytes, Device d) {
    backend::get(d).counters().limit.store(bytes > 0 ? bytes : 0, std::memory_order_relaxed);
}

int64_t limit(Device d) {
    backend::Backend* b = backend::existing(d);
    return b ? b->counters().limit.load(std::memory_order_relaxed) : 0;
}

void empty_cache(Device d) {
    if (backend::Backend* b = backend::existing(d))
        b->empty_cache();
}

Transfers transfers(Device d) {
    backend::Backend* b = backend::existing(d);
    if (!b || d.is_cpu())
        return {};
    backend::MemoryCounters& c = b->counters();
    return {c.to_device.load(), c.to_host.load()};
}

void reset_transfers(Device d) {
    if (backend::Backend* b = backend::existing(d)) {
        b->counters().to_device.store(0);
        b->counters().to_host.store(0);
    }
}

}  // namespace tg::memory
