/// bench_lstm_tg / bench_lstm_torch [options]: one side of bench_lstm in a process of its own,
/// each linking one of tapegrad and LibTorch; prints one `result key=value ...` line.
#include <cstdio>
#include <exception>

#include "bench_lstm.hpp"

int main(int argc, char** argv) {
    try {
        bench::lstm::run_side(bench::lstm::parse_child(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
