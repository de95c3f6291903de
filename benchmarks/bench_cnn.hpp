#pragma once
/// bench_cnn_epoch: the example CNN's training epoch (examples/fashion_mnist_cnn.cpp), tapegrad
/// vs LibTorch, each in a process of its own (bench_cnn_epoch_tg, bench_cnn_epoch_torch) started
/// by the driver bench_cnn_epoch. This header holds what the two sides share: the options, the
/// training images read from Debian's dataset-fashion-mnist with zlib (the same bytes and the
/// same normalisation on both sides) and the child's result line. Free of LibTorch and
/// tapegrad headers.
//
// The network, on both sides (LibTorch's default initialisations on both):
//   conv 3x3 1->32 (padding 1), BatchNorm2d(32), ReLU, MaxPool2d(2),
//   conv 3x3 32->64 (padding 1), BatchNorm2d(64), ReLU, MaxPool2d(2),
//   Flatten, Dropout(0.25), Linear(3136, 128), ReLU, Linear(128, 10)
// trained with Adam(1e-3) and cross_entropy on batches of 128 in file order, each step as the
// example's: forward, loss, zero_grad, backward, step, loss.item() and the batch's correct count.
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench::cnn {

constexpr int64_t kBatch = 128, kImage = 28 * 28;
constexpr int kProfileSteps = 20;  // the tapegrad side's profiled batches, after the timed epoch

/// Products (multiply-adds x 2) of one training step per image: the convolutions as their
/// im2col GEMMs and the linear layers; forward, each layer's weight gradient, and the input
/// gradient of every layer but the first convolution (whose input needs none). 25.0 MFLOP.
inline double step_flops_per_image() {
    const double conv1 = 2.0 * 28 * 28 * 32 * (1 * 9), conv2 = 2.0 * 14 * 14 * 64 * (32 * 9);
    const double fc1 = 2.0 * 3136 * 128, fc2 = 2.0 * 128 * 10;
    return 2 * conv1 + 3 * (conv2 + fc1 + fc2);
}

struct Options {
    int threads = 2;        // OpenBLAS threads (tapegrad's kernels follow them)
    int torch_threads = 2;  // LibTorch intra-op threads
    int mkldnn = 1;         // LibTorch: oneDNN on (1) or off (0)
    int64_t batches = 469;  // timed batches per epoch (469: all 60,000 images)
    int64_t warmup = 10;    // untimed batches first
    int reps = 1;           // timed epochs
    std::string data = "/usr/share/datasets/fashion-mnist";
};

inline Options parse_options(int argc, char** argv) {
    Options o;
    o.threads = std::stoi(arg_value(argc, argv, "--threads", "2"));
    o.torch_threads = std::stoi(arg_value(argc, argv, "--torch-threads", "2"));
    o.mkldnn = std::stoi(arg_value(argc, argv, "--mkldnn", "1"));
    o.batches = std::stoll(arg_value(argc, argv, "--batches", "469"));
    o.warmup = std::stoll(arg_value(argc, argv, "--warmup", "10"));
    o.reps = std::stoi(arg_value(argc, argv, "--reps", "1"));
    o.data = arg_value(argc, argv, "--data", o.data);
    return o;
}

/// The training set: images normalised as tg::data::FashionMNIST's defaults, (x/255 - 0.2860) /
/// 0.3530, as float [n, 1, 28, 28] row-major, and labels 0..9.
struct Data {
    int64_t n = 0;
    std::vector<float> images;
    std::vector<int64_t> labels;
};

/// The decompressed bytes of a .gz file.
inline std::vector<unsigned char> gunzip(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f)
        throw std::runtime_error("cannot open " + path);
    std::vector<unsigned char> out;
    unsigned char buf[1 << 16];
    int got;
    while ((got = gzread(f, buf, sizeof buf)) > 0)
        out.insert(out.end(), buf, buf + got);
    gzclose(f);
    if (got < 0)
        throw std::runtime_error("cannot read " + path);
    return out;
}

inline uint32_t be32(const unsigned char* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

inline Data load_train(const std::string& root) {
    const auto img = gunzip(root + "/train-images-idx3-ubyte.gz");
    const auto lab = gunzip(root + "/train-labels-idx1-ubyte.gz");
    if (img.size() < 16 || lab.size() < 8 || be32(img.data()) != 0x803 || be32(lab.data()) != 0x801)
        throw std::runtime_error("not Fashion-MNIST IDX files in " + root);
    Data d;
    d.n = int64_t(be32(img.data() + 4));
    if (int64_t(be32(lab.data() + 4)) != d.n || int64_t(img.size()) != 16 + d.n * kImage ||
        int64_t(lab.size()) != 8 + d.n)
        throw std::runtime_error("Fashion-MNIST files in " + root + " disagree in size");
    d.images.resize(size_t(d.n * kImage));
    for (size_t i = 0; i < d.images.size(); ++i)
        d.images[i] = float((img[16 + i] / 255.0 - 0.2860) / 0.3530);
    d.labels.assign(lab.begin() + 8, lab.end());
    return d;
}

/// What a side times: per epoch, the seconds of o.batches steps, and the mean loss of its last
/// epoch. Each side defines it (bench_cnn_epoch_tg.cpp, bench_cnn_epoch_torch.cpp).
struct Timing {
    std::vector<double> epoch_s;
    double last_loss = 0;
    std::vector<std::pair<std::string, std::string>> info;  // more result keys (no spaces)
};
Timing run_side(const Options& o, const Data& d);

/// o.warmup calls of step(b) then o.reps timed epochs of o.batches calls, b the batch index
/// (wrapping after the last full batch); step returns the batch's loss.
template <class Step>
Timing time_epochs(const Options& o, const Data& d, Step&& step) {
    const int64_t per_epoch = d.n / kBatch;
    int64_t next = 0;
    for (int64_t i = 0; i < o.warmup; ++i)
        step(next++ % per_epoch);
    Timing t;
    for (int r = 0; r < o.reps; ++r) {
        double loss_sum = 0;
        const double t0 = now_s();
        for (int64_t i = 0; i < o.batches; ++i)
            loss_sum += step(next++ % per_epoch);
        t.epoch_s.push_back(now_s() - t0);
        t.last_loss = loss_sum / double(o.batches);
    }
    return t;
}

}  // namespace bench::cnn
