/// The vocabulary a LibTorch program uses besides tensors and modules, under tapegrad's names
/// after scripts/port-from-libtorch.sh (issue 29): TORCH_CHECK and its kin as TG_CHECK...,
/// c10::str as tg::str, c10::Error as tg::Error, optional/nullopt/irange, ArrayRef /
/// IntArrayRef and ExpandingArray. Messages are those LibTorch 1.13 gives (a probe printed them;
/// see check.hpp for the one difference, the default message's request to report to PyTorch).
#define BOOST_TEST_MODULE test_ported_vocabulary
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tgtest::check_close;
using tgtest::from_values;

namespace {

/// The message of what f throws as E ("" and a test failure when it throws nothing).
template <class E, class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    BOOST_ERROR("nothing was thrown");
    return "";
}

/// What f writes to std::cerr.
template <class F>
std::string cerr_of(F&& f) {
    std::ostringstream captured;
    std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
    f();
    std::cerr.rdbuf(old);
    return captured.str();
}

int64_t total(tg::IntArrayRef sizes) {
    int64_t n = 1;
    for (int64_t s : sizes)
        n *= s;
    return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(check_streams_its_message_parts_as_c10_str) {
    const int x = 3;
    BOOST_TEST(message_of<tg::Error>([&] {
                   TG_CHECK(x > 5, "x is ", x, ", want > ", 5.5, " ", true);
               }) == "x is 3, want > 5.5 1");
    BOOST_TEST(message_of<tg::error>([&] { TG_CHECK(x > 5); }) ==
               "Expected x > 5 to be true, but got false.");
    BOOST_TEST(message_of<tg::error>([&] { TG_CHECK(x > 5, "plain"); }) == "plain");
    TG_CHECK(x == 3, "never built");  // a true condition throws nothing
    // the message parts are evaluated only on failure
    int evaluated = 0;
    auto count = [&] { return ++evaluated; };
    TG_CHECK(true, count());
    BOOST_TEST(evaluated == 0);
    // an if/else around it parses as the programmer meant (the macro is one statement)
    bool reached_else = false;
    if (x == 4)
        TG_CHECK(false);
    else
        reached_else = true;
    BOOST_TEST(reached_else);
}

BOOST_AUTO_TEST_CASE(typed_checks_throw_the_typed_errors) {
    BOOST_TEST(message_of<tg::ValueError>([] { TG_CHECK_VALUE(false, "v ", 1); }) == "v 1");
    BOOST_TEST(message_of<tg::value_error>([] { TG_CHECK_VALUE(1 < 0); }) ==
               "Expected 1 < 0 to be true, but got false.");
    BOOST_TEST(message_of<tg::IndexError>([] { TG_CHECK_INDEX(false, "i"); }) == "i");
    BOOST_TEST(message_of<tg::shape_error>([] { TG_CHECK_INDEX(false, "i"); }) == "i");
    BOOST_TEST(message_of<tg::TypeError>([] { TG_CHECK_TYPE(false, "t"); }) == "t");
    BOOST_TEST(message_of<tg::dtype_error>([] { TG_CHECK_TYPE(false, "t"); }) == "t");
    BOOST_TEST(message_of<tg::error>([] { TG_CHECK_ARG(false, 2, "too big"); }) ==
               "invalid argument 2: too big");
    BOOST_TEST(message_of<tg::error>([] { TG_ERROR("bad ", 1); }) == "bad 1");
    // c10::Error's accessors
    try {
        TG_CHECK(false, "m");
    } catch (const tg::Error& e) {
        BOOST_TEST(e.msg() == "m");
        BOOST_TEST(std::string(e.what_without_backtrace()) == "m");
    }
}

BOOST_AUTO_TEST_CASE(internal_asserts_name_the_condition_and_the_place) {
    const int x = 3;
    const std::string line = std::to_string(__LINE__ + 1);
    const std::string m = message_of<tg::error>([&] { TG_INTERNAL_ASSERT(x > 5, "hm ", x); });
    BOOST_TEST(m == "x > 5 INTERNAL ASSERT FAILED at \"" __FILE__ "\":" + line + ", hm 3");
    const std::string a = message_of<tg::error>([&] { TG_ASSERT(x > 5); });
    BOOST_TEST(a.rfind("x > 5 INTERNAL ASSERT FAILED at \"", 0) == 0);
    BOOST_TEST(a.find(", ") == std::string::npos);  // no message part
    const std::string am = message_of<tg::error>([&] { TG_ASSERTM(x > 5, "why"); });
    BOOST_TEST(am.substr(am.size() - 5) == ", why");
    TG_ASSERT(x == 3);
    TG_INTERNAL_ASSERT(x == 3, "fine");
}

BOOST_AUTO_TEST_CASE(warnings_go_to_stderr_and_once_means_once) {
    const std::string line = std::to_string(__LINE__ + 1);
    const std::string w = cerr_of([] { TG_WARN("careful ", 2); });
    BOOST_TEST(w == "[W " __FILE__ ":" + line + "] Warning: careful 2 (function operator())\n");
    const std::string once = cerr_of([] {
        for (int i = 0; i < 3; ++i)
            TG_WARN_ONCE("once ", i);
    });
    BOOST_TEST(once.find("once 0") != std::string::npos);
    BOOST_TEST(once.find("once 1") == std::string::npos);
    BOOST_TEST(once.find("once 2") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(str_is_c10_str) {
    BOOST_TEST(tg::str("dcgan-sample-", 3, ".pt") == "dcgan-sample-3.pt");
    BOOST_TEST(tg::str("a", 1, 2.5, true, 'c', 1e-7, 0.1f) == "a12.51c1e-070.1");
    BOOST_TEST(tg::str() == "");
    BOOST_TEST(tg::str(tg::Shape{2, 3}) == "[2,3]");
}

BOOST_AUTO_TEST_CASE(optional_nullopt_and_irange) {
    tg::optional<size_t> n = 5;
    tg::optional<size_t> none = tg::nullopt;
    BOOST_TEST(n.value() == 5u);
    BOOST_TEST(!none.has_value());
    std::vector<int64_t> seen;
    for (auto i : tg::irange(int64_t(4)))
        seen.push_back(i);
    BOOST_TEST((seen == std::vector<int64_t>{0, 1, 2, 3}));
    seen.clear();
    for (auto i : tg::irange(2, 5))
        seen.push_back(i);
    BOOST_TEST((seen == std::vector<int64_t>{2, 3, 4}));
    int count = 0;
    for (auto i : tg::irange(5, 2))
        count += int(i) + 1;
    for (auto i : tg::irange(-3))
        count += int(i) + 1;
    BOOST_TEST(count == 0);  // end <= begin: empty, as c10::irange
    const tg::ScalarType st = tg::kFloat64;
    BOOST_TEST((st == tg::Dtype::Float64));
}

BOOST_AUTO_TEST_CASE(array_ref_views_lists_vectors_and_sizes) {
    BOOST_TEST(total({2, 3, 4}) == 24);
    const std::vector<int64_t> v{5, 6};
    BOOST_TEST(total(v) == 30);
    const tg::Tensor x = tg::zeros({2, 7});
    BOOST_TEST(total(x.sizes()) == 14);
    BOOST_TEST(total(int64_t(9)) == 9);
    tg::IntArrayRef r = x.sizes();
    BOOST_TEST(r.size() == 2u);
    BOOST_TEST(r[1] == 7);
    BOOST_TEST(r.front() == 2);
    BOOST_TEST(r.back() == 7);
    BOOST_TEST(r.vec() == (std::vector<int64_t>{2, 7}));
    BOOST_TEST((r == tg::IntArrayRef(std::vector<int64_t>{2, 7})));
    BOOST_TEST(tg::str(r) == "[2, 7]");
    BOOST_TEST(r.slice(1).size() == 1u);
    BOOST_CHECK_THROW(r.at(2), tg::shape_error);
    BOOST_CHECK_THROW(r.slice(1, 2), tg::shape_error);
    BOOST_CHECK_THROW(tg::IntArrayRef().front(), tg::shape_error);
    // into the functions that take shapes and dim lists
    BOOST_TEST(tg::shape_str(tg::ones(r).sizes()) == "[2,7]");
    BOOST_TEST(tg::shape_str(tg::ones({14}).view(r).sizes()) == "[2,7]");
    const std::vector<int64_t> dims{1, 0};
    BOOST_TEST(tg::shape_str(x.permute(tg::IntArrayRef(dims)).sizes()) == "[7,2]");
    const std::vector<tg::Tensor> parts{tg::ones({1}), tg::zeros({2})};
    tg::TensorList list = parts;
    check_close(tg::cat(list), {1, 0, 0});
}

BOOST_AUTO_TEST_CASE(expanding_array_takes_one_value_a_list_or_a_vector) {
    tg::ExpandingArray<2> one(3);
    BOOST_TEST((*one == std::array<int64_t, 2>{3, 3}));
    auto stride = tg::ExpandingArray<2>({2, 1});
    BOOST_TEST(stride->at(0) == 2);
    BOOST_TEST(stride->at(1) == 1);
    tg::ExpandingArray<3> from_vector(std::vector<int64_t>{1, 2, 3});
    BOOST_TEST(from_vector.size() == 3u);
    BOOST_TEST(tg::str(from_vector) == "[1, 2, 3]");
    BOOST_TEST(tg::str(tg::ExpandingArray<1>(4)) == "4");
    BOOST_TEST(message_of<tg::value_error>([] {
                   tg::ExpandingArray<2>({1, 2, 3});
               }) == "ExpandingArray: Expected 2 values, but instead got 3");
    // where LibTorch takes an ExpandingArray or an IntArrayRef: pools, reshape
    const tg::Tensor x = from_values({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 4});
    check_close(tg::max_pool2d(x, tg::ExpandingArray<2>({2, 2}), stride), {6, 7, 8});
    tg::ExpandingArray<2> shape({-1, 4});
    BOOST_TEST(tg::shape_str(tg::reshape(x, shape).sizes()) == "[2,4]");
}
