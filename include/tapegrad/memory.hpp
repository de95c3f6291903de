#pragma once
/// Allocator statistics per device: what tests and benchmarks read memory from.
#include <cstdint>

#include "tapegrad/device.hpp"
#pragma GCC visibility push(default)

namespace tg::memory {

struct Stats {
    int64_t current_bytes = 0;  // bytes held by live tensors
    int64_t peak_bytes = 0;     // maximum of current_bytes since start or reset_peak
    int64_t num_allocs = 0;     // allocations served since start
    int64_t cached_bytes = 0;   // freed blocks kept for reuse by the caching allocator
    /// Activation memory: bytes of the distinct buffers that recorded ops keep for backward
    /// (ops' outputs and intermediates, and inputs that are results of recorded ops; not the
    /// leaves they were given: parameters, the input batch, targets), and its maximum since
    /// start or reset_peak. A buffer kept by several nodes is counted once.
    int64_t saved_bytes = 0;
    int64_t peak_saved_bytes = 0;
};

Stats stats(Device d = Device::cpu());
/// Sets peak_bytes to current_bytes and peak_saved_bytes to saved_bytes.
void reset_peak(Device d = Device::cpu());
/// Returns cached blocks to the system.
void empty_cache(Device d = Device::cpu());

/// Caps the bytes live tensors hold on d (current_bytes): an allocation through tapegrad's
/// allocator that would bring current_bytes above `bytes` throws tg::out_of_memory naming the
/// device, the request, the bytes held and the limit, and allocates nothing. 0 or less: no limit
/// (the default). Cached blocks do not count. Meant for tests and for running a job as if it
/// had less memory; PyTorch's nearest is torch.cuda.set_per_process_memory_fraction (a fraction
/// of a GPU's memory, counting its cache). Several threads allocating at once may together pass
/// the limit by their last requests: each checks it alone.
void set_limit(int64_t bytes, Device d = Device::cpu());
/// The limit set on d, 0 for none.
int64_t limit(Device d = Device::cpu());

/// Bytes copied between host memory and a device (every read and write a backend makes).
struct Transfers {
    int64_t host_to_device = 0;
    int64_t device_to_host = 0;
    int64_t total() const { return host_to_device + device_to_host; }
};
/// Bytes moved to and from device d since start or reset_transfers(d) (always 0 for the CPU).
Transfers transfers(Device d);
/// Sets the transfer counters of d to zero.
void reset_transfers(Device d);

}  // namespace tg::memory

#pragma GCC visibility pop
