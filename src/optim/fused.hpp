#pragma once
// Which updates the fused CPU kernels take (Note [Multi-tensor optimizer steps] in
// backend/cpu/optim_kernels.cpp), and their host pointers; which a device's fused kernels take.
#include <initializer_list>
#include <vector>

#include "backend/backend.hpp"
#include "tapegrad/tensor.hpp"

namespace tg::optim::detail {

/// Whether the fused kernels can update p from these tensors (p first; undefined entries are
/// skipped): all on the CPU, float32 or float64 of one dtype, contiguous, of p's shape, no two
/// in one storage. Other updates (other devices, float16, strided) keep the composed tensor ops.
bool fusable(std::initializer_list<const Tensor*> ts);
/// The same, for a parameter on a device whose backend fuses_optim_step() (OpenCL and CUDA: one
/// kernel per parameter, backend.hpp's OptimOp).
bool device_fusable(std::initializer_list<const Tensor*> ts);
/// The device kernel's operands (backend.hpp's OptimOp): views, data null where undefined.
std::vector<backend::View> device_views(std::initializer_list<const Tensor*> ts);
/// t's first element on the host (t on the CPU); null for an undefined t.
void* host_data(const Tensor& t);

}  // namespace tg::optim::detail
