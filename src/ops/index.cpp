// Indexing: index_select / index_add and gather / scatter_add, each the other's backward.
#include "autograd/record.hpp"
#include "autograd/trace.hpp"
#include "ops/checks.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
/// ndim: the dims of the indexed tensor (x, or the target shape of index_add / scatter_add).
void check_index(const char* op, const Tensor& x, const Tensor& index, size_t ndim) {
    if (ndim == 0)  // the kernels read the size of the indexed dim
        throw shape_error(std::string(op) + ": cannot index a 0-dim tensor (index " +
                          shape_str(index.sizes()) + ")");
    if (index.dtype() != kInt64)
        throw dtype_error(std::string(op) + ": index must be int64, got " +
                          dtype_name(index.dtype()) + " " + shape_str(index.sizes()));
    checks::same_device(op, "index", index, x);
}

Tensor run_index(backend::IndexOp op, const char* name, Tensor out, const Tensor& src, int64_t dim,
                 const Tensor& index) {
    if (out.dtype() == kBool) {  // in int64 and back (Note [Bool tensors]); adds count as "or"
        const bool adds = op == backend::IndexOp::Add || op == backend::IndexOp::ScatterAdd;
        Tensor o = adds ? out.to(kInt64) : runtime::empty(out.sizes(), kInt64, out.device());
        const Tensor r = run_index(op, name, std::move(o), src.to(kInt64), dim, index);
        return ne(r, 0);
    }
    const Dtype kd = kernel_dtype(out.dtype());
    if (kd != out.dtype()) {  // Note [Kernel dtypes]: in int64 or float32 and back
        const Tensor r =
            run_index(op, name, runtime::converted(out, kd), src.detach().to(kd), dim, index);
        runtime::copy_into(out, r);
        return out;
    }
    const Tensor s = src.detach().contiguous(), i = index.contiguous();
    runtime::be(out).index(op, runtime::view(out), runtime::view(s), int(dim), runtime::view(i),
                           name);
    return out;
}

/// zeros of `shape` with x's dtype and device; shape errors name op.
Tensor zeros_of(const Shape& shape, const Tensor& x, const char* op) {
    Tensor y = runtime::empty(shape, x.dtype(), x.device(), op);
    runtime::fill(y, 0);
    return y;
}

void check_gather_shapes(const char* op, const Shape& big, const Tensor& index, int64_t d) {
    Shape a = big, b = index.sizes();
    if (a.size() == b.size())
        a[size_t(d)] = b[size_t(d)];
    if (a != b)
        throw shape_error(std::string(op) + ": index " + shape_str(index.sizes()) +
                          " must match input " + shape_str(big) + " in every dim but " +
                          std::to_string(d));
}
}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
    check_index("index_select", x, index, x.sizes().size());
    const int64_t d = wrap_dim(dim, x.dim(), "index_select");
    if (index.dim() > 1)
        throw shape_error("index_select: index must be 1-D, got " + shape_str(index.sizes()));
    Shape s = x.sizes();
    s[size_t(d)] = index.numel();
    Tensor y = run_index(backend::IndexOp::Select, "index_select",
                         runtime::empty(s, x.dtype(), x.device(), "index_select"), x, d, index);
    if (should_record({&x}))
        record("index_select", {&x}, y, [d, index](const Tensor& dy, const Node& n) {
            return Grads{index_add(dy, in_shape(n, 0), d, index)};
        });
    return y;
}

Tensor index_add(const Tensor& x, const Shape& shape, int64_t dim, const Tensor& index) {
    check_index("index_add", x, index, shape.size());
    const int64_t d = wrap_dim(dim, int64_t(shape.size()), "index_add");
    if (index.dim() > 1)
        throw shape_error("index_add: index must be 1-D, got " + shape_str(index.sizes()));
    Shape expect = shape;  // the kernel reads x as [outer, index.numel(), inner] of shape's dims
    expect[size_t(d)] = index.numel();
    if (x.sizes() != expect)
        throw shape_error("index_add: source " + shape_str(x.sizes()) + " must have shape " +
                          shape_str(expect) + " (the target " + shape_str(shape) + " with dim " +
                          std::to_string(d) + " the index's length)");
    Tensor y =
        run_index(backend::IndexOp::Add, "index_add", zeros_of(shape, x, "index_add"), x, d, index);
    if (should_record({&x}))
        record("index_add", {&x}, y,
               [d, index](const Tensor& dy) { return Grads{index_select(dy, d, index)}; });
    return y;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
    check_index("gather", x, index, x.sizes().size());
    const int64_t d = wrap_dim(dim, x.dim(), "gather");
    check_gather_shapes("gather", x.sizes(), index, d);
    Tensor y =
        run_index(backend::IndexOp::Gather, "gather",
                  runtime::empty(index.sizes(), x.dtype(), x.device(), "gather"), x, d, index);
    if (should_record({&x}))
        record("gather", {&x}, y, [d, index](const Tensor& dy, const Node& n) {
            return Grads{scatter_add(dy, in_shape(n, 0), d, index)};
        });
    return y;
}

Tensor scatter_add(const Tensor& x, const Shape& shape, int64_t dim, const Tensor& index) {
    check_index("scatter_add", x, index, shape.size());
    const int64_t d = wrap_dim(dim, int64_t(shape.size()), "scatter_add");
    if (x.sizes() != index.sizes())
        throw shape_error("scatter_add: source " + shape_str(x.sizes()) + " and index " +
                          shape_str(index.sizes()) + " differ");
    check_gather_shapes("scatter_add", shape, index, d);
    Tensor y = run_index(backend::IndexOp::ScatterAdd, "scatter_add",
                         zeros_of(shape, x, "scatter_add"), x, d, index);
    if (should_record({&x}))
        record("scatter_add", {&x}, y,
               [d, index](const Tensor& dy) { return Grads{gather(dy, d, index)}; });
    return y;
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
    const char* op = "embedding";
    if (!weight.defined() || !indices.defined())
        throw value_error("embedding: undefined weight or indices");
    if (weight.dim() != 2)
        throw shape_error("embedding: weight must be 2-D [num_embeddings, embedding_dim], got " +
                          shape_str(weight.sizes()));
    if (sparse)
        throw value_error("embedding: sparse gradients are not supported (sparse = false)");
    check_index(op, weight, indices, 2);
    const int64_t V = weight.size(0), D = weight.size(1);
    if (padding_idx >= V)
        throw value_error("embedding: padding_idx " + std::to_string(padding_idx) +
                          " is not below num_embeddings " + std::to_string(V) + " of weight " +
                          shape_str(weight.sizes()));
    const Tensor flat = indices.reshape({indices.numel()});
    Shape out = indices.sizes();
    out.push_back(D);
    Tensor y = run_index(backend::IndexOp::Select, op,
                         runtime::empty({flat.numel(), D}, weight.dtype(), weight.device(), op),
                         weight, 0, flat)
                   .reshape(out);
    trace_op(op, {&weight, &indices}, y);
    if (should_record({&weight})) {
        record(op, {&weight}, y, [flat, V, D, padding_idx, scale_grad_by_freq](const Tensor& dy) {
            // each row of dweight gathers the rows of dy whose token it is (the CPU's index_add
            // sorts the tokens and gives each thread whole rows: Note [Gathering index_add])
            Tensor dw = index_add(dy.reshape({flat.numel(), D}), {V, D}, 0, flat);
            if (scale_grad_by_freq) {  // / the token's count (rows never seen stay 0)
                const Tensor count =
                    index_add(ones({flat.numel(), 1}, dw.options()), {V, 1}, 0, flat);
                dw = dw / clamp_min(count, 1.0);
            }
            if (padding_idx >= 0) {
                if (GradMode::is_enabled()) {  // create_graph: a recorded product
                    Tensor keep = ones({V, 1}, dw.options());
                    runtime::fill(keep.narrow(0, padding_idx, 1), 0);
                    dw = dw * keep;
                } else {
                    runtime::fill(dw.narrow(0, padding_idx, 1), 0);
                }
            }
            return Grads{dw};
        });
        if (recipes_wanted())  // under a MemoryBudget: the same rows gathered again
            recipe(y, [flat, out, op](const std::vector<Tensor>& xs) {
                const Tensor& w = xs[0];
                return run_index(
                           backend::IndexOp::Select, op,
                           runtime::empty({flat.numel(), w.size(1)}, w.dtype(), w.device(), op), w,
                           0, flat)
                    .reshape(out);
            });
    }
    return y;
}

}  // namespace tg
