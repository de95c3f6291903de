// The OpenCL backend's context, memory, transfers, programs and kernel launches, and its
// registry entry.
#include "backend/opencl/backend.hpp"

#include <string>
#include <vector>

#include "backend/convert.hpp"
#include "backend/opencl/source.hpp"
#include "backend/registry.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend {
namespace opencl {

void check(cl_int err, const char* call, const std::string& extra) {
    if (err == CL_SUCCESS)
        return;
    throw error(std::string("OpenCL ") + call + " failed with error " + std::to_string(err) +
                (extra.empty() ? "" : ": " + extra));
}

namespace {

std::vector<cl_device_id> all_devices() {
    std::vector<cl_device_id> out;
    cl_uint np = 0;
    if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0)
        return out;
    std::vector<cl_platform_id> ps(np);
    clGetPlatformIDs(np, ps.data(), nullptr);
    for (cl_platform_id p : ps) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0)
            continue;
        std::vector<cl_device_id> ds(nd);
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr);
        out.insert(out.end(), ds.begin(), ds.end());
    }
    return out;
}

const std::vector<cl_device_id>& devices() {
    static const std::vector<cl_device_id> d = all_devices();
    return d;
}

}  // namespace

OpenClBackend::OpenClBackend(int index, cl_device_id id)
    : Backend(Device::opencl(index), CachePolicy{0, 512}), id_(id) {
    cl_int err = CL_SUCCESS;
    ctx_ = clCreateContext(nullptr, 1, &id_, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    queue_ = clCreateCommandQueue(ctx_, id_, 0, &err);
    check(err, "clCreateCommandQueue");
    cl_device_fp_config fp = 0;
    clGetDeviceInfo(id_, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, nullptr);
    fp64_ = fp != 0;
    size_t wg = 0;
    clGetDeviceInfo(id_, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, nullptr);
    local_ = wg >= 256 ? 256 : wg;
    status_ = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, 4 * sizeof(cl_long), nullptr, &err);
    check(err, "clCreateBuffer");
    zero(status_, 4 * sizeof(cl_long));
}

void OpenClBackend::live() const {
    if (down_.load(std::memory_order_acquire))
        throw backend_unavailable(device().str() + ": used after the device was shut down at exit");
}

void OpenClBackend::shutdown() {
    // the cache's lock is taken under mu_ here only; raw_allocate and raw_free never take mu_
    std::lock_guard<std::mutex> lock(mu_);
    if (down_.load())
        return;
    clFinish(queue_);  // errors are not reported: the process is exiting
    for (Program& p : programs_) {
        for (auto& [name, k] : p.kernels)
            clReleaseKernel(k);
        p.kernels.clear();
        if (p.prog)
            clReleaseProgram(p.prog);
        p.prog = nullptr;
    }
    clReleaseMemObject(status_);
    empty_cache();  // the cached buffers, while raw_free still releases them
    down_.store(true, std::memory_order_release);
    clReleaseCommandQueue(queue_);
    clReleaseContext(ctx_);  // the driver keeps it while live tensors' buffers hold it
}

// ---- memory (clCreateBuffer is slow: Note [Caching allocator])
void* OpenClBackend::raw_allocate(size_t nbytes) {
    live();
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, nbytes, nullptr, &err);
    // The codes of a device (or host) without room for the buffer, and of a buffer larger than
    // the device's largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE).
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
        err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE)
        throw out_of_memory(device().str() + ": out of memory allocating " +
                            std::to_string(nbytes) + " bytes (clCreateBuffer error " +
                            std::to_string(err) + ")");
    check(err, "clCreateBuffer",
          device().str() + ": allocating " + std::to_string(nbytes) + " bytes");
    return m;
}

void OpenClBackend::raw_free(void* p) {
    if (!down_.load(std::memory_order_acquire))  // after shutdown the driver may be gone
        clReleaseMemObject(static_cast<cl_mem>(p));
}

// ---- transfers (the only places bytes cross between host and device)
void OpenClBackend::to_host(void* dst, const void* src, size_t off, size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    check_index_status();
    read(static_cast<cl_mem>(const_cast<void*>(src)), off, dst, n);
}

void OpenClBackend::from_host(void* dst, size_t off, const void* src, size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    write(static_cast<cl_mem>(dst), off, src, n);
}

void OpenClBackend::synchronize() {
    std::lock_guard<std::mutex> lock(mu_);
    live();
    check(clFinish(queue_), "clFinish");
    check_index_status();
}

void OpenClBackend::read(cl_mem m, size_t off, void* dst, size_t n) {
    live();
    if (n == 0)
        return;
    check(clEnqueueReadBuffer(queue_, m, CL_TRUE, off, n, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    counters().on_transfer(false, int64_t(n));
}

void OpenClBackend::write(cl_mem m, size_t off, const void* src, size_t n) {
    live();
    if (n == 0)
        return;
    check(clEnqueueWriteBuffer(queue_, m, CL_TRUE, off, n, src, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
    counters().on_transfer(true, int64_t(n));
}

void OpenClBackend::zero(cl_mem m, size_t n) {
    live();
    const cl_long z = 0;
    check(clEnqueueFillBuffer(queue_, m, &z, sizeof z, 0, n, 0, nullptr, nullptr),
          "clEnqueueFillBuffer");
}

void OpenClBackend::check_index_status() {
    if (!errors_.unchecked())
        return;
    errors_.checked();
    cl_long st[4] = {};
    read(status_, 0, st, sizeof st);
    if (st[0] == 0)
        return;
    zero(status_, sizeof st);
    const int64_t status[4] = {st[0], st[1], st[2], st[3]};
    errors_.raise(device(), status);
}

// ---- programs and launches
void OpenClBackend::need(Dtype d, const char* op) const {
    if (d == Dtype::Float64 && !fp64_)
        throw dtype_error(std::string(op) + ": " + device().str() + " does not support float64");
}

cl_kernel OpenClBackend::kernel(Dtype d, const std::string& name) {
    live();
    need(d, name.c_str());
    Program& p = programs_[int(d)];
    if (!p.prog)
        build(d, p);
    auto it = p.kernels.find(name);
    if (it != p.kernels.end())
        return it->second;
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p.prog, name.c_str(), &err);
    check(err, "clCreateKernel", name + " (" + dtype_name(d) + ")");
    p.kernels.emplace(name, k);
    return k;
}

void OpenClBackend::build(Dtype d, Program& p) {
    const std::string src = opencl_program_source(d, fp64_);
    const char* text = src.c_str();
    cl_int err = CL_SUCCESS;
    p.prog = clCreateProgramWithSource(ctx_, 1, &text, nullptr, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(p.prog, 1, &id_, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(p.prog, id_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &len);
        std::string log(len, '\0');
        clGetProgramBuildInfo(p.prog, id_, CL_PROGRAM_BUILD_LOG, len, log.data(), nullptr);
        clReleaseProgram(p.prog);
        p.prog = nullptr;
        check(err, "clBuildProgram", std::string(dtype_name(d)) + " kernels:\n" + log);
    }
}

void OpenClBackend::set_scalar(cl_kernel k, cl_uint i, Dtype d, double v) {
    if (d == Dtype::Float32)
        set_arg(k, i, cl_float(v));
    else if (d == Dtype::Float64)
        set_arg(k, i, cl_double(v));
    else
        set_arg(k, i, cl_long(convert<int64_t>(v)));  // no undefined cast (Note [Conversions])
}

void OpenClBackend::enqueue(cl_kernel k, int64_t n, size_t local) {
    if (n <= 0)
        return;
    const size_t l = local ? local : local_;
    const size_t global = (size_t(n) + l - 1) / l * l;
    check(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, &l, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
}

}  // namespace opencl

extern const Family opencl_family = {
    "opencl", [] { return int(opencl::devices().size()); },
    [](int index) -> Backend* {
        return new opencl::OpenClBackend(index, opencl::devices()[size_t(index)]);
    },
    "no OpenCL platform found (install an ICD such as pocl-opencl-icd)",
    [](Backend& b) { static_cast<opencl::OpenClBackend&>(b).shutdown(); }};

}  // namespace tg::backend
