// The OpenCL backend (DESIGN.md §5): buffers from a caching allocator, kernels generated from
// kernels.def (opencl_source.cpp, one program per dtype, built once per context), BLAS through
// CLBlast in row-major layout. Runs on PoCL's CPU device in CI.
#ifdef TG_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/block_cache.hpp"
#include "backend/opencl_backend.hpp"
#include "backend/opencl_geo.hpp"
#include "backend/opencl_source.hpp"
#include "memory_internal.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend {

namespace {

void check(cl_int err, const char* call, const std::string& extra = "") {
    if (err == CL_SUCCESS)
        return;
    throw error(std::string("OpenCL ") + call + " failed with error " + std::to_string(err) +
                (extra.empty() ? "" : ": " + extra));
}

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

/// A by-value kernel argument of `bytes` bytes in local memory.
struct Local {
    size_t bytes;
};

const char* dtype_tag(Dtype d) {
    return d == Dtype::Float32 ? "f32" : d == Dtype::Float64 ? "f64" : "i64";
}

class OpenClBackend final : public Backend {
public:
    explicit OpenClBackend(int index) : dev_(Device::opencl(index)), id_(devices()[size_t(index)]) {
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
        flag_ = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, sizeof(cl_long), nullptr, &err);
        check(err, "clCreateBuffer");
        zero(status_, 4 * sizeof(cl_long));
        pending_.resize(kRing);
    }

    // ---- memory (a caching allocator: clCreateBuffer is slow; block_cache.hpp)
    void* allocate(size_t nbytes) override {
        memory::detail::on_alloc(dev_, int64_t(nbytes));
        const size_t cap = BlockCache<cl_mem>::capacity_for(nbytes);
        std::lock_guard<std::mutex> lock(mu_);
        cl_mem m = nullptr;
        if (blocks_.take(cap, m))
            return m;
        cl_int err = CL_SUCCESS;
        m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, cap, nullptr, &err);
        if (err != CL_SUCCESS && !blocks_.empty()) {  // give the cache back and retry once
            release_cache_locked();
            m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, cap, nullptr, &err);
        }
        if (err != CL_SUCCESS)
            memory::detail::on_free(dev_, int64_t(nbytes));
        check(err, "clCreateBuffer",
              dev_.str() + ": allocating " + std::to_string(nbytes) + " bytes");
        blocks_.created(m, cap);
        return m;
    }
    void deallocate(void* p, size_t nbytes) override {
        memory::detail::on_free(dev_, int64_t(nbytes));
        std::lock_guard<std::mutex> lock(mu_);
        blocks_.give_back(static_cast<cl_mem>(p));
    }
    int64_t cached_bytes() {
        std::lock_guard<std::mutex> lock(mu_);
        return blocks_.cached_bytes();
    }
    void empty_cache() {
        std::lock_guard<std::mutex> lock(mu_);
        release_cache_locked();
    }

    // ---- transfers (the only places bytes cross between host and device)
    void to_host(void* dst, const void* src, size_t off, size_t n) override {
        std::lock_guard<std::mutex> lock(mu_);
        check_index_status();
        read(static_cast<cl_mem>(const_cast<void*>(src)), off, dst, n);
    }
    void from_host(void* dst, size_t off, const void* src, size_t n) override {
        std::lock_guard<std::mutex> lock(mu_);
        write(static_cast<cl_mem>(dst), off, src, n);
    }
    void synchronize() override {
        std::lock_guard<std::mutex> lock(mu_);
        check(clFinish(queue_), "clFinish");
        check_index_status();
    }

    // ---- elementwise
    void copy(const View& out, const View& in) override {
        std::lock_guard<std::mutex> lock(mu_);
        const View* v[2] = {&out, &in};
        const Geo<2> g = geo_of<2>(v);
        const int64_t n = numel(g);
        const std::string name = std::string("copy_") + dtype_tag(in.dtype);
        if (is_flat(g))
            run(out.dtype, name + "_c", n, mem(out), off(out), mem(in), off(in), cl_long(n));
        else
            run(out.dtype, name + "_s", n, mem(out), off(out), mem(in), off(in), cl_long(n), g);
    }
    void fill(const View& out, double value) override {
        std::lock_guard<std::mutex> lock(mu_);
        const View* v[1] = {&out};
        const Geo<1> g = geo_of<1>(v);
        const int64_t n = numel(g);
        cl_kernel k = kernel(out.dtype, is_flat(g) ? "fill_c" : "fill_s");
        set(k, 0, mem(out), off(out));
        set_scalar(k, 2, out.dtype, value);
        set(k, 3, cl_long(n));
        if (!is_flat(g))
            set(k, 4, g);
        enqueue(k, n);
    }
    void unary(UnaryOp op, const View& out, const View& x, double p, double q) override {
        std::lock_guard<std::mutex> lock(mu_);
        const View* v[2] = {&out, &x};
        const Geo<2> g = geo_of<2>(v);
        const int64_t n = numel(g);
        const bool flat = is_flat(g);
        cl_kernel k = kernel(out.dtype, std::string("u_") + unary_name(op) + (flat ? "_c" : "_s"));
        set(k, 0, mem(out), off(out), mem(x), off(x));
        set_scalar(k, 4, out.dtype, p);
        set_scalar(k, 5, out.dtype, q);
        set(k, 6, cl_long(n));
        if (!flat)
            set(k, 7, g);
        enqueue(k, n);
    }
    void binary(BinaryOp op, const View& out, const View& a, const View& b, double p,
                double q) override {
        std::lock_guard<std::mutex> lock(mu_);
        const View* v[3] = {&out, &a, &b};
        const Geo<3> g = geo_of<3>(v);
        const int64_t n = numel(g);
        const bool flat = is_flat(g);
        cl_kernel k = kernel(out.dtype, std::string("b_") + binary_name(op) + (flat ? "_c" : "_s"));
        set(k, 0, mem(out), off(out), mem(a), off(a), mem(b), off(b));
        set_scalar(k, 6, out.dtype, p);
        set_scalar(k, 7, out.dtype, q);
        set(k, 8, cl_long(n));
        if (!flat)
            set(k, 9, g);
        enqueue(k, n);
    }
    void where(const View& out, const View& cond, const View& a, const View& b) override {
        std::lock_guard<std::mutex> lock(mu_);
        const View* v[4] = {&out, &cond, &a, &b};
        const Geo<4> g = geo_of<4>(v);
        const int64_t n = numel(g);
        run(out.dtype, std::string("where_") + dtype_tag(cond.dtype), n, mem(out), off(out),
            mem(cond), off(cond), mem(a), off(a), mem(b), off(b), cl_long(n), g);
    }

    // ---- reductions
    void reduce(ReduceOp op, const View& out, const View& in) override {
        std::lock_guard<std::mutex> lock(mu_);
        const ReduceGeo r = make_reduce_geo(out, in);
        if (r.n_out == 0)
            return;
        const char* name = op == ReduceOp::Sum ? "sum" : op == ReduceOp::Max ? "max" : "min";
        const std::string base = std::string("reduce_") + name;
        // Short reductions, or enough outputs to fill the device: one work-item per output.
        if (r.n_red <= 64 || r.n_out >= 1024) {
            run(out.dtype, base + "_s", r.n_out, mem(out), off(out), mem(in), off(in),
                cl_long(r.n_red), cl_long(r.n_out), r.kept, r.red);
            return;
        }
        size_t l = 1;
        while (l < local_ && int64_t(l) < r.n_red)
            l *= 2;
        const size_t acc = op == ReduceOp::Sum && (fp64_ || out.dtype != Dtype::Float32)
                               ? 8
                               : element_size(out.dtype);
        cl_kernel k = kernel(out.dtype, base + "_g");
        set(k, 0, mem(out), off(out), mem(in), off(in), cl_long(r.n_red), r.kept, r.red,
            Local{l * acc});
        enqueue(k, int64_t(r.n_out) * int64_t(l), l);
    }
    void arg_reduce(bool is_max, const View& out, const View& in, int dim) override {
        std::lock_guard<std::mutex> lock(mu_);
        int64_t sz[kMaxDims];
        std::copy(in.sizes, in.sizes + in.ndim, sz);
        const int64_t len = sz[dim];
        sz[dim] = 1;
        const View* v[2] = {&out, &in};
        const Geo<2> g = make_geo<2>(v, sz, in.ndim);
        const int64_t n = numel(g);
        run(in.dtype, "argreduce", n, mem(out), off(out), mem(in), off(in), cl_long(len),
            cl_long(in.strides[dim]), cl_int(is_max), cl_long(n), g);
    }
    void softmax_rows(const View& out, const View& in, int64_t rows, int64_t cols,
                      bool log) override {
        std::lock_guard<std::mutex> lock(mu_);
        if (cols == 0)
            return;
        run(in.dtype, "softmax_rows", rows, mem(out), off(out), mem(in), off(in), cl_long(cols),
            cl_int(log), cl_long(rows));
    }
    bool all_finite(const View& v) override {
        if (v.dtype == Dtype::Int64)
            return true;
        std::lock_guard<std::mutex> lock(mu_);
        const View* vs[1] = {&v};
        const Geo<1> g = geo_of<1>(vs);
        const int64_t n = numel(g);
        zero(flag_, sizeof(cl_long));
        run(v.dtype, "all_finite", n, mem(v), off(v), flag_, cl_long(n), g);
        cl_long bad = 0;
        read(flag_, 0, &bad, sizeof bad);
        return bad == 0;
    }

    // ---- BLAS (CLBlast, row-major; transposes are flags, offsets in elements)
    // Note [beta = 0 reads C]: CLBlast computes alpha·AB + beta·C and reads C even when beta is
    // 0, so a fresh (uninitialised, possibly NaN) output gives NaN (0·NaN). BLAS on the host
    // never reads C then; here the rows are zeroed first (callers hold the lock).
    void zero_rows(const View& c, int64_t rows, int64_t cols, int64_t ld) {
        const size_t es = element_size(c.dtype);
        const double zero = 0;
        auto fill = [&](int64_t first, int64_t count) {
            check(clEnqueueFillBuffer(queue_, mem(c), &zero, es, size_t(c.offset + first) * es,
                                      size_t(count) * es, 0, nullptr, nullptr),
                  "clEnqueueFillBuffer");
        };
        if (rows <= 0 || cols <= 0)
            return;
        if (ld == cols) {
            fill(0, rows * cols);
        } else {
            for (int64_t r = 0; r < rows; ++r)
                fill(r * ld, cols);
        }
    }
    void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const View& a,
              int64_t lda, const View& b, int64_t ldb, double beta, const View& c,
              int64_t ldc) override {
        std::lock_guard<std::mutex> lock(mu_);
        need(c.dtype, "gemm");
        if (beta == 0)
            zero_rows(c, m, n, ldc);  // Note [beta = 0 reads C]
        const auto t1 = ta ? clblast::Transpose::kYes : clblast::Transpose::kNo;
        const auto t2 = tb ? clblast::Transpose::kYes : clblast::Transpose::kNo;
        clblast::StatusCode s;
        if (c.dtype == Dtype::Float32)
            s = clblast::Gemm<float>(clblast::Layout::kRowMajor, t1, t2, size_t(m), size_t(n),
                                     size_t(k), float(alpha), mem(a), size_t(a.offset), size_t(lda),
                                     mem(b), size_t(b.offset), size_t(ldb), float(beta), mem(c),
                                     size_t(c.offset), size_t(ldc), &queue_, nullptr);
        else
            s = clblast::Gemm<double>(clblast::Layout::kRowMajor, t1, t2, size_t(m), size_t(n),
                                      size_t(k), alpha, mem(a), size_t(a.offset), size_t(lda),
                                      mem(b), size_t(b.offset), size_t(ldb), beta, mem(c),
                                      size_t(c.offset), size_t(ldc), &queue_, nullptr);
        check_blas(s, "Gemm");
    }
    void gemv(bool ta, int64_t m, int64_t n, double alpha, const View& a, int64_t lda,
              const View& x, int64_t incx, double beta, const View& y, int64_t incy) override {
        std::lock_guard<std::mutex> lock(mu_);
        need(y.dtype, "gemv");
        if (beta == 0)
            zero_rows(y, ta ? n : m, 1, incy);
        const auto t = ta ? clblast::Transpose::kYes : clblast::Transpose::kNo;
        clblast::StatusCode s;
        if (y.dtype == Dtype::Float32)
            s = clblast::Gemv<float>(clblast::Layout::kRowMajor, t, size_t(m), size_t(n),
                                     float(alpha), mem(a), size_t(a.offset), size_t(lda), mem(x),
                                     size_t(x.offset), size_t(incx), float(beta), mem(y),
                                     size_t(y.offset), size_t(incy), &queue_, nullptr);
        else
            s = clblast::Gemv<double>(clblast::Layout::kRowMajor, t, size_t(m), size_t(n), alpha,
                                      mem(a), size_t(a.offset), size_t(lda), mem(x),
                                      size_t(x.offset), size_t(incx), beta, mem(y),
                                      size_t(y.offset), size_t(incy), &queue_, nullptr);
        check_blas(s, "Gemv");
    }

    // ---- index ops
    // Note [Deferred index errors]: checking indices on the host would read the index tensor
    // back on every index op (cross_entropy's backward has one), breaking "updates never leave
    // the device". Instead idx_check records a bad index in a small status buffer and the
    // index kernels skip it; the status is read at the next synchronising call (to_host,
    // item(), to(cpu), synchronize), which throws the shape_error naming the op then.
    void index(IndexOp op, const View& out, const View& src, int dim, const View& idx,
               const char* opname) override {
        std::lock_guard<std::mutex> lock(mu_);
        auto prod = [](const int64_t* s, int from, int to) {
            int64_t p = 1;
            for (int d = from; d < to; ++d)
                p *= s[d];
            return p;
        };
        const int64_t nidx = prod(idx.sizes, 0, idx.ndim);
        const bool by_row = op == IndexOp::Select || op == IndexOp::Add;
        const View& big = op == IndexOp::Select || op == IndexOp::Gather ? src : out;
        const int64_t lim = big.sizes[dim];
        const int64_t inner =
            by_row ? prod(big.sizes, dim + 1, big.ndim) : prod(idx.sizes, dim + 1, idx.ndim);
        const int64_t nj = by_row ? nidx : idx.sizes[dim];
        if (nidx > 0) {
            const int64_t id = ++launch_id_;
            pending_[size_t(id % kRing)] = {id, opname, dim};
            unchecked_ = true;
            run(out.dtype, "idx_check", nidx, mem(idx), off(idx), cl_long(lim), cl_long(id),
                cl_long(dim), status_, cl_long(nidx));
        }
        const int64_t n = numel(out);
        if (n == 0 || inner == 0)
            return;
        const char* name = op == IndexOp::Select   ? "idx_select"
                           : op == IndexOp::Add    ? "idx_add"
                           : op == IndexOp::Gather ? "idx_gather"
                                                   : "idx_scatter_add";
        run(out.dtype, name, n, mem(out), off(out), mem(src), off(src), mem(idx), off(idx),
            cl_long(nj), cl_long(lim), cl_long(inner), cl_long(n));
    }

    /// Host-generated samples (the CPU backend's streams, so every device draws the same
    /// numbers from one seed), uploaded: an acknowledged host->device transfer.
    void random(const View& out, bool normal, double a, double b, std::mt19937_64& gen) override {
        const int64_t n = numel(out);
        std::vector<unsigned char> host(size_t(n) * element_size(out.dtype));
        View h = out;
        h.data = host.data();
        h.offset = 0;
        cpu().random(h, normal, a, b, gen);
        std::lock_guard<std::mutex> lock(mu_);
        write(mem(out), size_t(out.offset) * element_size(out.dtype), host.data(), host.size());
    }

private:
    static constexpr int64_t kRing = 256;

    struct Program {
        cl_program prog = nullptr;
        std::unordered_map<std::string, cl_kernel> kernels;
    };
    struct Pending {
        int64_t id = 0;
        std::string op;
        int dim = 0;
    };

    static cl_mem mem(const View& v) { return static_cast<cl_mem>(v.data); }
    static cl_long off(const View& v) { return cl_long(v.offset); }

    void need(Dtype d, const char* op) const {
        if (d == Dtype::Float64 && !fp64_)
            throw dtype_error(std::string(op) + ": " + dev_.str() + " does not support float64");
    }

    cl_kernel kernel(Dtype d, const std::string& name) {
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

    void build(Dtype d, Program& p) {
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
    void set_scalar(cl_kernel k, cl_uint i, Dtype d, double v) {
        if (d == Dtype::Float32)
            set_arg(k, i, cl_float(v));
        else if (d == Dtype::Float64)
            set_arg(k, i, cl_double(v));
        else
            set_arg(k, i, cl_long(v));
    }
    void enqueue(cl_kernel k, int64_t n, size_t local = 0) {
        if (n <= 0)
            return;
        const size_t l = local ? local : local_;
        const size_t global = (size_t(n) + l - 1) / l * l;
        check(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, &l, 0, nullptr, nullptr),
              "clEnqueueNDRangeKernel");
    }
    template <class... A>
    void run(Dtype d, const std::string& name, int64_t n, const A&... a) {
        cl_kernel k = kernel(d, name);
        set(k, 0, a...);
        enqueue(k, n);
    }

    void read(cl_mem m, size_t off, void* dst, size_t n) {
        if (n == 0)
            return;
        check(clEnqueueReadBuffer(queue_, m, CL_TRUE, off, n, dst, 0, nullptr, nullptr),
              "clEnqueueReadBuffer");
        memory::detail::on_transfer(dev_, false, int64_t(n));
    }
    void write(cl_mem m, size_t off, const void* src, size_t n) {
        if (n == 0)
            return;
        check(clEnqueueWriteBuffer(queue_, m, CL_TRUE, off, n, src, 0, nullptr, nullptr),
              "clEnqueueWriteBuffer");
        memory::detail::on_transfer(dev_, true, int64_t(n));
    }
    void zero(cl_mem m, size_t n) {
        const cl_long z = 0;
        check(clEnqueueFillBuffer(queue_, m, &z, sizeof z, 0, n, 0, nullptr, nullptr),
              "clEnqueueFillBuffer");
    }

    /// Note [Deferred index errors]: throws the first recorded out-of-range index, if any.
    void check_index_status() {
        if (!unchecked_)
            return;
        unchecked_ = false;
        cl_long st[4] = {};
        read(status_, 0, st, sizeof st);
        if (st[0] == 0)
            return;
        zero(status_, sizeof st);
        const Pending& p = pending_[size_t(st[0] % kRing)];
        const std::string op = p.id == st[0] ? p.op : std::string("index op");
        throw shape_error(op + ": index " + std::to_string(st[1]) + " is out of bounds for dim " +
                          std::to_string(st[3]) + " with size " + std::to_string(st[2]) +
                          " (detected on " + dev_.str() + " at the next synchronisation)");
    }

    static void check_blas(clblast::StatusCode s, const char* call) {
        if (s != clblast::StatusCode::kSuccess)
            throw error(std::string("CLBlast ") + call + " failed with status " +
                        std::to_string(int(s)));
    }

    void release_cache_locked() {
        blocks_.release_all([](cl_mem m) { clReleaseMemObject(m); });
    }

    Device dev_;
    cl_device_id id_;
    cl_context ctx_ = nullptr;
    cl_command_queue queue_ = nullptr;
    bool fp64_ = false;
    size_t local_ = 256;
    Program programs_[3];
    std::mutex mu_;
    BlockCache<cl_mem> blocks_;
    cl_mem status_ = nullptr, flag_ = nullptr;
    std::vector<Pending> pending_;
    int64_t launch_id_ = 0;
    bool unchecked_ = false;
};

OpenClBackend* instance(int index, bool create) {
    static std::mutex mu;
    static std::vector<OpenClBackend*> inst;  // never destroyed: tensors may outlive statics
    std::lock_guard<std::mutex> lock(mu);
    const int n = int(devices().size());
    if (index < 0 || index >= n)
        return nullptr;
    if (inst.empty())
        inst.resize(size_t(n), nullptr);
    if (!inst[size_t(index)] && create) {
        inst[size_t(index)] = new OpenClBackend(index);
        memory::detail::set_cache_hooks(DeviceType::OpenCL, {[](int i) {
                                                                 auto* b = instance(i, false);
                                                                 return b ? b->cached_bytes()
                                                                          : int64_t(0);
                                                             },
                                                             [](int i) {
                                                                 if (auto* b = instance(i, false))
                                                                     b->empty_cache();
                                                             }});
    }
    return inst[size_t(index)];
}

}  // namespace

int opencl_device_count() {
    return int(devices().size());
}

Backend& opencl(int index) {
    if (OpenClBackend* b = instance(index, true))
        return *b;
    const int n = opencl_device_count();
    throw backend_unavailable(
        Device::opencl(index).str() + ": " +
        (n == 0 ? std::string("no OpenCL platform found (install an ICD such as pocl-opencl-icd)")
                : "only " + std::to_string(n) + " OpenCL device(s) found"));
}

}  // namespace tg::backend
#endif  // TG_OPENCL
