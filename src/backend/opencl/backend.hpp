#pragma once
// The OpenCL backend (DESIGN.md §5): buffers from the caching allocator, kernels generated from
// kernels.def (source.cpp: one program per dtype, built once per context, kernels.cpp launches
// them), BLAS through CLBlast in row-major layout (blas.cpp). Runs on PoCL's CPU device in CI.
// One mutex serialises the command queue and the kernel objects (whose arguments are state).
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/backend.hpp"
#include "backend/device_common/deferred_errors.hpp"

namespace tg::backend::opencl {

/// Throws tg::error naming the OpenCL call unless err is CL_SUCCESS.
void check(cl_int err, const char* call, const std::string& extra = "");

/// A by-value kernel argument of `bytes` bytes in local memory.
struct Local {
    size_t bytes;
};

class OpenClBackend final : public Backend {
public:
    OpenClBackend(int index, cl_device_id id);
    TG_BACKEND_KERNELS(, override)
    bool fuses_row_norm() const override { return true; }
    void row_norm(RowNormOp op, const RowNorm& g, const View* v) override;  // norm.cpp
    bool fuses_plane_norm() const override { return true; }
    void plane_norm(PlaneNormOp op, const PlaneNorm& g, const View* v) override;  // norm.cpp
    bool fuses_optim_step() const override { return true; }
    void optim_step(OptimOp op, const OptimStep& s, const View* v) override;  // optim.cpp
    void synchronize() override;
    /// At exit (Note [Device shutdown] in backend/registry.cpp): finishes the queue and releases
    /// the kernels, programs, cached buffers, queue and context. Afterwards freeing a buffer does
    /// nothing and every other call throws backend_unavailable.
    void shutdown();

protected:
    void* raw_allocate(size_t nbytes) override;
    void raw_free(void* p) override;

private:
    struct Program {
        cl_program prog = nullptr;
        std::unordered_map<std::string, cl_kernel> kernels;
    };

    static cl_mem mem(const View& v) { return static_cast<cl_mem>(v.data); }
    static cl_long off(const View& v) { return cl_long(v.offset); }

    /// Throws dtype_error unless the device can compute in d.
    void need(Dtype d, const char* op) const;
    /// Throws backend_unavailable once shutdown() has run.
    void live() const;
    cl_kernel kernel(Dtype d, const std::string& name);
    void build(Dtype d, Program& p);
    void arg_reduce(bool is_max, const View& out, const View& in, int dim);

    void set_arg(cl_kernel k, cl_uint i, const Local& l) {
        check(clSetKernelArg(k, i, l.bytes, nullptr), "clSetKernelArg");
    }
    template <class A>
    void set_arg(cl_kernel k, cl_uint i, const A& a) {
        check(clSetKernelArg(k, i, sizeof(A), &a), "clSetKernelArg");
    }
    template <class... A>
    void set(cl_kernel k, cl_uint first, const A&... a) {
        cl_uint i = first;
        (set_arg(k, i++, a), ...);
    }
    void set_scalar(cl_kernel k, cl_uint i, Dtype d, double v);
    void enqueue(cl_kernel k, int64_t n, size_t local = 0);
    template <class... A>
    void run(Dtype d, const std::string& name, int64_t n, const A&... a) {
        cl_kernel k = kernel(d, name);
        set(k, 0, a...);
        enqueue(k, n);
    }

    void read(cl_mem m, size_t off, void* dst, size_t n);
    void write(cl_mem m, size_t off, const void* src, size_t n);
    void zero(cl_mem m, size_t n);
    /// Zeroes rows of C before a CLBlast call with beta = 0 (Note [beta = 0 reads C]).
    void zero_rows(const View& c, int64_t rows, int64_t cols, int64_t ld);
    /// Note [Deferred index errors]: throws the first recorded out-of-range index, if any.
    void check_index_status();

    cl_device_id id_;
    cl_context ctx_ = nullptr;
    cl_command_queue queue_ = nullptr;
    bool fp64_ = false;
    size_t local_ = 256;
    Program programs_[kNumDtypes];  // one per Dtype
    std::mutex mu_;
    cl_mem status_ = nullptr;
    DeferredErrors errors_;
    std::atomic<bool> down_{false};
};

}  // namespace tg::backend::opencl
