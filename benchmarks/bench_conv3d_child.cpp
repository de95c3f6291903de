/// bench_conv3d_tg / bench_conv3d_torch [options]: one side of bench_conv3d in a process of its
/// own; prints one `result key=value ...` line.
#include <cstdio>
#include <exception>

#include "bench_conv3d.hpp"

int main(int argc, char** argv) {
    try {
        bench::conv3d::run_side(bench::conv3d::parse_child(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
