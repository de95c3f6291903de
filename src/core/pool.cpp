#include "core/pool.hpp"

#include <sys/mman.h>

namespace tg::detail {

// Note [Pool slabs]: blocks come from 1 MiB slabs per size class, carved in address order, not
// from malloc one by one. The objects of one op (node, tensor header, storage) made one after
// another then sit next to those of the previous op, instead of scattered over a heap that
// other code (LibTorch in the benchmark, the user's program) also churns. With malloc'd blocks
// the 10,000-op chain of bench_autograd ran about 2x slower after unrelated heap churn (a cold
// cache then misses on every object); with slabs it runs close to its warm-cache speed. Slabs
// come straight from mmap, so pages never touched cost no memory.
void* refill(size_t c) {
    constexpr size_t kSlab = size_t(1) << 20;
    void* p = mmap(nullptr, kSlab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    const size_t bytes = c * FreeLists::kGranule, n = kSlab / bytes;
    char* base = static_cast<char*>(p);
    void*& h = free_lists().head[c];
    for (size_t i = n; i-- > 1;) {  // blocks 1..n-1 onto the list, lowest address on top
        *reinterpret_cast<void**>(base + i * bytes) = h;
        h = base + i * bytes;
    }
    return base;
}

}  // namespace tg::detail
