#pragma once
/// LibTorch's samplers, with LibTorch's interface: a sampler is made with the dataset's size,
/// reset(new_size) starts an epoch, next(batch_size) gives the next batch's indices (nullopt at
/// the end of the epoch), index() how many it has given this epoch. make_data_loader (datasets.hpp)
/// calls reset() at every begin() and next() for every batch, as LibTorch's loader does, so a
/// sampler of your own written for LibTorch plugs in:
///
///     struct EvenFirst : tg::data::samplers::Sampler<> {
///         void reset(std::optional<size_t> n) override { ... }
///         std::optional<std::vector<size_t>> next(size_t batch_size) override { ... }
///     };
///     auto loader = tg::data::make_data_loader(ds, EvenFirst(...), options);
///
/// RandomSampler draws its permutations with tg::randperm from the calling thread's default
/// generator: one at construction and one at every reset(), so after tg::manual_seed(s) a loader
/// visits LibTorch's order and leaves the generator where LibTorch leaves it. LibTorch's
/// save(archive) and load(archive) are not here: a sampler that overrides them does not compile.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::data::samplers {

/// The interface make_data_loader drives (LibTorch's Sampler<BatchRequest>).
template <class BatchRequest = std::vector<size_t>>
class Sampler {
public:
    using BatchRequestType = BatchRequest;
    virtual ~Sampler() = default;
    /// Starts an epoch over new_size indices (the same number when not given).
    virtual void reset(std::optional<size_t> new_size) = 0;
    /// The indices of the next batch (at most batch_size), or nullopt at the end of the epoch.
    virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

/// 0, 1, ..., size-1 every epoch. Draws nothing.
class SequentialSampler : public Sampler<> {
public:
    explicit SequentialSampler(size_t size) : size_(size) {}
    void reset(std::optional<size_t> new_size = std::nullopt) override;
    std::optional<std::vector<size_t>> next(size_t batch_size) override;
    size_t index() const noexcept { return index_; }

private:
    size_t size_;
    size_t index_ = 0;
};

/// A new permutation of 0..size-1 every epoch: tg::randperm(size, index_dtype) from the default
/// generator at construction and at every reset().
class RandomSampler : public Sampler<> {
public:
    explicit RandomSampler(int64_t size, Dtype index_dtype = kInt64);
    void reset(std::optional<size_t> new_size = std::nullopt) override;
    std::optional<std::vector<size_t>> next(size_t batch_size) override;
    size_t index() const noexcept { return size_t(index_); }

private:
    Tensor indices_;
    int64_t index_ = 0;
};

/// What the distributed samplers share (LibTorch's DistributedSampler<BatchRequest>): rank `rank`
/// of `num_replicas` takes local_sample_count() indices of each epoch, ceil(size / num_replicas)
/// when allow_duplicates (padded with indices from the start), else floor.
template <class BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
public:
    DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                       bool allow_duplicates = true)
        : size_(size),
          num_replicas_(num_replicas),
          rank_(rank),
          allow_duplicates_(allow_duplicates) {}
    /// The epoch the next reset() shuffles for (LibTorch reshuffles only when it changes).
    void set_epoch(size_t epoch) { epoch_ = epoch; }
    size_t epoch() const { return epoch_; }

protected:
    size_t local_sample_count() const {
        return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_
                                 : size_ / num_replicas_;
    }

    size_t size_, num_replicas_, rank_, epoch_ = 0;
    bool allow_duplicates_;
};

/// value_error naming `sampler` unless num_replicas >= 1 and rank < num_replicas (LibTorch does
/// not check; its samplers then read out of bounds).
void check_replicas(const char* sampler, size_t size, size_t num_replicas, size_t rank);

/// LibTorch's: each epoch the padded index list 0..size-1 (then 0, 1, ... up to
/// local_sample_count() · num_replicas) is shuffled by std::shuffle with std::mt19937(epoch), and
/// this rank takes its contiguous local_sample_count() of it. The same on every rank; a new
/// order only after set_epoch(e) and reset(). Draws nothing from tapegrad's generators. (The
/// order is LibTorch's with the same standard library: std::shuffle is libstdc++'s here and in
/// Debian's LibTorch.)
class DistributedRandomSampler : public DistributedSampler<> {
public:
    DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                             bool allow_duplicates = true);
    void reset(std::optional<size_t> new_size = std::nullopt) override;
    std::optional<std::vector<size_t>> next(size_t batch_size) override;
    size_t index() const noexcept { return sample_index_; }

private:
    void populate_indices();
    size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
    std::vector<size_t> all_indices_;
};

/// LibTorch's: this rank's contiguous local_sample_count() indices of 0..size-1, taken modulo
/// size past the end; the same every epoch.
class DistributedSequentialSampler : public DistributedSampler<> {
public:
    DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                                 bool allow_duplicates = true);
    void reset(std::optional<size_t> new_size = std::nullopt) override;
    std::optional<std::vector<size_t>> next(size_t batch_size) override;
    size_t index() const noexcept { return sample_index_; }

private:
    void populate_indices();
    size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

}  // namespace tg::data::samplers

#pragma GCC visibility pop
