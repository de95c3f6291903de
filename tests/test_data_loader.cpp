// DataLoader: batch counts (drop_last or not), unshuffled order, seeded and complete shuffling,
// iterator semantics, rejected inputs. Reading files: test_data_idx.cpp.
#define BOOST_TEST_MODULE data_loader
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <utility>
#include <vector>

#include "tapegrad/data.hpp"
#include "tapegrad/tapegrad.hpp"

namespace {

/// data[i] = {i, 2i} (float), targets[i] = i (int64).
std::pair<tg::Tensor, tg::Tensor> counting_dataset(int64_t n) {
    std::vector<float> d;
    std::vector<int64_t> t;
    for (int64_t i = 0; i < n; ++i) {
        d.push_back(float(i));
        d.push_back(float(2 * i));
        t.push_back(i);
    }
    return {tg::tensor(d).reshape({n, 2}), tg::tensor(t)};
}

/// The targets of every batch of one epoch, in order; checks each batch's rows match.
std::vector<int64_t> one_epoch(tg::data::DataLoader& loader,
                               std::vector<int64_t>* batch_sizes = nullptr) {
    std::vector<int64_t> seen;
    for (auto& batch : loader) {
        BOOST_REQUIRE_EQUAL(batch.data.size(0), batch.target.size(0));
        if (batch_sizes)
            batch_sizes->push_back(batch.data.size(0));
        auto d = batch.data.to_vector<float>();
        auto t = batch.target.to_vector<int64_t>();
        for (size_t r = 0; r < t.size(); ++r) {
            BOOST_CHECK_EQUAL(d[2 * r], float(t[r]));
            BOOST_CHECK_EQUAL(d[2 * r + 1], float(2 * t[r]));
            seen.push_back(t[r]);
        }
    }
    return seen;
}

}  // namespace

BOOST_AUTO_TEST_CASE(dataloader_batch_counts) {
    auto [data, targets] = counting_dataset(10);
    using Opt = tg::data::DataLoaderOptions;
    for (bool shuffle : {false, true}) {
        tg::data::DataLoader keep(data, targets, Opt().batch_size(4).shuffle(shuffle));
        BOOST_CHECK_EQUAL(keep.size(), 3);
        std::vector<int64_t> sizes;
        BOOST_CHECK_EQUAL(one_epoch(keep, &sizes).size(), 10u);
        BOOST_CHECK((sizes == std::vector<int64_t>{4, 4, 2}));

        tg::data::DataLoader drop(data, targets,
                                  Opt().batch_size(4).shuffle(shuffle).drop_last(true));
        BOOST_CHECK_EQUAL(drop.size(), 2);
        sizes.clear();
        BOOST_CHECK_EQUAL(one_epoch(drop, &sizes).size(), 8u);
        BOOST_CHECK((sizes == std::vector<int64_t>{4, 4}));
    }
    tg::data::DataLoader exact(data, targets, Opt().batch_size(5).drop_last(true));
    BOOST_CHECK_EQUAL(exact.size(), 2);
    tg::data::DataLoader big(data, targets, Opt().batch_size(64).drop_last(true));
    BOOST_CHECK_EQUAL(big.size(), 0);
    BOOST_CHECK(one_epoch(big).empty());
    tg::data::DataLoader big_keep(data, targets, Opt().batch_size(64));
    BOOST_CHECK_EQUAL(big_keep.size(), 1);
}

BOOST_AUTO_TEST_CASE(dataloader_unshuffled_order) {
    auto [data, targets] = counting_dataset(7);
    tg::data::DataLoader loader(data, targets,
                                tg::data::DataLoaderOptions().batch_size(3).shuffle(false));
    for (int epoch = 0; epoch < 2; ++epoch)
        BOOST_CHECK((one_epoch(loader) == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

BOOST_AUTO_TEST_CASE(dataloader_shuffle_is_seeded_and_complete) {
    auto [data, targets] = counting_dataset(50);
    auto opt = tg::data::DataLoaderOptions().batch_size(8).shuffle(true).seed(123);
    tg::data::DataLoader a(data, targets, opt), b(data, targets, opt);
    tg::data::DataLoader c(data, targets, tg::data::DataLoaderOptions(opt).seed(124));
    std::vector<int64_t> identity(50);
    for (int64_t i = 0; i < 50; ++i)
        identity[size_t(i)] = i;
    std::vector<int64_t> previous;
    for (int epoch = 0; epoch < 3; ++epoch) {
        auto ea = one_epoch(a), eb = one_epoch(b), ec = one_epoch(c);
        BOOST_CHECK(ea == eb);        // same seed, same order
        BOOST_CHECK(ea != ec);        // another seed, another order
        BOOST_CHECK(ea != identity);  // actually shuffled
        BOOST_CHECK(ea != previous);  // reshuffled every epoch
        auto sorted = ea;
        std::sort(sorted.begin(), sorted.end());
        BOOST_CHECK(sorted == identity);  // every sample exactly once
        previous = ea;
    }
    BOOST_CHECK_EQUAL(a.epoch(), 3);
    // Resuming at an epoch reproduces its order.
    tg::data::DataLoader d(data, targets, opt);
    d.set_epoch(2);
    BOOST_CHECK(one_epoch(d) == previous);
}

BOOST_AUTO_TEST_CASE(dataloader_iterator_semantics) {
    auto [data, targets] = counting_dataset(5);
    tg::data::DataLoader loader(data, targets,
                                tg::data::DataLoaderOptions().batch_size(2).shuffle(false));
    auto it = loader.begin();
    BOOST_CHECK(it != loader.end());
    BOOST_CHECK_EQUAL(it->target.size(0), 2);
    BOOST_CHECK_EQUAL((*it).target.to_vector<int64_t>()[1], 1);
    ++it;
    ++it;
    BOOST_CHECK_EQUAL(it->target.to_vector<int64_t>()[0], 4);
    ++it;
    BOOST_CHECK(it == loader.end());
    // Images of any rank batch along dim 0.
    tg::Tensor imgs = tg::zeros({6, 1, 28, 28});
    tg::data::DataLoader l2(imgs, tg::zeros({6}, tg::kInt64),
                            tg::data::DataLoaderOptions().batch_size(4));
    auto b = *l2.begin();
    BOOST_CHECK((b.data.sizes() == tg::Shape{4, 1, 28, 28}));
}

BOOST_AUTO_TEST_CASE(dataloader_rejects_bad_input) {
    auto [data, targets] = counting_dataset(5);
    BOOST_CHECK_THROW(tg::data::DataLoader(data, tg::zeros({4}, tg::kInt64)), tg::shape_error);
    BOOST_CHECK_THROW(
        tg::data::DataLoader(data, targets, tg::data::DataLoaderOptions().batch_size(0)),
        tg::value_error);
    try {
        tg::data::DataLoader(data, tg::zeros({4}, tg::kInt64));
    } catch (const tg::shape_error& e) {
        BOOST_CHECK(std::string(e.what()).find("[5,2]") != std::string::npos);
        BOOST_CHECK(std::string(e.what()).find("[4]") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(data_and_targets_on_different_devices) {
    // shuffled batches picked the targets with an index on the data's device (device_error)
    const tg::Device cl = tg::Device::opencl(0);
    if (!tg::is_available(cl)) {
        BOOST_TEST_MESSAGE("no OpenCL device: not run");
        return;
    }
    auto [data, targets] = counting_dataset(10);
    tg::data::DataLoader loader(data.to(cl), targets,
                                tg::data::DataLoaderOptions().batch_size(4).seed(3));
    int64_t rows = 0;
    for (auto& b : loader) {
        BOOST_TEST(b.data.device() == cl);
        BOOST_TEST(b.target.device() == tg::Device::cpu());
        // row i of the data set is (i, 2i) with target i
        const std::vector<float> d = b.data.to_vector<float>();
        const std::vector<int64_t> t = b.target.to_vector<int64_t>();
        for (size_t r = 0; r < t.size(); ++r)
            BOOST_TEST(d[2 * r] == float(t[r]));
        rows += int64_t(t.size());
    }
    BOOST_TEST(rows == 10);
}
