/// A Dataset of one's own written as LibTorch programs write it (pytorch/examples'
/// custom-dataset): Example<> as the example type, get() declared without const, size()
/// returning tg::optional<size_t>, mapped with Stack<> and read by a SequentialSampler loader,
/// on the iterating thread and on worker threads.
#define BOOST_TEST_MODULE test_data_custom_dataset
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::values_of;

namespace {

class Squares : public tg::data::datasets::Dataset<Squares> {
    using Example = tg::data::Example<>;

public:
    explicit Squares(size_t n) : n_(n) {}
    // not const, as LibTorch's Dataset::get is declared
    Example get(size_t index) override {
        last_ = int64_t(index);
        const double v = double(index);
        return {tg::full({2}, v * v, tg::kFloat64), tg::tensor(int64_t(index), tg::kLong)};
    }
    tg::optional<size_t> size() const override { return n_; }
    int64_t last() const { return last_; }

private:
    size_t n_;
    int64_t last_ = -1;
};

}  // namespace

BOOST_AUTO_TEST_CASE(example_is_a_template_with_defaults) {
    tg::data::Example<> e{tg::ones({2}), tg::zeros({1})};
    static_assert(std::is_same_v<tg::data::Example<>, tg::data::Example<tg::Tensor, tg::Tensor>>);
    static_assert(std::is_same_v<tg::data::Example<>::DataType, tg::Tensor>);
    tg::data::Example<std::string, int64_t> labelled{"cat", 3};
    BOOST_TEST(labelled.data == "cat");
    BOOST_TEST(labelled.target == 3);
    auto n = tg::data::transforms::Normalize<>(1.0, 2.0)(e);
    check_close(n.data, {0, 0});
}

BOOST_AUTO_TEST_CASE(non_const_get_is_called_by_get_batch_and_the_loader) {
    Squares squares(10);
    auto batch = squares.get_batch({3, 1});
    BOOST_TEST(batch.size() == 2u);
    check_close(batch[0].data, {9, 9});
    BOOST_TEST(squares.last() == 1);  // the dataset's own get ran, state and all
    for (int workers : {0, 2}) {
        BOOST_TEST_CONTEXT("workers " << workers) {
            auto ds = Squares(10).map(tg::data::transforms::Stack<>());
            BOOST_TEST(ds.size().value() == 10u);
            auto loader = tg::data::make_data_loader<tg::data::samplers::SequentialSampler>(
                std::move(ds), tg::data::DataLoaderOptions().batch_size(4).workers(workers));
            std::vector<double> targets, firsts;
            for (auto& b : *loader) {
                for (double t : values_of(b.target))
                    targets.push_back(t);
                firsts.push_back(values_of(b.data)[0]);
            }
            BOOST_TEST(targets == (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
            BOOST_TEST(firsts == (std::vector<double>{0, 16, 64}));
        }
    }
}
