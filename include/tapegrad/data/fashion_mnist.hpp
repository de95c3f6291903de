#pragma once
/// Fashion-MNIST (Xiao, Rasul & Vollgraf 2017): 60,000 training and 10,000 test images of
/// 28x28 grey-scale clothing, 10 classes, in the four IDX files of the original distribution:
///
///     train-images-idx3-ubyte.gz  train-labels-idx1-ubyte.gz
///     t10k-images-idx3-ubyte.gz   t10k-labels-idx1-ubyte.gz
///
/// Where the files are looked for, first match wins:
///   1. the `root` argument of the constructor, when not empty;
///   2. the environment variable TG_FASHION_MNIST;
///   3. /usr/share/datasets/fashion-mnist (Debian package `dataset-fashion-mnist`).
/// Uncompressed copies (the same names without `.gz`) are used when the `.gz` file is absent.
#include <array>
#include <cstdint>
#include <string>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::data {

/// Per-channel normalisation applied after scaling pixels to [0, 1]: (x - mean) / std.
/// Normalize{0, 1} keeps the [0, 1] pixels. The defaults are Fashion-MNIST's training-set
/// statistics.
struct Normalize {
    double mean = 0.2860;
    double std = 0.3530;
};

/// The data directory used when none is given: $TG_FASHION_MNIST if set and not empty, else
/// /usr/share/datasets/fashion-mnist.
std::string default_root();

/// The whole split in memory, as LibTorch's torch::data::datasets::MNIST.
class FashionMNIST {
public:
    static constexpr int64_t kRows = 28, kCols = 28, kClasses = 10;

    /// Reads the training split (train = true) or the test split from `root` (empty: see
    /// default_root()). Throws tg::io_error naming the file when a file is missing or corrupt, or
    /// when the images and labels do not agree (count, 28x28 size, labels outside 0..9), and
    /// value_error (before reading) unless normalize's mean is finite and its std finite and > 0.
    explicit FashionMNIST(bool train, std::string root = "", Normalize normalize = {});

    /// [N,1,28,28] float32: pixels / 255, then (x - mean) / std.
    const Tensor& images() const { return images_; }
    /// [N] int64 class indices in 0..9 (see class_names()).
    const Tensor& labels() const { return labels_; }
    /// Number of images N.
    int64_t size() const { return images_.size(0); }
    /// Whether this is the training split.
    bool is_train() const { return train_; }
    /// The directory the files were read from.
    const std::string& root() const { return root_; }
    /// "T-shirt/top", "Trouser", ..., "Ankle boot", indexed by label.
    static const std::array<const char*, 10>& class_names();

private:
    bool train_;
    std::string root_;
    Tensor images_, labels_;
};

}  // namespace tg::data

#pragma GCC visibility pop
