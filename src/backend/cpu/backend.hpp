#pragma once
// The CPU backend: strided loops generated from kernels.def (elementwise.cpp), reductions
// (reduce.cpp), index kernels (index.cpp), BLAS through xtensor-blas over OpenBLAS (blas.cpp).
#include "backend/backend.hpp"

namespace tg::backend::cpu {

class CpuBackend final : public Backend {
public:
    CpuBackend();
    TG_BACKEND_KERNELS(, override)

protected:
    void* raw_allocate(size_t nbytes) override;
    void raw_free(void* p) override;
};

}  // namespace tg::backend::cpu
