#pragma once
// Note [Caching allocator]: every backend allocates through one policy. New buffers are slow
// (clCreateBuffer and cudaMalloc are; on the CPU a fresh large block comes from mmap and every
// first touch of a page faults, about 1 ms per 8 MiB), so freed blocks of min_cached bytes and
// more are kept by capacity and handed out again for a request they fit within 25%. Capacities
// are rounded up to the granule (device: 512 bytes; CPU: a 4 KiB page). Smaller blocks go
// straight to the raw allocator (malloc caches those itself). When a raw allocation fails, the
// cache is given back and it is tried once more. Requests above kMaxAllocation (2^62 bytes,
// more than any host or device has) throw out_of_memory before any rounding, which therefore
// cannot wrap; raw allocators throw out_of_memory too when the system or device is full.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>

namespace tg::backend {

/// The largest request the allocator passes on (Note [Caching allocator]).
constexpr size_t kMaxAllocation = size_t(1) << 62;

struct CachePolicy {
    size_t min_cached = 0;  // smaller requests bypass the cache
    size_t granule = 512;   // capacities are multiples of this
};

class CachingAllocator {
public:
    using RawAllocate = std::function<void*(size_t)>;
    using RawFree = std::function<void(void*)>;
    CachingAllocator(CachePolicy policy, RawAllocate raw_allocate, RawFree raw_free)
        : policy_(policy), raw_allocate_(std::move(raw_allocate)), raw_free_(std::move(raw_free)) {}
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    /// A block of at least nbytes; throws out_of_memory above kMaxAllocation, else what the raw
    /// allocator throws.
    void* allocate(size_t nbytes);
    /// Gives back a block allocate(nbytes) returned.
    void deallocate(void* p, size_t nbytes);
    int64_t cached_bytes();
    /// Frees every cached block with the raw allocator.
    void release_all();

private:
    void release_locked();

    CachePolicy policy_;
    RawAllocate raw_allocate_;
    RawFree raw_free_;
    std::mutex mu_;
    std::multimap<size_t, void*> free_;           // capacity -> cached block
    std::unordered_map<void*, size_t> capacity_;  // blocks in use that came from the cache policy
    int64_t cached_ = 0;
};

}  // namespace tg::backend
