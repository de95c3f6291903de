// matmul, mm, bmm, addmm and linear, lowered to BLAS gemm/gemv. A transposed operand is a view
// whose strides say "transposed": it goes to BLAS as a flag and is never copied.
#include <algorithm>

#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "ops/checks.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
/// A 2-D operand as BLAS sees it: data, whether it is stored transposed, leading dimension.
struct Operand {
    Tensor t;
    bool trans;
    int64_t ld;
};

Operand operand(const Tensor& x) {
    const int64_t r = x.size(0), c = x.size(1), s0 = x.stride(0), s1 = x.stride(1);
    const int64_t rc = std::max<int64_t>(c, 1), rr = std::max<int64_t>(r, 1);
    if ((c <= 1 || s1 == 1) && (r <= 1 || s0 >= rc))
        return {x, false, r <= 1 ? rc : s0};
    if ((r <= 1 || s0 == 1) && (c <= 1 || s1 >= rr))
        return {x, true, c <= 1 ? rr : s1};
    return {x.detach().contiguous(), false, rc};
}

/// c = alpha * a·b + beta * c for 2-D a [m,k], b [k,n] and contiguous c [m,n]; any of m, n, k
/// may be 0 (Note [Empty products] in runtime/dispatch.cpp).
void mm_into(const char* op, const Tensor& a, const Tensor& b, const Tensor& c, double alpha,
             double beta) {
    const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    if (m == 0 || n == 0 || k == 0)  // no operand is read: no copy for a strided one
        return runtime::gemm(op, false, false, m, n, k, alpha, {}, 0, {}, 0, beta, c);
    const Operand oa = operand(a), ob = operand(b);
    runtime::gemm(op, oa.trans, ob.trans, m, n, k, alpha, runtime::view(oa.t), oa.ld,
                  runtime::view(ob.t), ob.ld, beta, c);
}

void check_mm(const char* op, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
    runtime::check_same(op, a, b);
    runtime::check_float_kernels(op, a);
    if (ka != kb)
        throw shape_error(std::string(op) + ": " + shape_str(a.sizes()) + " x " +
                          shape_str(b.sizes()) + ": inner dimensions " + std::to_string(ka) +
                          " != " + std::to_string(kb));
}

/// [m,k]·[k,n];  da = dy·bᵀ, db = aᵀ·dy
Tensor mm_node(const Tensor& a, const Tensor& b) {
    Tensor y = runtime::empty({a.size(0), b.size(1)}, a.dtype(), a.device(), "matmul");
    mm_into("matmul", a.detach(), b.detach(), y, 1, 0);
    if (should_record({&a, &b})) {
        record("mm", {&a, &b}, y,
               [sa = b.requires_grad() ? save(a) : Saved(),
                sb = a.requires_grad() ? save(b) : Saved()](const Tensor& dy, const Node& n) {
                   return Grads{needs(n, 0) ? mm_node(dy, sb.get().t()) : Tensor(),
                                needs(n, 1) ? mm_node(sa.get().t(), dy) : Tensor()};
               });
        recipe(y, [](const std::vector<Tensor>& xs) { return mm_node(xs[0], xs[1]); });
    }
    return y;
}

/// [B,m,k]·[B,k,n] (batch strides may be 0);  da = dy·bᵀ, db = aᵀ·dy per batch
Tensor bmm_node(const Tensor& a, const Tensor& b) {
    const int64_t B = a.size(0);
    Tensor y = runtime::empty({B, a.size(1), b.size(2)}, a.dtype(), a.device(), "matmul");
    const Tensor ad = a.detach(), bd = b.detach();
    for (int64_t i = 0; i < B; ++i)
        mm_into("matmul", ad.narrow(0, i, 1).squeeze(0), bd.narrow(0, i, 1).squeeze(0),
                y.narrow(0, i, 1).squeeze(0), 1, 0);
    if (should_record({&a, &b})) {
        record("bmm", {&a, &b}, y,
               [sa = b.requires_grad() ? save(a) : Saved(),
                sb = a.requires_grad() ? save(b) : Saved()](const Tensor& dy, const Node& n) {
                   return Grads{needs(n, 0) ? bmm_node(dy, sb.get().transpose(1, 2)) : Tensor(),
                                needs(n, 1) ? bmm_node(sa.get().transpose(1, 2), dy) : Tensor()};
               });
        recipe(y, [](const std::vector<Tensor>& xs) { return bmm_node(xs[0], xs[1]); });
    }
    return y;
}
}  // namespace

namespace {
Tensor matmul_impl(const Tensor& a, const Tensor& b) {
    const int64_t da = a.dim(), db = b.dim();
    if (da == 0 || db == 0 || da > 3 || db > 3)
        throw shape_error("matmul: " + shape_str(a.sizes()) + " x " + shape_str(b.sizes()) +
                          ": operands must have 1, 2 or 3 dims");
    check_mm("matmul", a, b, a.size(-1), db == 1 ? b.size(0) : b.size(-2));
    if (da == 1 && db == 1)
        return mm_node(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
    if (da == 2 && db == 1)
        return mm_node(a, b.unsqueeze(1)).squeeze(1);
    if (da == 1 && db == 2)
        return mm_node(a.unsqueeze(0), b).squeeze(0);
    if (da == 2 && db == 2)
        return mm_node(a, b);
    if (da == 3 && db <= 2 && a.size(1) > 0) {  // fold the batch into rows: one GEMM
        const Tensor b2 = db == 1 ? b.unsqueeze(1) : b;
        const int64_t rows = checked_mul(a.size(0), a.size(1), "matmul", a.sizes());
        Tensor y =
            mm_node(a.reshape({rows, a.size(2)}), b2).reshape({a.size(0), a.size(1), b2.size(1)});
        return db == 1 ? y.squeeze(2) : y;
    }
    const Tensor a3 = da == 3 ? a : (da == 2 ? a.unsqueeze(0) : a.unsqueeze(0).unsqueeze(0));
    const Tensor b3 = db == 3 ? b : (db == 2 ? b.unsqueeze(0) : b.unsqueeze(1).unsqueeze(0));
    if (a3.size(0) != b3.size(0) && a3.size(0) != 1 && b3.size(0) != 1)
        throw shape_error("matmul: " + shape_str(a.sizes()) + " x " + shape_str(b.sizes()) +
                          ": batch dims " + std::to_string(a3.size(0)) + " and " +
                          std::to_string(b3.size(0)) + " cannot be broadcast");
    const int64_t B = std::max(a3.size(0), b3.size(0));
    Tensor y =
        bmm_node(a3.expand({B, a3.size(1), a3.size(2)}), b3.expand({B, b3.size(1), b3.size(2)}));
    if (da == 1)
        y = y.squeeze(1);
    if (db == 1)
        y = y.squeeze(-1);
    return y;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
    Tensor y = matmul_impl(a, b);
    trace_op("matmul", {&a, &b}, y);
    return y;
}

Tensor mm(const Tensor& a, const Tensor& b) {
    if (a.dim() != 2 || b.dim() != 2)
        throw shape_error("mm: " + shape_str(a.sizes()) + " x " + shape_str(b.sizes()) +
                          ": operands must be 2-D");
    check_mm("mm", a, b, a.size(1), b.size(0));
    return mm_node(a, b);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
    if (a.dim() != 3 || b.dim() != 3)
        throw shape_error("bmm: " + shape_str(a.sizes()) + " x " + shape_str(b.sizes()) +
                          ": operands must be 3-D");
    if (a.size(0) != b.size(0))
        throw shape_error("bmm: " + shape_str(a.sizes()) + " x " + shape_str(b.sizes()) +
                          ": batch sizes " + std::to_string(a.size(0)) +
                          " != " + std::to_string(b.size(0)));
    check_mm("bmm", a, b, a.size(2), b.size(1));
    return bmm_node(a, b);
}

Tensor addmm(const Tensor& c, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
    const ComposedName named;
    Tensor p = mm(a, b);
    if (alpha != 1)
        p = p * alpha;
    if (beta == 0)  // as in PyTorch, c is not read (NaNs in it do not propagate)
        return p;
    checks::broadcasts_to("addmm", "input", c, p.sizes(), "product");
    return named(add(beta == 1 ? c : c * beta, p), "addmm", "AddmmBackward0");
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b) {
    if (w.dim() != 2)
        throw shape_error("linear: weight must be 2-D [out,in], got " + shape_str(w.sizes()));
    if (x.dim() == 0 || x.size(-1) != w.size(1))
        throw shape_error("linear: input " + shape_str(x.sizes()) + " x weight " +
                          shape_str(w.sizes()) + ": expected the input's last dim to be " +
                          std::to_string(w.size(1)));
    runtime::check_same("linear", x, w);
    runtime::check_float_kernels("linear", x);
    if (b.defined()) {
        runtime::check_same("linear", x, b);
        if (b.dim() != 1 || b.size(0) != w.size(0))
            throw shape_error("linear: bias " + shape_str(b.sizes()) + " does not match weight " +
                              shape_str(w.sizes()) + " (expected [" + std::to_string(w.size(0)) +
                              "])");
    }
    if (x.dim() != 2) {  // [*, in]: fold the leading dims into rows
        Shape out = x.sizes();
        out.back() = w.size(0);
        Tensor y = linear(x.reshape({-1, x.size(-1)}), w, b).reshape(out);
        trace_op("linear", {&x, &w, &b}, y);
        return y;
    }
    const int64_t N = x.size(0), out = w.size(0);
    Tensor y = runtime::empty({N, out}, x.dtype(), x.device(), "linear");
    if (b.defined())
        runtime::copy_into(y, b);  // y = broadcast bias, then gemm with beta = 1
    mm_into("linear", x.detach(), w.detach().t(), y, 1, b.defined() ? 1 : 0);
    trace_op("linear", {&x, &w, &b}, y);
    if (should_record({&x, &w, &b})) {
        const Tensor* in[3] = {&x, &w, &b};
        record("linear", {in[0], in[1], in[2]}, y,
               [sx = save(x), sw = save(w)](const Tensor& dy, const Node& n) {
                   const Tensor xx = sx.get(), ww = sw.get();
                   Grads g(3);
                   if (GradMode::is_enabled()) {  // create_graph: the same formulas, recorded
                       if (needs(n, 0))
                           g[0] = matmul(dy, ww);
                       if (needs(n, 1))
                           g[1] = matmul(dy.t(), xx);
                       if (needs(n, 2))
                           g[2] = sum(dy, {0});
                       return g;
                   }
                   if (needs(n, 0)) {  // dx = dy·W            [N,out] x [out,in]
                       g[0] = runtime::empty(xx.sizes(), xx.dtype(), xx.device());
                       mm_into("linear", dy, ww, g[0], 1, 0);
                   }
                   // dW and db go straight into .grad() with beta = 1 when the engine allows
                   // it (Note [Gradient accumulated in place]); done() is then undefined
                   if (needs(n, 1)) {  // dW = dyᵀ·x           [out,N] x [N,in]
                       GradTarget dw(n, 1);
                       const int64_t rows = dy.size(1), cols = xx.size(1);
                       const int64_t step = dw.chunk_rows(rows, cols);
                       if (step >= rows) {
                           mm_into("linear", dy.t(), xx, dw.out(), 1, dw.beta());
                       } else {  // in row blocks, each final once written (Note [Gradient chunks])
                           for (int64_t r = 0; r < rows; r += step) {
                               const int64_t len = std::min(step, rows - r);
                               mm_into("linear", dy.narrow(1, r, len).t(), xx,
                                       dw.out().narrow(0, r, len), 1, dw.beta());
                               dw.rows_done(r, r + len, cols);
                           }
                       }
                       g[1] = dw.done();
                   }
                   if (needs(n, 2)) {  // db = dyᵀ·1 (gemv)    [out,N] x [N]
                       const int64_t rows = dy.size(0), cols = dy.size(1);
                       GradTarget db(n, 2);
                       const Tensor one = ones({rows}, dy.options());
                       // an empty dy (rows or cols 0) is never read: no copy of it
                       const Operand od = rows && cols ? operand(dy) : Operand{dy, false, 1};
                       runtime::gemv("linear", !od.trans, od.trans ? cols : rows,
                                     od.trans ? rows : cols, 1, runtime::view(od.t), od.ld,
                                     runtime::view(one), 1, db.beta(), db.out());
                       g[2] = db.done();
                   }
                   return g;
               });
        torch_name(y, b.defined() ? "AddmmBackward0" : "MmBackward0");
        recipe(y, [](const std::vector<Tensor>& xs) { return linear(xs[0], xs[1], xs[2]); });
    }
    return y;
}

}  // namespace tg
