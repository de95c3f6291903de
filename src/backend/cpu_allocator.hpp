#pragma once
// The CPU caching allocator (DESIGN.md §5): freed blocks of 64 KiB and more are kept and handed
// out again, because fresh large blocks come from mmap and every first touch of a page faults
// (about 1 ms per 8 MiB here). Small blocks go straight to malloc, which caches them itself.
#include <cstddef>
#include <cstdint>

namespace tg::backend {

void* cpu_allocate(size_t nbytes);
void cpu_deallocate(void* p, size_t nbytes);
/// Bytes held in the cache (not by tensors).
int64_t cpu_cached_bytes();
/// Returns every cached block to the system.
void cpu_empty_cache();

}  // namespace tg::backend
