#include "optim/fused.hpp"

#include <vector>

#include "runtime/dispatch.hpp"

namespace tg::optim::detail {

namespace {

/// fusable's checks, with p on the CPU (cpu) or on a device whose backend fuses the update.
bool fusable_on(std::initializer_list<const Tensor*> ts, bool cpu) {
    const Tensor& p = **ts.begin();
    if (!p.defined() || p.device().is_cpu() != cpu ||
        (p.dtype() != kFloat32 && p.dtype() != kFloat64))
        return false;
    if (!cpu && !runtime::be(p).fuses_optim_step())
        return false;
    std::vector<const void*> storages;
    for (const Tensor* t : ts) {
        if (!t->defined())
            continue;
        if (t->device() != p.device() || t->dtype() != p.dtype() || t->sizes() != p.sizes() ||
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

}  // namespace

bool fusable(std::initializer_list<const Tensor*> ts) {
    return fusable_on(ts, true);
}

bool device_fusable(std::initializer_list<const Tensor*> ts) {
    return fusable_on(ts, false);
}

std::vector<backend::View> device_views(std::initializer_list<const Tensor*> ts) {
    std::vector<backend::View> v;
    for (const Tensor* t : ts)
        v.push_back(t->defined() ? runtime::view(*t) : backend::View{});
    return v;
}

void* host_data(const Tensor& t) {
    if (!t.defined())
        return nullptr;
    return static_cast<char*>(t.impl()->storage->data) +
           size_t(t.impl()->offset) * element_size(t.dtype());
}

}  // namespace tg::optim::detail
