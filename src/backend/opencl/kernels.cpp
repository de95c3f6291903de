// The OpenCL backend's kernel launches: the table's elementwise kernels, copies, where,
// reductions, softmax rows, index kernels and recurrent cells (their source: source.cpp,
// window_source.cpp, rnn_source.cpp).
#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "backend/device_common/geometry.hpp"
#include "backend/opencl/backend.hpp"
#include "backend/opencl/source.hpp"

namespace tg::backend::opencl {

// ---- elementwise
void OpenClBackend::copy(const View& out, const View& in) {
    std::lock_guard<std::mutex> lock(mu_);
    const View* v[2] = {&out, &in};
    const Geo<2> g = geo_of<2>(v);
    const int64_t n = numel(g);
    const std::string name = std::string("copy_") + opencl_tag(in.dtype);
    if (is_flat(g))
        run(out.dtype, name + "_c", n, mem(out), off(out), mem(in), off(in), cl_long(n));
    else
        run(out.dtype, name + "_s", n, mem(out), off(out), mem(in), off(in), cl_long(n), g);
}
void OpenClBackend::unary(UnaryOp op, const View& out, const View& x, double p, double q) {
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
void OpenClBackend::binary(BinaryOp op, const View& out, const View& a, const View& b, double p,
                           double q) {
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
void OpenClBackend::where(const View& out, const View& cond, const View& a, const View& b) {
    std::lock_guard<std::mutex> lock(mu_);
    const View* v[4] = {&out, &cond, &a, &b};
    const Geo<4> g = geo_of<4>(v);
    const int64_t n = numel(g);
    run(out.dtype, std::string("where_") + opencl_tag(cond.dtype), n, mem(out), off(out), mem(cond),
        off(cond), mem(a), off(a), mem(b), off(b), cl_long(n), g);
}

void OpenClBackend::reduce(ReduceOp op, const View& out, const View& in, int dim) {
    if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin)
        return arg_reduce(op == ReduceOp::ArgMax, out, in, dim);
    std::lock_guard<std::mutex> lock(mu_);
    const ReduceGeo r = make_reduce_geo(out, in);
    if (r.n_out == 0)
        return;
    const char* name = op == ReduceOp::Sum ? "sum" : op == ReduceOp::Max ? "max" : "min";
    const std::string base = std::string("reduce_") + name;
    // Short reductions, or enough outputs to fill the device: one work-item per output.
    if (r.n_red <= 64 || r.n_out >= 1024) {
        run(out.dtype, base + "_s", r.n_out, mem(out), off(out), mem(in), off(in), cl_long(r.n_red),
            cl_long(r.n_out), r.kept, r.red);
        return;
    }
    size_t l = 1;
    while (l < local_ && int64_t(l) < r.n_red)
        l *= 2;
    const size_t acc =
        op == ReduceOp::Sum && (fp64_ || out.dtype != Dtype::Float32) ? 8 : element_size(out.dtype);
    cl_kernel k = kernel(out.dtype, base + "_g");
    set(k, 0, mem(out), off(out), mem(in), off(in), cl_long(r.n_red), r.kept, r.red,
        Local{l * acc});
    enqueue(k, int64_t(r.n_out) * int64_t(l), l);
}
void OpenClBackend::arg_reduce(bool is_max, const View& out, const View& in, int dim) {
    std::lock_guard<std::mutex> lock(mu_);
    const ArgGeo a = make_arg_geo(out, in, dim);
    run(in.dtype, "argreduce", a.n, mem(out), off(out), mem(in), off(in), cl_long(a.len),
        cl_long(a.stride), cl_int(is_max), cl_long(a.n), a.g);
}
void OpenClBackend::softmax_rows(const View& out, const View& in, int64_t rows, int64_t cols,
                                 bool log) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cols == 0)
        return;
    run(in.dtype, "softmax_rows", rows, mem(out), off(out), mem(in), off(in), cl_long(cols),
        cl_int(log), cl_long(rows));
}

// ---- index ops (Note [Deferred index errors] in device_common/deferred_errors.hpp)
void OpenClBackend::index(IndexOp op, const View& out, const View& src, int dim, const View& idx,
                          const char* opname) {
    std::lock_guard<std::mutex> lock(mu_);
    const IndexGeo g = make_index_geo(op, out, src, dim, idx);
    if (g.nidx > 0)
        run(out.dtype, "idx_check", g.nidx, mem(idx), off(idx), cl_long(g.lim),
            cl_long(errors_.launch(opname, dim)), cl_long(dim), status_, cl_long(g.nidx));
    const int64_t n = numel(out);
    if (n == 0 || g.inner == 0)
        return;
    // Note [Gathering by segments] in device_common/geometry.hpp
    if (op == IndexOp::Add && g.inner >= kGroupedIndexAdd && g.nidx > 0) {
        const size_t seg_bytes = size_t(g.lim + 1) * sizeof(cl_long),
                     perm_bytes = size_t(g.nidx) * sizeof(cl_long);
        // freed at once: the queue is in order, so a later user of the buffers runs after
        const std::unique_ptr<void, std::function<void(void*)>> seg(
            allocate(seg_bytes), [&](void* p) { deallocate(p, seg_bytes); });
        const std::unique_ptr<void, std::function<void(void*)>> perm(
            allocate(perm_bytes), [&](void* p) { deallocate(p, perm_bytes); });
        const cl_mem sm = static_cast<cl_mem>(seg.get()), pm = static_cast<cl_mem>(perm.get());
        run(Dtype::Int64, "idx_count", g.lim, mem(idx), off(idx), cl_long(g.nidx), sm,
            cl_long(g.lim));
        run(Dtype::Int64, "idx_offsets", 1, sm, cl_long(g.lim), cl_long(1));
        run(Dtype::Int64, "idx_fill", g.lim, mem(idx), off(idx), cl_long(g.nidx), sm, pm,
            cl_long(g.lim));
        run(out.dtype, "idx_add_seg", n, mem(out), off(out), mem(src), off(src), pm, sm,
            cl_long(g.nidx), cl_long(g.lim), cl_long(g.inner), cl_long(n));
        return;
    }
    const char* name = op == IndexOp::Select   ? "idx_select"
                       : op == IndexOp::Add    ? "idx_add"
                       : op == IndexOp::Gather ? "idx_gather"
                                               : "idx_scatter_add";
    run(out.dtype, name, n, mem(out), off(out), mem(src), off(src), mem(idx), off(idx),
        cl_long(g.nj), cl_long(g.lim), cl_long(g.inner), cl_long(n));
}

// ---- window kernels (Note [Gathering adjoints] in device_common/window.hpp)
void OpenClBackend::window(WindowOp op, const Window& g, const View& out, const View& in,
                           const View& aux) {
    if (cpu_only(op))
        throw error(
            "window kernel: the scatter fold and the depthwise kernels run on the CPU only");
    need(out.dtype, "window kernel");
    if (out.dtype != Dtype::Float32 && out.dtype != Dtype::Float64)
        throw dtype_error(std::string("window kernel: dtype ") + dtype_name(out.dtype) +
                          " is not floating");
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t n = op == WindowOp::Fold ? g.x_elements() : numel(out);
    if (n == 0)
        return;
    const cl_long cn = n;
    switch (op) {
        case WindowOp::Unfold:
            return run(out.dtype, "win_unfold", n, mem(out), off(out), mem(in), off(in), g, cn);
        case WindowOp::Fold:
            return run(out.dtype, "win_fold", n, mem(out), off(out), mem(in), off(in), g, cn);
        case WindowOp::MaxPool:
            return run(out.dtype, "win_max", n, mem(out), off(out), mem(in), off(in), mem(aux),
                       off(aux), g, cn);
        case WindowOp::MaxPoolBackward:
            return run(out.dtype, "win_max_back", n, mem(out), off(out), mem(in), off(in), mem(aux),
                       off(aux), g, cn);
        case WindowOp::AvgPool:
            return run(out.dtype, "win_avg", n, mem(out), off(out), mem(in), off(in), g, cn);
        case WindowOp::AvgPoolBackward:
            return run(out.dtype, "win_avg_back", n, mem(out), off(out), mem(in), off(in), g, cn);
        default:
            return;
    }
}

// ---- recurrent cells (Note [Fused recurrent cells] in device_common/rnn_cell.hpp)
void OpenClBackend::cell(CellOp op, const Cell& g, const View* v) {
    need(v[0].dtype, "cell kernel");
    if (v[0].dtype != Dtype::Float32 && v[0].dtype != Dtype::Float64)
        throw dtype_error(std::string("cell kernel: dtype ") + dtype_name(v[0].dtype) +
                          " is not floating");
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t n = g.rows * g.hidden;
    if (n == 0)
        return;
    // an absent operand: another buffer in its place, its bit in `has` clear
    auto m = [&](int k) { return v[k].data ? mem(v[k]) : mem(v[0]); };
    auto bit = [&](int k, long b) { return v[k].data ? b : 0L; };
    const cl_long H = g.hidden, cn = n, relu = g.relu;
    const Dtype d = v[0].dtype;
    switch (op) {
        case CellOp::LstmForward:
            return run(d, "cell_lstm_fwd", n, m(0), off(v[0]), m(1), off(v[1]), m(2), off(v[2]),
                       m(3), off(v[3]), m(4), off(v[4]), m(5), off(v[5]), H,
                       cl_long(bit(1, 1) | bit(2, 2)), cn);
        case CellOp::LstmBackward:
            return run(d, "cell_lstm_bwd", n, m(0), off(v[0]), m(1), off(v[1]), m(2), off(v[2]),
                       m(3), off(v[3]), m(4), off(v[4]), m(5), off(v[5]), m(6), off(v[6]), H,
                       cl_long(bit(1, 1)), cn);
        case CellOp::GruForward:
            return run(d, "cell_gru_fwd", n, m(0), off(v[0]), m(1), off(v[1]), m(2), off(v[2]),
                       m(3), off(v[3]), m(4), off(v[4]), m(5), off(v[5]), m(6), off(v[6]), H,
                       cl_long(bit(2, 1) | bit(3, 2)), cn);
        case CellOp::GruBackward:
            return run(d, "cell_gru_bwd", n, m(0), off(v[0]), m(1), off(v[1]), m(2), off(v[2]),
                       m(3), off(v[3]), m(4), off(v[4]), m(5), off(v[5]), H, cl_long(bit(1, 1)),
                       cn);
        case CellOp::RnnForward:
            return run(d, "cell_rnn_fwd", n, m(0), off(v[0]), m(1), off(v[1]), m(2), off(v[2]), H,
                       cl_long(bit(1, 1) | bit(2, 2)), relu, cn);
        case CellOp::RnnBackward:
            return run(d, "cell_rnn_bwd", n, m(0), off(v[0]), m(1), off(v[1]), m(2), off(v[2]),
                       m(3), off(v[3]), H, cl_long(bit(1, 1)), relu, cn);
    }
}

}  // namespace tg::backend::opencl
