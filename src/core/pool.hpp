#pragma once
// A thread-local free-list allocator for the small objects every op creates (tensor headers,
// storages, tape nodes): popping a list is far cheaper than malloc's general path, and autograd
// overhead on small tensors is mostly allocation. Blocks are carved from slabs shared by all
// threads (Note [Pool slabs] in pool.cpp): an object may be freed by another thread than the one
// that made it, and a thread that exits hands its blocks over, so memory stays bounded by the
// peak number of live objects plus a bounded cache per live thread. Use with
// std::allocate_shared.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace tg::detail {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPoolEnabled = false;  // let AddressSanitizer see every allocation and free
#else
constexpr bool kPoolEnabled = true;
#endif

struct FreeLists {
    static constexpr size_t kGranule = 16, kClasses = 64;  // blocks of 16..1008 bytes
    /// Blocks of size class c a thread's list keeps before it hands the surplus over: 1 MiB.
    static constexpr int32_t keep(size_t c) { return int32_t((size_t(1) << 20) / (c * kGranule)); }
    void* head[kClasses] = {};
    // How many more blocks each list may take before spill(); 0 until the thread's first call
    // into pool.cpp, so that its first free lands there too (Note [Pool slabs]).
    int32_t room[kClasses] = {};
    int state = 0;  // pool.cpp's: new, running, exited
};
/// The list of size class c is empty: fills it and returns a block (pool.cpp).
void* refill(size_t c);
/// The list of size class c has no room left: hands it over (pool.cpp).
void spill(size_t c);
inline FreeLists& free_lists() {
    thread_local FreeLists f;
    return f;
}

template <class T>
struct PoolAllocator {
    using value_type = T;
    PoolAllocator() = default;
    template <class U>
    PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT
    static constexpr size_t cls() {
        return (sizeof(T) + FreeLists::kGranule - 1) / FreeLists::kGranule;
    }
    static constexpr bool pooled() {
        return kPoolEnabled && cls() < FreeLists::kClasses && alignof(T) <= 16;
    }
    T* allocate(size_t n) {
        if (!pooled() || n != 1)
            return static_cast<T*>(::operator new(n * sizeof(T)));
        FreeLists& f = free_lists();
        if (void* p = f.head[cls()]) {
            f.head[cls()] = *static_cast<void**>(p);
            ++f.room[cls()];
            return static_cast<T*>(p);
        }
        return static_cast<T*>(refill(cls()));
    }
    void deallocate(T* p, size_t n) {
        if (!pooled() || n != 1) {
            ::operator delete(p);
            return;
        }
        FreeLists& f = free_lists();
        *reinterpret_cast<void**>(p) = f.head[cls()];
        f.head[cls()] = p;
        if (--f.room[cls()] < 0)
            spill(cls());
    }
    template <class U>
    bool operator==(const PoolAllocator<U>&) const {
        return true;
    }
    template <class U>
    bool operator!=(const PoolAllocator<U>&) const {
        return false;
    }
};

template <class T, class... A>
std::shared_ptr<T> make_pooled(A&&... a) {
    return std::allocate_shared<T>(PoolAllocator<T>(), std::forward<A>(a)...);
}

}  // namespace tg::detail
