// The registry entries of the backends this build leaves out, saying how to build them (a built
// backend's entry is in its own folder).
#include "backend/registry.hpp"

namespace tg::backend {

#ifndef TG_CUDA
extern const Family cuda_family = {"cuda", nullptr, nullptr,
                                   "tapegrad was built without TG_CUDA (configure with "
                                   "-DTG_CUDA=ON and nvcc in /usr/local/cuda)",
                                   nullptr};
#endif
#ifndef TG_OPENCL
extern const Family opencl_family = {"opencl", nullptr, nullptr,
                                     "tapegrad was built without TG_OPENCL (install "
                                     "ocl-icd-opencl-dev and libclblast-dev, then reconfigure)",
                                     nullptr};
#endif

}  // namespace tg::backend
