// OpenCL C program text for one element type, generated from kernels.def plus the structural
// kernels (reductions, softmax rows, index ops) and the copies (convert_source.cpp). One program
// per dtype, so PoCL and other compilers build every kernel of a dtype in a single
// clBuildProgram; a storage dtype's program (Note [Kernel dtypes]) has the copies and where only.
#include "backend/opencl/source.hpp"

#include <string>

namespace tg::backend {

namespace {

// Geometry structs (Note [Device geometry] in device_common/geometry.hpp) and the offset
// computation.
const char* kPrelude = R"CL(
#define TG_MAXD 16
typedef struct { long size[TG_MAXD]; long st[1][TG_MAXD]; long nd; } Geo1;
typedef struct { long size[TG_MAXD]; long st[2][TG_MAXD]; long nd; } Geo2;
typedef struct { long size[TG_MAXD]; long st[3][TG_MAXD]; long nd; } Geo3;
typedef struct { long size[TG_MAXD]; long st[4][TG_MAXD]; long nd; } Geo4;
#define TG_OFFSETS(g, i, K, off) do { long r_ = (i);                                  \
    for (int d_ = (int)(g).nd - 1; d_ >= 0; --d_) {                                     \
        long c_ = r_ % (g).size[d_]; r_ /= (g).size[d_];                                \
        for (int k_ = 0; k_ < (K); ++k_) off[k_] += c_ * (g).st[k_][d_]; } } while (0)
#define TG_GID long i = get_global_id(0); if (i >= n) return;
)CL";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

std::string unary_kernel(const std::string& name, const std::string& expr) {
    return replace_all(replace_all(R"CL(
T fu_@(T x, T p, T q) { return (T)($); }
__kernel void u_@_c(__global T* o, long oo, __global const T* a, long ao, T p, T q, long n) {
    TG_GID o[oo + i] = fu_@(a[ao + i], p, q);
}
__kernel void u_@_s(__global T* o, long oo, __global const T* a, long ao, T p, T q, long n, Geo2 g) {
    TG_GID long off[2] = {oo, ao}; TG_OFFSETS(g, i, 2, off);
    o[off[0]] = fu_@(a[off[1]], p, q);
}
)CL",
                                   "@", name),
                       "$", expr);
}

std::string binary_kernel(const std::string& name, const std::string& expr) {
    return replace_all(replace_all(R"CL(
T fb_@(T a, T b, T p, T q) { return (T)($); }
__kernel void b_@_c(__global T* o, long oo, __global const T* a, long ao, __global const T* b,
                    long bo, T p, T q, long n) {
    TG_GID o[oo + i] = fb_@(a[ao + i], b[bo + i], p, q);
}
__kernel void b_@_s(__global T* o, long oo, __global const T* a, long ao, __global const T* b,
                    long bo, T p, T q, long n, Geo3 g) {
    TG_GID long off[3] = {oo, ao, bo}; TG_OFFSETS(g, i, 3, off);
    o[off[0]] = fb_@(a[off[1]], b[off[2]], p, q);
}
)CL",
                                   "@", name),
                       "$", expr);
}

// Reductions: `_g` is one work-group per output (strided partial sums, then a tree in local
// memory), `_s` one work-item per output looping over the reduced elements.
std::string reduce_kernels(const std::string& name, const std::string& acc, const std::string& init,
                           const std::string& op) {
    std::string s = R"CL(
#define OP_@(x, y) (^)
__kernel void reduce_@_g(__global T* o, long oo, __global const T* a, long ao, long n_red,
                         Geo2 kept, Geo1 red, __local ACC_@* sc) {
    long g = get_group_id(0); int l = (int)get_local_id(0); int L = (int)get_local_size(0);
    long off[2] = {oo, ao}; TG_OFFSETS(kept, g, 2, off);
    ACC_@ acc = INIT_@;
    for (long r = l; r < n_red; r += L) {
        long ro[1] = {off[1]}; TG_OFFSETS(red, r, 1, ro);
        ACC_@ x = a[ro[0]]; acc = OP_@(acc, x);
    }
    sc[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = L / 2; h > 0; h >>= 1) {
        if (l < h) sc[l] = OP_@(sc[l], sc[l + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) o[off[0]] = (T)sc[0];
}
__kernel void reduce_@_s(__global T* o, long oo, __global const T* a, long ao, long n_red,
                         long n, Geo2 kept, Geo1 red) {
    TG_GID long off[2] = {oo, ao}; TG_OFFSETS(kept, i, 2, off);
    ACC_@ acc = INIT_@;
    for (long r = 0; r < n_red; ++r) {
        long ro[1] = {off[1]}; TG_OFFSETS(red, r, 1, ro);
        ACC_@ x = a[ro[0]]; acc = OP_@(acc, x);
    }
    o[off[0]] = (T)acc;
}
)CL";
    s = replace_all(s, "ACC_@", acc);
    s = replace_all(s, "INIT_@", init);
    s = replace_all(s, "^", op);
    return replace_all(s, "@", name);
}

const char* kStructural = R"CL(
// one work-item per output: the first index of the max (min) along a dim of length len; a NaN
// wins, as in PyTorch
__kernel void argreduce(__global long* o, long oo, __global const T* a, long ao, long len,
                        long sd, int is_max, long n, Geo2 g) {
    TG_GID long off[2] = {oo, ao}; TG_OFFSETS(g, i, 2, off);
    __global const T* p = a + off[1];
    long best = 0; T bv = p[0];
    for (long j = 1; j < len && bv == bv; ++j) {
        T x = p[j * sd];
        if (x != x || (is_max ? x > bv : x < bv)) { bv = x; best = j; }
    }
    o[off[0]] = best;
}
// Index kernels (contiguous; Note [Deferred index errors] in device_common/deferred_errors.hpp): invalid indices are
// skipped and reported through st = {launch id, index, limit, dim}.
__kernel void idx_check(__global const long* idx, long io, long limit, long id, long dim,
                        __global long* st, long n) {
    TG_GID long t = idx[io + i];
    if (t < 0 || t >= limit) { st[1] = t; st[2] = limit; st[3] = dim; st[0] = id; }
}
// out[r, j, k] = src[r, idx[j], k]
__kernel void idx_select(__global T* o, long oo, __global const T* s, long so,
                         __global const long* idx, long io, long nidx, long lim, long inner, long n) {
    TG_GID long k = i % inner, j = (i / inner) % nidx, r = i / (inner * nidx);
    long t = idx[io + j];
    o[oo + i] = (t >= 0 && t < lim) ? s[so + (r * lim + t) * inner + k] : (T)0;
}
// out[r, t, k] += sum over j with idx[j] == t of src[r, j, k]   (gathering: no atomics)
__kernel void idx_add(__global T* o, long oo, __global const T* s, long so,
                      __global const long* idx, long io, long nidx, long lim, long inner, long n) {
    TG_GID long k = i % inner, t = (i / inner) % lim, r = i / (inner * lim);
    T acc = (T)0;
    for (long j = 0; j < nidx; ++j)
        if (idx[io + j] == t) acc += s[so + (r * nidx + j) * inner + k];
    o[oo + i] += acc;
}
// index_add grouped by output row (Note [Gathering by segments] in device_common/geometry.hpp)
__kernel void idx_count(__global const long* idx, long io, long nidx, __global long* seg,
                        long n) {
    TG_GID long c = 0;
    for (long j = 0; j < nidx; ++j) c += idx[io + j] == i;
    seg[i + 1] = c;
}
// seg[0..lim]: the counts become where each row's group starts (one work-item)
__kernel void idx_offsets(__global long* seg, long lim, long n) {
    TG_GID seg[0] = 0;
    for (long t = 1; t <= lim; ++t) seg[t] += seg[t - 1];
}
__kernel void idx_fill(__global const long* idx, long io, long nidx, __global const long* seg,
                       __global long* perm, long n) {
    TG_GID long at = seg[i];
    for (long j = 0; j < nidx; ++j)
        if (idx[io + j] == i) perm[at++] = j;
}
// out[r, t, k] += sum over the group of t of src[r, j, k]
__kernel void idx_add_seg(__global T* o, long oo, __global const T* s, long so,
                          __global const long* perm, __global const long* seg, long nidx,
                          long lim, long inner, long n) {
    TG_GID long k = i % inner, t = (i / inner) % lim, r = i / (inner * lim);
    T acc = (T)0;
    for (long p = seg[t]; p < seg[t + 1]; ++p) acc += s[so + (r * nidx + perm[p]) * inner + k];
    o[oo + i] += acc;
}
// out[r, j, k] = src[r, idx[r, j, k], k]
__kernel void idx_gather(__global T* o, long oo, __global const T* s, long so,
                         __global const long* idx, long io, long nj, long lim, long inner, long n) {
    TG_GID long k = i % inner, r = i / (inner * nj);
    long t = idx[io + i];
    o[oo + i] = (t >= 0 && t < lim) ? s[so + (r * lim + t) * inner + k] : (T)0;
}
// out[r, t, k] += sum over j with idx[r, j, k] == t of src[r, j, k]
__kernel void idx_scatter_add(__global T* o, long oo, __global const T* s, long so,
                              __global const long* idx, long io, long nj, long lim, long inner,
                              long n) {
    TG_GID long k = i % inner, t = (i / inner) % lim, r = i / (inner * lim);
    T acc = (T)0;
    for (long j = 0; j < nj; ++j) {
        long q = (r * nj + j) * inner + k;
        if (idx[io + q] == t) acc += s[so + q];
    }
    o[oo + i] += acc;
}
)CL";

const char* kFloating = R"CL(
// one work-item per row of a contiguous [rows, cols] block
__kernel void softmax_rows(__global T* o, long oo, __global const T* a, long ao, long cols,
                           int lg, long n) {
    TG_GID __global const T* x = a + ao + i * cols;
    __global T* y = o + oo + i * cols;
    T m = x[0];
    for (long j = 1; j < cols; ++j) m = x[j] > m ? x[j] : m;
    ACC sum = 0;
    for (long j = 0; j < cols; ++j) {
        T e = exp(x[j] - m);
        sum += e;
        if (!lg) y[j] = e;
    }
    if (lg) {
        T lse = m + (T)log(sum);
        for (long j = 0; j < cols; ++j) y[j] = x[j] - lse;
    } else {
        T inv = (T)(1 / sum);
        for (long j = 0; j < cols; ++j) y[j] *= inv;
    }
}
)CL";

}  // namespace

std::string opencl_program_source(Dtype d, bool fp64) {
    std::string s;
    if (fp64)
        s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    const char* real = fp64 ? "double" : "float";
    if (kernel_dtype(d) != d || d == Dtype::Bool) {  // storage dtypes only convert and select
        s += std::string("#define T ") + opencl_type(d) + "\n";
        s += kPrelude;
        return s + opencl_conversion_source(d, fp64);
    }
    switch (d) {
        case Dtype::Float32:
            s += "#define T float\n#define ACC " + std::string(real) +
                 "\n#define TG_LOWEST (-FLT_MAX)\n#define TG_HIGHEST FLT_MAX\n"
                 "#define tg_div(a, b) ((a) / (b))\n";
            break;
        case Dtype::Float64:
            s += "#define T double\n#define ACC double\n#define TG_LOWEST (-DBL_MAX)\n"
                 "#define TG_HIGHEST DBL_MAX\n#define tg_div(a, b) ((a) / (b))\n";
            break;
        default:
            // int64 runs the same table; transcendental kernels go through floating point (back
            // to int64 as x86 converts: NaN and overflow give LONG_MIN), powers are exact
            // (int_pow in kernel_table.hpp), and division never traps (Note [Integer division]
            // in kernels.def).
            s += "#define T long\n#define ACC long\n#define TG_LOWEST LONG_MIN\n"
                 "#define TG_HIGHEST LONG_MAX\n#define TGF " +
                 std::string(real) +
                 "\nlong tg_div(long a, long b) {\n"
                 "    return b == 0 ? 0 : b == -1 ? (long)(0UL - (ulong)a) : a / b;\n}\n"
                 "long tg_to_long(TGF v) {\n"
                 "    return (v >= (TGF)-0x1p63f && v < (TGF)0x1p63f) ? (long)v : LONG_MIN;\n}\n"
                 "long int_fmod(long a, long b) {\n"
                 "    return b == 0 || b == -1 ? 0 : a % b;\n}\n"
                 "long int_atan2(long a, long b) { return tg_to_long(atan2((TGF)a, (TGF)b)); }\n"
                 "long int_hypot(long a, long b) { return tg_to_long(hypot((TGF)a, (TGF)b)); }\n"
                 "long int_pow(long a, long b) {\n"
                 "    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
                 "    ulong r = 1, x = (ulong)a;\n"
                 "    for (; b > 0; b >>= 1, x *= x) if (b & 1) r *= x;\n"
                 "    return (long)r;\n}\n";
            // (the builtins may be macros themselves: wrap them first, then rename)
#define TG_MATH1(f)                                                                  \
    s += "long tg_" #f "(long v) { return tg_to_long(" #f "((TGF)v)); }\n#undef " #f \
         "\n#define " #f "(v) tg_" #f "(v)\n";
#define TG_MATH2(f)                                                                                \
    s += "long tg_" #f "(long u, long v) { return int_" #f "(u, v); }\n#undef " #f "\n#define " #f \
         "(u, v) tg_" #f "(u, v)\n";
#include "backend/kernels.def"
    }
    s += kPrelude;
#define TG_UNARY(name, expr) s += unary_kernel(#name, #expr);
#define TG_BINARY(name, expr) s += binary_kernel(#name, #expr);
#include "backend/kernels.def"
    s += opencl_conversion_source(d, fp64);
    s += reduce_kernels("sum", "ACC", "0", "(x) + (y)");
    s += reduce_kernels("max", "T", "TG_LOWEST", "(y) > (x) ? (y) : (x)");
    s += reduce_kernels("min", "T", "TG_HIGHEST", "(y) < (x) ? (y) : (x)");
    s += kStructural;
    if (d != Dtype::Int64) {
        s += kFloating;
        s += opencl_window_source();
        s += opencl_rnn_source();
        s += opencl_norm_source();
        s += opencl_optim_source();
    }
    return s;
}

}  // namespace tg::backend
