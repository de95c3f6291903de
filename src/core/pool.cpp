#include "core/pool.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace tg::detail {

// Note [Pool slabs]: blocks come from 1 MiB slabs per size class, carved in address order, not
// from malloc one by one. The objects of one op (node, tensor header, storage) made one after
// another then sit next to those of the previous op, instead of scattered over a heap that
// other code (LibTorch in the benchmark, the user's program) also churns. With malloc'd blocks
// the 10,000-op chain of bench_autograd ran about 2x slower after unrelated heap churn (a cold
// cache then misses on every object); with slabs it runs close to its warm-cache speed. Slabs
// come straight from mmap and are carved a page at a time, so pages never used cost no memory.
//
// A slab is never unmapped: any of its blocks may be a live object, perhaps held by another
// thread than the one that carved it. Blocks move between threads instead, through the shared
// stacks below, so that memory is bounded by the peak of live objects plus at most 1 MiB per
// size class per live thread:
//   - A thread's list of a size class keeps at most FreeLists::keep(c) blocks; the free that
//     overflows it hands the whole list over as one chain. Otherwise a thread that frees what
//     another makes (a loader thread feeding a training thread) would grow its lists forever,
//     and the other thread map new slabs forever.
//   - A thread that exits hands over its lists and the uncarved rest of its slabs (the
//     destructor of a thread_local made at the thread's first call into this file: `room` starts
//     at 0 so that even a thread that only frees comes here). Whatever it frees or makes after
//     that (later thread_local destructors; static destructors on the main thread) goes to or
//     comes from the shared stacks a block at a time.
//   - An empty list takes a chain from the shared stacks before its thread carves more, and a
//     thread whose slab is used up takes an orphaned slab's rest before it maps a new slab.
// Without this, 200 short-lived threads doing one training step each left about 5 MiB each
// behind (+1 GB of RSS while memory::stats stayed flat): each carved a fresh slab per size
// class, wrote every block of it, and nobody used those slabs again.

namespace {

constexpr size_t kSlab = size_t(1) << 20, kPage = 4096;
enum State { kNew = 0, kRunning = 1, kExited = 2 };

struct Chain {
    void* head;
    int32_t count;
};
struct Range {  // blocks not carved yet
    char* next = nullptr;
    char* end = nullptr;
};

/// What threads hand over, by size class.
struct Shared {
    std::mutex mu;
    std::vector<Chain> chains[FreeLists::kClasses];
    std::vector<Range> ranges[FreeLists::kClasses];
};
Shared& shared() {
    static Shared* s = new Shared;  // never destroyed: objects are freed during static teardown
    return *s;
}

thread_local Range t_uncarved[FreeLists::kClasses];  // the rest of this thread's newest slabs

size_t block_bytes(size_t c) {
    return c * FreeLists::kGranule;
}

Range new_slab(size_t c) {
    void* p = mmap(nullptr, kSlab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    char* b = static_cast<char*>(p);
    return {b, b + kSlab / block_bytes(c) * block_bytes(c)};
}

/// One block for a thread that has exited, from the shared stacks or a new slab.
void* one_block(size_t c) {
    Shared& s = shared();
    std::lock_guard<std::mutex> lock(s.mu);
    std::vector<Chain>& chains = s.chains[c];
    if (!chains.empty()) {
        Chain& ch = chains.back();
        void* p = ch.head;
        ch.head = *static_cast<void**>(p);
        if (--ch.count == 0)
            chains.pop_back();
        return p;
    }
    std::vector<Range>& ranges = s.ranges[c];
    if (ranges.empty())
        ranges.push_back(new_slab(c));
    Range& r = ranges.back();
    char* p = r.next;
    r.next += block_bytes(c);
    if (r.next >= r.end)
        ranges.pop_back();
    return p;
}

/// Hands the thread's blocks over when it exits.
struct ExitHook {
    ExitHook() = default;
    ExitHook(const ExitHook&) = delete;
    ExitHook& operator=(const ExitHook&) = delete;
    ~ExitHook() {
        FreeLists& f = free_lists();
        Shared& s = shared();
        std::lock_guard<std::mutex> lock(s.mu);
        for (size_t c = 1; c < FreeLists::kClasses; ++c) {
            if (f.head[c])
                s.chains[c].push_back({f.head[c], FreeLists::keep(c) - f.room[c]});
            f.head[c] = nullptr;
            f.room[c] = 0;  // every later free comes to spill()
            Range& u = t_uncarved[c];
            if (u.next < u.end)
                s.ranges[c].push_back(u);
            u = Range();
        }
        f.state = kExited;
    }
};

/// The thread's first call into this file. Its lists are empty but for the block whose free
/// brought it here, if one did (room -1).
void start(FreeLists& f) {
    thread_local ExitHook hook;
    for (size_t c = 1; c < FreeLists::kClasses; ++c)
        f.room[c] += FreeLists::keep(c);
    f.state = kRunning;
}

}  // namespace

void* refill(size_t c) {
    FreeLists& f = free_lists();
    if (f.state == kNew)
        start(f);
    if (f.state == kExited)
        return one_block(c);
    // the list is empty: a chain handed over, else the next page of this thread's slab
    Range& u = t_uncarved[c];
    {
        Shared& s = shared();
        std::lock_guard<std::mutex> lock(s.mu);
        std::vector<Chain>& chains = s.chains[c];
        if (!chains.empty()) {
            const Chain ch = chains.back();
            chains.pop_back();
            f.head[c] = *static_cast<void**>(ch.head);
            f.room[c] = FreeLists::keep(c) - (ch.count - 1);
            return ch.head;
        }
        std::vector<Range>& ranges = s.ranges[c];
        if (u.next >= u.end && !ranges.empty()) {
            u = ranges.back();
            ranges.pop_back();
        }
    }
    if (u.next >= u.end)
        u = new_slab(c);
    const size_t bytes = block_bytes(c);
    const size_t n = std::min(std::max(kPage / bytes, size_t(1)), size_t(u.end - u.next) / bytes);
    char* base = u.next;
    void*& h = f.head[c];
    for (size_t i = n; i-- > 1;) {  // blocks 1..n-1 onto the list, lowest address on top
        *reinterpret_cast<void**>(base + i * bytes) = h;
        h = base + i * bytes;
    }
    u.next += n * bytes;
    f.room[c] = FreeLists::keep(c) - int32_t(n - 1);
    return base;
}

void spill(size_t c) {
    FreeLists& f = free_lists();
    if (f.state == kNew) {
        start(f);  // the thread's first free: the block stays on its list
        return;
    }
    const int32_t count = f.state == kExited ? 1 : FreeLists::keep(c) - f.room[c];
    Shared& s = shared();
    std::lock_guard<std::mutex> lock(s.mu);
    s.chains[c].push_back({f.head[c], count});
    f.head[c] = nullptr;
    f.room[c] = f.state == kExited ? 0 : FreeLists::keep(c);
}

}  // namespace tg::detail
