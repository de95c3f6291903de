#pragma once
#include <cstdint>

#include "tapegrad/device.hpp"

namespace tg::memory::detail {
/// Called by every backend allocator (Note [Memory statistics] in memory.cpp).
void on_alloc(Device d, int64_t bytes);
void on_free(Device d, int64_t bytes);
/// Called when a buffer starts (bytes > 0) or stops (bytes < 0) being kept for backward.
void on_saved(Device d, int64_t bytes);
/// Called by device backends for every host<->device copy.
void on_transfer(Device d, bool to_device, int64_t bytes);
/// A device backend's cache, for Stats::cached_bytes and empty_cache.
struct CacheHooks {
    int64_t (*cached_bytes)(int index) = nullptr;
    void (*empty_cache)(int index) = nullptr;
};
void set_cache_hooks(DeviceType t, CacheHooks h);
}  // namespace tg::memory::detail
