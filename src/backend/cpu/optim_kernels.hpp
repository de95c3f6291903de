#pragma once
// The fused CPU kernels of the optimizers (Note [Multi-tensor optimizer steps] in
// cpu/optim_kernels.cpp): one pass per parameter, every parameter of a step in one threaded job.
// Host pointers to contiguous float32 or float64 data of the item's dtype, no two of an item's
// tensors overlapping. The optimizers call them for parameters on the CPU and keep their
// composed path elsewhere.
#include <cstdint>
#include <vector>

#include "tapegrad/dtype.hpp"

namespace tg::backend::cpu {

/// One parameter's Adam/AdamW update; the scalars are rounded to `dtype` as the composed ops
/// round them. vmax is null without amsgrad.
struct AdamItem {
    Dtype dtype = Dtype::Float32;
    void* p = nullptr;
    const void* g = nullptr;
    void* m = nullptr;
    void* v = nullptr;
    void* vmax = nullptr;
    int64_t n = 0;
    enum Decay : int { none, coupled, decoupled } decay = none;
    double decay_factor = 0;  // coupled: g + factor·p; decoupled: p·factor (1 - lr·wd)
    double beta1 = 0, beta1c = 0, beta2 = 0, beta2c = 0;  // beta1c = 1 - β1, beta2c = 1 - β2
    double rsqrt_bc2 = 0, eps = 0, neg_step = 0;  // 1/√(1 - β2ᵗ), eps, -lr/(1 - β1ᵗ)
};

/// One parameter's SGD update. buf is null without momentum; `first`: buf holds nothing yet
/// (the first step with momentum copies the direction into it).
struct SgdItem {
    Dtype dtype = Dtype::Float32;
    void* p = nullptr;
    const void* g = nullptr;
    void* buf = nullptr;
    int64_t n = 0;
    double weight_decay = 0, momentum = 0, dampening_c = 0, neg_lr = 0;  // dampening_c = 1 - d
    bool first = false, nesterov = false;
};

/// Every item's update, as one job over the items' elements split into one range per thread.
void adam_steps(const std::vector<AdamItem>& items);
void sgd_steps(const std::vector<SgdItem>& items);

}  // namespace tg::backend::cpu
