#include "optim/fused.hpp"

#include <vector>

namespace tg::optim::detail {

bool fusable(std::initializer_list<const Tensor*> ts) {
    const Tensor& p = **ts.begin();
    if (!p.defined() || !p.device().is_cpu() || (p.dtype() != kFloat32 && p.dtype() != kFloat64))
        return false;
    std::vector<const void*> storages;
    for (const Tensor* t : ts) {
        if (!t->defined())
            continue;
        if (!t->device().is_cpu() || t->dtype() != p.dtype() || t->sizes() != p.sizes() ||
            !t->is_contiguous())
            return false;
        const void* s = t->impl()->storage.get();
        for (const void* o : storages)
            if (o == s)
                return false;
        storages.push_back(s);
    }
    return true;
}

void* host_data(const Tensor& t) {
    if (!t.defined())
        return nullptr;
    return static_cast<char*>(t.impl()->storage->data) +
           size_t(t.impl()->offset) * element_size(t.dtype());
}

}  // namespace tg::optim::detail
