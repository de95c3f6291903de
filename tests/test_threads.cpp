/// The CPU backend splits large elementwise kernels and reductions over OpenBLAS's thread count
/// (Note [Elementwise threads] in src/backend/cpu/threads.cpp). Each element is computed by the
/// same code whichever thread runs it, so results with 2 threads must equal those with 1
/// exactly, for contiguous, transposed, broadcast and reduced operands. And user threads that
/// train at once, each from its own manual_seed, train exactly as one thread alone does (Note
/// [Per-thread generators] in tapegrad/generator.hpp). scripts/tsan.sh runs this suite under
/// ThreadSanitizer.
#define BOOST_TEST_MODULE test_threads
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_threads(void);

using namespace tgtest;

namespace {

/// Runs f with OpenBLAS (and so tapegrad's elementwise kernels) on `threads` threads.
std::vector<double> run_with(int threads, const std::function<tg::Tensor()>& f) {
    openblas_set_num_threads(threads);
    std::vector<double> v = values_of(f());
    openblas_set_num_threads(1);
    return v;
}

/// rtol 0: bit-identical. A positive rtol (times the largest |element|) is for results that pass
/// through OpenBLAS's own GEMMs where OpenBLAS itself splits a GEMM differently on 2 threads
/// (see blas_rtol).
void check_same_on_1_and_2_threads(const std::string& what, const std::function<tg::Tensor()>& f,
                                   double rtol = 0) {
    const std::vector<double> one = run_with(1, f), two = run_with(2, f);
    BOOST_TEST_CONTEXT(what) {
        BOOST_TEST_REQUIRE(one.size() == two.size());
        double scale = 0;  // the tolerance is relative to the result's largest element
        for (double v : one)
            scale = std::max(scale, std::abs(v));
        size_t differ = 0;
        for (size_t i = 0; i < one.size(); ++i)
            differ += !(std::abs(one[i] - two[i]) <= rtol * scale);
        BOOST_TEST(differ == 0u);
    }
}

/// 0 if OpenBLAS gives the same bits for an [m,k] x [k,n] product of dtype dt on 1 and 2
/// threads, else a float32 tolerance: which kernel OpenBLAS picks (OPENBLAS_CORETYPE, the CPU)
/// decides how it splits a GEMM over threads, and its Haswell SGEMM, which Debian's 0.3.21 picks
/// on AMD Zen 4, sums differently on 2 threads. That is OpenBLAS's, not tapegrad's: the checks
/// of what tapegrad computes around such a GEMM then allow for it.
double blas_rtol(tg::Dtype dt, int64_t m, int64_t k, int64_t n) {
#if defined(__SANITIZE_THREAD__)
    // OpenBLAS is not instrumented: a GEMM of its own on 2 threads (this probe's) is a race to
    // ThreadSanitizer through the memset it calls; under TSan the checks allow for it unprobed
    (void)dt, (void)m, (void)k, (void)n;
    return 1e-5;
#endif
    const tg::Tensor a = make_const({m, k}, 11).to(dt), b = make_const({k, n}, 12).to(dt);
    const std::vector<double> one = run_with(1, [&] { return tg::matmul(a, b); }),
                              two = run_with(2, [&] { return tg::matmul(a, b); });
    if (one == two)
        return 0;
    BOOST_TEST_MESSAGE("OpenBLAS's " << m << "x" << k << "x" << n
                                     << " GEMM differs on 2 threads: compared to 1e-5");
    return 1e-5;
}

}  // namespace

/// The window kernels' gathers (Note [Gathering adjoints] in backend/device_common/window.hpp):
/// each element is summed by one thread in a fixed order, so 2 threads give 1 thread's bits.
BOOST_AUTO_TEST_CASE(convolution_and_pooling_gradients_match_one_thread) {
    for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64}) {
        const std::string d = dt == tg::kFloat32 ? " f32" : " f64";
        const tg::Tensor w = make_const({16, 8, 3, 3}, 5).to(dt);
        auto input_grad = [&](auto&& f) {
            return [&, f] {
                tg::Tensor x = make_const({4, 8, 20, 18}, 6).to(dt).detach();
                x.requires_grad_(true);
                const tg::Tensor y = f(x);
                (y * make_const(y.sizes(), 7).to(dt)).sum().backward();
                return x.grad();
            };
        };
        // one GEMM per sample: [16,72] x [72,360] forward, [72,16] x [16,360] for dx
        check_same_on_1_and_2_threads(
            "conv2d forward" + d,
            [&] {
                return tg::conv2d(make_const({4, 8, 20, 18}, 6).to(dt), w, {}, 1, 1);
            },
            blas_rtol(dt, 16, 72, 360));
        check_same_on_1_and_2_threads(
            "conv2d input gradient" + d,
            input_grad([&](const tg::Tensor& x) { return tg::conv2d(x, w, {}, 1, 1); }),
            blas_rtol(dt, 72, 16, 360));
        // 12 samples: 3 chunks of the unfolded buffer, run side by side on 2 threads (Note
        // [Sample-parallel convolutions]); the weight gradient's blocks add in a fixed order
        const tg::Tensor x12 = make_const({12, 8, 20, 18}, 8).to(dt),
                         b = make_const({16}, 9).to(dt);
        check_same_on_1_and_2_threads("conv2d forward, 3 chunks" + d,
                                      [&] { return tg::conv2d(x12, w, b, 1, 1); });
        for (int which = 0; which < 3; ++which)
            check_same_on_1_and_2_threads(
                std::string(which == 0   ? "input"
                            : which == 1 ? "weight"
                                         : "bias") +
                    " gradient, 3 chunks" + d,
                [&, which] {
                    tg::Tensor x = x12.detach().requires_grad_(true);
                    tg::Tensor wl = w.detach().requires_grad_(true);
                    tg::Tensor bl = b.detach().requires_grad_(true);
                    const tg::Tensor y = tg::conv2d(x, wl, bl, 1, 1);
                    (y * make_const(y.sizes(), 10).to(dt)).sum().backward();
                    return which == 0 ? x.grad() : which == 1 ? wl.grad() : bl.grad();
                });
        check_same_on_1_and_2_threads(
            "max_pool2d overlapping backward" + d,
            input_grad([](const tg::Tensor& x) { return tg::max_pool2d(x, 3, 1, 1); }));
        check_same_on_1_and_2_threads(
            "avg_pool2d backward" + d,
            input_grad([](const tg::Tensor& x) { return tg::avg_pool2d(x, 3, 2, 1); }));
    }
}

/// 3-D convolutions a tile of windows at a time (Note [Depth tiles] in src/ops/conv_tiles.cpp,
/// here with 2000-byte tiles: a row of a depth): the forward and weight gradient over (sample,
/// tile) units, the weight gradient's blocks added in a fixed order, and the input gradient a
/// sample per thread, its tiles folded and added in order: 2 threads give 1 thread's bits. In
/// float32 on an AVX-512 CPU these convolutions take the dense kernels (Note [Direct dense
/// convolutions]: (sample, depth) units, dw's elements shared out) unless TG_CONV_DENSE=0:
/// both are checked.
BOOST_AUTO_TEST_CASE(tiled_conv3d_matches_one_thread) {
    setenv("TG_CONV_TILE_BYTES", "2000", 1);
    setenv("TG_CONV_DNNL", "0", 1);  // tapegrad's own kernels (oneDNN: the same bits per count)
    for (const char* dense : {"1", "0"})
        for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64}) {
            if (dense[0] == '0' && dt == tg::kFloat64)
                continue;  // float64 never takes the dense kernels
            setenv("TG_CONV_DENSE", dense, 1);
            const std::string d = std::string(dt == tg::kFloat32 ? " f32" : " f64") +
                                  (dense[0] == '0' ? " TG_CONV_DENSE=0" : "");
            const tg::Tensor x = make_const({3, 4, 5, 6, 7}, 21).to(dt),
                             w = make_const({5, 4, 3, 3, 3}, 22).to(dt),
                             b = make_const({5}, 23).to(dt);
            check_same_on_1_and_2_threads("conv3d forward, tiles" + d,
                                          [&] { return tg::conv3d(x, w, b, 1, 1); });
            for (int which = 0; which < 3; ++which)
                check_same_on_1_and_2_threads(
                    std::string(which == 0   ? "input"
                                : which == 1 ? "weight"
                                             : "bias") +
                        " gradient, tiles" + d,
                    [&, which] {
                        tg::Tensor xl = x.detach().requires_grad_(true);
                        tg::Tensor wl = w.detach().requires_grad_(true);
                        tg::Tensor bl = b.detach().requires_grad_(true);
                        const tg::Tensor y = tg::conv3d(xl, wl, bl, 1, 1);
                        (y * make_const(y.sizes(), 24).to(dt)).sum().backward();
                        return which == 0 ? xl.grad() : which == 1 ? wl.grad() : bl.grad();
                    });
        }
    unsetenv("TG_CONV_DENSE");
    unsetenv("TG_CONV_TILE_BYTES");
    unsetenv("TG_CONV_DNNL");
}

/// The convolutions without an unfolded buffer (Note [The convolution strategy by shape] in
/// src/ops/conv_direct.cpp): the depthwise kernels split planes (forward, input) or channels
/// (weight) over the kernel threads, the 1x1 GEMMs samples, the weight's in fixed blocks: 2
/// threads give 1 thread's bits.
BOOST_AUTO_TEST_CASE(direct_convolutions_match_one_thread) {
    setenv("TG_CONV_DNNL", "0", 1);  // tapegrad's own kernels (oneDNN: the same bits per count)
    for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64}) {
        const std::string d = dt == tg::kFloat32 ? " f32" : " f64";
        for (int pointwise = 0; pointwise < 2; ++pointwise) {
            const tg::Tensor x = make_const(
                                     pointwise ? tg::Shape{5, 8, 16, 20} : tg::Shape{4, 16, 40, 40},
                                     31)
                                     .to(dt),
                             w = make_const(
                                     pointwise ? tg::Shape{6, 8, 1, 1} : tg::Shape{16, 1, 3, 3}, 32)
                                     .to(dt);
            const int64_t groups = pointwise ? 1 : 16;
            const std::string what = std::string(pointwise ? "1x1" : "depthwise") + d;
            for (int which = 0; which < 3; ++which)
                check_same_on_1_and_2_threads(
                    what + (which == 0   ? " forward"
                            : which == 1 ? " input grad"
                                         : " weight grad"),
                    [&, which] {
                        tg::Tensor xl = x.detach().requires_grad_(true);
                        tg::Tensor wl = w.detach().requires_grad_(true);
                        const tg::Tensor y =
                            tg::conv2d(xl, wl, {}, 1, pointwise ? 0 : 1, 1, groups);
                        if (which == 0)
                            return y;
                        (y * make_const(y.sizes(), 33).to(dt)).sum().backward();
                        return which == 1 ? xl.grad() : wl.grad();
                    });
        }
    }
    unsetenv("TG_CONV_DNNL");
}

BOOST_AUTO_TEST_CASE(large_kernels_match_one_thread) {
    tg::NoGradGuard guard;
    const int64_t R = 300, C = 501;  // 150,300 elements: above the threshold, odd sizes
    for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64}) {
        const tg::Tensor a = make_const({R, C}, 1).to(dt), b = make_const({R, C}, 2).to(dt);
        const tg::Tensor row = make_const({C}, 3).to(dt), at = make_const({C, R}, 4).to(dt).t();
        const std::string d = dt == tg::kFloat32 ? " f32" : " f64";
        check_same_on_1_and_2_threads("tanh" + d, [&] { return tg::tanh(a); });
        check_same_on_1_and_2_threads("sigmoid transposed" + d, [&] { return tg::sigmoid(at); });
        check_same_on_1_and_2_threads("mul" + d, [&] { return a * b; });
        check_same_on_1_and_2_threads("add broadcast row" + d, [&] { return a + row; });
        check_same_on_1_and_2_threads("sub transposed" + d, [&] { return at - a; });
        check_same_on_1_and_2_threads("contiguous copy" + d, [&] { return at.contiguous(); });
        check_same_on_1_and_2_threads("flat" + d, [&] { return tg::exp(a.reshape({R * C})); });
        check_same_on_1_and_2_threads("where" + d, [&] { return tg::where(tg::gt(a, b), a, b); });
        check_same_on_1_and_2_threads("sum dim 0" + d, [&] { return a.sum({0}); });
        check_same_on_1_and_2_threads("sum dim 1" + d, [&] { return a.sum({1}); });
        check_same_on_1_and_2_threads("sum transposed" + d, [&] { return at.sum({1}); });
        check_same_on_1_and_2_threads("max dim 1" + d, [&] { return tg::amax(a, {1}); });
        check_same_on_1_and_2_threads("sum all" + d, [&] { return a.sum(); });
        check_same_on_1_and_2_threads("fill" + d, [&] {
            return tg::full({R, C}, 0.5, a.options());
        });
        check_same_on_1_and_2_threads("in-place add_" + d, [&] {
            tg::Tensor c = a.clone();
            c.add_(b, 0.25);
            return c;
        });
    }
}

BOOST_AUTO_TEST_CASE(adam_steps_match_one_thread) {
    // The optimizer step (the fused Adam kernels, 120k elements: split) runs on 1 or 2 threads.
    // The gradients come from a 1-thread GEMM either way: OpenBLAS's own GEMM may split its
    // reduction differently on 2 threads on some CPUs, which is not what this test is about.
    auto train = [](int threads) {
        tg::Tensor w = make_input({400, 300}, 5).to(tg::kFloat32).detach().requires_grad_(true);
        const tg::Tensor x = make_const({64, 300}, 6).to(tg::kFloat32);
        tg::optim::Adam opt({w}, tg::optim::AdamOptions(0.01));
        for (int i = 0; i < 3; ++i) {
            opt.zero_grad();
            openblas_set_num_threads(1);
            tg::tanh(tg::matmul(x, w.t())).pow(2).mean().backward();
            openblas_set_num_threads(threads);
            opt.step();
        }
        openblas_set_num_threads(1);
        return values_of(w.detach());
    };
    const std::vector<double> one = train(1), two = train(2);
    BOOST_TEST_REQUIRE(one.size() == two.size());
    size_t differ = 0;
    for (size_t i = 0; i < one.size(); ++i)
        differ += one[i] != two[i];
    BOOST_TEST(differ == 0u);
}

BOOST_AUTO_TEST_CASE(concurrent_callers) {
    // Two user threads running large kernels at once: one uses the pool, the other runs alone.
    tg::NoGradGuard guard;
    const tg::Tensor a = make_const({200, 1000}, 7).to(tg::kFloat32);
    const std::vector<double> expected = values_of(tg::tanh(a) * a);
    openblas_set_num_threads(2);
    std::vector<std::vector<double>> got(2);
    {
        std::vector<std::thread> ts;
        for (int t = 0; t < 2; ++t)
            ts.emplace_back([&, t] {
                tg::NoGradGuard g;
                for (int i = 0; i < 20; ++i)
                    got[size_t(t)] = values_of(tg::tanh(a) * a);
            });
        for (auto& th : ts)
            th.join();
    }
    openblas_set_num_threads(1);
    BOOST_TEST((got[0] == expected));
    BOOST_TEST((got[1] == expected));
}

BOOST_AUTO_TEST_CASE(concurrent_convolutions) {
    // Two user threads each run convolutions whose chunks go to the kernel threads with
    // OpenBLAS set to one thread meanwhile (cpu_parallel_blas): the regions nest and overlap,
    // and every result equals the one-thread result.
    const tg::Tensor x = make_const({12, 8, 20, 18}, 11).to(tg::kFloat32);
    const tg::Tensor w = make_const({16, 8, 3, 3}, 12).to(tg::kFloat32);
    auto step = [&] {
        tg::Tensor wl = w.detach().requires_grad_(true);
        tg::conv2d(x, wl, {}, 1, 1).pow(2).sum().backward();
        return values_of(wl.grad());
    };
    openblas_set_num_threads(1);
    const std::vector<double> expected = step();
    openblas_set_num_threads(2);
    std::vector<std::vector<double>> got(2);
    {
        std::vector<std::thread> ts;
        for (int t = 0; t < 2; ++t)
            ts.emplace_back([&, t] {
                for (int i = 0; i < 5; ++i)
                    got[size_t(t)] = step();
            });
        for (auto& th : ts)
            th.join();
    }
    openblas_set_num_threads(1);
    BOOST_TEST((got[0] == expected));
    BOOST_TEST((got[1] == expected));
}

namespace {

/// Threads wait at wait() until all `n` have arrived (C++17 has no std::barrier).
class Barrier {
public:
    explicit Barrier(int n) : n_(n) {}
    void wait() {
        std::unique_lock<std::mutex> l(mu_);
        const int gen = gen_;
        if (++arrived_ == n_) {
            arrived_ = 0;
            ++gen_;
            cv_.notify_all();
            return;
        }
        cv_.wait(l, [&] { return gen_ != gen; });
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    int n_, arrived_ = 0, gen_ = 0;
};

/// Seeds, builds a model with dropout, trains it for a few SGD steps and returns its parameters.
/// With `sync`, the threads running it take every step together, so their random draws
/// interleave.
std::vector<double> train_with_dropout(Barrier* sync) {
    tg::manual_seed(17);
    if (sync)
        sync->wait();  // every thread has seeded before any draws
    tg::nn::Sequential m(tg::nn::Linear(32, 64), tg::nn::ReLU(), tg::nn::Dropout(0.3),
                         tg::nn::Linear(64, 64), tg::nn::Tanh(), tg::nn::Dropout(0.2),
                         tg::nn::Linear(64, 8));
    tg::optim::SGD opt(m->parameters(), tg::optim::SGDOptions(0.05));
    const tg::Tensor x = tg::randn({16, 32});
    const tg::Tensor target = tg::randint(0, 8, {16});
    for (int step = 0; step < 10; ++step) {
        if (sync)
            sync->wait();
        opt.zero_grad();
        tg::cross_entropy(m->forward(x), target).backward();
        opt.step();
    }
    std::vector<double> out;
    for (const tg::Tensor& p : m->parameters()) {
        const std::vector<double> v = values_of(p.detach());
        out.insert(out.end(), v.begin(), v.end());
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(threads_training_with_dropout_match_one_thread) {
    const std::vector<double> alone = train_with_dropout(nullptr);
    Barrier sync(2);
    std::vector<std::vector<double>> got(2);
    {
        std::vector<std::thread> ts;
        for (size_t t = 0; t < 2; ++t)
            ts.emplace_back([&, t] { got[t] = train_with_dropout(&sync); });
        for (auto& th : ts)
            th.join();
    }
    for (size_t t = 0; t < 2; ++t) {
        BOOST_TEST_REQUIRE(got[t].size() == alone.size());
        size_t differ = 0;
        for (size_t i = 0; i < alone.size(); ++i)
            differ += got[t][i] != alone[i];
        BOOST_TEST(differ == 0u, "thread " << t << ": " << differ << " parameters differ");
    }
}

/// tg::set_num_threads sets OpenBLAS's threads and the pool's together (LibTorch's spelling),
/// and the result of a kernel does not depend on it.
BOOST_AUTO_TEST_CASE(set_num_threads_sets_blas_and_pool_together) {
    const int hw = std::max(1, int(std::thread::hardware_concurrency()));
    tg::set_num_threads(2);
    BOOST_TEST(openblas_get_num_threads() == 2);
    BOOST_TEST(tg::get_num_threads() == std::min(2, hw));
    const std::vector<double> two = values_of(tg::tanh(make_const({300, 300}, 3)).sum({0}));
    tg::set_num_threads(1);
    BOOST_TEST(openblas_get_num_threads() == 1);
    BOOST_TEST(tg::get_num_threads() == 1);
    BOOST_TEST(values_of(tg::tanh(make_const({300, 300}, 3)).sum({0})) == two,
               boost::test_tools::per_element());
    openblas_set_num_threads(2);  // the environment's and OpenBLAS's own setter count the same
    BOOST_TEST(tg::get_num_threads() == std::min(2, hw));
    BOOST_CHECK_THROW(tg::set_num_threads(0), tg::value_error);
    BOOST_TEST(tg::get_num_threads() == std::min(2, hw));  // a refused call changes nothing
    tg::set_num_threads(1);
}
