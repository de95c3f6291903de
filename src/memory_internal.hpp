#pragma once
#include <cstdint>

#include "tapegrad/device.hpp"

namespace tg::memory::detail {
/// Called by every backend allocator (Note [Memory statistics] in memory.cpp).
void on_alloc(Device d, int64_t bytes);
void on_free(Device d, int64_t bytes);
}  // namespace tg::memory::detail
