// The CPU backend's memory and transfers, and its registry entry.
#include "backend/cpu/backend.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "backend/registry.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend {
namespace cpu {

// Blocks of 64 KiB and more are cached (Note [Caching allocator]); capacities are whole pages.
CpuBackend::CpuBackend() : Backend(Device::cpu(), CachePolicy{size_t(64) << 10, 4096}) {}

void* CpuBackend::raw_allocate(size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, n < 64 ? 64 : n) != 0 || !p)
        throw out_of_memory("cpu: out of memory allocating " + std::to_string(n) + " bytes");
    return p;
}

void CpuBackend::raw_free(void* p) {
    std::free(p);
}

void CpuBackend::to_host(void* dst, const void* src, size_t off, size_t n) {
    std::memcpy(dst, static_cast<const char*>(src) + off, n);
}

void CpuBackend::from_host(void* dst, size_t off, const void* src, size_t n) {
    std::memcpy(static_cast<char*>(dst) + off, src, n);
}

}  // namespace cpu

extern const Family cpu_family = {"cpu", [] { return 1; },
                                  [](int) -> Backend* { return new cpu::CpuBackend; }, ""};

}  // namespace tg::backend
