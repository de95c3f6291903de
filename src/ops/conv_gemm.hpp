#pragma once
// Convolutions lowered to the device GEMM (conv_gemm.cpp), and the argument helpers that
// conv.cpp (conv2d, conv1d, conv_transpose2d) and fold.cpp (unfold, fold) share.
#include <cstdint>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "tapegrad/ops.hpp"

namespace tg::conv {

/// One convolution's sizes: x [N,C,(T,)H,W], w [O,C/groups,(kt,)kh,kw], y [N,O,(ot,)oh,ow]; a
/// 2-D convolution keeps the depth fields at one depth (nd = 2), a 3-D one sets them (nd = 3).
struct ConvGeom {
    int64_t N, C, H, W, O, kh, kw, oh, ow, groups;
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t T = 1, kt = 1, ot = 1, st = 1, pt = 0, dt = 1;
    int nd = 2;
    backend::Window window(int64_t samples) const {
        backend::Window g;
        g.planes = samples * C;
        g.h = H, g.w = W, g.oh = oh, g.ow = ow, g.kh = kh, g.kw = kw;
        g.sh = sh, g.sw = sw, g.ph = ph, g.pw = pw, g.dh = dh, g.dw = dw;
        g.t = T, g.ot = ot, g.kt = kt, g.st = st, g.pt = pt, g.dt = dt;
        return g;
    }
    int64_t cg() const { return C / groups; }
    int64_t og() const { return O / groups; }
    int64_t taps() const { return kt * kh * kw; }
    int64_t positions() const { return ot * oh * ow; }
    int64_t volume() const { return T * H * W; }
    /// x's, y's and w's shapes.
    Shape x_shape() const { return nd == 3 ? Shape{N, C, T, H, W} : Shape{N, C, H, W}; }
    Shape y_shape() const { return nd == 3 ? Shape{N, O, ot, oh, ow} : Shape{N, O, oh, ow}; }
    Shape w_shape() const { return nd == 3 ? Shape{O, cg(), kt, kh, kw} : Shape{O, cg(), kh, kw}; }
};

/// The three bilinear ops of a convolution (Note [Convolution as three bilinear ops] in
/// conv_gemm.cpp): y = Forward(x, w), dx = Input(dy, w), dw = Weight(x, dy).
enum class Kind { Forward, Input, Weight };

/// One of the three, recorded, its backward the other two; Forward also adds the bias c when it
/// is defined (db = Σ dy).
Tensor apply(Kind k, const Tensor& a, const Tensor& b, const ConvGeom& g, const Tensor& c = {});

/// Whether Forward and Weight run a tile of output depths at a time (Note [Depth tiles] in
/// conv_tiles.cpp): 3-D convolutions whose one sample unfolds to more than 1 MiB. The tiled
/// forms take contiguous detached operands, as conv_gemm.cpp's.
bool tiled(const ConvGeom& g, const Tensor& t);
Tensor forward_tiled(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeom& g);
Tensor weight_tiled(const Tensor& x, const Tensor& dy, const ConvGeom& g);
/// Input a tile of windows at a time (every stride): for 3-D convolutions that are tiled. Each
/// tile's columns wᵀ·dy are folded into the part of x its windows read and added into dx.
bool input_tiled(const ConvGeom& g, const Tensor& dy);
Tensor input_by_tiles(const Tensor& dy, const Tensor& w, const ConvGeom& g);

/// The paths without an unfolded buffer (Note [The convolution strategy by shape] in
/// conv_direct.cpp): which one a convolution takes (None: im2col or tiles), and its three ops on
/// contiguous detached operands (Dense: for Weight only when kw <= 4). Dnnl (built with TG_DNNL,
/// float32, unless with_dnnl is false) runs on dnnl_apply: y, dx or dw (k's) from a and b as
/// apply's, c the bias or undefined; undefined when oneDNN has no implementation.
enum class Direct { None, Dnnl, Pointwise, Depthwise, Dense };
Direct direct(const ConvGeom& g, const Tensor& t, Kind k, bool with_dnnl = true);
Tensor dnnl_apply(Kind k, const Tensor& a, const Tensor& b, const Tensor& c, const ConvGeom& g);
Tensor direct_forward(Direct d, const Tensor& x, const Tensor& w, const Tensor& b,
                      const ConvGeom& g);
Tensor direct_input(Direct d, const Tensor& dy, const Tensor& w, const ConvGeom& g);
Tensor direct_weight(Direct d, const Tensor& x, const Tensor& dy, const ConvGeom& g);

/// The fold kernel: the gather, or with TG_CONV_SCATTER=1 in the environment the scatter kept
/// for benchmarks/bench_conv and the test that compares the two (CPU only; Note [Gathering
/// adjoints]).
backend::WindowOp fold_op();

/// dw from the per-block partial sums of a weight gradient (blocks of samples or chunks, each
/// its own buffer), added in block order, so the same bits on any number of threads; zeros of
/// w's shape (like's dtype and device) for no blocks.
Tensor sum_blocks(const std::vector<Tensor>& partial, int64_t blocks, const ConvGeom& g,
                  const Tensor& like, const char* op = "conv2d");

/// The two values of a spatial argument (one value means both, none the fallbacks).
std::pair<int64_t, int64_t> pair_of(const char* op, const char* what, const IntArg& v,
                                    int64_t fallback_h, int64_t fallback_w);

/// The nd values of a spatial argument (one value means every dim, none the fallback); other
/// counts throw shape_error naming op and what.
std::vector<int64_t> values_of(const char* op, const char* what, const IntArg& v, int nd,
                               int64_t fallback);

/// The output size of a window of k taps, stride s and dilation d over in + p_total.
inline int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p_total, int64_t d) {
    return (in + p_total - d * (k - 1) - 1) / s + 1;
}

}  // namespace tg::conv
