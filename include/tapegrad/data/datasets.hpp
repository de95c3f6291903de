#pragma once
/// LibTorch's data API, as a LibTorch MNIST trainer spells it:
///
///     auto ds = tg::data::datasets::MNIST(root, tg::data::datasets::MNIST::Mode::kTrain)
///                   .map(tg::data::transforms::Normalize<>(0.1307, 0.3081))
///                   .map(tg::data::transforms::Stack<>());
///     auto loader = tg::data::make_data_loader(std::move(ds),
///                                              tg::data::DataLoaderOptions().batch_size(64));
///     for (auto& batch : *loader)   // batch.data [64,1,28,28], batch.target [64]
///         ...
///
/// A dataset has get(i) -> Example and size(); map(t) wraps it in a MapDataset: an example
/// transform (Normalize, Lambda) applies to each example, a collation (Stack) turns a batch's
/// std::vector<Example> into one Example. make_data_loader<Sampler> visits the indices in the
/// sampler's order (RandomSampler by default, reshuffled every epoch from the options' seed;
/// SequentialSampler) and yields what the dataset's get_batch returns. With
/// DataLoaderOptions().workers(n), n threads make the batches ahead of the loop (at most 2n
/// ahead, handed out in order, prefetch.hpp), so get and the transforms must be safe to call
/// from several threads at once, as in LibTorch; workers(0), the default, makes each batch on
/// the iterating thread.
/// tg::data::DataLoader (dataloader.hpp) is the faster path for data already in two tensors.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tapegrad/data/dataloader.hpp"
#include "tapegrad/data/prefetch.hpp"
#include "tapegrad/ops.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg::data {

namespace transforms {
/// (data - mean) / stddev on each example's data.
template <class Target = Tensor>
struct Normalize {
    Normalize(double m, double s) : mean(m), stddev(s) {}
    Example<Tensor, Target> operator()(Example<Tensor, Target> e) const {
        return {(e.data - mean) / stddev, std::move(e.target)};
    }
    double mean, stddev;
};
/// Collation: a batch's examples stacked along a new dim 0, data and targets.
template <class T = Example<>>
struct Stack {
    T operator()(const std::vector<T>& batch) const {
        std::vector<Tensor> data, target;
        for (const T& e : batch) {
            data.push_back(e.data);
            target.push_back(e.target);
        }
        return {tg::stack(data, 0), tg::stack(target, 0)};
    }
};
/// Any function of an example.
template <class T = Example<>>
struct Lambda {
    explicit Lambda(std::function<T(T)> fn) : f(std::move(fn)) {}
    T operator()(T e) const { return f(std::move(e)); }
    std::function<T(T)> f;
};
}  // namespace transforms

namespace datasets {

template <class Source, class Transform>
class MapDataset;

namespace detail {
/// source.get(i), whether the dataset declares get const or not (LibTorch's get is not const;
/// a loader's dataset is its own object, never a const one).
template <class Source>
auto get_of(const Source& source, size_t i) {
    return const_cast<Source&>(source).get(i);
}
}  // namespace detail

/// Base of the datasets (CRTP, as LibTorch's Dataset<Self, SingleExample>): get_batch and map.
/// A dataset of your own declares get(size_t) (const or not) and size() const returning a
/// tg::optional<size_t>.
template <class Self, class SingleExample = Example<>>
class Dataset {
public:
    using ExampleType = SingleExample;
    using BatchType = std::vector<SingleExample>;
    std::vector<SingleExample> get_batch(const std::vector<size_t>& indices) const {
        std::vector<SingleExample> out;
        out.reserve(indices.size());
        for (size_t i : indices)
            out.push_back(detail::get_of(static_cast<const Self&>(*this), i));
        return out;
    }
    template <class Transform>
    MapDataset<Self, Transform> map(Transform t) && {
        return MapDataset<Self, Transform>(std::move(static_cast<Self&>(*this)), std::move(t));
    }
};

/// source with transform applied: to each example, or (a collation such as Stack) to each batch.
template <class Source, class Transform>
class MapDataset : public Dataset<MapDataset<Source, Transform>> {
public:
    static constexpr bool kCollates = std::is_invocable_v<const Transform&, std::vector<Example<>>>;
    MapDataset(Source source, Transform t) : source_(std::move(source)), t_(std::move(t)) {}
    auto get(size_t i) const {
        static_assert(!kCollates, "get(i): a collated dataset is read in batches");
        return t_(detail::get_of(source_, i));
    }
    auto get_batch(const std::vector<size_t>& indices) const {
        if constexpr (kCollates) {
            return t_(source_.get_batch(indices));
        } else {
            auto batch = source_.get_batch(indices);
            for (auto& e : batch)
                e = t_(std::move(e));
            return batch;
        }
    }
    std::optional<size_t> size() const { return source_.size(); }
    const Source& dataset() const { return source_; }

private:
    Source source_;
    Transform t_;
};

/// MNIST in LibTorch's form: the four IDX files (train-images-idx3-ubyte, ...; raw or .gz) of
/// MNIST or Fashion-MNIST in root. get(i): data [1,28,28] float32 in [0, 1], target a 0-dim
/// int64. io_error naming the file when one is missing or corrupt.
class MNIST : public Dataset<MNIST> {
public:
    enum class Mode { kTrain, kTest };
    explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
    /// shape_error for an index past the end.
    Example<> get(size_t index) const;
    std::optional<size_t> size() const { return size_t(images_.size(0)); }
    bool is_train() const { return train_; }
    /// [N,1,28,28] float32 and [N] int64.
    const Tensor& images() const { return images_; }
    const Tensor& targets() const { return targets_; }

private:
    Tensor images_, targets_;
    bool train_;
};

}  // namespace datasets

namespace samplers {
/// Visits 0..n-1 in order.
struct SequentialSampler {
    static std::vector<int64_t> order(int64_t n, uint64_t seed, int64_t epoch);
};
/// Visits a new permutation every epoch, from (seed, epoch).
struct RandomSampler {
    static std::vector<int64_t> order(int64_t n, uint64_t seed, int64_t epoch);
};
/// LibTorch's distributed samplers, passed to make_data_loader(dataset, sampler, options): rank
/// `rank` of `num_replicas` visits its share of each epoch's rows (tg::data::DistributedSampler:
/// rows rank, rank + num_replicas, ... of the epoch's order), padded from the start so every
/// rank gets ceil(size / num_replicas) when allow_duplicates, else floor. The random one
/// permutes from (the loader's seed, epoch): the same on every rank, new every epoch (LibTorch
/// reshuffles only after set_epoch, which here sets the first epoch's number, for resuming).
/// value_error for a bad rank or a dataset of another size than `size`.
class DistributedRandomSampler {
public:
    DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0,
                             bool allow_duplicates = true);
    void set_epoch(size_t epoch) { first_epoch_ = epoch; }
    std::vector<int64_t> order(int64_t n, uint64_t seed, int64_t epoch) const;

protected:
    std::vector<int64_t> share(int64_t n, bool shuffle, uint64_t seed, int64_t epoch) const;

private:
    size_t size_, replicas_, rank_;
    bool duplicates_;
    size_t first_epoch_ = 0;
};
/// As DistributedRandomSampler, each rank's share of 0..size-1 in order.
class DistributedSequentialSampler : public DistributedRandomSampler {
public:
    using DistributedRandomSampler::DistributedRandomSampler;
    std::vector<int64_t> order(int64_t n, uint64_t seed, int64_t epoch) const;
};
}  // namespace samplers

/// What make_data_loader returns: iterate it (`for (auto& batch : *loader)`); each begin()
/// starts an epoch. Batches are what the dataset's get_batch returns: an Example after Stack,
/// else a std::vector<Example>.
template <class Dataset, class Sampler>
class StatelessDataLoader {
public:
    using Batch = decltype(std::declval<const Dataset&>().get_batch(std::vector<size_t>{}));
    class Iterator {
    public:
        Batch& operator*() {
            if (!built_) {
                current_ = loader_->prefetch_ ? loader_->prefetch_->take(i_) : loader_->batch(i_);
                built_ = true;
            }
            return current_;
        }
        Batch* operator->() { return &**this; }
        Iterator& operator++() {
            ++i_;
            built_ = false;
            return *this;
        }
        bool operator!=(const Iterator& o) const { return i_ != o.i_; }
        bool operator==(const Iterator& o) const { return i_ == o.i_; }

    private:
        friend class StatelessDataLoader;
        Iterator(const StatelessDataLoader* l, int64_t i) : loader_(l), i_(i) {}
        const StatelessDataLoader* loader_;
        int64_t i_;
        bool built_ = false;
        Batch current_{};
    };

    /// value_error for a batch size < 1, negative workers or a dataset without a size.
    StatelessDataLoader(Dataset dataset, DataLoaderOptions options, Sampler sampler = {})
        : dataset_(std::move(dataset)), options_(options), sampler_(std::move(sampler)) {
        if (options_.batch_size() < 1)
            throw value_error("make_data_loader: batch_size must be positive, got " +
                              std::to_string(options_.batch_size()));
        if (options_.workers() < 0)
            throw value_error("make_data_loader: workers must be >= 0, got " +
                              std::to_string(options_.workers()));
        if (!dataset_.size())
            throw value_error("make_data_loader: the dataset has no size");
        n_ = int64_t(*dataset_.size());
        order_ = sampler_.order(n_, options_.seed(), 0);  // checks the sampler, sets size()
    }
    // the workers call batch() on this object: it stays where it was made
    StatelessDataLoader(const StatelessDataLoader&) = delete;
    StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;
    /// Starts an epoch (the previous epoch's workers finish their batch and stop first).
    Iterator begin() {
        prefetch_.reset();
        order_ = sampler_.order(n_, options_.seed(), epoch_++);
        if (const int64_t w = options_.workers(); w > 0)
            prefetch_ = std::make_unique<Prefetcher<Batch>>(size(), w, 2 * w,
                                                            [this](int64_t i) { return batch(i); });
        return Iterator(this, 0);
    }
    Iterator end() const { return Iterator(this, size()); }
    /// Batches per epoch.
    int64_t size() const {
        const int64_t b = options_.batch_size(), rows = int64_t(order_.size());
        return options_.drop_last() ? rows / b : (rows + b - 1) / b;
    }
    const Dataset& dataset() const { return dataset_; }

private:
    Batch batch(int64_t i) const {
        const int64_t b = options_.batch_size(), start = i * b;
        const int64_t len = std::min(b, int64_t(order_.size()) - start);
        std::vector<size_t> idx;
        idx.reserve(size_t(len));
        for (int64_t k = start; k < start + len; ++k)
            idx.push_back(size_t(order_[size_t(k)]));
        return dataset_.get_batch(idx);
    }
    Dataset dataset_;
    DataLoaderOptions options_;
    Sampler sampler_;
    int64_t n_ = 0, epoch_ = 0;
    std::vector<int64_t> order_;
    std::unique_ptr<Prefetcher<Batch>> prefetch_;  // last: its workers read the members above
};

/// LibTorch's make_data_loader: a loader over dataset visiting indices in Sampler's order
/// (RandomSampler unless named: make_data_loader<samplers::SequentialSampler>(ds, options)).
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = {}) {
    return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), options);
}
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        int64_t batch_size) {
    return make_data_loader<Sampler>(std::move(dataset), DataLoaderOptions(batch_size));
}
/// With a sampler object, as LibTorch's make_data_loader(dataset, sampler, options):
/// make_data_loader(ds, samplers::DistributedRandomSampler(n, world, rank), options).
template <class Dataset, class Sampler,
          class = std::enable_if_t<std::is_class_v<Sampler> &&
                                   !std::is_same_v<Sampler, DataLoaderOptions>>>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, Sampler sampler, DataLoaderOptions options = {}) {
    return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), options,
                                                                   std::move(sampler));
}

}  // namespace tg::data

#pragma GCC visibility pop
