/// Tests of the tape (src/autograd): deep graphs (backward and destruction without stack
/// overflow) and memory release (no growth in forward loops, saved tensors freed by backward,
/// independent graphs).
#define BOOST_TEST_MODULE test_engine_memory
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "test_util.hpp"

using tgtest::check_close;
using tgtest::check_throws;
using tgtest::make_const;
using tgtest::make_input;
using tgtest::values_of;

// ============================================================================ deep graphs

BOOST_AUTO_TEST_CASE(deep_chain_backward_and_destruction_without_stack_overflow) {
    tg::Tensor x = make_input({1}, 36);
    {
        tg::Tensor y = x;
        for (int i = 0; i < 100000; ++i)
            y = (i % 2) ? y * 1.0 : y + 1e-6;
        tg::Tensor loss = y.sum();
        loss.backward();
        check_close(x.grad(), {1.0}, 1e-12, 0);
    }  // the released graph is destroyed here
    {
        tg::Tensor y = x;
        for (int i = 0; i < 100000; ++i)
            y = y * 1.0;
    }  // an un-backpropagated graph of 100k nodes is destroyed here
    BOOST_TEST(true);
}

// ============================================================================ memory

BOOST_AUTO_TEST_CASE(forward_loop_without_no_grad_does_not_grow_memory) {
    tg::Tensor w = make_input({16, 8}, 37);
    tg::Tensor x = make_const({64, 16}, 38);
    const int64_t start = tg::memory::stats().current_bytes;
    for (int i = 0; i < 50; ++i) {
        tg::Tensor loss = tg::tanh(tg::matmul(x, w)).sum();
        BOOST_TEST(loss.requires_grad());
    }
    BOOST_TEST(tg::memory::stats().current_bytes == start);
    for (int i = 0; i < 50; ++i)
        (void)tg::sigmoid(tg::matmul(x, w) * 2.0).sum().item<double>();
    BOOST_TEST(tg::memory::stats().current_bytes == start);
}

BOOST_AUTO_TEST_CASE(backward_releases_saved_tensors) {
    tg::Tensor x = make_const({512, 8}, 39);
    tg::Tensor w = make_input({8, 8}, 40);
    const int64_t start = tg::memory::stats().current_bytes;
    int64_t before = 0, after = 0;
    {
        tg::Tensor h = tg::tanh(tg::matmul(x, w));  // [512,8] float64 = 32768 bytes, saved twice
        tg::Tensor loss = (h * h).sum();
        h = tg::Tensor();
        before = tg::memory::stats().current_bytes;
        BOOST_TEST(before - start >= 32768);
        loss.backward();
        after = tg::memory::stats().current_bytes;
        // the saved activations are gone; only w.grad ([8,8] = 512 bytes) was added
        BOOST_TEST(before - after >= 32768 - 512 - 256,
                   "before " << before << " after " << after << " (start " << start << ")");
    }
    // only w.grad remains
    BOOST_TEST(tg::memory::stats().current_bytes - start <= 1024);
    BOOST_TEST(tg::memory::stats().peak_bytes >= before);
}

BOOST_AUTO_TEST_CASE(independent_losses_have_independent_graphs) {
    tg::Tensor x = make_input({3}, 41);
    tg::Tensor l1 = (x * 2.0).sum();
    tg::Tensor l2 = (tg::exp(x) * 3.0).sum();
    l1.backward();
    BOOST_CHECK_NO_THROW(l2.backward());  // releasing l1's graph did not touch l2's
    std::vector<double> e;
    for (double v : values_of(x))
        e.push_back(2.0 + 3.0 * std::exp(v));
    check_close(x.grad(), e, 1e-12, 1e-12);
    check_throws<tg::autograd_error>([&] { l1.backward(); }, {"retain_graph"}, "l1 again");
}

BOOST_AUTO_TEST_CASE(a_memory_limit_refuses_allocations_above_it) {
    struct Unlimit {  // whatever happens, the rest of the suite runs without a limit
        ~Unlimit() { tg::memory::set_limit(0); }
    } unlimit;
    BOOST_TEST(tg::memory::limit() == 0);
    const int64_t held = tg::memory::stats().current_bytes;
    tg::memory::set_limit(held + (1 << 20));
    BOOST_TEST(tg::memory::limit() == held + (1 << 20));
    tg::Tensor half = tg::zeros({(1 << 19) / 8}, tg::kFloat64);  // 512 KiB fits
    try {
        tg::Tensor more = tg::zeros({(1 << 20) / 8}, tg::kFloat64);  // 1 MiB more does not
        BOOST_TEST(false, "no out_of_memory");
    } catch (const tg::out_of_memory& e) {
        const std::string msg = e.what();
        BOOST_TEST(msg.find("cpu") != std::string::npos, msg);
        BOOST_TEST(msg.find("cannot allocate 1048576 bytes") != std::string::npos, msg);
        BOOST_TEST(
            msg.find("is " + std::to_string(held + (1 << 20)) + " bytes") != std::string::npos,
            msg);
    }
    BOOST_TEST(tg::memory::stats().current_bytes == held + (1 << 19));  // nothing allocated
    tg::Tensor twice = half * 2.0;  // up to the limit exactly fits
    BOOST_TEST(tg::memory::stats().current_bytes == held + (1 << 20));
    BOOST_CHECK_THROW((void)(half * 3.0), tg::out_of_memory);  // an op's output counts too
    twice = tg::Tensor();
    (void)(half.narrow(0, 0, 4) * 2.0).sum().item<double>();  // small ones still fit
    tg::memory::set_limit(-1);                                // no limit
    BOOST_TEST(tg::memory::limit() == 0);
    tg::Tensor more = tg::zeros({(1 << 20) / 8}, tg::kFloat64);
    BOOST_TEST(more.numel() == (1 << 20) / 8);
}
