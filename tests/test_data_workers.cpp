/// make_data_loader's worker threads (DataLoaderOptions().workers(n), LibTorch's option): the
/// batches are the ones the iterating thread would make, in the same order, made on other
/// threads; errors reach the loop; leaving an epoch early, starting the next one and dropping
/// the loader mid-epoch stop the workers cleanly. Runs under ThreadSanitizer (scripts/tsan.sh).
/// And make_data_loader with a sampler object: LibTorch's distributed samplers, and one of your
/// own written to LibTorch's sampler interface.
#define BOOST_TEST_MODULE test_data_workers
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tapegrad/tapegrad.hpp"

namespace data = tg::data;

namespace {

/// A dataset of your own, as a LibTorch user writes one: example i is ([i, 2i], i); it notes
/// which threads called get, and throws at `bad`.
class Numbers : public data::datasets::Dataset<Numbers> {
public:
    Numbers(size_t n, int64_t bad = -1) : n_(n), bad_(bad), seen_(std::make_shared<Seen>()) {}
    data::Example<> get(size_t i) override {
        {
            std::lock_guard<std::mutex> lock(seen_->mu);
            seen_->threads.insert(std::this_thread::get_id());
        }
        if (int64_t(i) == bad_)
            throw std::runtime_error("Numbers: example " + std::to_string(i) + " is broken");
        const double v = double(i);
        return {tg::tensor({v, 2 * v}, tg::kFloat64), tg::tensor(int64_t(i))};
    }
    std::optional<size_t> size() const override { return n_; }
    std::set<std::thread::id> threads() const {
        std::lock_guard<std::mutex> lock(seen_->mu);
        return seen_->threads;
    }

private:
    struct Seen {
        std::mutex mu;
        std::set<std::thread::id> threads;
    };
    size_t n_;
    int64_t bad_;
    std::shared_ptr<Seen> seen_;  // shared by the copies map() makes
};

/// Every epoch's batches, as the targets they hold.
template <class Loader>
std::vector<std::vector<int64_t>> epochs(Loader& loader, int n) {
    std::vector<std::vector<int64_t>> out;
    for (int e = 0; e < n; ++e)
        for (auto& batch : loader) {
            out.emplace_back();
            for (int64_t k = 0; k < batch.target.size(0); ++k)
                out.back().push_back(batch.target[k].template item<int64_t>());
            // the data came with its target
            BOOST_TEST(batch.data[0][1].template item<double>() == 2.0 * double(out.back()[0]));
        }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(workers_give_the_batches_of_the_iterating_thread_in_order) {
    const auto options = data::DataLoaderOptions().batch_size(3);
    tg::manual_seed(7);  // RandomSampler's permutations come from the default generator
    auto inline_loader = data::make_data_loader(Numbers(20).map(data::transforms::Stack<>()),
                                                data::DataLoaderOptions(options).workers(0));
    const auto want = epochs(*inline_loader, 3);
    BOOST_TEST(want.size() == 21u);  // 7 batches (the last of 2) in each of 3 epochs
    for (int64_t w : {1, 2, 5}) {
        Numbers ds(20);
        tg::manual_seed(7);
        auto loader = data::make_data_loader(Numbers(ds).map(data::transforms::Stack<>()),
                                             data::DataLoaderOptions(options).workers(w));
        const auto got = epochs(*loader, 3);
        BOOST_TEST(got == want);
        const auto threads = ds.threads();
        BOOST_TEST(threads.count(std::this_thread::get_id()) == 0u);  // made on the workers
        BOOST_TEST(threads.size() >= 1u);
        BOOST_TEST(threads.size() <= size_t(3 * w));  // w threads per epoch
    }
}

BOOST_AUTO_TEST_CASE(a_worker_error_reaches_the_loop_at_its_batch) {
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        Numbers(10, /*bad=*/7).map(data::transforms::Stack<>()),
        data::DataLoaderOptions().batch_size(2).workers(2));
    int64_t good = 0;
    try {
        for (auto& batch : *loader) {
            BOOST_TEST(batch.target.size(0) == 2);
            ++good;
        }
        BOOST_FAIL("the broken example did not throw");
    } catch (const std::runtime_error& e) {
        BOOST_TEST(std::string(e.what()).find("example 7 is broken") != std::string::npos);
    }
    BOOST_TEST(good == 3);  // batches 0-2 came before batch 3, which holds example 7
}

BOOST_AUTO_TEST_CASE(leaving_early_restarting_and_dropping_the_loader_stop_the_workers) {
    auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
        Numbers(50).map(data::transforms::Stack<>()),
        data::DataLoaderOptions().batch_size(4).workers(3));
    for (int e = 0; e < 3; ++e) {  // leave each epoch after 2 batches; the next starts afresh
        int64_t k = 0;
        for (auto& batch : *loader) {
            BOOST_TEST(batch.target[0].item<int64_t>() == 4 * k);
            if (++k == 2)
                break;
        }
    }
    // skipping batches without reading them, then reading a later one
    auto it = loader->begin();
    ++it;
    ++it;
    ++it;
    BOOST_TEST((*it).target[0].item<int64_t>() == 12);
    BOOST_TEST(it->target.size(0) == 4);  // the same batch, not made again
    loader.reset();  // mid-epoch: the workers finish their batch and are joined
    BOOST_TEST(!loader);
}

BOOST_AUTO_TEST_CASE(negative_workers_and_the_two_tensor_loaders_options_are_refused) {
    BOOST_CHECK_THROW(data::make_data_loader(Numbers(4).map(data::transforms::Stack<>()),
                                             data::DataLoaderOptions().workers(-1)),
                      tg::value_error);
    // shuffle and seed order tg::data::DataLoader's rows; make_data_loader's order is its
    // sampler's, so setting them would be silently ignored: refused instead
    BOOST_CHECK_THROW(data::make_data_loader(Numbers(4).map(data::transforms::Stack<>()),
                                             data::DataLoaderOptions().seed(3)),
                      tg::value_error);
    BOOST_CHECK_THROW(
        data::make_data_loader<data::samplers::SequentialSampler>(
            Numbers(4).map(data::transforms::Stack<>()), data::DataLoaderOptions().shuffle(false)),
        tg::value_error);
}

BOOST_AUTO_TEST_CASE(a_sampler_of_your_own_plugs_in) {
    // LibTorch's sampler interface: reset() at every begin(), next(batch_size) for every batch
    // until it gives nothing. This one visits the even indices, then the odd ones.
    struct EvenFirst : data::samplers::Sampler<> {
        explicit EvenFirst(size_t n) : n(n) {}
        void reset(std::optional<size_t> new_size) override {
            n = new_size.value_or(n);
            at = 0;
            ++resets;
        }
        std::optional<std::vector<size_t>> next(size_t batch_size) override {
            ++asked;
            std::vector<size_t> batch;
            for (; at < n && batch.size() < batch_size; ++at)
                batch.push_back(at < (n + 1) / 2 ? 2 * at : 2 * (at - (n + 1) / 2) + 1);
            if (batch.empty())
                return std::nullopt;
            return batch;
        }
        size_t n, at = 0;
        int resets = 0, asked = 0;
    };
    for (int64_t w : {0, 2}) {
        BOOST_TEST_CONTEXT("workers " << w) {
            auto loader =
                data::make_data_loader(Numbers(7).map(data::transforms::Stack<>()), EvenFirst(7),
                                       data::DataLoaderOptions(3).workers(w));
            const auto got = epochs(*loader, 2);
            const std::vector<std::vector<int64_t>> want = {{0, 2, 4}, {6, 1, 3}, {5}};
            BOOST_TEST(got.size() == 6u);
            for (size_t b = 0; b < got.size(); ++b)
                BOOST_TEST(got[b] == want[b % 3], boost::test_tools::per_element());
            BOOST_TEST(loader->sampler().resets == 2);  // once per epoch
            if (w == 0)  // asked once per batch, and once more to learn the epoch ended
                BOOST_TEST(loader->sampler().asked == 2 * 4);
        }
    }
}

BOOST_AUTO_TEST_CASE(libtorch_distributed_samplers_split_each_epoch_between_ranks) {
    namespace samplers = data::samplers;
    const auto options = data::DataLoaderOptions().batch_size(4);
    auto rows_of = [&](auto sampler, int n_epochs) {
        auto loader = data::make_data_loader(Numbers(20).map(data::transforms::Stack<>()),
                                             std::move(sampler), options);
        std::vector<std::vector<int64_t>> per_epoch;
        for (int e = 0; e < n_epochs; ++e) {
            per_epoch.emplace_back();
            for (auto& batch : *loader)
                for (int64_t k = 0; k < batch.target.size(0); ++k)
                    per_epoch.back().push_back(batch.target[k].template item<int64_t>());
        }
        return per_epoch;
    };
    for (bool dup : {true, false}) {
        std::vector<std::vector<int64_t>> ranks;
        for (size_t r = 0; r < 3; ++r)
            ranks.push_back(rows_of(samplers::DistributedRandomSampler(20, 3, r, dup), 2)[1]);
        std::multiset<int64_t> all;
        for (const auto& mine : ranks) {
            BOOST_TEST(mine.size() == (dup ? 7u : 6u));  // ceil or floor of 20 / 3
            all.insert(mine.begin(), mine.end());
        }
        BOOST_TEST(std::set<int64_t>(all.begin(), all.end()).size() == (dup ? 20u : 18u));
    }
    // as LibTorch's: the same shuffle every epoch until set_epoch (the loader's sampler())
    const auto r0 = rows_of(samplers::DistributedRandomSampler(20, 2, 0), 2);
    BOOST_TEST(r0[0] == r0[1]);
    auto loader = data::make_data_loader(Numbers(20).map(data::transforms::Stack<>()),
                                         samplers::DistributedRandomSampler(20, 2, 0), options);
    loader->sampler().set_epoch(1);
    std::vector<int64_t> epoch1;
    for (auto& batch : *loader)
        for (int64_t k = 0; k < batch.target.size(0); ++k)
            epoch1.push_back(batch.target[k].item<int64_t>());
    BOOST_TEST(epoch1.size() == r0[0].size());
    BOOST_TEST(epoch1 != r0[0]);
    const auto seq = rows_of(samplers::DistributedSequentialSampler(20, 3, 1), 1)[0];
    BOOST_TEST(seq == (std::vector<int64_t>{7, 8, 9, 10, 11, 12, 13}),
               boost::test_tools::per_element());  // LibTorch's: a contiguous share
    BOOST_CHECK_THROW(samplers::DistributedRandomSampler(20, 2, 2), tg::value_error);
    BOOST_CHECK_THROW(samplers::DistributedRandomSampler(20, 0, 0), tg::value_error);
    // a sampler made for another size gives an index past the dataset's end
    auto wrong = data::make_data_loader(Numbers(19).map(data::transforms::Stack<>()),
                                        samplers::DistributedSequentialSampler(20, 1, 0), 4);
    BOOST_CHECK_THROW(
        for (auto& batch
             : *wrong) { (void)batch; },
        tg::value_error);
}
