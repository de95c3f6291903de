/// bench_gpt_tg / bench_gpt_torch [options]: one side of bench_gpt in a process of its own, each
/// linking one of tapegrad and LibTorch; prints one `result key=value ...` line.
#include <cstdio>
#include <exception>

#include "bench_gpt.hpp"

int main(int argc, char** argv) {
    try {
        bench::gpt::run_side(bench::gpt::parse_child(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
