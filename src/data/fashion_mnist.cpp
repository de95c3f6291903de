// Fashion-MNIST dataset: four IDX files -> normalised image and label tensors.
#include "tapegrad/data/fashion_mnist.hpp"

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tapegrad/data/idx.hpp"
#include "tapegrad/error.hpp"

namespace tg::data {
namespace {

constexpr const char* kSystemRoot = "/usr/share/datasets/fashion-mnist";

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

/// root/name.gz, or root/name when only the uncompressed file is there; throws when neither is.
std::string find_file(const std::string& root, const std::string& name) {
    std::string gz = root + "/" + name + ".gz";
    if (exists(gz))
        return gz;
    std::string plain = root + "/" + name;
    if (exists(plain))
        return plain;
    throw io_error("FashionMNIST: " + gz + ": file not found (pass the data directory, or set " +
                   "TG_FASHION_MNIST, or install the Debian package dataset-fashion-mnist)");
}

}  // namespace

std::string default_root() {
    const char* env = std::getenv("TG_FASHION_MNIST");
    return env && *env ? std::string(env) : std::string(kSystemRoot);
}

FashionMNIST::FashionMNIST(bool train, std::string root, Normalize normalize)
    : train_(train), root_(root.empty() ? default_root() : std::move(root)) {
    if (!(std::isfinite(normalize.std) && normalize.std > 0) || !std::isfinite(normalize.mean))
        throw value_error("FashionMNIST: Normalize{mean " + std::to_string(normalize.mean) +
                          ", std " + std::to_string(normalize.std) +
                          "}: mean must be finite and std finite and positive");
    const std::string prefix = train ? "train" : "t10k";
    const std::string image_path = find_file(root_, prefix + "-images-idx3-ubyte");
    const std::string label_path = find_file(root_, prefix + "-labels-idx1-ubyte");
    IdxArray img = read_idx(image_path);
    IdxArray lab = read_idx(label_path);

    if (img.shape.size() != 3 || img.shape[1] != kRows || img.shape[2] != kCols) {
        std::string dims;
        for (auto d : img.shape)
            dims += (dims.empty() ? "" : "x") + std::to_string(d);
        throw io_error("FashionMNIST: " + image_path +
                       ": expected N x 28 x 28 images, file holds " + dims);
    }
    if (lab.shape.size() != 1)
        throw io_error("FashionMNIST: " + label_path + ": expected a 1-D label file, file has " +
                       std::to_string(lab.shape.size()) + " dims");
    const int64_t n = img.shape[0];
    if (lab.shape[0] != n)
        throw io_error("FashionMNIST: " + image_path + " holds " + std::to_string(n) +
                       " images but " + label_path + " holds " + std::to_string(lab.shape[0]) +
                       " labels");

    labels_ = tg::empty({n}, kInt64);
    int64_t* l = labels_.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
        if (lab.data[size_t(i)] >= kClasses)
            throw io_error("FashionMNIST: " + label_path + ": label " +
                           std::to_string(lab.data[size_t(i)]) + " at index " + std::to_string(i) +
                           " is outside 0..9");
        l[i] = lab.data[size_t(i)];
    }

    // x / 255 then (x - mean) / std, folded into one multiply-add per pixel through a table.
    float table[256];
    for (int v = 0; v < 256; ++v)
        table[v] = float((v / 255.0 - normalize.mean) / normalize.std);
    images_ = tg::empty({n, 1, kRows, kCols}, kFloat32);
    float* x = images_.data_ptr<float>();
    const size_t count = img.data.size();
    for (size_t i = 0; i < count; ++i)
        x[i] = table[img.data[i]];
}

const std::array<const char*, 10>& FashionMNIST::class_names() {
    static const std::array<const char*, 10> names = {
        "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
        "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    return names;
}

}  // namespace tg::data
