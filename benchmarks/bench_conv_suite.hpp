#pragma once
/// bench_conv_suite: the shape suite of issue 31, every common convolution on its own: DCGAN's
/// generator (ConvTranspose2d 4x4 stride 2) and discriminator (Conv2d 4x4 stride 2) layers,
/// ResNet-18/50 layers (3x3 stride 1 and 2, 1x1 stride 1 and 2, 3x3 at 7x7x512), MobileNetV2's
/// depthwise 3x3 (groups = channels), a conv1d over a long sequence and the CNN example's two
/// 3x3 layers at its batch of 128 (1 -> 32 at 28x28, 32 -> 64 at 14x14; dx is timed here too,
/// which the example's first layer does not need). Each row times one layer's forward and its
/// backward (dx and dw, no bias) in tapegrad and LibTorch.
///
/// Each side is a process of its own (bench_conv_suite_tg, bench_conv_suite_torch), started by
/// the driver bench_conv_suite, which alternates them over rounds; a child runs every row and
/// prints one `result` line with fwd_ms_<row> and bwd_ms_<row> lists. This header holds what the
/// sides share: the rows, the seeded inputs and the FLOP counts. Free of LibTorch, tapegrad and
/// BLAS headers.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench::suite {

enum class Op { Conv2d, ConvTranspose2d, Conv1d };

/// One layer: x [N, C, H, W] (conv1d: [N, C, W], H = 1), weight [O, C/g, k, k] (conv1d
/// [O, C/g, k]; transposed: [C, O/g, k, k]), stride s, padding p, groups g.
struct Row {
    const char* name;
    const char* family;
    Op op;
    int64_t N, C, O, H, W, k, s, p, g;
    int64_t kh() const { return op == Op::Conv1d ? 1 : k; }
    int64_t oh() const {
        return op == Op::Conv1d            ? 1
               : op == Op::ConvTranspose2d ? (H - 1) * s - 2 * p + k
                                           : (H + 2 * p - k) / s + 1;
    }
    int64_t ow() const {
        return op == Op::ConvTranspose2d ? (W - 1) * s - 2 * p + k : (W + 2 * p - k) / s + 1;
    }
    std::vector<int64_t> x_shape() const {
        return op == Op::Conv1d ? std::vector<int64_t>{N, C, W} : std::vector<int64_t>{N, C, H, W};
    }
    std::vector<int64_t> w_shape() const {
        if (op == Op::Conv1d)
            return {O, C / g, k};
        if (op == Op::ConvTranspose2d)
            return {C, O / g, k, k};
        return {O, C / g, k, k};
    }
    /// Multiply-adds x 2 of the forward: every (output or, transposed, input) position's
    /// window against C/g (transposed: O/g) channels of each of O (transposed: C) filters.
    double fwd_flops() const {
        if (op == Op::ConvTranspose2d)
            return 2.0 * double(N) * double(C) * double(O / g) * double(k * k) * double(H * W);
        return 2.0 * double(N) * double(O) * double(C / g) * double(kh() * k) * double(oh() * ow());
    }
    /// Forward, dx and dw: three products of the same size.
    double step_flops() const { return 3 * fwd_flops(); }
    std::string shape() const {
        const std::string x =
            op == Op::Conv1d ? std::to_string(W) : std::to_string(H) + "x" + std::to_string(W);
        const std::string y = op == Op::Conv1d ? std::to_string(ow())
                                               : std::to_string(oh()) + "x" + std::to_string(ow());
        return std::to_string(C) + "x" + x + " -> " + std::to_string(O) + "x" + y + " k" +
               std::to_string(k) + " s" + std::to_string(s) + " p" + std::to_string(p) +
               (g > 1 ? " g" + std::to_string(g) : "") + " N" + std::to_string(N);
    }
};

/// The suite. Batches are cut (DCGAN 16 instead of 64, ResNet and MobileNet 8) so a run of both
/// thread budgets takes a few minutes; both libraries run the same sizes.
inline std::vector<Row> rows() {
    using O = Op;
    return {
        {"dcgan_g1", "DCGAN G", O::ConvTranspose2d, 16, 512, 256, 4, 4, 4, 2, 1, 1},
        {"dcgan_g2", "DCGAN G", O::ConvTranspose2d, 16, 256, 128, 8, 8, 4, 2, 1, 1},
        {"dcgan_g3", "DCGAN G", O::ConvTranspose2d, 16, 128, 64, 16, 16, 4, 2, 1, 1},
        {"dcgan_g4", "DCGAN G", O::ConvTranspose2d, 16, 64, 3, 32, 32, 4, 2, 1, 1},
        {"dcgan_d1", "DCGAN D", O::Conv2d, 16, 3, 64, 64, 64, 4, 2, 1, 1},
        {"dcgan_d2", "DCGAN D", O::Conv2d, 16, 64, 128, 32, 32, 4, 2, 1, 1},
        {"dcgan_d3", "DCGAN D", O::Conv2d, 16, 128, 256, 16, 16, 4, 2, 1, 1},
        {"dcgan_d4", "DCGAN D", O::Conv2d, 16, 256, 512, 8, 8, 4, 2, 1, 1},
        {"resnet_3x3_s1_56", "ResNet", O::Conv2d, 8, 64, 64, 56, 56, 3, 1, 1, 1},
        {"resnet_3x3_s2_56", "ResNet", O::Conv2d, 8, 64, 128, 56, 56, 3, 2, 1, 1},
        {"resnet_1x1_s1_56", "ResNet", O::Conv2d, 8, 256, 64, 56, 56, 1, 1, 0, 1},
        {"resnet_1x1_s2_56", "ResNet", O::Conv2d, 8, 256, 512, 56, 56, 1, 2, 0, 1},
        {"resnet_3x3_s1_7", "ResNet", O::Conv2d, 8, 512, 512, 7, 7, 3, 1, 1, 1},
        {"dw_3x3_32_112", "depthwise", O::Conv2d, 8, 32, 32, 112, 112, 3, 1, 1, 32},
        {"dw_3x3_144_56", "depthwise", O::Conv2d, 8, 144, 144, 56, 56, 3, 1, 1, 144},
        {"conv1d_64_k3_4096", "conv1d", O::Conv1d, 8, 64, 64, 1, 4096, 3, 1, 1, 1},
        {"cnn_3x3_1_28", "CNN example", O::Conv2d, 128, 1, 32, 28, 28, 3, 1, 1, 1},
        {"cnn_3x3_32_14", "CNN example", O::Conv2d, 128, 32, 64, 14, 14, 3, 1, 1, 1},
    };
}

inline int64_t numel(const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t v : s)
        n *= v;
    return n;
}

/// The row's input (uniform [0, 1)), weight (uniform ±1/sqrt(fan_in)) and output gradient
/// (uniform [-1, 1)), the same on both sides.
struct Init {
    std::vector<float> x, w, dy;
};
inline Init make_init(const Row& r, const std::vector<int64_t>& y_shape, uint64_t seed = 7) {
    Rng rng(seed);
    Init in;
    in.x = uniform_vec(rng, size_t(numel(r.x_shape())), 0.f, 1.f);
    const auto ws = r.w_shape();
    const float b = 1.f / float(std::sqrt(double(numel(ws) / ws[0])));
    in.w = uniform_vec(rng, size_t(numel(ws)), -b, b);
    in.dy = uniform_vec(rng, size_t(numel(y_shape)), -1.f, 1.f);
    return in;
}

/// The children's options: --threads T (OpenBLAS threads), --reps, --warmup, --rows a,b,...
/// (names; all by default); bench_conv_suite_torch: --torch-threads T, --mkldnn 0|1.
struct ChildOptions {
    int threads = 1, reps = 5, warmup = 2, torch_threads = 1, mkldnn = 1;
    std::string only;
};
inline ChildOptions parse_child(int argc, char** argv) {
    ChildOptions o;
    o.threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    o.reps = std::stoi(arg_value(argc, argv, "--reps", "5"));
    o.warmup = std::stoi(arg_value(argc, argv, "--warmup", "2"));
    o.torch_threads = std::stoi(arg_value(argc, argv, "--torch-threads", "1"));
    o.mkldnn = std::stoi(arg_value(argc, argv, "--mkldnn", "1"));
    o.only = arg_value(argc, argv, "--rows", "");
    return o;
}
inline bool selected(const ChildOptions& o, const Row& r) {
    return o.only.empty() ||
           ("," + o.only + ",").find("," + std::string(r.name) + ",") != std::string::npos;
}

/// Runs every selected row on one side and prints the result line; defined once per side.
void run_side(const ChildOptions& o);

}  // namespace bench::suite
