/// bench_conv_suite_tg / bench_conv_suite_torch [options]: one side of bench_conv_suite in a
/// process of its own (bench_conv_suite.hpp's ChildOptions); prints one `result` line.
#include <cstdio>
#include <exception>

#include "bench_conv_suite.hpp"

int main(int argc, char** argv) {
    try {
        bench::suite::run_side(bench::suite::parse_child(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
