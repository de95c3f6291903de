// LibTorch's data API (tapegrad/data/datasets.hpp): MNIST and the samplers' orders.
#include "tapegrad/data/datasets.hpp"

#include <cstdint>
#include <string>

#include "data/order.hpp"
#include "tapegrad/data/distributed_sampler.hpp"
#include "tapegrad/data/fashion_mnist.hpp"

namespace tg::data {

datasets::MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
    FashionMNIST files(train_, root, Normalize{0, 1});  // the same four IDX files
    images_ = files.images();
    targets_ = files.labels();
}

Example<> datasets::MNIST::get(size_t index) const {
    const auto n = size_t(images_.size(0));
    if (index >= n)
        throw shape_error("MNIST::get: index " + std::to_string(index) + " out of range [0, " +
                          std::to_string(n) + ")");
    return {images_.select(0, int64_t(index)), targets_.select(0, int64_t(index))};
}

std::vector<int64_t> samplers::SequentialSampler::order(int64_t n, uint64_t, int64_t) {
    return detail::epoch_order(n, false, 0, 0);
}

std::vector<int64_t> samplers::RandomSampler::order(int64_t n, uint64_t seed, int64_t epoch) {
    return detail::epoch_order(n, true, seed, epoch);
}

samplers::DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas,
                                                             size_t rank, bool allow_duplicates)
    : size_(size), replicas_(num_replicas), rank_(rank), duplicates_(allow_duplicates) {
    if (num_replicas < 1 || rank >= num_replicas || size > size_t(INT64_MAX) ||
        num_replicas > size_t(INT32_MAX))
        throw value_error("DistributedRandomSampler: size " + std::to_string(size) +
                          ", num_replicas " + std::to_string(num_replicas) + ", rank " +
                          std::to_string(rank) + ": needs num_replicas >= 1 and rank below it");
}

std::vector<int64_t> samplers::DistributedRandomSampler::share(int64_t n, bool shuffle,
                                                               uint64_t seed, int64_t epoch) const {
    if (n != int64_t(size_))
        throw value_error("make_data_loader: the sampler was made for " + std::to_string(size_) +
                          " rows, the dataset has " + std::to_string(n));
    DistributedSampler s(n, {int(replicas_), int(rank_)}, shuffle, seed, !duplicates_);
    s.set_epoch(int64_t(first_epoch_) + epoch);
    return s.indices();
}

std::vector<int64_t> samplers::DistributedRandomSampler::order(int64_t n, uint64_t seed,
                                                               int64_t epoch) const {
    return share(n, true, seed, epoch);
}

std::vector<int64_t> samplers::DistributedSequentialSampler::order(int64_t n, uint64_t seed,
                                                                   int64_t epoch) const {
    return share(n, false, seed, epoch);
}

}  // namespace tg::data
