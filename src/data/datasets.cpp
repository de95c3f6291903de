// LibTorch's data API (tapegrad/data/datasets.hpp): MNIST and make_data_loader's options check.
#include "tapegrad/data/datasets.hpp"

#include <cstdint>
#include <string>

#include "tapegrad/data/fashion_mnist.hpp"

namespace tg::data {

datasets::MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
    FashionMNIST files(train_, root, Normalize{0, 1});  // the same four IDX files
    images_ = files.images();
    targets_ = files.labels();
}

Example<> datasets::MNIST::get(size_t index) {
    const auto n = size_t(images_.size(0));
    if (index >= n)
        throw shape_error("MNIST::get: index " + std::to_string(index) + " out of range [0, " +
                          std::to_string(n) + ")");
    return {images_.select(0, int64_t(index)), targets_.select(0, int64_t(index))};
}

void DataLoaderOptions::check_for_make_data_loader() const {
    if (batch_size_ < 1)
        throw value_error("make_data_loader: batch_size must be positive, got " +
                          std::to_string(batch_size_));
    if (workers_ < 0)
        throw value_error("make_data_loader: workers must be >= 0, got " +
                          std::to_string(workers_));
    if (workers_ > 0 && max_jobs() < 1)
        throw value_error("make_data_loader: max_jobs must be >= 1 with workers, got " +
                          std::to_string(max_jobs()));
    if (shuffle_ || seed_)
        throw value_error(
            "make_data_loader: DataLoaderOptions' shuffle and seed are tg::data::DataLoader's; "
            "make_data_loader visits its sampler's order (RandomSampler draws from the default "
            "generator: seed it with tg::manual_seed, or name SequentialSampler)");
}

}  // namespace tg::data
