// The backend registry: one Family per DeviceType, each device's backend made once on first use
// and never destroyed (tensors may be freed during static teardown).
#include "backend/registry.hpp"

#include <array>
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
    if (!b && create)
        b = family(d.type).create(d.index);
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
    if (Backend* b = find(d, true))
        return *b;
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

bool is_available(Device d) {
    if (d.is_cpu())
        return true;
    return size_t(d.type) < kNumDeviceTypes && d.index >= 0 &&
           d.index < backend::device_count(d.type);
}

}  // namespace tg
