/// bench_conv_tg / bench_conv_torch / bench_conv_gemm [options]: one side of bench_conv in a
/// process of its own, each linking one of tapegrad, LibTorch and raw OpenBLAS (the side's
/// translation unit); prints one `result key=value ...` line (bench_conv.hpp's ChildOptions).
#include <cstdio>
#include <exception>

#include "bench_conv.hpp"

int main(int argc, char** argv) {
    try {
        bench::conv::run_side(bench::conv::parse_child(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
