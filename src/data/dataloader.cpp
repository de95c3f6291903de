// DataLoader: batches of (data, targets) rows, reshuffled per epoch from the loader's own seed.
#include "tapegrad/data/dataloader.hpp"

#include <algorithm>
#include <string>

#include "data/order.hpp"
#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::data {

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
    order_ = detail::epoch_order(n_, false, 0, 0);
}

DataLoader::DataLoader(Tensor data, Tensor targets, DistributedSampler sampler,
                       DataLoaderOptions options)
    : DataLoader(std::move(data), std::move(targets), options) {
    if (sampler.dataset_size() != n_)
        throw shape_error("DataLoader: the sampler covers " +
                          std::to_string(sampler.dataset_size()) + " rows, the data has " +
                          std::to_string(n_) + " (" + shape_str(data_.sizes()) + ")");
    sampler_ = std::make_shared<DistributedSampler>(sampler);
    order_ = sampler_->indices();
}

int64_t DataLoader::size() const {
    const int64_t b = options_.batch_size(), rows = int64_t(order_.size());
    return options_.drop_last() ? rows / b : (rows + b - 1) / b;
}

DataLoader::Iterator DataLoader::begin() {
    if (sampler_) {
        sampler_->set_epoch(epoch_);
        order_ = sampler_->indices();
    } else {
        order_ = detail::epoch_order(n_, options_.shuffle(), options_.seed(), epoch_);
    }
    ++epoch_;
    return Iterator(this, 0);
}

Example<> DataLoader::batch(int64_t i) const {
    if (i < 0 || i >= size())
        throw shape_error("DataLoader: batch " + std::to_string(i) + " out of range [0, " +
                          std::to_string(size()) + ")");
    const int64_t start = i * options_.batch_size();
    const int64_t len = std::min(options_.batch_size(), int64_t(order_.size()) - start);
    if (!options_.shuffle() && !sampler_)
        return {data_.narrow(0, start, len), targets_.narrow(0, start, len)};
    std::vector<int64_t> rows(order_.begin() + start, order_.begin() + start + len);
    Tensor index = tg::tensor(rows, TensorOptions(kInt64).device(data_.device()));
    // data and targets may live on different devices (images on a GPU, labels on the host)
    Tensor target_index = targets_.device() == data_.device()
                              ? index
                              : tg::tensor(rows, TensorOptions(kInt64).device(targets_.device()));
    return {tg::index_select(data_, 0, index), tg::index_select(targets_, 0, target_index)};
}

Example<>& DataLoader::Iterator::operator*() const {
    if (!loader_)
        throw error("DataLoader::Iterator: dereferencing an iterator that no DataLoader made");
    if (!built_) {
        current_ = loader_->batch(batch_);
        built_ = true;
    }
    return current_;
}

}  // namespace tg::data
