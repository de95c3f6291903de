/// bench_ddp: data-parallel weak scaling of the seed MLP step (issue 3's shapes: a 2048x2048
/// input per rank, 2048 -> 1024 tanh -> 256 sigmoid -> 10 sigmoid, MSE, SGD, float32) through
/// nn::DistributedDataParallel on MPI. 1 rank x 1 thread against N ranks x 1 thread at the same
/// per-rank batch, each run as `mpirun -np R bench_ddp --child ...`, the configurations
/// alternated over --rounds rounds; medians. Reports the efficiency step(1 rank) / step(N
/// ranks) (bar: >= 0.9), the bytes all-reduced per step against the parameter bytes (must be
/// equal), the fraction of all-reduce time hidden behind backward (bar: >= 50%), and one step's
/// timeline per rank (--timeline CSV: forward, backward, each bucket's all-reduce, the step),
/// which scripts/plot_timeline.gp draws.
/// Options: --ranks-list 1,2 --rounds 3 --steps 10 --warmup 3 --threads 1 --cap-mb 25,1
/// --mpirun "mpirun --oversubscribe" --tag HOST --csv F --md F --plot F --timeline F.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"
#include "tapegrad/tapegrad.hpp"

namespace bench {
namespace {

namespace dist = tg::distributed;

double ms_since(double t0, double t) {
    return 1e3 * (t - t0);
}

double steady() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// One rank of one configuration: times `steps` steps after `warmup`; rank 0 prints the result
/// line; with timeline, every rank's last step goes to rank 0, which appends it to the file.
int child(int argc, char** argv) {
    dist::init(&argc, &argv);
    const int threads = std::stoi(arg_value(argc, argv, "--threads", "1"));
    const int steps = std::stoi(arg_value(argc, argv, "--steps", "10"));
    const int warmup = std::stoi(arg_value(argc, argv, "--warmup", "3"));
    const double cap = std::stod(arg_value(argc, argv, "--cap-mb", "25"));
    const std::string timeline = arg_value(argc, argv, "--timeline", "");
    const int64_t batch = 2048;
    tg::set_num_threads(threads);
    tg::manual_seed(1);
    tg::nn::Sequential model(tg::nn::Linear(2048, 1024), tg::nn::Tanh(), tg::nn::Linear(1024, 256),
                             tg::nn::Sigmoid(), tg::nn::Linear(256, 10), tg::nn::Sigmoid());
    tg::nn::DistributedDataParallel ddp(
        model, tg::nn::DistributedDataParallelOptions().bucket_cap_mb(cap));
    tg::optim::SGD opt(model->parameters(), 0.01);
    tg::manual_seed(2 + uint64_t(dist::rank()));
    const tg::Tensor x = tg::randn({batch, 2048}), y = tg::rand({batch, 10});
    int64_t param_bytes = 0;
    for (const tg::Tensor& p : model->parameters())
        param_bytes += p.numel() * 4;
    std::vector<double> step_s;
    double t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    tg::nn::DistributedDataParallelStats before;
    for (int i = 0; i < warmup + steps; ++i) {
        if (i == warmup)
            before = ddp.stats();
        t0 = steady();
        opt.zero_grad();
        tg::Tensor loss = tg::mse_loss(ddp(x), y);
        t1 = steady();
        loss.backward();
        t2 = steady();
        opt.step();
        t3 = steady();
        if (i >= warmup)
            step_s.push_back(t3 - t0);
    }
    const auto s = ddp.stats();
    const double ar = s.all_reduce_seconds - before.all_reduce_seconds;
    const double hidden = s.hidden_seconds - before.hidden_seconds;
    const double exposed = s.exposed_seconds - before.exposed_seconds;
    const uint64_t bytes = s.bytes - before.bytes;
    // the last step's timeline, from every rank: t0 t1 backward_end t2 t3, then per bucket
    // ready, its number of all-reduces and their (start, end); the same layout on every rank
    const auto& last = s.last;
    std::vector<double> row{t0, t1, last.backward_end, t2, t3};
    for (const auto& b : last.buckets) {
        row.push_back(b.ready);
        row.push_back(double(b.pieces.size()));
        for (const auto& [start, end] : b.pieces) {
            row.push_back(start);
            row.push_back(end);
        }
    }
    // The same all-reduces alone, after a barrier: what they cost when nothing hides them.
    std::vector<tg::Tensor> flats;
    for (const auto& b : last.buckets)
        flats.push_back(tg::zeros({int64_t(b.bytes / 4)}));
    std::vector<double> alone;
    for (int i = 0; i < steps; ++i) {
        dist::barrier();
        const double a0 = steady();
        std::vector<std::shared_ptr<dist::Work>> works;
        for (const tg::Tensor& f : flats)
            works.push_back(dist::all_reduce_async(f));
        for (auto& w : works)
            w->wait();
        alone.push_back(steady() - a0);
    }
    std::vector<tg::Tensor> rows;
    for (int r = 0; r < dist::world_size(); ++r)
        rows.push_back(tg::empty({int64_t(row.size())}, tg::kFloat64));
    dist::all_gather(rows, tg::tensor(row, tg::kFloat64));
    if (dist::rank() == 0) {
        if (!timeline.empty()) {
            FILE* f = std::fopen(timeline.c_str(), "a");
            const double origin = rows[0].to_vector<double>()[0];
            for (int r = 0; r < dist::world_size(); ++r) {
                auto v = rows[size_t(r)].to_vector<double>();
                auto span = [&](const char* what, double a, double b) {
                    std::fprintf(f, "%d,%d,%s,%.3f,%.3f\n", dist::world_size(), r, what,
                                 ms_since(origin, a), ms_since(origin, b));
                };
                span("forward", v[0], v[1]);
                span("backward", v[1], v[2]);
                span("optimizer step", v[3], v[4]);
                for (size_t b = 5; b + 1 < v.size();) {
                    span("bucket ready", v[b], v[b]);
                    const size_t n = size_t(v[b + 1]);
                    for (size_t k = 0; k < n; ++k)
                        span("all-reduce", v[b + 2 + 2 * k], v[b + 3 + 2 * k]);
                    b += 2 + 2 * n;
                }
            }
            std::fclose(f);
        }
        print_result({{"step_ms", ms_list(step_s)},
                      {"world", std::to_string(dist::world_size())},
                      {"buckets", std::to_string(last.buckets.size())},
                      {"bytes_per_step", std::to_string(bytes / uint64_t(steps))},
                      {"param_bytes", std::to_string(param_bytes)},
                      {"all_reduce_ms", fmt(1e3 * ar / steps, 3)},
                      {"hidden_ms", fmt(1e3 * hidden / steps, 3)},
                      {"exposed_ms", fmt(1e3 * exposed / steps, 3)},
                      {"alone_ms", fmt(1e3 * median(alone), 3)}});
    }
    dist::finalize();
    return 0;
}

int driver(int argc, char** argv) {
    const auto ranks = parse_list(arg_value(argc, argv, "--ranks-list", "1,2"));
    const auto caps = parse_list(arg_value(argc, argv, "--cap-mb", "25,1"));
    const int rounds = std::stoi(arg_value(argc, argv, "--rounds", "3"));
    const std::string steps = arg_value(argc, argv, "--steps", "10");
    const std::string warmup = arg_value(argc, argv, "--warmup", "3");
    const std::string threads = arg_value(argc, argv, "--threads", "1");
    const std::string mpirun = arg_value(argc, argv, "--mpirun", "mpirun --oversubscribe");
    const std::string tag = arg_value(argc, argv, "--tag", "this host");
    const std::string timeline = arg_value(argc, argv, "--timeline", "");
    const std::string self = self_dir() + "/bench_ddp";
    std::vector<Config> cs;
    for (double cap : caps)
        for (double r : ranks) {
            Config c;
            c.key = std::to_string(int(r)) + " rank(s), buckets of " + fmt(cap, 0) + " MiB";
            c.side = std::to_string(int(r));
            c.variant = fmt(cap, 0);
            c.cmd = "OPENBLAS_NUM_THREADS=" + threads + " " + mpirun + " -np " +
                    std::to_string(int(r)) + " " + self + " --child --threads " + threads +
                    " --steps " + steps + " --warmup " + warmup + " --cap-mb " + fmt(cap, 3);
            cs.push_back(c);
        }
    run_rounds(cs, rounds, "bench_ddp");
    if (!timeline.empty()) {  // one more run of each multi-rank configuration, for its timeline
        write_file(timeline, "world,rank,what,start_ms,end_ms\n");
        for (const Config& c : cs)
            if (c.side != "1" && c.variant == fmt(caps.back(), 0))
                run_child(c.cmd + " --timeline " + timeline);
    }
    Table t;
    t.header = {"bucket cap",
                "ranks x threads",
                "step ms (median)",
                "round medians",
                "efficiency vs 1 rank",
                "buckets",
                "bytes all-reduced per step",
                "parameter bytes",
                "all-reduces alone (ms)",
                "exposed after backward (ms)",
                "hidden behind backward",
                "all-reduce span before backward's end"};
    Table plot;
    plot.header = {"bucket cap"};
    for (double r : ranks)
        plot.header.push_back(std::to_string(int(r)) + " rank(s) x " + threads + " thread");
    for (double cap : caps) {
        const Config* one = nullptr;
        std::vector<std::string> prow{fmt(cap, 0) + " MiB"};
        for (const Config& c : cs)
            if (c.variant == fmt(cap, 0) && c.side == "1")
                one = &c;
        for (const Config& c : cs) {
            if (c.variant != fmt(cap, 0))
                continue;
            const double med = c.med();
            const double ar = median(c.pooled("all_reduce_ms"));
            const double hid = median(c.pooled("hidden_ms"));
            const double alone = median(c.pooled("alone_ms"));
            const double exposed = median(c.pooled("exposed_ms"));
            prow.push_back(fmt(med, 2));
            const bool multi = c.side != "1";
            t.add({fmt(cap, 0) + " MiB", c.side + " x " + threads, fmt(med, 2), c.round_medians(),
                   one ? fmt(one->med() / med, 3) : "", c.get("buckets"), c.get("bytes_per_step"),
                   c.get("param_bytes"), multi ? fmt(alone, 2) : "", fmt(exposed, 2),
                   multi ? fmt(100 * std::max(0.0, 1 - exposed / alone), 0) + "%" : "",
                   multi ? fmt(100 * hid / std::max(ar, 1e-12), 0) + "%" : ""});
        }
        plot.add(prow);
    }
    const std::string md =
        "# Data-parallel MLP step (" + tag + ")\n\n" + machine_markdown() +
        "\nThe seed MLP step (2048x2048 input per rank, 2048 -> 1024 tanh -> 256 sigmoid -> 10 "
        "sigmoid, MSE, SGD, float32) through nn::DistributedDataParallel, weak scaling: the "
        "same batch per rank, one thread per rank, each configuration a `" +
        mpirun + " -np R` job, alternated over " + std::to_string(rounds) +
        " rounds. Efficiency is step(1 rank) / step(R ranks) at the same bucket cap. "
        "\"All-reduces alone\": the step's bucket all-reduces run by themselves after a barrier "
        "(what the communication costs when nothing hides it); \"exposed\": how long the end "
        "of backward waited for them; hidden = 1 - exposed / alone. The last column is the "
        "share of the communication thread's all-reduce time (waiting for the other ranks "
        "included) that fell before backward's last node finished.\n\n" +
        t.markdown();
    write_file(arg_value(argc, argv, "--md", ""), md);
    write_file(arg_value(argc, argv, "--csv", ""), t.csv());
    write_file(arg_value(argc, argv, "--plot", ""), plot.csv());
    std::cout << md;
    return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
    return bench::child_or_driver(argc, argv, "bench_ddp", bench::child, bench::driver);
}
