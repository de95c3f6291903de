#include "backend/caching_allocator.hpp"

#include <string>

#include "tapegrad/error.hpp"

namespace tg::backend {

void* CachingAllocator::allocate(size_t nbytes) {
    if (nbytes > kMaxAllocation)  // no device holds it, and rounding it up could wrap
        throw out_of_memory("cannot allocate " + std::to_string(nbytes) +
                            " bytes: more than 2^62, the most any device can provide");
    if (nbytes < policy_.min_cached)
        return raw_allocate_(nbytes);
    const size_t g = policy_.granule;
    const size_t cap = nbytes < g ? g : (nbytes + g - 1) / g * g;  // no wrap: nbytes <= 2^62
    std::lock_guard<std::mutex> lock(mu_);
    // the smallest cached block that fits without wasting more than a quarter of it
    auto it = free_.lower_bound(cap);
    if (it != free_.end() && it->first <= cap + cap / 4) {
        void* p = it->second;
        cached_ -= int64_t(it->first);
        capacity_[p] = it->first;
        free_.erase(it);
        return p;
    }
    void* p = nullptr;
    try {
        p = raw_allocate_(cap);
    } catch (...) {
        if (free_.empty())
            throw;
        release_locked();  // give the cache back and try once more
        p = raw_allocate_(cap);
    }
    capacity_[p] = cap;
    return p;
}

void CachingAllocator::deallocate(void* p, size_t nbytes) {
    if (nbytes < policy_.min_cached) {
        raw_free_(p);
        return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = capacity_.find(p);
    free_.emplace(it->second, p);
    cached_ += int64_t(it->second);
    capacity_.erase(it);
}

int64_t CachingAllocator::cached_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
}

void CachingAllocator::release_all() {
    std::lock_guard<std::mutex> lock(mu_);
    release_locked();
}

void CachingAllocator::release_locked() {
    for (auto& [cap, p] : free_)
        raw_free_(p);
    free_.clear();
    cached_ = 0;
}

}  // namespace tg::backend
