/// bench_autograd_side_tg / bench_autograd_side_torch [options]: one side of bench_autograd in a
/// process of its own (TG_BENCH_SIDE_TORCH selects LibTorch; each executable links one library).
/// Runs --warmup chains, then --reps timed chains of --ops ops on --elements-element tensors
/// (--leaves 1: a and b require grad), on --threads threads, and prints one line
///   result fwd_s=.. bwd_s=.. nograd_s=.. checksum=.. (one value per timed chain)
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bench_autograd.hpp"
#include "bench_common.hpp"
#include "bench_env.hpp"

using namespace bench;

namespace {

std::string join(const std::vector<double>& v) {
    std::string s;
    for (double x : v)
        s += (s.empty() ? "" : ",") + fmt(x, 9);
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        ChainConfig c;
        c.n = std::stoll(arg_value(argc, argv, "--elements", "1"));
        c.ops = std::stoll(arg_value(argc, argv, "--ops", "10000"));
        c.leaves_grad = arg_value(argc, argv, "--leaves", "0") == "1";
        const int threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
        const int warmup = std::stoi(arg_value(argc, argv, "--warmup", "3"));
        const int reps = std::stoi(arg_value(argc, argv, "--reps", "10"));
        openblas_set_num_threads(threads);
#ifdef TG_BENCH_SIDE_TORCH
        const std::string desc = torch_setup(threads);
        auto chain = torch_chain;
#else
        const std::string desc = "tapegrad";
        auto chain = tg_chain;
#endif
        for (int i = 0; i < warmup; ++i)
            chain(c);
        std::vector<double> fwd, bwd, nograd;
        double checksum = 0;
        for (int r = 0; r < reps; ++r) {
            const ChainTimes t = chain(c);
            fwd.push_back(t.fwd), bwd.push_back(t.bwd), nograd.push_back(t.fwd_nograd);
            checksum = t.checksum;
        }
        std::string d = desc;
        for (char& ch : d)
            if (ch == ' ')
                ch = '_';
        std::printf("result fwd_s=%s bwd_s=%s nograd_s=%s checksum=%.6f setup=%s\n",
                    join(fwd).c_str(), join(bwd).c_str(), join(nograd).c_str(), checksum,
                    d.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
