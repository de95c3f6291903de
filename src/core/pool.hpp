#pragma once
// A thread-local free-list allocator for the small objects every op creates (tensor headers,
// storages, tape nodes): popping a list is far cheaper than malloc's general path, and autograd
// overhead on small tensors is mostly allocation. Blocks are carved from slabs (Note [Pool slabs]
// in pool.cpp) and never returned to the system; the lists are bounded by the peak number of
// live objects. Use with std::allocate_shared.
#include <cstddef>
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
    void* head[kClasses] = {};
};
/// Carves a new slab for size class c into the free list (in address order, so objects made
/// one after another sit next to each other) and returns its first block.
void* refill(size_t c);
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
    T* allocate(size_t n) {
        if (!kPoolEnabled || n != 1 || cls() >= FreeLists::kClasses || alignof(T) > 16)
            return static_cast<T*>(::operator new(n * sizeof(T)));
        void*& h = free_lists().head[cls()];
        if (void* p = h) {
            h = *static_cast<void**>(p);
            return static_cast<T*>(p);
        }
        return static_cast<T*>(refill(cls()));
    }
    void deallocate(T* p, size_t n) {
        if (!kPoolEnabled || n != 1 || cls() >= FreeLists::kClasses || alignof(T) > 16) {
            ::operator delete(p);
            return;
        }
        void*& h = free_lists().head[cls()];
        *reinterpret_cast<void**>(p) = h;
        h = p;
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
