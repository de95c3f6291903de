// The backend registry: one Family per DeviceType, each device's backend made once on first use
// and never destroyed (tensors may be freed during static teardown), but shut down at exit.
#include "backend/registry.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "tapegrad/error.hpp"

namespace tg {
namespace backend {

extern const Family cpu_family, cuda_family, opencl_family;

namespace {

// One line per backend, in DeviceType order.
const Family* const kFamilies[] = {&cpu_family, &cuda_family, &opencl_family};
static_assert(std::size(kFamilies) == kNumDeviceTypes, "one Family per DeviceType");

const Family& family(DeviceType t) {
    return *kFamilies[size_t(t)];
}

struct Instances {
    std::mutex mu;
    std::array<std::vector<Backend*>, kNumDeviceTypes> made;
};
Instances& instances() {
    static Instances* i = new Instances;  // never destroyed, as the backends it holds
    return *i;
}

// Note [Device shutdown]: a device driver tears itself down at exit, in its own static
// destructors and atexit handlers. With kernels still queued it tore itself down under them:
// `auto a = tg::ones({2, 2}, tg::Device::opencl(0)); return 0;` crashed 5 times in 5 with an empty
// PoCL kernel cache (PoCL's worker thread was still compiling the fill kernel while LLVM's and
// clang's statics were destroyed). So every device's queue must be finished, and its kernels,
// cached buffers, queue and context released (the Family's shutdown), before any of that
// teardown starts. An atexit handler alone is not early enough: handlers and static destructors
// run in the reverse order of their registration, and the compiler's statics are made lazily, at
// the first kernel build and even on PoCL's worker thread, after any handler registered when the
// backend was made (with one, the same program still crashed 3 times in 3). But exit() runs the
// destructors of the exiting thread's thread_locals before anything registered with atexit. So
// each thread, the first time it uses a device, makes a thread_local whose destructor, on the
// main thread, shuts the devices down (on return from main or exit() there, that comes first),
// and on any other thread finishes the devices' queued work (a thread that queued kernels and
// ended, with the main thread never touching a device, crashed 4 times in 4). The atexit handler
// then only releases what is left, with nothing in flight. Backends are never destroyed: a tensor
// still alive then (a static, or one another thread holds) is freed later, and after shutdown
// that free does nothing instead of calling the dead driver.
void shutdown_all() {
    Instances& in = instances();
    std::lock_guard<std::mutex> lock(in.mu);
    for (size_t t = 0; t < kNumDeviceTypes; ++t)
        if (family(DeviceType(t)).shutdown)
            for (Backend* b : in.made[t])
                if (b)
                    family(DeviceType(t)).shutdown(*b);
}

/// Waits for every device's queued work; errors found now have nobody left to report them to.
void finish_all() {
    std::vector<Backend*> all;
    {
        Instances& in = instances();
        std::lock_guard<std::mutex> lock(in.mu);
        for (const std::vector<Backend*>& made : in.made)
            for (Backend* b : made)
                if (b)
                    all.push_back(b);
    }
    for (Backend* b : all) {
        try {
            b->synchronize();
        } catch (...) {
        }
    }
}

/// Note [Device shutdown]: what a thread that used a device does when it ends.
struct AtThreadExit {
    bool main_thread;
    explicit AtThreadExit(bool main) : main_thread(main) {}
    AtThreadExit(const AtThreadExit&) = delete;
    AtThreadExit& operator=(const AtThreadExit&) = delete;
    ~AtThreadExit() {
        if (main_thread)
            shutdown_all();
        else
            finish_all();
    }
};

void arm_shutdown() {
    thread_local bool armed = false;
    if (armed)
        return;
    armed = true;
    thread_local AtThreadExit at_exit(gettid() == getpid());
    (void)at_exit;
}

int device_count(DeviceType t) {
    const Family& f = family(t);
    return f.device_count ? f.device_count() : 0;
}

Backend* find(Device d, bool create) {
    if (d.is_cpu())
        return &cpu_backend();
    if (size_t(d.type) >= kNumDeviceTypes || d.index < 0)
        return nullptr;
    const int n = device_count(d.type);
    if (d.index >= n)
        return nullptr;
    Instances& in = instances();
    std::lock_guard<std::mutex> lock(in.mu);
    std::vector<Backend*>& made = in.made[size_t(d.type)];
    if (made.size() < size_t(n))
        made.resize(size_t(n), nullptr);
    Backend*& b = made[size_t(d.index)];
    if (!b && create) {
        b = family(d.type).create(d.index);
        static const bool registered = std::atexit(shutdown_all) == 0;  // Note [Device shutdown]
        (void)registered;
    }
    return b;
}

}  // namespace

Backend& cpu_backend() {
    static Backend* b = cpu_family.create(0);
    return *b;
}

Backend* existing(Device d) {
    return find(d, false);
}

Backend& get(Device d) {
    if (d.is_cpu())
        return cpu_backend();
    if (Backend* b = find(d, true)) {
        arm_shutdown();
        return *b;
    }
    if (size_t(d.type) >= kNumDeviceTypes)
        throw backend_unavailable("device type " + std::to_string(int(d.type)) + " does not exist");
    const Family& f = family(d.type);
    const int n = device_count(d.type);
    if (!f.device_count || n == 0)
        throw backend_unavailable(d.str() + ": " + f.missing);
    throw backend_unavailable(d.str() + ": only " + std::to_string(n) + " " + f.name +
                              " device(s) found");
}

}  // namespace backend

std::string Device::str() const {
    if (size_t(type) >= kNumDeviceTypes)
        return "device_type_" + std::to_string(int(type)) + ":" + std::to_string(index);
    const char* name = backend::family(type).name;
    return is_cpu() ? std::string(name) : std::string(name) + ":" + std::to_string(index);
}

Device::Device(const std::string& spec) {
    const size_t colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    bool known = false;
    for (size_t t = 0; t < kNumDeviceTypes && !known; ++t)
        if (name == backend::family(DeviceType(t)).name) {
            type = DeviceType(t);
            known = true;
        }
    bool index_ok = colon == std::string::npos;
    if (!index_ok && colon + 1 < spec.size() && spec.size() - colon - 1 <= 4) {
        index_ok = true;
        index = 0;
        for (size_t i = colon + 1; i < spec.size(); ++i) {
            if (spec[i] < '0' || spec[i] > '9')
                index_ok = false;
            index = index * 10 + (spec[i] - '0');
        }
    }
    if (!known || !index_ok || (type == kCPU && index != 0))
        throw device_error("Device: '" + spec +
                           "' is not a device (cpu, cuda, cuda:N, opencl or opencl:N)");
}

namespace cuda {
bool is_available() {
    return device_count() > 0;
}
int device_count() {
    return backend::device_count(DeviceType::CUDA);
}
}  // namespace cuda

namespace opencl {
bool is_available() {
    return device_count() > 0;
}
int device_count() {
    return backend::device_count(DeviceType::OpenCL);
}
}  // namespace opencl

bool is_available(Device d) {
    if (d.is_cpu())
        return true;
    return size_t(d.type) < kNumDeviceTypes && d.index >= 0 &&
           d.index < backend::device_count(d.type);
}

}  // namespace tg
