#pragma once
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#pragma GCC visibility push(default)

namespace tg {

enum class DeviceType : uint8_t { CPU, CUDA, OpenCL };
/// How many device types there are (each has one backend family: src/backend/registry.cpp).
constexpr size_t kNumDeviceTypes = 3;

/// Where a tensor's storage lives: tg::Device::cpu(), Device::cuda(0), Device::opencl(0).
struct Device {
    DeviceType type = DeviceType::CPU;
    int index = 0;
    static Device cpu() { return {DeviceType::CPU, 0}; }
    static Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
    static Device opencl(int i = 0) { return {DeviceType::OpenCL, i}; }
    bool is_cpu() const { return type == DeviceType::CPU; }
    std::string str() const;
    friend bool operator==(Device a, Device b) { return a.type == b.type && a.index == b.index; }
    friend bool operator!=(Device a, Device b) { return !(a == b); }
};
constexpr DeviceType kCPU = DeviceType::CPU;
inline std::ostream& operator<<(std::ostream& os, Device d) {
    return os << d.str();
}

/// Whether the device exists and its backend was built in.
bool is_available(Device d);

}  // namespace tg

#pragma GCC visibility pop
