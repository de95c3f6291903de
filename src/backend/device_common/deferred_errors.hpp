#pragma once
// Note [Deferred index errors]: checking indices on the host would read the index tensor back
// on every index op (cross_entropy's backward has one), breaking "updates never leave the
// device". Instead a device's check kernel records a bad index in a small status buffer
// {launch id, index, limit, dim} and the index kernels skip it; the status is read at the next
// synchronising call (to_host, item(), to(cpu), synchronize), which throws the shape_error
// naming the op then. The ring remembers the op name and dim of the last kRing launches, so the
// message names the op that saw the bad index. The device backend's own lock guards every call.
#include <cstdint>
#include <string>
#include <vector>

#include "tapegrad/device.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend {

class DeferredErrors {
public:
    static constexpr int64_t kRing = 256;
    DeferredErrors() : pending_(size_t(kRing)) {}

    /// The launch id for an index check about to be queued for op `op` along `dim`.
    int64_t launch(const char* op, int dim) {
        const int64_t id = ++launch_id_;
        pending_[size_t(id % kRing)] = {id, op, dim};
        unchecked_ = true;
        return id;
    }
    /// Whether a check was queued since the status was last read.
    bool unchecked() const { return unchecked_; }
    void checked() { unchecked_ = false; }
    /// Throws the shape_error the status read back from d describes, if any (st[0] != 0).
    void raise(Device d, const int64_t st[4]) const {
        if (st[0] == 0)
            return;
        const Pending& p = pending_[size_t(st[0] % kRing)];
        const std::string op = p.id == st[0] ? p.op : std::string("index op");
        throw shape_error(op + ": index " + std::to_string(st[1]) + " is out of bounds for dim " +
                          std::to_string(st[3]) + " with size " + std::to_string(st[2]) +
                          " (detected on " + d.str() + " at the next synchronisation)");
    }

private:
    struct Pending {
        int64_t id = 0;
        std::string op;
        int dim = 0;
    };
    std::vector<Pending> pending_;
    int64_t launch_id_ = 0;
    bool unchecked_ = false;
};

}  // namespace tg::backend
