// LibTorch's data API (tapegrad/data/datasets.hpp): MNIST and the samplers' orders.
#include "tapegrad/data/datasets.hpp"

#include <string>

#include "data/order.hpp"
#include "tapegrad/data/fashion_mnist.hpp"

namespace tg::data {

datasets::MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
    FashionMNIST files(train_, root, Normalize{0, 1});  // the same four IDX files
    images_ = files.images();
    targets_ = files.labels();
}

Example datasets::MNIST::get(size_t index) const {
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

}  // namespace tg::data
