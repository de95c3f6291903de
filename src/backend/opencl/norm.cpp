// The OpenCL backend's fused row normalisations (backend.hpp's RowNormOp; the kernels:
// norm_source.cpp).
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

}  // namespace tg::backend::opencl
