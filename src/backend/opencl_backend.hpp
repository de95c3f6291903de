#pragma once
// Entry points of the OpenCL and CUDA backends for device.cpp (built with TG_OPENCL / TG_CUDA).
#include "backend/backend.hpp"

namespace tg::backend {

#ifdef TG_OPENCL
/// Number of OpenCL devices over all platforms (0 when there is no platform).
int opencl_device_count();
/// The backend of the index-th OpenCL device; throws backend_unavailable if there is none.
Backend& opencl(int index);
#endif
#ifdef TG_CUDA
/// Number of CUDA devices (0 when the driver or a device is missing).
int cuda_device_count();
/// The backend of CUDA device `index`; throws backend_unavailable if there is none.
Backend& cuda(int index);
#endif

}  // namespace tg::backend
