#include "tapegrad/device.hpp"

#include "backend/backend.hpp"
#include "tapegrad/error.hpp"

namespace tg {

std::string Device::str() const {
    switch (type) {
        case DeviceType::CPU: return "cpu";
        case DeviceType::CUDA: return "cuda:" + std::to_string(index);
        default: return "opencl:" + std::to_string(index);
    }
}

const char* dtype_name(Dtype d) {
    switch (d) {
        case Dtype::Float32: return "float32";
        case Dtype::Float64: return "float64";
        default: return "int64";
    }
}

bool is_available(Device d) { return d.is_cpu(); }

namespace backend {
Backend& get(Device d) {
    if (d.is_cpu()) return cpu();
    if (d.type == DeviceType::CUDA)
        throw backend_unavailable(d.str() + ": tapegrad was built without TG_CUDA");
    throw backend_unavailable(d.str() + ": tapegrad was built without TG_OPENCL");
}
}  // namespace backend

}  // namespace tg
