#pragma once
/// Mini-batches over a dataset held in two tensors, as LibTorch's data loader:
///
///     tg::data::FashionMNIST train(true);
///     tg::data::DataLoader loader(train.images(), train.labels(),
///                                 tg::data::DataLoaderOptions().batch_size(128).seed(42));
///     for (int epoch = 0; epoch < 10; ++epoch)
///         for (auto& batch : loader)   // a new, seeded order every epoch
///             step(batch.data, batch.target);
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "tapegrad/data/distributed_sampler.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::data {

/// One example or mini-batch: `data` and its `target` (for a batch, rows sliced along dim 0).
/// A template as LibTorch's: Example<> is Example<Tensor, Tensor>.
template <class Data = Tensor, class Target = Tensor>
struct Example {
    using DataType = Data;
    using TargetType = Target;
    Example() = default;
    Example(Data d, Target t) : data(std::move(d)), target(std::move(t)) {}
    Data data;
    Target target;
};

/// LibTorch's DataLoaderOptions, chained: DataLoaderOptions().batch_size(128).workers(2).
/// batch_size (default 1, as LibTorch's), drop_last, workers and max_jobs are LibTorch's options;
/// shuffle (default true) and seed (default 0) are tapegrad's, for tg::data::DataLoader below
/// only: make_data_loader takes its order from its sampler (value_error when they are set).
class DataLoaderOptions {
public:
    DataLoaderOptions() = default;
    DataLoaderOptions(int64_t batch_size) : batch_size_(batch_size) {}  // NOLINT: as LibTorch's
    /// Rows per batch (the last batch may be smaller unless drop_last).
    DataLoaderOptions& batch_size(int64_t b) {
        batch_size_ = b;
        return *this;
    }
    /// tg::data::DataLoader: visit rows in a new random order every epoch.
    DataLoaderOptions& shuffle(bool s) {
        shuffle_ = s;
        return *this;
    }
    /// tg::data::DataLoader: the seed of its own order (the same seed, the same order in every
    /// epoch e: it depends only on (seed, e)).
    DataLoaderOptions& seed(uint64_t s) {
        seed_ = s;
        return *this;
    }
    /// Skip the last batch when it would be smaller than batch_size.
    DataLoaderOptions& drop_last(bool d) {
        drop_last_ = d;
        return *this;
    }
    /// make_data_loader's worker threads (LibTorch's option): n threads make the batches ahead
    /// of the loop; 0 makes them on the iterating thread. tg::data::DataLoader (below) batches
    /// two tensors with index_select on the iterating thread and ignores it.
    DataLoaderOptions& workers(int64_t n) {
        workers_ = n;
        return *this;
    }
    /// With workers: how many batches are asked of the sampler ahead (LibTorch's; 2 · workers
    /// unless set).
    DataLoaderOptions& max_jobs(int64_t n) {
        max_jobs_ = n;
        return *this;
    }
    int64_t batch_size() const { return batch_size_; }
    int64_t workers() const { return workers_; }
    int64_t max_jobs() const { return max_jobs_.value_or(2 * workers_); }
    bool shuffle() const { return shuffle_.value_or(true); }
    uint64_t seed() const { return seed_.value_or(0); }
    bool drop_last() const { return drop_last_; }
    /// What make_data_loader needs: batch_size >= 1, workers >= 0, max_jobs >= 1 with workers,
    /// and neither shuffle nor seed set (value_error).
    void check_for_make_data_loader() const;

private:
    int64_t batch_size_ = 1;
    std::optional<bool> shuffle_;
    std::optional<uint64_t> seed_;
    bool drop_last_ = false;
    int64_t workers_ = 0;
    std::optional<int64_t> max_jobs_;
};

/// Iterates (data, targets) in batches along dim 0. Each begin() starts a new epoch; with
/// shuffle, epoch e visits the rows in an order that depends only on (seed, e), so runs are
/// reproducible and independent of the random generators. This loader is tapegrad's own (LibTorch
/// has none over two tensors) and so is its order: make_data_loader (datasets.hpp) is the one
/// that visits LibTorch's order after tg::manual_seed. Unshuffled batches are views (narrow);
/// shuffled ones are gathered with index_select.
class DataLoader {
public:
    class Iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = Example<>;
        using difference_type = std::ptrdiff_t;
        using pointer = Example<>*;
        using reference = Example<>&;

        Iterator() = default;
        /// The current batch (built on first access, then cached until ++).
        Example<>& operator*() const;
        Example<>* operator->() const { return &**this; }
        Iterator& operator++() {
            ++batch_;
            built_ = false;
            return *this;
        }
        friend bool operator==(const Iterator& a, const Iterator& b) {
            return a.batch_ == b.batch_;
        }
        friend bool operator!=(const Iterator& a, const Iterator& b) { return !(a == b); }

    private:
        friend class DataLoader;
        Iterator(const DataLoader* loader, int64_t batch) : loader_(loader), batch_(batch) {}
        const DataLoader* loader_ = nullptr;
        int64_t batch_ = 0;
        mutable bool built_ = false;
        mutable Example<> current_;
    };

    /// data and targets must be defined (value_error) and have the same size in dim 0
    /// (shape_error naming both shapes); batch_size must be positive (value_error). They may
    /// live on different devices.
    DataLoader(Tensor data, Tensor targets, DataLoaderOptions options = {});
    /// Batches of this rank's rows (data parallelism): each begin() moves the sampler to the
    /// loader's epoch and takes its indices(); options' shuffle and seed are the sampler's
    /// business. shape_error when the sampler's dataset size is not data's.
    DataLoader(Tensor data, Tensor targets, DistributedSampler sampler,
               DataLoaderOptions options = {});

    /// Starts the next epoch (reshuffling when shuffle is on) and returns its first batch.
    Iterator begin();
    Iterator end() const { return Iterator(this, size()); }
    /// Batches per epoch: ceil(N / batch_size), or floor with drop_last (N: the rows of an epoch,
    /// the sampler's size() with one).
    int64_t size() const;
    /// Rows in the dataset (N).
    int64_t dataset_size() const { return n_; }
    /// Epochs started so far (begin() calls).
    int64_t epoch() const { return epoch_; }
    /// Makes the next begin() start epoch e (e.g. to resume a run where it stopped).
    void set_epoch(int64_t e) { epoch_ = e; }
    const DataLoaderOptions& options() const { return options_; }
    /// The row order of the current epoch (0..N-1 when not shuffling).
    const std::vector<int64_t>& order() const { return order_; }

private:
    Example<> batch(int64_t i) const;

    Tensor data_, targets_;
    DataLoaderOptions options_;
    int64_t n_ = 0;
    int64_t epoch_ = 0;
    std::vector<int64_t> order_;
    std::shared_ptr<DistributedSampler> sampler_;
};

}  // namespace tg::data

#pragma GCC visibility pop
