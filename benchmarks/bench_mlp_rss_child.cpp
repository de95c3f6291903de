/// bench_mlp_rss_tg / bench_mlp_rss_torch MODE [THREADS]: one peak-RSS child of
/// bench_mlp_rss, in an executable that links only one of the two libraries
/// (TG_BENCH_RSS_TORCH selects LibTorch), so its VmHWM is that library's alone.
/// MODE is libs | params | step | steps3; prints one `impl=... mode=... VmHWM_kB=...` line.
#include <cstdio>
#include <exception>
#include <string>

#include "bench_mlp.hpp"

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s libs|params|step|steps3 [threads]\n", argv[0]);
        return 2;
    }
    try {
        const int threads = argc > 2 ? std::stoi(argv[2]) : 1;
#ifdef TG_BENCH_RSS_TORCH
        bench::torch_rss_child(argv[1], threads);
#else
        bench::tg_rss_child(argv[1], threads);
#endif
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
