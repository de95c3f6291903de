/// bench_cnn_epoch_tg / bench_cnn_epoch_torch [options]: one side of bench_cnn_epoch in a
/// process of its own (bench_cnn.hpp's Options); prints one `result key=value ...` line.
#include <cstdio>
#include <exception>

#include "bench_cnn.hpp"
#include "bench_env.hpp"

int main(int argc, char** argv) {
    using namespace bench;
    try {
        const cnn::Options o = cnn::parse_options(argc, argv);
        openblas_set_num_threads(o.threads);
        const cnn::Data d = cnn::load_train(o.data);
        const cnn::Timing t = cnn::run_side(o, d);
        std::vector<std::pair<std::string, std::string>> kv = {
            {"blas_threads", std::to_string(openblas_get_num_threads())},
            {"batches", std::to_string(o.batches)},
            {"epoch_ms", ms_list(t.epoch_s)},
            {"loss", fmt(t.last_loss, 4)}};
        kv.insert(kv.end(), t.info.begin(), t.info.end());
        print_result(kv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 1;
    }
    return 0;
}
