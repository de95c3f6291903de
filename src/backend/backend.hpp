#pragma once
// The internal backend interface (DESIGN.md §5): buffers, copies, the table-generated elementwise
// kernels, a few reductions, gemm/gemv and a few structural kernels. Backends never know about
// differentiable ops. Adding a backend: a folder under src/backend/ with a class deriving from
// Backend and a Family (registry.hpp), one line in registry.cpp, one test driver.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "backend/caching_allocator.hpp"
#include "tapegrad/device.hpp"
#include "tapegrad/dtype.hpp"

namespace tg::backend {

enum class UnaryOp : uint8_t {
#define TG_UNARY(name, expr) name,
#include "backend/kernels.def"
};
enum class BinaryOp : uint8_t {
#define TG_BINARY(name, expr) name,
#include "backend/kernels.def"
};
const char* unary_name(UnaryOp op);
const char* binary_name(BinaryOp op);

enum class ReduceOp : uint8_t { Sum, Max, Min, ArgMax, ArgMin };
enum class IndexOp : uint8_t { Select, Add, Gather, ScatterAdd };

/// The sliding-window kernels of convolutions and pooling (Note [Gathering adjoints] in
/// device_common/window.hpp). Every operand is contiguous. "Planes" are the [t,h,w] volumes of x
/// ([planes = samples*C, t, h, w]; t = 1 for 2-D and 1-D windows, h = 1 too for 1-D) and of the
/// pooled outputs ([planes, ot, oh, ow]); the unfolded buffer is [C, kt*kh*kw, samples,
/// ot*oh*ow], so that a convolution of `samples` samples is one GEMM per group,
/// [O, C*taps] x [C*taps, samples*positions]:
///   Unfold:           out = col, in = x; padding reads as 0.
///   Fold:             out = x-sized, in = col: each x element gathers the col entries that read
///                     it (the adjoint of Unfold); out is overwritten.
///   FoldScatter:      Fold by scattering each col entry into x (out zeroed first); CPU only, for
///                     the benchmark that shows what gathering buys.
///   MaxPool:          out = max over each window, aux (int64) = its argmax as (z*h + y)*w + x
///                     within its plane (adaptive windows too).
///   MaxPoolBackward:  out = x-sized, in = dy, aux = the argmax indices: each x element gathers
///                     the dy of the windows whose argmax it is.
///   AvgPool:          out = mean over each window (Window::count_include_pad, divisor,
///                     adaptive).
///   AvgPoolBackward:  out = x-sized, in = dy: each x element gathers dy / count of its windows.
///   Depthwise*:       a depthwise convolution (groups = channels = C = planes / samples, one
///                     filter per channel), directly, no unfolded buffer (Note [Depthwise
///                     convolutions] in cpu/depthwise.cpp); CPU only, as FoldScatter:
///     DepthwiseForward: out = y [planes, ot, oh, ow], in = x, aux = w [C, kt*kh*kw].
///     DepthwiseInput:   out = dx x-sized, in = dy, aux = w.
///     DepthwiseWeight:  out = dw [C, kt*kh*kw], in = x, aux = dy (summed over the samples).
enum class WindowOp : uint8_t {
    Unfold,
    Fold,
    FoldScatter,
    MaxPool,
    MaxPoolBackward,
    AvgPool,
    AvgPoolBackward,
    DepthwiseForward,
    DepthwiseInput,
    DepthwiseWeight
};

/// Whether a window kernel runs on the CPU only (the others throw for it).
inline bool cpu_only(WindowOp op) {
    return op == WindowOp::FoldScatter || op >= WindowOp::DepthwiseForward;
}

/// The windows of one convolution or pooling of up to 3 spatial dims: window (z, i, j) of a
/// plane covers depths z*st - pt + c*dt (c < kt), rows i*sh - ph + a*dh (a < kh) and columns
/// j*sw - pw + b*dw (b < kw); positions outside [0,t) x [0,h) x [0,w) are padding. The depth
/// fields default to a single depth, so a 2-D window leaves them alone. With `adaptive`, window
/// i covers rows [floor(i*h/oh), ceil((i+1)*h/oh)) and likewise depths and columns (adaptive
/// pooling; the k, s, p and d fields are unused).
struct Window {
    int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
    int64_t samples = 1;  // Unfold/Fold: the samples in planes (the col layout above)
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
    int64_t count_include_pad = 1;  // AvgPool: divide by the window's size, padding included
    int64_t adaptive = 0;
    int64_t t = 1, ot = 1, kt = 1, st = 1, pt = 0, dt = 1;  // the depth axis (3-D windows)
    int64_t divisor = 0;  // AvgPool: when nonzero, every window's divisor (divisor_override)
    /// The elements Fold writes: x's planes from out's first element (a chunk of a convolution's
    /// batch passes dx's view at the chunk's offset, whose sizes are the whole batch's).
    int64_t x_elements() const { return planes * t * h * w; }
};

/// The fused recurrent cells (Note [Fused recurrent cells] in device_common/rnn_cell.hpp), over
/// `rows` contiguous rows of `hidden` (H) units; operand k is v[k], contiguous rows of the width
/// given, a null data pointer for an absent one (nullable: *). Gates are blocks of H in ATen's
/// order (LSTM i f g o, GRU r z n).
///   LstmForward:  0 gates [4H] (in: x·W_ihᵀ + h·W_hhᵀ; out: the activated gates), 1 b_ih* [4H],
///                 2 b_hh* [4H], 3 c_prev, 4 c (out), 5 h (out)
///   LstmBackward: 0 dh, 1 dy* (added to dh), 2 gates [4H], 3 c_prev, 4 c, 5 dc (in: from the
///                 next step; out: dc_prev), 6 dgates [4H] (out: the pre-activations')
///   GruForward:   0 gi [3H] (x·W_ihᵀ), 1 gh [3H] (h·W_hhᵀ), 2 b_ih* [3H], 3 b_hh* [3H],
///                 4 h_prev, 5 saved [4H] (out: r, z, n, gh_n + b_hn), 6 h (out)
///   GruBackward:  0 dh (in; out: the direct part of dh_prev, d·z), 1 dy*, 2 saved [4H],
///                 3 h_prev, 4 dgi [3H] (out), 5 dgh [3H] (out)
///   RnnForward:   0 a (in: x·W_ihᵀ + h·W_hhᵀ; out: h), 1 b_ih*, 2 b_hh*; relu: relu, else tanh
///   RnnBackward:  0 dh, 1 dy*, 2 h, 3 da (out)
/// Every other operand has H columns.
enum class CellOp : uint8_t {
    LstmForward,
    LstmBackward,
    GruForward,
    GruBackward,
    RnnForward,
    RnnBackward
};
struct Cell {
    int64_t rows = 0, hidden = 0;
    int64_t relu = 0;  // RnnForward/RnnBackward: relu instead of tanh
};
/// The number of operands of each CellOp.
constexpr int cell_operands(CellOp op) {
    return op == CellOp::LstmForward || op == CellOp::GruBackward   ? 6
           : op == CellOp::LstmBackward || op == CellOp::GruForward ? 7
           : op == CellOp::RnnForward                               ? 3
                                                                    : 4;
}

/// The fused row normalisations (layer_norm, rms_norm: Note [Row normalisation] in
/// ops/layer_norm.cpp) of contiguous x [rows, cols]; an absent operand (*) has data null.
///   Forward:  0 y (out), 1 x, 2 w*, 3 b*, 4 mean (out; center only), 5 rstd (out)
///   Backward: 0 dx* (out), 1 dw* (out), 2 db* (out), 3 dy, 4 x, 5 w*, 6 mean (center), 7 rstd
enum class RowNormOp : uint8_t { Forward, Backward };
struct RowNorm {
    int64_t rows = 0, cols = 0;
    bool center = true;  // layer_norm; rms_norm does not subtract the mean
    double eps = 0;
};

/// The fused per-plane normalisations (batch_norm, group_norm: Note [Normalisation layout] in
/// ops/norm.cpp) of contiguous x [N, C, S] read as N·C planes of S elements (the CPU's kernels:
/// cpu/norm_kernels.hpp's Planes, whose grouping this is); statistics are [groups] tensors in
/// x's dtype, w and b [C]; an absent operand (*) has data null.
///   Moments:  0 mean (out), 1 var (out, biased), 2 x
///   Affine:   0 y (out), 1 x, 2 mean, 3 invstd, 4 w*, 5 b*   (y = (x - mean)·invstd·w + b)
///   Backward: 0 dx* (out), 1 dw* (out), 2 db* (out), 3 dy, 4 x, 5 mean, 6 invstd, 7 w*
enum class PlaneNormOp : uint8_t { Moments, Affine, Backward };
struct PlaneNorm {
    int64_t planes = 0, len = 0, channels = 0;
    int64_t groups = 0;       // 0: one group per channel (batch_norm); else per sample (group_norm)
    bool batch_stats = true;  // Backward: the statistics are this batch's (else constants)
};

/// The fused optimizer update of one parameter of n contiguous elements (Note [Multi-tensor
/// optimizer steps] in cpu/optim_kernels.cpp: the composed update's kernel expressions, in its
/// order, on scalars rounded to the dtype), operands of p's dtype and size; an absent one (*) has
/// data null:
///   Adam: 0 p, 1 g, 2 m (exp_avg), 3 v (exp_avg_sq), 4 vmax* (amsgrad's max_exp_avg_sq)
///   Sgd:  0 p, 1 g, 2 buf* (the momentum buffer; `first`: it holds nothing yet)
enum class OptimOp : uint8_t { Adam, Sgd };
struct OptimStep {
    int64_t n = 0;
    int decay = 0;  // Adam: 0 none, 1 coupled (g + f·p), 2 decoupled (p·f)
    double f = 0, beta1 = 0, beta1c = 0, beta2 = 0, beta2c = 0;  // beta1c = 1 - β1, ...
    double rsqrt_bc2 = 0, eps = 0, neg_step = 0;  // 1/√(1 - β2ᵗ), eps, -lr/(1 - β1ᵗ)
    double weight_decay = 0, momentum = 0, dampening_c = 0, neg_lr = 0;  // SGD; dampening_c = 1 - d
    bool first = false, nesterov = false;                                // SGD
};

constexpr int kMaxDims = 16;

/// A strided operand: element (i0..in) lives at data + (offset + Σ ik*strides[k]) elements.
/// Broadcast operands carry stride 0 on broadcast dims; all operands of one call share `sizes`.
struct View {
    void* data = nullptr;  // backend buffer handle
    int64_t offset = 0;    // elements
    const int64_t* sizes = nullptr;
    const int64_t* strides = nullptr;
    int ndim = 0;
    Dtype dtype = Dtype::Float32;
};

/// Note [Memory statistics]: every byte a tensor holds is counted by its device's backend when
/// it is allocated and released, so current is exactly what live tensors hold and peak its
/// maximum; tg::memory::stats reads these. Tests and benchmarks read memory here, not from RSS.
struct MemoryCounters {
    std::atomic<int64_t> current{0}, peak{0}, allocs{0}, to_device{0}, to_host{0};
    std::atomic<int64_t> saved{0}, peak_saved{0};  // Note [Activation memory] in saved.cpp
    std::atomic<int64_t> limit{0};                 // tg::memory::set_limit; 0: none
    /// Throws out_of_memory if a limit is set and bytes more would bring current above it (one
    /// relaxed load when none is set).
    void admit(int64_t bytes, Device d) const {
        if (limit.load(std::memory_order_relaxed) > 0)
            refuse_above_limit(bytes, d);
    }
    void refuse_above_limit(int64_t bytes, Device d) const;
    void on_alloc(int64_t bytes);
    void on_free(int64_t bytes) { current.fetch_sub(bytes, std::memory_order_relaxed); }
    /// A buffer starts (bytes > 0) or stops (bytes < 0) being kept for backward.
    void on_saved(int64_t bytes);
    void on_transfer(bool to_device_, int64_t bytes) {
        (to_device_ ? to_device : to_host).fetch_add(bytes, std::memory_order_relaxed);
    }
};

/// The kernels every backend implements, declared once: Backend declares them pure virtual
/// and a backend's class TG_BACKEND_KERNELS(, override).
///   to_host, from_host: byte copies between host memory and a buffer (offsets in bytes).
///   copy: out = in, strided, converting dtypes (Note [Conversions] in convert.hpp): any dtype
///     to itself, and the pairs of Note [Direct conversions] (the runtime splits the others).
///   unary, binary: the kernels.def kernel op with scalar parameters p, q.
///   where: out = cond != 0 ? a : b.
///   reduce: out (strides 0 on the reduced dims) = the reduction of in; out is overwritten.
///     ArgMax/ArgMin: out[int64] = index of the max (min) along `dim` (unused by the others);
///     out has in's sizes with stride 0 on dim.
///   softmax_rows: row-wise (log-)softmax of contiguous [rows, cols] data.
///   gemm: row-major BLAS, C = alpha * op(A) op(B) + beta * C (views give data and offset).
///   gemv: row-major BLAS, y = alpha * op(A) x + beta * y; A is [m,n]. Both are called through
///     runtime::gemm / gemv, only with every dimension >= 1 and within int32 (Note [Empty
///     products] in runtime/dispatch.cpp).
///   index: contiguous index kernels along dim (index is int64; src/out contiguous). Select:
///     out = src.index_select(dim, idx); Add: out.index_add_(dim, idx, src); Gather: out =
///     src.gather(dim, idx); ScatterAdd: out.scatter_add_(dim, idx, src). Out-of-range indices
///     throw shape_error naming `opname` (a device may throw it at its next synchronising call:
///     Note [Deferred index errors] in device_common/deferred_errors.hpp).
///   window: the WindowOp kernel over the windows g (aux: MaxPool's indices, else unused).
///   cell: the CellOp kernel over g's rows; v holds cell_operands(op) views (above).
#define TG_BACKEND_KERNELS(prefix, suffix)                                                     \
    prefix void to_host(void* dst, const void* src, size_t src_offset, size_t n) suffix;       \
    prefix void from_host(void* dst, size_t dst_offset, const void* src, size_t n) suffix;     \
    prefix void copy(const View& out, const View& in) suffix;                                  \
    prefix void unary(UnaryOp op, const View& out, const View& x, double p, double q) suffix;  \
    prefix void binary(BinaryOp op, const View& out, const View& a, const View& b, double p,   \
                       double q) suffix;                                                       \
    prefix void where(const View& out, const View& cond, const View& a, const View& b) suffix; \
    prefix void reduce(ReduceOp op, const View& out, const View& in, int dim) suffix;          \
    prefix void softmax_rows(const View& out, const View& in, int64_t rows, int64_t cols,      \
                             bool log) suffix;                                                 \
    prefix void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,          \
                     const View& a, int64_t lda, const View& b, int64_t ldb, double beta,      \
                     const View& c, int64_t ldc) suffix;                                       \
    prefix void gemv(bool ta, int64_t m, int64_t n, double alpha, const View& a, int64_t lda,  \
                     const View& x, int64_t incx, double beta, const View& y, int64_t incy)    \
        suffix;                                                                                \
    prefix void index(IndexOp op, const View& out, const View& src, int dim, const View& idx,  \
                      const char* opname) suffix;                                              \
    prefix void window(WindowOp op, const Window& g, const View& out, const View& in,          \
                       const View& aux) suffix;                                                \
    prefix void cell(CellOp op, const Cell& g, const View* v) suffix;

class Backend {
public:
    virtual ~Backend() = default;
    Backend(const Backend&) = delete;
    Backend& operator=(const Backend&) = delete;

    Device device() const { return device_; }
    MemoryCounters& counters() { return counters_; }

    // ---- memory: the caching allocator over raw_allocate/raw_free, counted in counters()
    void* allocate(size_t nbytes);
    void deallocate(void* p, size_t nbytes);
    /// Bytes held in the cache (freed by tensors, kept for reuse).
    int64_t cached_bytes() { return cache_.cached_bytes(); }
    /// Returns every cached block to the system (or the device).
    void empty_cache() { cache_.release_all(); }

    // The kernels (TG_BACKEND_KERNELS, above).
    TG_BACKEND_KERNELS(virtual, = 0)
    /// Whether row_norm runs here; without it the ops compose the row normalisations (the CPU
    /// calls its kernels directly: cpu/norm_kernels.hpp; CUDA has none yet).
    virtual bool fuses_row_norm() const { return false; }
    /// The RowNormOp kernel (above) over g; throws tg::error where fuses_row_norm() is false.
    virtual void row_norm(RowNormOp op, const RowNorm& g, const View* v);
    /// Whether plane_norm runs here; without it the ops compose batch_norm and group_norm (the
    /// CPU calls its kernels directly: cpu/norm_kernels.hpp; CUDA has none yet).
    virtual bool fuses_plane_norm() const { return false; }
    /// The PlaneNormOp kernels (above) over g; throws tg::error where fuses_plane_norm() is false.
    virtual void plane_norm(PlaneNormOp op, const PlaneNorm& g, const View* v);
    /// Whether optim_step runs here; without it the optimizers compose their updates from
    /// tensor ops (the CPU calls its multi-tensor kernels directly: cpu/optim_kernels.hpp).
    virtual bool fuses_optim_step() const { return false; }
    /// The OptimOp update (above) of one parameter; throws tg::error where fuses_optim_step() is
    /// false.
    virtual void optim_step(OptimOp op, const OptimStep& s, const View* v);
    /// Waits for queued work; throws errors a device reports late.
    virtual void synchronize() {}

protected:
    Backend(Device d, CachePolicy policy);
    /// A new buffer of at least nbytes; throws tg::out_of_memory when the system or device has no
    /// room (the caching allocator then gives its cache back and tries once more).
    virtual void* raw_allocate(size_t nbytes) = 0;
    virtual void raw_free(void* p) = 0;

private:
    Device device_;
    MemoryCounters counters_;
    CachingAllocator cache_;
};

}  // namespace tg::backend
