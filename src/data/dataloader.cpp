// DataLoader: batches of (data, targets) rows, reshuffled per epoch from the loader's own seed.
#include "tapegrad/data/dataloader.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::data {
namespace {

/// splitmix64: turns (seed, epoch) into a well-mixed generator seed.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/// Uniform integer in [0, n) without modulo bias. Written out (not uniform_int_distribution) so
/// the order is the same with every standard library.
uint64_t below(std::mt19937_64& gen, uint64_t n) {
    const uint64_t limit = ~uint64_t(0) - (~uint64_t(0) % n);
    uint64_t r;
    do
        r = gen();
    while (r >= limit);
    return r % n;
}

}  // namespace

DataLoader::DataLoader(Tensor data, Tensor targets, DataLoaderOptions options)
    : data_(std::move(data)), targets_(std::move(targets)), options_(options) {
    if (!data_.defined() || !targets_.defined())
        throw value_error("DataLoader: data and targets must be defined tensors");
    if (data_.dim() == 0 || targets_.dim() == 0 || data_.size(0) != targets_.size(0))
        throw shape_error("DataLoader: data " + shape_str(data_.sizes()) + " and targets " +
                          shape_str(targets_.sizes()) + " must have the same size in dim 0");
    if (options_.batch_size() <= 0)
        throw value_error("DataLoader: batch_size must be positive, got " +
                          std::to_string(options_.batch_size()));
    n_ = data_.size(0);
    order_.resize(size_t(n_));
    std::iota(order_.begin(), order_.end(), int64_t(0));
}

int64_t DataLoader::size() const {
    const int64_t b = options_.batch_size();
    return options_.drop_last() ? n_ / b : (n_ + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
    std::iota(order_.begin(), order_.end(), int64_t(0));
    if (options_.shuffle() && n_ > 1) {
        std::mt19937_64 gen(mix(options_.seed() ^ mix(uint64_t(epoch_))));
        for (int64_t i = n_ - 1; i > 0; --i)  // Fisher-Yates
            std::swap(order_[size_t(i)], order_[below(gen, uint64_t(i) + 1)]);
    }
    ++epoch_;
    return Iterator(this, 0);
}

Example DataLoader::batch(int64_t i) const {
    if (i < 0 || i >= size())
        throw shape_error("DataLoader: batch " + std::to_string(i) + " out of range [0, " +
                          std::to_string(size()) + ")");
    const int64_t start = i * options_.batch_size();
    const int64_t len = std::min(options_.batch_size(), n_ - start);
    if (!options_.shuffle())
        return {data_.narrow(0, start, len), targets_.narrow(0, start, len)};
    std::vector<int64_t> rows(order_.begin() + start, order_.begin() + start + len);
    Tensor index = tg::tensor(rows, TensorOptions(kInt64).device(data_.device()));
    // data and targets may live on different devices (images on a GPU, labels on the host)
    Tensor target_index = targets_.device() == data_.device()
                              ? index
                              : tg::tensor(rows, TensorOptions(kInt64).device(targets_.device()));
    return {tg::index_select(data_, 0, index), tg::index_select(targets_, 0, target_index)};
}

Example& DataLoader::Iterator::operator*() const {
    if (!loader_)
        throw error("DataLoader::Iterator: dereferencing an iterator that no DataLoader made");
    if (!built_) {
        current_ = loader_->batch(batch_);
        built_ = true;
    }
    return current_;
}

}  // namespace tg::data
