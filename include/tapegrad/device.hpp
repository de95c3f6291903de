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
///
/// LibTorch's spellings work too: Device(kCUDA, 0), Device("opencl:1"), x.to(kCPU).
struct Device {
    DeviceType type = DeviceType::CPU;
    int index = 0;
    Device() = default;
    Device(DeviceType t, int i = 0) : type(t), index(i) {}  // implicit, as in LibTorch
    /// "cpu", "cuda", "cuda:1", "opencl", "opencl:0" (the index defaults to 0); anything else
    /// throws device_error naming the string.
    Device(const std::string& spec);
    Device(const char* spec) : Device(std::string(spec)) {}
    static Device cpu() { return {DeviceType::CPU, 0}; }
    static Device cuda(int i = 0) { return {DeviceType::CUDA, i}; }
    static Device opencl(int i = 0) { return {DeviceType::OpenCL, i}; }
    bool is_cpu() const { return type == DeviceType::CPU; }
    std::string str() const;
    friend bool operator==(Device a, Device b) { return a.type == b.type && a.index == b.index; }
    friend bool operator!=(Device a, Device b) { return !(a == b); }
};
constexpr DeviceType kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA, kOpenCL = DeviceType::OpenCL;
inline std::ostream& operator<<(std::ostream& os, Device d) {
    return os << d.str();
}

/// Whether the device exists and its backend was built in.
bool is_available(Device d);

/// LibTorch's tg::cuda::is_available() / device_count(), and the same for OpenCL: whether the
/// backend was built in and found a device, and how many.
namespace cuda {
bool is_available();
int device_count();
}  // namespace cuda
namespace opencl {
bool is_available();
int device_count();
}  // namespace opencl

}  // namespace tg

#pragma GCC visibility pop
