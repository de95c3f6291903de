/// bench_peak: the host's SGEMM peak, the yardstick of the compute benchmarks (issue 31). One
/// large square row-major cblas_sgemm (C = A·B, --n 2048 by default: 17.2 GFLOP, far past the
/// sizes where OpenBLAS's blocking reaches its asymptotic rate) on --threads OpenBLAS threads,
/// --warmup untimed then --reps timed calls; prints `result threads=T gflops=<per call>` for the
/// drivers (peak_config() in bench_driver.hpp). It is a process of its own, started in the same
/// rounds and with the same environment as the steps it is the yardstick of.
#include <cblas.h>

#include <string>
#include <vector>

#include "bench_common.hpp"

int main(int argc, char** argv) {
    using namespace bench;
    const int threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    const int n = std::stoi(arg_value(argc, argv, "--n", "2048"));
    const int reps = std::stoi(arg_value(argc, argv, "--reps", "7"));
    const int warmup = std::stoi(arg_value(argc, argv, "--warmup", "3"));
    openblas_set_num_threads(threads);
    Rng rng(11);
    const size_t nn = size_t(n) * size_t(n);
    std::vector<float> a = uniform_vec(rng, nn, -1.f, 1.f), b = uniform_vec(rng, nn, -1.f, 1.f),
                       c(nn, 0.f);
    const double flop = 2.0 * n * double(n) * n;
    std::string gflops;
    for (int r = 0; r < warmup + reps; ++r) {
        const double t0 = now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(),
                    n, 0.f, c.data(), n);
        const double t = now_s() - t0;
        if (r >= warmup)
            gflops += (gflops.empty() ? "" : ",") + fmt(flop / t * 1e-9, 2);
    }
    print_result({{"side", "peak"},
                  {"threads", std::to_string(openblas_get_num_threads())},
                  {"n", std::to_string(n)},
                  {"gflops", gflops},
                  {"checksum", fmt(double(c[nn / 2]), 4)}});
    return 0;
}
