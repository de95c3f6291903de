// Float32 convolutions on oneDNN's public C++ API (dnnl.hpp), built with TG_DNNL.
//
// Note [oneDNN convolutions]: each of the three bilinear ops is one oneDNN primitive
// (convolution_forward, _backward_data, _backward_weights; the backward ones need a forward
// primitive descriptor as a hint). tapegrad's tensors are plain row-major N, C, spatial... (and
// O, C/g, k... for weights, which with groups is the same memory as G, O/g, C/g, k...), so every
// memory descriptor is given by its strides. The primitive picks its own layouts (format any,
// oneDNN's blocked nChw16c and the like on AVX-512), with reorders from tapegrad's layout into
// those and back; TG_DNNL_PLAIN=1 asks for the plain layouts instead (for benchmarks). Primitives
// and their reorders are built once per geometry and kept in a map (below kCacheMax entries,
// then cleared), behind a mutex; executing them is thread-safe, each call with its own
// scratchpad (scratchpad_mode::user) and stream, the scratchpad and the operands in the
// primitive's layouts in one buffer per thread (workspace()). The thread count is set for oneDNN's
// OpenMP runtime right before each call (omp_set_num_threads: the calling thread's setting): the
// caller (ops/conv_direct.cpp) shares samples out over tapegrad's threads and asks for one, or
// for tapegrad's count when there is one part (Note [The convolution strategy by shape]).
#include "backend/cpu/dnnl_conv.hpp"

#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "tapegrad/error.hpp"
#include "tapegrad/shape.hpp"

namespace tg::backend::cpu {

namespace {

using dnnl::memory;
using Dims = memory::dims;

constexpr size_t kCacheMax = 512;

dnnl::engine& engine() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

/// One operand: its argument id, tapegrad's layout and the primitive's, with the reorder
/// between them when they differ (into the primitive's for inputs, out of it for the output).
struct Slot {
    int arg = 0;
    memory::desc user, prim;
    bool copy = false;
    dnnl::reorder r;
};

struct Entry {
    bool ok = false;  // oneDNN implements it
    dnnl::primitive prim;
    memory::desc scratch;
    Slot a, b, out;
    bool bias = false;
};

Dims dense_strides(const Dims& d) {
    Dims s(d.size(), 1);
    for (size_t i = d.size(); i-- > 1;)
        s[i - 1] = s[i] * d[i];
    return s;
}

memory::desc plain(const Dims& d) {
    return memory::desc(d, memory::data_type::f32, dense_strides(d));
}

memory::desc any(const Dims& d) {
    return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
}

void set_slot(Slot& s, int arg, const memory::desc& user, const memory::desc& prim, bool input) {
    s.arg = arg, s.user = user, s.prim = prim;
    s.copy = user != prim;
    if (s.copy)
        s.r = input ? dnnl::reorder(dnnl::reorder::primitive_desc(engine(), user, engine(), prim))
                    : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), prim, engine(), user));
}

/// The primitive for op over c (bias: the forward adds one).
/// TG_DNNL_PLAIN=1, read once.
bool plain_layouts() {
    static const bool on = [] {
        const char* e = std::getenv("TG_DNNL_PLAIN");
        return e && e[0] == '1';
    }();
    return on;
}

Entry build(DnnlOp op, const DnnlConv& c, bool bias) {
    Dims x{c.N, c.C}, y{c.N, c.O}, w, strides, dil, pl, pr;
    if (c.groups > 1)
        w = {c.groups, c.O / c.groups, c.C / c.groups};
    else
        w = {c.O, c.C};
    for (int i = 0; i < c.nd; ++i) {
        x.push_back(c.in[i]), y.push_back(c.out[i]), w.push_back(c.k[i]);
        strides.push_back(c.s[i]), dil.push_back(c.d[i] - 1), pl.push_back(c.p[i]);
        // the end padding that gives out rows: negative when the last rows go unused
        pr.push_back((c.out[i] - 1) * c.s[i] + c.d[i] * (c.k[i] - 1) + 1 - c.in[i] - c.p[i]);
    }
    auto pick = [&](const Dims& d) { return plain_layouts() ? plain(d) : any(d); };
    const memory::desc xm = pick(x), ym = pick(y), wm = pick(w);
    const memory::desc bm({c.O}, memory::data_type::f32, memory::format_tag::x);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto alg = dnnl::algorithm::convolution_direct;
    Entry en;
    en.bias = bias;
    try {
        using fwd = dnnl::convolution_forward;
        const auto prop = dnnl::prop_kind::forward_training;
        const fwd::desc fd = bias ? fwd::desc(prop, alg, xm, wm, bm, ym, strides, dil, pl, pr)
                                  : fwd::desc(prop, alg, xm, wm, ym, strides, dil, pl, pr);
        const fwd::primitive_desc fpd(fd, attr, engine());
        if (op == DnnlOp::Forward) {
            en.prim = fwd(fpd), en.scratch = fpd.scratchpad_desc();
            set_slot(en.a, DNNL_ARG_SRC, plain(x), fpd.src_desc(), true);
            set_slot(en.b, DNNL_ARG_WEIGHTS, plain(w), fpd.weights_desc(), true);
            set_slot(en.out, DNNL_ARG_DST, plain(y), fpd.dst_desc(), false);
        } else if (op == DnnlOp::Input) {
            using bwd = dnnl::convolution_backward_data;
            const bwd::primitive_desc pd(bwd::desc(alg, xm, wm, ym, strides, dil, pl, pr), attr,
                                         engine(), fpd);
            en.prim = bwd(pd), en.scratch = pd.scratchpad_desc();
            set_slot(en.a, DNNL_ARG_DIFF_DST, plain(y), pd.diff_dst_desc(), true);
            set_slot(en.b, DNNL_ARG_WEIGHTS, plain(w), pd.weights_desc(), true);
            set_slot(en.out, DNNL_ARG_DIFF_SRC, plain(x), pd.diff_src_desc(), false);
        } else {
            using bwd = dnnl::convolution_backward_weights;
            const bwd::primitive_desc pd(bwd::desc(alg, xm, wm, ym, strides, dil, pl, pr), attr,
                                         engine(), fpd);
            en.prim = bwd(pd), en.scratch = pd.scratchpad_desc();
            set_slot(en.a, DNNL_ARG_SRC, plain(x), pd.src_desc(), true);
            set_slot(en.b, DNNL_ARG_DIFF_DST, plain(y), pd.diff_dst_desc(), true);
            set_slot(en.out, DNNL_ARG_DIFF_WEIGHTS, plain(w), pd.diff_weights_desc(), false);
        }
        en.ok = true;
    } catch (const dnnl::error&) {
        en.ok = false;  // unimplemented (or inconsistent sizes): the caller's other paths
    }
    return en;
}

/// The cached primitive for (op, c, bias), built on first use.
std::shared_ptr<const Entry> entry(DnnlOp op, const DnnlConv& c, bool bias) {
    static std::mutex mu;
    static std::map<std::vector<int64_t>, std::shared_ptr<const Entry>> cache;
    std::vector<int64_t> key{int64_t(op), c.nd, c.N, c.C, c.O, c.groups, bias ? 1 : 0};
    for (int i = 0; i < c.nd; ++i)
        key.insert(key.end(), {c.in[i], c.out[i], c.k[i], c.s[i], c.p[i], c.d[i]});
    key.push_back(plain_layouts());
    std::lock_guard<std::mutex> l(mu);
    auto it = cache.find(key);
    if (it != cache.end())
        return it->second;
    if (cache.size() >= kCacheMax)
        cache.clear();
    auto en = std::make_shared<const Entry>(build(op, c, bias));
    cache.emplace(std::move(key), en);
    return en;
}

/// Bytes of a buffer the size of md, rounded up to whole cache lines.
size_t padded(const memory::desc& md) {
    return (md.get_size() + 63) / 64 * 64;
}

/// This thread's buffer for the primitives' own layouts and scratchpads: grown, never shrunk, so
/// a step's calls reuse its pages instead of mapping and faulting in fresh ones per call (glibc
/// maps large blocks; a step of dcgan_d3 measured 12 or 28 ms by what earlier rows left).
char* workspace(size_t bytes) {
    thread_local std::unique_ptr<char[]> buf;
    thread_local size_t size = 0;
    if (bytes > size) {
        buf.reset();
        buf.reset(new char[bytes + 64]);
        size = bytes;
    }
    const auto at = reinterpret_cast<uintptr_t>(buf.get());
    return buf.get() + ((64 - at % 64) % 64);
}

/// Runs the primitive en on the caller's buffers.
void run(const Entry& en, const DnnlConv& c, float* out, const float* a, const float* b,
         const float* bias, int threads) {
    omp_set_num_threads(threads < 1 ? 1 : threads);
    dnnl::engine& eng = engine();
    dnnl::stream s(eng);
    size_t bytes = padded(en.scratch);
    for (const Slot* sl : {&en.a, &en.b, &en.out})
        bytes += sl->copy ? padded(sl->prim) : 0;
    char* ws = workspace(bytes);
    auto take = [&](const memory::desc& md) {
        char* p = ws;
        ws += padded(md);
        return memory(md, eng, p);
    };
    std::unordered_map<int, memory> args;
    auto input = [&](const Slot& sl, const float* p) {
        memory u(sl.user, eng, const_cast<float*>(p));  // only read
        if (!sl.copy) {
            args.emplace(sl.arg, u);
            return;
        }
        memory m = take(sl.prim);
        sl.r.execute(s, u, m);
        args.emplace(sl.arg, m);
    };
    input(en.a, a);
    input(en.b, b);
    if (en.bias)
        args.emplace(DNNL_ARG_BIAS, memory({{c.O}, memory::data_type::f32, memory::format_tag::x},
                                           eng, const_cast<float*>(bias)));
    memory user_out(en.out.user, eng, out);
    memory prim_out = en.out.copy ? take(en.out.prim) : user_out;
    args.emplace(en.out.arg, prim_out);
    if (en.scratch.get_size() > 0)
        args.emplace(DNNL_ARG_SCRATCHPAD, take(en.scratch));
    en.prim.execute(s, args);
    if (en.out.copy)
        en.out.r.execute(s, prim_out, user_out);
    s.wait();
}

/// A failure while a built primitive ran (its buffers could not be had, or oneDNN failed), as a
/// tg exception naming the convolution: "conv (oneDNN, input gradient): x [8,16,32,32],
/// weight [32,16,3,3]: out of memory".
[[noreturn]] void fail(DnnlOp op, const DnnlConv& c, bool oom, const std::string& what) {
    Shape x{c.N, c.C}, w{c.O, c.C / c.groups};
    for (int i = 0; i < c.nd; ++i)
        x.push_back(c.in[i]), w.push_back(c.k[i]);
    const char* kind = op == DnnlOp::Forward ? "forward"
                       : op == DnnlOp::Input ? "input gradient"
                                             : "weight gradient";
    const std::string msg = std::string("conv (oneDNN, ") + kind + "): x " + shape_str(x) +
                            ", weight " + shape_str(w) + ": " + what;
    if (oom)
        throw tg::out_of_memory(msg);
    throw tg::error(msg);
}

}  // namespace

bool dnnl_conv(DnnlOp op, const DnnlConv& c, float* out, const float* a, const float* b,
               const float* bias, int threads) {
    const bool with_bias = op == DnnlOp::Forward && bias != nullptr;
    const std::shared_ptr<const Entry> en = entry(op, c, with_bias);
    if (!en->ok)
        return false;
    try {
        run(*en, c, out, a, b, bias, threads);
    } catch (const dnnl::error& e) {
        fail(op, c, e.status == dnnl_out_of_memory, e.what());
    } catch (const std::bad_alloc&) {
        fail(op, c, true, "out of memory");
    }
    return true;
}

}  // namespace tg::backend::cpu
