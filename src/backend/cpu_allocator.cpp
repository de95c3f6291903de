#include "backend/cpu_allocator.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "memory_internal.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend {

namespace {
constexpr size_t kCacheMin = size_t(64) << 10;
constexpr size_t kPage = 4096;

struct Cache {
    std::mutex mu;
    std::multimap<size_t, void*> free_blocks;       // capacity -> block
    std::unordered_map<void*, size_t> capacity_of;  // live cached-size blocks
    int64_t cached = 0;
};
Cache& cache() {
    static Cache* c = new Cache;  // never destroyed: tensors may be freed during static teardown
    return *c;
}

void* raw_alloc(size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, n < 64 ? 64 : n) != 0 || !p)
        throw error("cpu: out of memory allocating " + std::to_string(n) + " bytes");
    return p;
}
}  // namespace

void* cpu_allocate(size_t nbytes) {
    memory::detail::on_alloc(Device::cpu(), int64_t(nbytes));
    if (nbytes < kCacheMin)
        return raw_alloc(nbytes);
    const size_t cap = (nbytes + kPage - 1) / kPage * kPage;
    Cache& c = cache();
    {
        std::lock_guard<std::mutex> lock(c.mu);
        // the smallest cached block that fits without wasting more than a quarter of it
        auto it = c.free_blocks.lower_bound(cap);
        if (it != c.free_blocks.end() && it->first <= cap + cap / 4) {
            void* p = it->second;
            c.cached -= int64_t(it->first);
            c.capacity_of[p] = it->first;
            c.free_blocks.erase(it);
            return p;
        }
    }
    void* p = raw_alloc(cap);
    std::lock_guard<std::mutex> lock(c.mu);
    c.capacity_of[p] = cap;
    return p;
}

void cpu_deallocate(void* p, size_t nbytes) {
    memory::detail::on_free(Device::cpu(), int64_t(nbytes));
    if (nbytes < kCacheMin) {
        std::free(p);
        return;
    }
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.capacity_of.find(p);
    const size_t cap = it->second;
    c.capacity_of.erase(it);
    c.free_blocks.emplace(cap, p);
    c.cached += int64_t(cap);
}

int64_t cpu_cached_bytes() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    return c.cached;
}

void cpu_empty_cache() {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    for (auto& [cap, p] : c.free_blocks)
        std::free(p);
    c.free_blocks.clear();
    c.cached = 0;
}

}  // namespace tg::backend
