// LibTorch's samplers (tapegrad/data/samplers.hpp), as LibTorch 1.13 draws and orders them.
#include "tapegrad/data/samplers.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/ops.hpp"

namespace tg::data::samplers {

void SequentialSampler::reset(std::optional<size_t> new_size) {
    if (new_size)
        size_ = *new_size;
    index_ = 0;
}

std::optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
    const size_t remaining = size_ - index_;
    if (remaining == 0)
        return std::nullopt;
    std::vector<size_t> batch(std::min(batch_size, remaining));
    for (size_t& i : batch)
        i = index_++;
    return batch;
}

RandomSampler::RandomSampler(int64_t size, Dtype index_dtype)
    : indices_(randperm(size, index_dtype)) {}

void RandomSampler::reset(std::optional<size_t> new_size) {
    const size_t size = new_size.value_or(size_t(indices_.numel()));
    indices_ = randperm(int64_t(size), indices_.dtype());
    index_ = 0;
}

std::optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
    const size_t remaining = size_t(indices_.numel() - index_);
    if (remaining == 0)
        return std::nullopt;
    const int64_t n = int64_t(std::min(batch_size, remaining));
    const std::vector<int64_t> slice =
        indices_.narrow(0, index_, n).to(kInt64).contiguous().to_vector<int64_t>();
    index_ += n;
    return std::vector<size_t>(slice.begin(), slice.end());
}

void check_replicas(const char* sampler, size_t size, size_t num_replicas, size_t rank) {
    if (num_replicas < 1 || rank >= num_replicas || size > size_t(INT64_MAX))
        throw value_error(std::string(sampler) + ": size " + std::to_string(size) +
                          ", num_replicas " + std::to_string(num_replicas) + ", rank " +
                          std::to_string(rank) + ": needs num_replicas >= 1 and rank below it");
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
    check_replicas("DistributedRandomSampler", size, num_replicas, rank);
    reset(size_);  // the first shuffle
}

void DistributedRandomSampler::populate_indices() {
    const size_t local = local_sample_count();
    const size_t count = num_replicas_ == 1 ? size_ : local * num_replicas_;
    all_indices_.resize(count);
    std::iota(all_indices_.begin(), all_indices_.end(), size_t(0));
    for (size_t i = size_; i < count; ++i)  // padding: indices from the start again
        all_indices_[i] = i - size_;
    begin_index_ = rank_ * local;
    end_index_ = begin_index_ + local;
    sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<size_t> new_size) {
    size_ = new_size.value_or(size_);
    populate_indices();
    std::mt19937 rand(static_cast<std::mt19937::result_type>(epoch_));
    std::shuffle(all_indices_.begin(), all_indices_.end(), rand);
    sample_index_ = begin_index_;
}

std::optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
    if (sample_index_ == end_index_)
        return std::nullopt;
    const size_t end = std::min(sample_index_ + batch_size, end_index_);
    std::vector<size_t> batch(all_indices_.begin() + std::ptrdiff_t(sample_index_),
                              all_indices_.begin() + std::ptrdiff_t(end));
    sample_index_ = end;
    return batch;
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas,
                                                           size_t rank, bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
    check_replicas("DistributedSequentialSampler", size, num_replicas, rank);
    populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
    begin_index_ = rank_ * local_sample_count();
    end_index_ = begin_index_ + local_sample_count();
    sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<size_t> new_size) {
    const size_t size = new_size.value_or(size_);
    if (size != size_) {
        size_ = size;
        populate_indices();
    } else {
        sample_index_ = begin_index_;
    }
}

std::optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
    if (sample_index_ == end_index_)
        return std::nullopt;
    const size_t end = std::min(sample_index_ + batch_size, end_index_);
    std::vector<size_t> batch(end - sample_index_);
    std::iota(batch.begin(), batch.end(), sample_index_);
    if (end >= size_)
        for (size_t& i : batch)
            i %= size_;
    sample_index_ = end;
    return batch;
}

}  // namespace tg::data::samplers
