#include "tapegrad/device.hpp"

#include "backend/backend.hpp"
#include "backend/opencl_backend.hpp"
#include "tapegrad/error.hpp"

namespace tg {

std::string Device::str() const {
    switch (type) {
        case DeviceType::CPU:
            return "cpu";
        case DeviceType::CUDA:
            return "cuda:" + std::to_string(index);
        default:
            return "opencl:" + std::to_string(index);
    }
}

const char* dtype_name(Dtype d) {
    switch (d) {
        case Dtype::Float32:
            return "float32";
        case Dtype::Float64:
            return "float64";
        default:
            return "int64";
    }
}

bool is_available(Device d) {
    if (d.is_cpu())
        return true;
    if (d.index < 0)
        return false;
#ifdef TG_CUDA
    if (d.type == DeviceType::CUDA)
        return d.index < backend::cuda_device_count();
#endif
#ifdef TG_OPENCL
    if (d.type == DeviceType::OpenCL)
        return d.index < backend::opencl_device_count();
#endif
    return false;
}

namespace backend {
Backend& get(Device d) {
    if (d.is_cpu())
        return cpu();
#ifdef TG_CUDA
    if (d.type == DeviceType::CUDA)
        return cuda(d.index);
#else
    if (d.type == DeviceType::CUDA)
        throw backend_unavailable(d.str() +
                                  ": tapegrad was built without TG_CUDA "
                                  "(configure with -DTG_CUDA=ON and nvcc in /usr/local/cuda)");
#endif
#ifdef TG_OPENCL
    return opencl(d.index);
#else
    throw backend_unavailable(d.str() +
                              ": tapegrad was built without TG_OPENCL "
                              "(install ocl-icd-opencl-dev and libclblast-dev, then reconfigure)");
#endif
}
}  // namespace backend

}  // namespace tg
