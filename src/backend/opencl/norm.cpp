// The OpenCL backend's fused row and plane normalisations (backend.hpp's RowNormOp and
// PlaneNormOp; the kernels: norm_source.cpp).
#include <functional>
#include <memory>
#include <string>

#include "backend/opencl/backend.hpp"
#include "tapegrad/error.hpp"

namespace tg::backend::opencl {

void OpenClBackend::row_norm(RowNormOp op, const RowNorm& g, const View* v) {
    const Dtype d = v[op == RowNormOp::Forward ? 1 : 4].dtype;
    need(d, "row_norm kernel");
    if (d != Dtype::Float32 && d != Dtype::Float64)
        throw dtype_error(std::string("row_norm kernel: dtype ") + dtype_name(d) +
                          " is not floating");
    std::lock_guard<std::mutex> lock(mu_);
    if (g.rows == 0 || g.cols == 0)
        return;
    // an absent operand: another buffer in its place, its flag clear
    const int x = op == RowNormOp::Forward ? 1 : 4;
    auto m = [&](int k) { return v[k].data ? mem(v[k]) : mem(v[x]); };
    auto has = [&](int k) { return cl_int(v[k].data != nullptr); };
    const cl_long rows = g.rows, cols = g.cols;
    const cl_int center = g.center;
    if (op == RowNormOp::Forward) {
        auto forward = [&](auto eps) {  // eps in ACC: double where the device has it
            run(d, "row_norm_fwd", rows, m(0), off(v[0]), m(1), off(v[1]), m(2), off(v[2]), m(3),
                off(v[3]), m(4), off(v[4]), m(5), off(v[5]), cols, center, has(2), has(3), eps,
                rows);
        };
        if (fp64_ || d == Dtype::Float64)
            forward(cl_double(g.eps));
        else
            forward(cl_float(g.eps));
        return;
    }
    if (v[0].data)
        run(d, "row_norm_bwd_dx", rows, m(0), off(v[0]), m(3), off(v[3]), m(4), off(v[4]), m(5),
            off(v[5]), m(6), off(v[6]), m(7), off(v[7]), cols, center, has(5), rows);
    if (v[1].data || v[2].data)
        run(d, "row_norm_bwd_wb", cols, m(1), off(v[1]), m(2), off(v[2]), m(3), off(v[3]), m(4),
            off(v[4]), m(6), off(v[6]), m(7), off(v[7]), rows, center, has(1), has(2), cols);
}

void OpenClBackend::plane_norm(PlaneNormOp op, const PlaneNorm& g, const View* v) {
    const int x = op == PlaneNormOp::Moments ? 2 : op == PlaneNormOp::Affine ? 1 : 4;
    const Dtype d = v[x].dtype;
    need(d, "plane_norm kernel");
    if (d != Dtype::Float32 && d != Dtype::Float64)
        throw dtype_error(std::string("plane_norm kernel: dtype ") + dtype_name(d) +
                          " is not floating");
    std::lock_guard<std::mutex> lock(mu_);
    if (g.planes == 0 || g.len == 0 || g.channels == 0)
        return;
    auto m = [&](int k) { return v[k].data ? mem(v[k]) : mem(v[x]); };
    auto has = [&](int k) { return cl_int(v[k].data != nullptr); };
    const cl_long P = g.planes, len = g.len, C = g.channels, G = g.groups;
    const cl_long groups = G ? P / C * G : C, count = P / groups * len;
    // ACC scratch (double where the device has it: source.cpp), freed at once: the queue is in
    // order, so a later user of the buffer runs after these kernels
    const size_t acc = fp64_ || d == Dtype::Float64 ? sizeof(cl_double) : sizeof(cl_float);
    using Scratch = std::unique_ptr<void, std::function<void(void*)>>;
    auto scratch = [&](int64_t n, size_t size) {
        const size_t bytes = size_t(n) * size;
        return Scratch(allocate(bytes), [this, bytes](void* p) { deallocate(p, bytes); });
    };
    auto cl = [](const Scratch& s) { return static_cast<cl_mem>(s.get()); };
    if (op == PlaneNormOp::Moments) {  // two reading passes: the mean, then Σ (x - mean)²
        const Scratch sums = scratch(P, acc), gm = scratch(groups, acc);
        for (int k = 0; k < 2; ++k) {
            run(d, "pn_sums", P, cl(sums), mem(v[2]), off(v[2]), cl(gm), cl_int(k), len, C, G, P);
            run(d, "pn_group_mean", groups, cl(gm), mem(v[k]), off(v[k]), cl(sums), P, C, G, count,
                groups);
        }
        return;
    }
    const cl_long n = P * len;
    if (op == PlaneNormOp::Affine) {  // the planes' scale and shift, then one writing pass
        const Scratch c = scratch(2 * P, element_size(d));
        run(d, "pn_affine_coefs", P, cl(c), mem(v[2]), off(v[2]), mem(v[3]), off(v[3]), m(4),
            off(v[4]), m(5), off(v[5]), has(4), has(5), C, G, P);
        run(d, "pn_affine", n, mem(v[0]), off(v[0]), mem(v[1]), off(v[1]), cl(c), P, len, n);
        return;
    }
    // backward: one reading pass for Σ dy and Σ dy·(x - mean) per plane, one writing dx
    const bool sums = v[1].data || v[2].data || g.batch_stats;
    const Scratch s = scratch(sums ? 2 * P : 1, acc);
    if (sums)
        run(d, "pn_grad_sums", P, cl(s), mem(v[3]), off(v[3]), mem(v[4]), off(v[4]), mem(v[5]),
            off(v[5]), len, C, G, P);
    if (v[1].data || v[2].data)
        run(d, "pn_grad_params", C, m(1), off(v[1]), m(2), off(v[2]), cl(s), mem(v[6]), off(v[6]),
            has(1), has(2), P, C, G, C);
    if (!v[0].data)
        return;
    // the planes' coefficients, then one writing pass
    const Scratch k4 = scratch(4 * P, element_size(d));
    run(d, "pn_grad_coefs", P, cl(k4), cl(s), mem(v[5]), off(v[5]), mem(v[6]), off(v[6]), m(7),
        off(v[7]), has(7), cl_int(g.batch_stats), count, C, G, P);
    if (g.batch_stats)
        run(d, "pn_grad_apply", n, mem(v[0]), off(v[0]), mem(v[3]), off(v[3]), mem(v[4]), off(v[4]),
            cl(k4), P, len, n);
    else
        run(d, "pn_grad_scale", n, mem(v[0]), off(v[0]), mem(v[3]), off(v[3]), cl(k4), len, n);
}

}  // namespace tg::backend::opencl
