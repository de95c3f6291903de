// The CPU backend: strided loops generated from kernels.def, BLAS through xtensor-blas (cxxblas
// over OpenBLAS). The only translation unit that includes xtensor.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <xtensor-blas/xblas.hpp>

#include "backend/backend.hpp"
#include "backend/cpu_allocator.hpp"
#include "backend/cpu_threads.hpp"
#include "memory_internal.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/shape.hpp"

extern "C" char* openblas_get_corename(void);

namespace tg::backend {

namespace kern {
using std::erf;
using std::exp;
using std::log;
using std::log1p;
using std::pow;
using std::sqrt;
using std::tanh;
#define TG_UNARY(name, expr)             \
    struct U_##name {                    \
        template <class T>               \
        static T f(T x, T p, T q) {      \
            (void)p;                     \
            (void)q;                     \
            return static_cast<T>(expr); \
        }                                \
    };
#define TG_BINARY(name, expr)            \
    struct B_##name {                    \
        template <class T>               \
        static T f(T a, T b, T p, T q) { \
            (void)p;                     \
            (void)q;                     \
            return static_cast<T>(expr); \
        }                                \
    };
#include "backend/kernels.def"

// Note [Vectorisable float math]: glibc's expf/tanhf are scalar calls, so a loop over them does
// not vectorise and tanh alone would cost more than the rest of an MLP step. For float32 the
// hot transcendental kernels use these branch-free forms (range reduction to 2^n * e^r with
// |r| <= ln2/2 and a degree-6 polynomial, about 1 ulp), which the compiler vectorises. float64
// keeps the libm functions, so gradcheck runs on the exact ones.
inline float bits_to_float(int32_t i) {
    float f;
    std::memcpy(&f, &i, sizeof f);
    return f;
}
inline float fast_exp(float x) {
    x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
    const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln2)
    const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return p * bits_to_float((int32_t(n) + 127) << 23);
}
inline float fast_tanh(float x) {
    const float a = x < 0 ? -x : x;
    const float e = fast_exp(2 * a);
    const float big = 1.0f - 2.0f / (e + 1.0f);
    const float x2 = x * x;  // tanh x = x - x³/3 + 2x⁵/15 - 17x⁷/315 near 0
    const float small = x * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15 + x2 * (-17.0f / 315))));
    return a < 0.125f ? small : (x < 0 ? -big : big);
}
template <>
inline float U_exp::f<float>(float x, float, float) {
    return fast_exp(x);
}
template <>
inline float U_tanh::f<float>(float x, float, float) {
    return fast_tanh(x);
}
template <>
inline float U_sigmoid::f<float>(float x, float, float) {
    return 1.0f / (1.0f + fast_exp(-x));
}
}  // namespace kern

const char* unary_name(UnaryOp op) {
    switch (op) {
#define TG_UNARY(name, expr) \
    case UnaryOp::name:      \
        return #name;
#include "backend/kernels.def"
    }
    return "?";
}
const char* binary_name(BinaryOp op) {
    switch (op) {
#define TG_BINARY(name, expr) \
    case BinaryOp::name:      \
        return #name;
#include "backend/kernels.def"
    }
    return "?";
}

namespace {

// Note [Strided iteration]: every elementwise, copy and reduction kernel walks N operands that
// share one shape with per-operand strides (0 on broadcast or reduced dims). Dims of size 1 are
// dropped and adjacent dims merged where every operand is contiguous across them, so the common
// cases run as one flat inner loop the compiler vectorises.
template <int N>
struct Iter {
    int nd = 0;
    int64_t size[kMaxDims];
    int64_t st[N][kMaxDims];
};

template <int N>
Iter<N> make_iter(const View* const (&v)[N], const int64_t* sizes, int ndim) {
    Iter<N> it;
    for (int d = 0; d < ndim; ++d) {
        if (sizes[d] == 1)
            continue;
        if (it.nd > 0) {
            bool merge = true;
            for (int k = 0; k < N; ++k)
                merge = merge && it.st[k][it.nd - 1] == v[k]->strides[d] * sizes[d];
            if (merge) {
                it.size[it.nd - 1] *= sizes[d];
                for (int k = 0; k < N; ++k)
                    it.st[k][it.nd - 1] = v[k]->strides[d];
                continue;
            }
        }
        it.size[it.nd] = sizes[d];
        for (int k = 0; k < N; ++k)
            it.st[k][it.nd] = v[k]->strides[d];
        ++it.nd;
    }
    return it;
}

/// Calls row(offsets[N], n, inner_strides[N]) for each innermost row; offsets start at base.
template <int N, class Row>
void for_each_row(const Iter<N>& it, Row&& row, const int64_t* base = nullptr) {
    int64_t off[N] = {};
    int64_t ist[N] = {};
    for (int k = 0; base && k < N; ++k)
        off[k] = base[k];
    if (it.nd == 0) {
        row(off, int64_t(1), ist);
        return;
    }
    const int last = it.nd - 1;
    for (int k = 0; k < N; ++k)
        ist[k] = it.st[k][last];
    int64_t outer = 1;
    for (int d = 0; d < last; ++d)
        outer *= it.size[d];
    int64_t idx[kMaxDims] = {};
    for (int64_t r = 0; r < outer; ++r) {
        row(off, it.size[last], ist);
        for (int d = last - 1; d >= 0; --d) {
            for (int k = 0; k < N; ++k)
                off[k] += it.st[k][d];
            if (++idx[d] < it.size[d])
                break;
            for (int k = 0; k < N; ++k)
                off[k] -= it.st[k][d] * it.size[d];
            idx[d] = 0;
        }
    }
}

/// for_each_row, with the outermost dim (or a single row) split into one slice per thread when
/// the kernel is large (Note [Elementwise threads] in cpu_threads.cpp). Operand 0 is the output:
/// where its stride along dim 0 is 0 (a reduction, or an expanded output) slices would write the
/// same elements, so that runs on one thread.
template <int N, class Row>
void parallel_rows(const Iter<N>& it, Row&& row) {
    int64_t total = 1;
    for (int d = 0; d < it.nd; ++d)
        total *= it.size[d];
    const bool split = it.nd > 0 && it.st[0][0] != 0 && total >= kParallelMin;
    const int threads = split ? cpu_threads() : 1;
    if (threads < 2) {
        for_each_row(it, row);
        return;
    }
    const int64_t n0 = it.size[0];
    const int parts = int(std::min<int64_t>(threads, n0));
    const int64_t align = it.nd == 1 ? 16 : 1;  // slices of one row start on 64-byte lines
    auto start = [&](int i) {
        return i >= parts ? n0 : std::min(n0, (n0 * i / parts + align - 1) / align * align);
    };
    cpu_parallel(parts, [&](int i) {
        const int64_t b = start(i), e = start(i + 1);
        if (e <= b)
            return;
        Iter<N> slice = it;
        slice.size[0] = e - b;
        int64_t base[N];
        for (int k = 0; k < N; ++k)
            base[k] = b * it.st[k][0];
        for_each_row(slice, row, base);
    });
}

template <class T>
T* ptr(const View& v) {
    return static_cast<T*>(v.data) + v.offset;
}

template <int N>
Iter<N> iter_of(const View* const (&v)[N]) {
    return make_iter<N>(v, v[0]->sizes, v[0]->ndim);
}

// Note [Wider SIMD]: the library is built for baseline x86-64 (SSE2) so that one binary runs on
// any x86-64 CPU. The contiguous float32 loops of the table kernels are also compiled for AVX2
// and AVX-512, and the loader picks the widest the CPU has (GCC's target_clones: an ifunc
// resolved once). The compute-bound kernels (exp, tanh, sigmoid, adam_direction) gain most.
// cpu.cpp is compiled with -ffp-contract=off, so no clone fuses a*b+c into an FMA: every
// clone rounds exactly as the SSE2 loop does and results do not depend on the CPU.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TG_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TG_SIMD_CLONES
#endif

template <class K>
TG_SIMD_CLONES void unary_flat(float* o, const float* a, int64_t n, float p, float q) {
    for (int64_t i = 0; i < n; ++i)
        o[i] = K::f(a[i], p, q);
}

template <class K>
TG_SIMD_CLONES void binary_flat(float* o, const float* a, const float* b, int64_t n, float p,
                                float q) {
    for (int64_t i = 0; i < n; ++i)
        o[i] = K::f(a[i], b[i], p, q);
}

template <class K, class T>
void unary_loop(const View& out, const View& x, T p, T q) {
    const View* v[2] = {&out, &x};
    T* o = ptr<T>(out);
    const T* a = ptr<T>(x);
    parallel_rows<2>(iter_of<2>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        if (s[0] == 1 && s[1] == 1) {
            if constexpr (std::is_same_v<T, float>)
                unary_flat<K>(po, pa, n, p, q);
            else
                for (int64_t i = 0; i < n; ++i)
                    po[i] = K::f(pa[i], p, q);
        } else {
            for (int64_t i = 0; i < n; ++i)
                po[i * s[0]] = K::f(pa[i * s[1]], p, q);
        }
    });
}

template <class K, class T>
void binary_loop(const View& out, const View& x, const View& y, T p, T q) {
    const View* v[3] = {&out, &x, &y};
    T* o = ptr<T>(out);
    const T* a = ptr<T>(x);
    const T* b = ptr<T>(y);
    parallel_rows<3>(iter_of<3>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        const T* pb = b + off[2];
        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
            if constexpr (std::is_same_v<T, float>)
                binary_flat<K>(po, pa, pb, n, p, q);
            else
                for (int64_t i = 0; i < n; ++i)
                    po[i] = K::f(pa[i], pb[i], p, q);
        } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
            const T bv = pb[0];
            for (int64_t i = 0; i < n; ++i)
                po[i] = K::f(pa[i], bv, p, q);
        } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
            const T av = pa[0];
            for (int64_t i = 0; i < n; ++i)
                po[i] = K::f(av, pb[i], p, q);
        } else {
            for (int64_t i = 0; i < n; ++i)
                po[i * s[0]] = K::f(pa[i * s[1]], pb[i * s[2]], p, q);
        }
    });
}

template <class To, class Ti>
void copy_loop(const View& out, const View& in) {
    const View* v[2] = {&out, &in};
    To* o = ptr<To>(out);
    const Ti* a = ptr<Ti>(in);
    parallel_rows<2>(iter_of<2>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        To* po = o + off[0];
        const Ti* pa = a + off[1];
        if (s[0] == 1 && s[1] == 1) {
            if constexpr (std::is_same_v<To, Ti>)
                std::memcpy(po, pa, size_t(n) * sizeof(To));
            else
                for (int64_t i = 0; i < n; ++i)
                    po[i] = static_cast<To>(pa[i]);
        } else {
            for (int64_t i = 0; i < n; ++i)
                po[i * s[0]] = static_cast<To>(pa[i * s[1]]);
        }
    });
}

template <class T>
void reduce_loop(ReduceOp op, const View& out, const View& in) {
    const View* v[2] = {&out, &in};
    T* o = ptr<T>(out);
    const T* a = ptr<T>(in);
    using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
    const T init = op == ReduceOp::Sum   ? T(0)
                   : op == ReduceOp::Max ? std::numeric_limits<T>::lowest()
                                         : std::numeric_limits<T>::max();
    {  // initialise every output element once (out's own layout)
        const View* vo[1] = {&out};
        Shape osz(out.sizes, out.sizes + out.ndim);
        for (int d = 0; d < out.ndim; ++d)
            if (out.strides[d] == 0)
                osz[d] = 1;
        for_each_row<1>(make_iter<1>(vo, osz.data(), out.ndim),
                        [&](const int64_t* off, int64_t n, const int64_t* s) {
                            for (int64_t i = 0; i < n; ++i)
                                o[off[0] + i * s[0]] = init;
                        });
    }
    parallel_rows<2>(iter_of<2>(v), [&](const int64_t* off, int64_t n, const int64_t* s) {
        T* po = o + off[0];
        const T* pa = a + off[1];
        if (s[0] == 0) {  // the row reduces into one element
            if (op == ReduceOp::Sum) {
                Acc acc = 0;
                for (int64_t i = 0; i < n; ++i)
                    acc += pa[i * s[1]];
                *po = static_cast<T>(*po + acc);
            } else if (op == ReduceOp::Max) {
                T m = *po;
                for (int64_t i = 0; i < n; ++i)
                    m = pa[i * s[1]] > m ? pa[i * s[1]] : m;
                *po = m;
            } else {
                T m = *po;
                for (int64_t i = 0; i < n; ++i)
                    m = pa[i * s[1]] < m ? pa[i * s[1]] : m;
                *po = m;
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {
                T& r = po[i * s[0]];
                const T x = pa[i * s[1]];
                r = op == ReduceOp::Sum   ? r + x
                    : op == ReduceOp::Max ? (x > r ? x : r)
                                          : (x < r ? x : r);
            }
        }
    });
}

template <class T>
void arg_reduce_loop(bool is_max, const View& out, const View& in, int dim) {
    Shape sz(in.sizes, in.sizes + in.ndim);
    const int64_t n = sz[dim];
    const int64_t sd = in.strides[dim];
    sz[dim] = 1;
    const View* v[2] = {&out, &in};
    int64_t* o = ptr<int64_t>(out);
    const T* a = ptr<T>(in);
    for_each_row<2>(make_iter<2>(v, sz.data(), in.ndim),
                    [&](const int64_t* off, int64_t len, const int64_t* s) {
                        for (int64_t i = 0; i < len; ++i) {
                            const T* p = a + off[1] + i * s[1];
                            int64_t best = 0;
                            T bv = p[0];
                            for (int64_t j = 1; j < n; ++j) {
                                const T x = p[j * sd];
                                if (is_max ? x > bv : x < bv)
                                    bv = x, best = j;
                            }
                            o[off[0] + i * s[0]] = best;
                        }
                    });
}

template <class T>
void softmax_loop(T* o, const T* x, int64_t rows, int64_t cols, bool log) {
    for (int64_t r = 0; r < rows; ++r) {
        const T* xr = x + r * cols;
        T* orow = o + r * cols;
        T m = xr[0];
        for (int64_t j = 1; j < cols; ++j)
            m = xr[j] > m ? xr[j] : m;
        double sum = 0;
        for (int64_t j = 0; j < cols; ++j) {
            const T e = std::exp(xr[j] - m);
            sum += e;
            if (!log)
                orow[j] = e;
        }
        if (log) {
            const T lse = m + static_cast<T>(std::log(sum));
            for (int64_t j = 0; j < cols; ++j)
                orow[j] = xr[j] - lse;
        } else {
            const T inv = static_cast<T>(1.0 / sum);
            for (int64_t j = 0; j < cols; ++j)
                orow[j] *= inv;
        }
    }
}

int64_t prod(const int64_t* s, int from, int to) {
    int64_t p = 1;
    for (int d = from; d < to; ++d)
        p *= s[d];
    return p;
}

template <class T>
void index_loop(IndexOp op, const View& out, const View& src, int dim, const View& idxv,
                const char* opname) {
    T* o = ptr<T>(out);
    const T* a = ptr<T>(src);
    const int64_t* idx = ptr<int64_t>(idxv);
    const int64_t nidx = prod(idxv.sizes, 0, idxv.ndim);
    auto bad = [&](int64_t i, int64_t limit) {
        throw shape_error(std::string(opname) + ": index " + std::to_string(i) +
                          " is out of bounds for dim " + std::to_string(dim) + " with size " +
                          std::to_string(limit));
    };
    if (op == IndexOp::Select || op == IndexOp::Add) {
        // Select: out[o, j, i] = src[o, idx[j], i];  Add: out[o, idx[j], i] += src[o, j, i]
        const View& big = op == IndexOp::Select ? src : out;
        const int64_t outer = prod(big.sizes, 0, dim), inner = prod(big.sizes, dim + 1, big.ndim);
        const int64_t n = big.sizes[dim];
        for (int64_t j = 0; j < nidx; ++j)
            if (idx[j] < 0 || idx[j] >= n)
                bad(idx[j], n);
        for (int64_t r = 0; r < outer; ++r)
            for (int64_t j = 0; j < nidx; ++j) {
                if (op == IndexOp::Select) {
                    std::memcpy(o + (r * nidx + j) * inner, a + (r * n + idx[j]) * inner,
                                size_t(inner) * sizeof(T));
                } else {
                    T* d = o + (r * n + idx[j]) * inner;
                    const T* s = a + (r * nidx + j) * inner;
                    for (int64_t i = 0; i < inner; ++i)
                        d[i] += s[i];
                }
            }
        return;
    }
    // Gather: out[o, j, i] = src[o, idx[o, j, i], i];  ScatterAdd: out[o, idx[o,j,i], i] += src[o,
    // j, i]
    const View& big = op == IndexOp::Gather ? src : out;
    const int64_t outer = prod(idxv.sizes, 0, dim), inner = prod(idxv.sizes, dim + 1, idxv.ndim);
    const int64_t nj = idxv.sizes[dim], n = big.sizes[dim];
    for (int64_t k = 0; k < nidx; ++k)
        if (idx[k] < 0 || idx[k] >= n)
            bad(idx[k], n);
    for (int64_t r = 0; r < outer; ++r)
        for (int64_t j = 0; j < nj; ++j)
            for (int64_t i = 0; i < inner; ++i) {
                const int64_t k = (r * nj + j) * inner + i;
                const int64_t b = (r * n + idx[k]) * inner + i;
                if (op == IndexOp::Gather)
                    o[k] = a[b];
                else
                    o[b] += a[k];
            }
}

double uniform01(std::mt19937_64& g) {
    return double(g() >> 11) * (1.0 / 9007199254740992.0);
}

void check_blas_kernel() {
    static bool checked = false;
    if (checked)
        return;
    checked = true;
    const char* name = openblas_get_corename();
    const std::string core = name ? name : "";
    const bool slow = core == "Prescott" || core == "Core2" || core == "Nehalem" ||
                      core == "Sandybridge" || core == "Katmai" || core == "Atom";
    __builtin_cpu_init();
    const bool fast_cpu = __builtin_cpu_supports("avx2");
    if (slow && fast_cpu && !std::getenv("TG_NO_BLAS_WARNING"))
        std::fprintf(stderr,
                     "tapegrad: OpenBLAS chose its slow '%s' kernel on this %s CPU; run with "
                     "OPENBLAS_CORETYPE=%s for the fast one (about 4x faster GEMM)\n",
                     core.c_str(), __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2",
                     __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell");
}

class CpuBackend final : public Backend {
public:
    void* allocate(size_t nbytes) override { return cpu_allocate(nbytes); }
    void deallocate(void* p, size_t nbytes) override { cpu_deallocate(p, nbytes); }
    void to_host(void* dst, const void* src, size_t off, size_t n) override {
        std::memcpy(dst, static_cast<const char*>(src) + off, n);
    }
    void from_host(void* dst, size_t off, const void* src, size_t n) override {
        std::memcpy(static_cast<char*>(dst) + off, src, n);
    }
    void copy(const View& out, const View& in) override {
        dispatch(out.dtype, [&](auto to) {
            dispatch(in.dtype, [&](auto ti) { copy_loop<decltype(to), decltype(ti)>(out, in); });
        });
    }
    void fill(const View& out, double value) override {
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            const T v = static_cast<T>(value);
            const View* vs[1] = {&out};
            T* o = ptr<T>(out);
            parallel_rows<1>(iter_of<1>(vs), [&](const int64_t* off, int64_t n, const int64_t* s) {
                for (int64_t i = 0; i < n; ++i)
                    o[off[0] + i * s[0]] = v;
            });
        });
    }
    void unary(UnaryOp op, const View& out, const View& x, double p, double q) override {
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            switch (op) {
#define TG_UNARY(name, expr)                                                         \
    case UnaryOp::name:                                                              \
        unary_loop<kern::U_##name, T>(out, x, static_cast<T>(p), static_cast<T>(q)); \
        break;
#include "backend/kernels.def"
            }
        });
    }
    void binary(BinaryOp op, const View& out, const View& a, const View& b, double p,
                double q) override {
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            switch (op) {
#define TG_BINARY(name, expr)                                                            \
    case BinaryOp::name:                                                                 \
        binary_loop<kern::B_##name, T>(out, a, b, static_cast<T>(p), static_cast<T>(q)); \
        break;
#include "backend/kernels.def"
            }
        });
    }
    void where(const View& out, const View& cond, const View& a, const View& b) override {
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            dispatch(cond.dtype, [&](auto ctag) {
                using C = decltype(ctag);
                const View* v[4] = {&out, &cond, &a, &b};
                T* o = ptr<T>(out);
                const C* c = ptr<C>(cond);
                const T* pa = ptr<T>(a);
                const T* pb = ptr<T>(b);
                parallel_rows<4>(iter_of<4>(v), [&](const int64_t* off, int64_t n,
                                                    const int64_t* s) {
                    for (int64_t i = 0; i < n; ++i)
                        o[off[0] + i * s[0]] = c[off[1] + i * s[1]] != C(0) ? pa[off[2] + i * s[2]]
                                                                            : pb[off[3] + i * s[3]];
                });
            });
        });
    }
    void reduce(ReduceOp op, const View& out, const View& in) override {
        dispatch(out.dtype, [&](auto tag) { reduce_loop<decltype(tag)>(op, out, in); });
    }
    void arg_reduce(bool is_max, const View& out, const View& in, int dim) override {
        dispatch(in.dtype, [&](auto tag) { arg_reduce_loop<decltype(tag)>(is_max, out, in, dim); });
    }
    void softmax_rows(const View& out, const View& in, int64_t rows, int64_t cols,
                      bool log) override {
        if (in.dtype == Dtype::Float32)
            softmax_loop(ptr<float>(out), ptr<float>(in), rows, cols, log);
        else
            softmax_loop(ptr<double>(out), ptr<double>(in), rows, cols, log);
    }
    void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const View& a,
              int64_t lda, const View& b, int64_t ldb, double beta, const View& c,
              int64_t ldc) override {
        check_blas_kernel();
        const auto t1 = ta ? cxxblas::Trans : cxxblas::NoTrans;
        const auto t2 = tb ? cxxblas::Trans : cxxblas::NoTrans;
        using I = int;
        if (c.dtype == Dtype::Float32)
            cxxblas::gemm<I>(cxxblas::RowMajor, t1, t2, I(m), I(n), I(k), float(alpha),
                             ptr<float>(a), I(lda), ptr<float>(b), I(ldb), float(beta),
                             ptr<float>(c), I(ldc));
        else
            cxxblas::gemm<I>(cxxblas::RowMajor, t1, t2, I(m), I(n), I(k), alpha, ptr<double>(a),
                             I(lda), ptr<double>(b), I(ldb), beta, ptr<double>(c), I(ldc));
    }
    void gemv(bool ta, int64_t m, int64_t n, double alpha, const View& a, int64_t lda,
              const View& x, int64_t incx, double beta, const View& y, int64_t incy) override {
        check_blas_kernel();
        const auto t = ta ? cxxblas::Trans : cxxblas::NoTrans;
        using I = int;
        if (y.dtype == Dtype::Float32)
            cxxblas::gemv<I>(cxxblas::RowMajor, t, I(m), I(n), float(alpha), ptr<float>(a), I(lda),
                             ptr<float>(x), I(incx), float(beta), ptr<float>(y), I(incy));
        else
            cxxblas::gemv<I>(cxxblas::RowMajor, t, I(m), I(n), alpha, ptr<double>(a), I(lda),
                             ptr<double>(x), I(incx), beta, ptr<double>(y), I(incy));
    }
    void index(IndexOp op, const View& out, const View& src, int dim, const View& idx,
               const char* opname) override {
        dispatch(out.dtype,
                 [&](auto tag) { index_loop<decltype(tag)>(op, out, src, dim, idx, opname); });
    }
    bool all_finite(const View& v) override {
        if (v.dtype == Dtype::Int64)
            return true;
        bool ok = true;
        dispatch(v.dtype, [&](auto tag) {
            using T = decltype(tag);
            const View* vs[1] = {&v};
            const T* a = ptr<T>(v);
            for_each_row<1>(iter_of<1>(vs), [&](const int64_t* off, int64_t n, const int64_t* s) {
                for (int64_t i = 0; i < n; ++i)
                    ok = ok && std::isfinite(double(a[off[0] + i * s[0]]));
            });
        });
        return ok;
    }
    void random(const View& out, bool normal, double a, double b, std::mt19937_64& gen) override {
        dispatch(out.dtype, [&](auto tag) {
            using T = decltype(tag);
            T* o = ptr<T>(out);
            const int64_t n = prod(out.sizes, 0, out.ndim);
            if (!normal) {
                for (int64_t i = 0; i < n; ++i)
                    o[i] = static_cast<T>(a + (b - a) * uniform01(gen));
                return;
            }
            for (int64_t i = 0; i < n; i += 2) {  // Box-Muller: two samples per pair of uniforms
                const double u1 = 1.0 - uniform01(gen), u2 = uniform01(gen);
                const double r = std::sqrt(-2.0 * std::log(u1));
                o[i] = static_cast<T>(a + b * r * std::cos(6.283185307179586 * u2));
                if (i + 1 < n)
                    o[i + 1] = static_cast<T>(a + b * r * std::sin(6.283185307179586 * u2));
            }
        });
    }
};

}  // namespace

Backend& cpu() {
    static CpuBackend b;
    return b;
}

}  // namespace tg::backend
