#pragma once
// The caching part of the device allocators (OpenCL, CUDA): creating a device buffer is slow
// (clCreateBuffer, cudaMalloc), so freed blocks are kept by capacity and handed out again for a
// request they fit within 25%; capacities are rounded up to 512 bytes. The backend's own mutex
// guards every call.
#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace tg::backend {

template <class Handle>
class BlockCache {
public:
    static constexpr size_t kGranule = 512;
    /// The capacity a block for nbytes gets.
    static size_t capacity_for(size_t nbytes) {
        return nbytes < kGranule ? kGranule : (nbytes + kGranule - 1) / kGranule * kGranule;
    }
    /// A cached block for capacity cap (at most 25% larger), now in use; false if none.
    bool take(size_t cap, Handle& out) {
        auto it = free_.lower_bound(cap);
        if (it == free_.end() || it->first > cap + cap / 4)
            return false;
        out = it->second;
        cached_ -= int64_t(it->first);
        capacity_[out] = it->first;
        free_.erase(it);
        return true;
    }
    /// A block the backend has just created with capacity cap, now in use.
    void created(Handle h, size_t cap) { capacity_[h] = cap; }
    /// A block in use is freed: keep it for reuse.
    void give_back(Handle h) {
        auto it = capacity_.find(h);
        free_.emplace(it->second, h);
        cached_ += int64_t(it->second);
        capacity_.erase(it);
    }
    /// Destroys every cached block with release(handle).
    template <class Release>
    void release_all(Release release) {
        for (auto& [cap, h] : free_)
            release(h);
        free_.clear();
        cached_ = 0;
    }
    bool empty() const { return free_.empty(); }
    int64_t cached_bytes() const { return cached_; }

private:
    std::multimap<size_t, Handle> free_;
    std::unordered_map<Handle, size_t> capacity_;
    int64_t cached_ = 0;
};

}  // namespace tg::backend
