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
/// sampler's order (samplers.hpp: RandomSampler by default, a new tg::randperm from the default
/// generator every epoch, as LibTorch's, so after tg::manual_seed(s) the batches come in
/// LibTorch's order; SequentialSampler; the distributed ones; or your own) and yields what the
/// dataset's get_batch returns. With DataLoaderOptions().workers(n), n threads make the batches
/// ahead of the loop (at most max_jobs = 2n ahead, handed out in order, prefetch.hpp), so get
/// and the transforms must be safe to call from several threads at once, as in LibTorch;
/// workers(0), the default, makes each batch on the iterating thread.
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

#include "tapegrad/array_ref.hpp"
#include "tapegrad/data/dataloader.hpp"
#include "tapegrad/data/prefetch.hpp"
#include "tapegrad/data/samplers.hpp"
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

/// LibTorch's BatchDataset: a dataset read a batch of indices at a time. get_batch and size are
/// virtual, as LibTorch's, so a dataset of your own overrides them (`override` compiles); map()
/// wraps it in a MapDataset.
template <class Self, class Batch = std::vector<Example<>>, class BatchRequest = ArrayRef<size_t>>
class BatchDataset {
public:
    using SelfType = Self;
    using BatchType = Batch;
    using BatchRequestType = BatchRequest;
    virtual ~BatchDataset() = default;
    /// The batch of these indices.
    virtual Batch get_batch(BatchRequest request) = 0;
    /// The number of examples, if known.
    virtual std::optional<size_t> size() const = 0;
    template <class Transform>
    MapDataset<Self, Transform> map(Transform t) && {
        return MapDataset<Self, Transform>(std::move(static_cast<Self&>(*this)), std::move(t));
    }
    template <class Transform>
    MapDataset<Self, Transform> map(Transform t) & {
        return MapDataset<Self, Transform>(static_cast<Self&>(*this), std::move(t));
    }
};

/// LibTorch's Dataset<Self, SingleExample>: a dataset of your own declares
///     Example<> get(size_t index) override;          // not const, as LibTorch's
///     tg::optional<size_t> size() const override;
/// and get_batch reads get() once per index.
template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
public:
    using ExampleType = SingleExample;
    virtual ExampleType get(size_t index) = 0;
    std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
        std::vector<ExampleType> out;
        out.reserve(indices.size());
        for (size_t i : indices)
            out.push_back(get(i));
        return out;
    }
};

namespace detail {
/// The batch a transform makes of Batch: a collation's result, else Batch (transformed per
/// example).
template <class Transform, class Batch, class = void>
struct MappedBatch {
    using type = Batch;
};
template <class Transform, class Batch>
struct MappedBatch<Transform, Batch,
                   std::enable_if_t<std::is_invocable_v<const Transform&, Batch>>> {
    using type = std::invoke_result_t<const Transform&, Batch>;
};
}  // namespace detail

/// source with transform applied: to each example, or (a collation such as Stack) to each batch.
/// A BatchDataset whose batches are what the transform makes, as LibTorch's MapDataset.
template <class Source, class Transform>
class MapDataset
    : public BatchDataset<MapDataset<Source, Transform>,
                          typename detail::MappedBatch<Transform, typename Source::BatchType>::type,
                          typename Source::BatchRequestType> {
public:
    static constexpr bool kCollates =
        std::is_invocable_v<const Transform&, typename Source::BatchType>;
    using Batch = typename MapDataset::BatchType;
    MapDataset(Source source, Transform t) : source_(std::move(source)), t_(std::move(t)) {}
    /// One transformed example (not for a collation, which works on batches).
    auto get(size_t i) {
        static_assert(!kCollates, "get(i): a collated dataset is read in batches");
        return t_(source_.get(i));
    }
    Batch get_batch(typename Source::BatchRequestType request) override {
        if constexpr (kCollates) {
            return t_(source_.get_batch(request));
        } else {
            auto batch = source_.get_batch(request);
            for (auto& e : batch)
                e = t_(std::move(e));
            return batch;
        }
    }
    std::optional<size_t> size() const override { return source_.size(); }
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
    Example<> get(size_t index) override;
    std::optional<size_t> size() const override { return size_t(images_.size(0)); }
    bool is_train() const { return train_; }
    /// [N,1,28,28] float32 and [N] int64.
    const Tensor& images() const { return images_; }
    const Tensor& targets() const { return targets_; }

private:
    Tensor images_, targets_;
    bool train_;
};

}  // namespace datasets

/// What make_data_loader returns: iterate it (`for (auto& batch : *loader)`). As LibTorch's
/// loader: each begin() calls the sampler's reset() and starts an epoch; the batch requests come
/// from the sampler's next(batch_size) (on the iterating thread, the batch's own just before it
/// is made, or with workers 2·workers (max_jobs) ahead), the epoch ends when next() gives
/// nothing (or, with drop_last, a short batch). Batches are what the dataset's get_batch returns:
/// an Example after Stack, else a std::vector<Example>.
template <class Dataset, class Sampler>
class StatelessDataLoader {
public:
    using Batch = typename Dataset::BatchType;
    using BatchRequest = typename Sampler::BatchRequestType;
    class Iterator {
    public:
        Batch& operator*() {
            if (!built_) {
                current_ = loader_->batch(i_);
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
        /// Against end(): whether this iterator has gone past the epoch's last batch (asks the
        /// sampler for the next batch when needed, as LibTorch's iterator does).
        bool operator==(const Iterator& o) const {
            if (loader_ && o.loader_)
                return i_ == o.i_;
            if (!loader_ && !o.loader_)
                return true;
            return loader_ ? !loader_->has(i_) : !o.loader_->has(o.i_);
        }
        bool operator!=(const Iterator& o) const { return !(*this == o); }

    private:
        friend class StatelessDataLoader;
        Iterator(StatelessDataLoader* l, int64_t i) : loader_(l), i_(i) {}
        StatelessDataLoader* loader_;
        int64_t i_;
        bool built_ = false;
        Batch current_{};
    };

    /// value_error for a batch size < 1, negative workers or max_jobs < 1, a dataset without a
    /// size, or DataLoaderOptions' shuffle or seed set (they are tg::data::DataLoader's: the order
    /// here is the sampler's).
    StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
        : dataset_(std::move(dataset)), options_(options), sampler_(std::move(sampler)) {
        options_.check_for_make_data_loader();
        if (!dataset_.size())
            throw value_error("make_data_loader: the dataset has no size");
        n_ = *dataset_.size();
    }
    // the workers call make() on this object: it stays where it was made
    StatelessDataLoader(const StatelessDataLoader&) = delete;
    StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;
    /// Starts an epoch (the previous epoch's workers finish their batch and stop first).
    Iterator begin() {
        prefetch_.reset();
        sampler_.reset(std::nullopt);
        requests_.clear();
        fetched_ = 0;
        exhausted_ = false;
        if (options_.workers() > 0) {
            prefetch_ = std::make_unique<Prefetcher<Batch, BatchRequest>>(
                options_.workers(), [this](BatchRequest r) { return make(r); });
            for (int64_t k = 0; k < options_.max_jobs(); ++k)
                fetch();
        }
        return Iterator(this, 0);
    }
    Iterator end() const { return Iterator(nullptr, 0); }
    const Dataset& dataset() const { return dataset_; }
    Sampler& sampler() { return sampler_; }

private:
    /// Asks the sampler for the next batch (LibTorch's get_batch_request).
    void fetch() {
        if (exhausted_)
            return;
        std::optional<BatchRequest> r = sampler_.next(size_t(options_.batch_size()));
        if (!r || (options_.drop_last() && r->size() < size_t(options_.batch_size()))) {
            exhausted_ = true;
            return;
        }
        ++fetched_;
        if (prefetch_)
            prefetch_->submit(std::move(*r));
        else
            requests_.push_back(std::move(*r));
    }
    bool has(int64_t i) {
        while (!exhausted_ && fetched_ <= i)
            fetch();
        return i < fetched_;
    }
    Batch batch(int64_t i) {
        if (!has(i))
            throw value_error("DataLoader: batch " + std::to_string(i) +
                              " is past the epoch's end");
        if (!prefetch_)
            return make(requests_[size_t(i)]);
        Batch b = prefetch_->take(i);
        fetch();  // LibTorch's prefetch(1): one more request for each batch taken
        return b;
    }
    Batch make(const BatchRequest& r) {  // as LibTorch's, get_batch is not const
        if constexpr (std::is_same_v<BatchRequest, std::vector<size_t>>)
            for (size_t i : r)
                if (i >= n_)
                    throw value_error("make_data_loader: the sampler gave index " +
                                      std::to_string(i) + ", the dataset has " +
                                      std::to_string(n_) + " examples");
        return dataset_.get_batch(r);
    }
    Dataset dataset_;
    DataLoaderOptions options_;
    Sampler sampler_;
    size_t n_ = 0;
    std::vector<BatchRequest> requests_;  // without workers: this epoch's requests so far
    int64_t fetched_ = 0;
    bool exhausted_ = false;
    std::unique_ptr<Prefetcher<Batch, BatchRequest>> prefetch_;  // last: its workers use the above
};

/// LibTorch's make_data_loader: a loader over dataset visiting indices in the order of a Sampler
/// made with the dataset's size (RandomSampler unless named:
/// make_data_loader<samplers::SequentialSampler>(ds, options)).
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = {}) {
    const std::optional<size_t> size = dataset.size();
    if (!size)
        throw value_error("make_data_loader: the dataset has no size");
    Sampler sampler(*size);
    return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset),
                                                                   std::move(sampler), options);
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
    return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset),
                                                                   std::move(sampler), options);
}

}  // namespace tg::data

#pragma GCC visibility pop
