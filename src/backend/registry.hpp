#pragma once
// Which backend serves which device (registry.cpp). A backend folder provides a Family: its
// name, how many devices it sees and how to make the backend of one of them.
#include "backend/backend.hpp"

namespace tg::backend {

struct Family {
    const char* name;  // as Device::str() spells it: "cuda", "opencl"
    /// Devices present (0 when the driver or platform is missing); null: not built in.
    int (*device_count)();
    /// The backend of device `index` (called once per device, under the registry's lock).
    Backend* (*create)(int index);
    /// Why there is no device: when not built in, how to build it; else what to install.
    const char* missing;
    /// Null, or what must happen to a device's backend before the process exits (Note [Device
    /// shutdown] in registry.cpp): finish its queued work and release what the driver would
    /// otherwise tear down under it. Afterwards freeing a buffer does nothing and anything else
    /// throws backend_unavailable.
    void (*shutdown)(Backend& b);
};

/// The backend serving a device, made on first use; throws backend_unavailable for devices not
/// built in or not present.
Backend& get(Device d);
/// The CPU backend (always there).
Backend& cpu_backend();
/// The backend of d if it has been made already, else null (statistics without making one).
Backend* existing(Device d);

}  // namespace tg::backend
