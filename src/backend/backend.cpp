// What every backend shares: the caching allocator, the memory counters, the kernel names.
#include "backend/backend.hpp"

#include <string>

#include "tapegrad/error.hpp"

namespace tg::backend {

namespace {
void raise_peak(std::atomic<int64_t>& peak, int64_t now) {
    int64_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
}
}  // namespace

void MemoryCounters::on_alloc(int64_t bytes) {
    const int64_t now = current.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    allocs.fetch_add(1, std::memory_order_relaxed);
    raise_peak(peak, now);
}

void MemoryCounters::refuse_above_limit(int64_t bytes, Device d) const {
    const int64_t lim = limit.load(std::memory_order_relaxed), now = current.load();
    if (lim > 0 && bytes > lim - now)
        throw out_of_memory(d.str() + ": out of memory: cannot allocate " + std::to_string(bytes) +
                            " bytes with " + std::to_string(now) +
                            " held: the limit set by tg::memory::set_limit is " +
                            std::to_string(lim) + " bytes");
}

void MemoryCounters::on_saved(int64_t bytes) {
    raise_peak(peak_saved, saved.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

Backend::Backend(Device d, CachePolicy policy)
    : device_(d),
      cache_(
          policy, [this](size_t n) { return raw_allocate(n); }, [this](void* p) { raw_free(p); }) {}

void Backend::row_norm(RowNormOp, const RowNorm&, const View*) {
    throw error(device_.str() +
                ": no fused row normalisation kernel (internal error: the ops "
                "compose it where fuses_row_norm() is false)");
}

void Backend::plane_norm(PlaneNormOp, const PlaneNorm&, const View*) {
    throw error(device_.str() +
                ": no fused plane normalisation kernel (internal error: the ops "
                "compose it where fuses_plane_norm() is false)");
}

void Backend::optim_step(OptimOp, const OptimStep&, const View*) {
    throw error(device_.str() +
                ": no fused optimizer kernel (internal error: the optimizers "
                "compose their updates where fuses_optim_step() is false)");
}

void* Backend::allocate(size_t nbytes) {
    if (nbytes > kMaxAllocation)  // Note [Caching allocator]
        throw out_of_memory(device_.str() + ": cannot allocate " + std::to_string(nbytes) +
                            " bytes: more than 2^62, the most any device can provide");
    counters_.admit(int64_t(nbytes), device_);
    void* p = cache_.allocate(nbytes);  // counted once it exists: a failed one is no peak
    counters_.on_alloc(int64_t(nbytes));
    return p;
}

void Backend::deallocate(void* p, size_t nbytes) {
    counters_.on_free(int64_t(nbytes));
    cache_.deallocate(p, nbytes);
}

const char* unary_name(UnaryOp op) {
    switch (op) {
#define TG_UNARY(name, expr) \
    case UnaryOp::name:      \
        return #name;
#include "backend/kernels.def"
    }
    return "?";
}

const char* binary_name(BinaryOp op) {
    switch (op) {
#define TG_BINARY(name, expr) \
    case BinaryOp::name:      \
        return #name;
#include "backend/kernels.def"
    }
    return "?";
}

}  // namespace tg::backend
