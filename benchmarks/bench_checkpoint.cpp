// bench_checkpoint: peak memory and step time of a deep MLP trained without
// checkpointing, with √n segments and with the memory-budget planner (docs/checkpointing.md).
//
//   bench_checkpoint [--layers 64] [--width 1024] [--batch 256] [--reps 9] [--out DIR] [--tag HOST]
//
// Memory is tapegrad's allocator statistics: peak_bytes during one training step (forward,
// backward, SGD step) minus current_bytes when the step starts, with the gradients allocated
// (zero_grad(false)). That is the quantity the planner's budget bounds. LibTorch has no
// allocator statistics on the CPU: its row is the growth of the peak RSS (VmHWM after
// /proc/self/clear_refs) over the RSS at the start of a steady-state step, measured in a child
// process with glibc's mmap threshold fixed at 128 KiB so freed activations return to the OS.
//
// This file alone includes LibTorch; the child (`--torch-child`) touches nothing of tapegrad.
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <tapegrad/nn.hpp>
#include <tapegrad/optim.hpp>
#include <tapegrad/tapegrad.hpp>

#include "bench_env.hpp"

namespace {

struct Args {
    int layers = 64, width = 1024, batch = 256, reps = 9;
    std::string out = "benchmarks/results";
    std::string name = "checkpoint";  // the files' name: checkpoint_<host> with --tag
};

double mib(int64_t b) {
    return double(b) / (1 << 20);
}

const char* const kBarNote =
    "Reading the table: activation memory is what checkpointing trades for recomputation. With "
    "k segments of an n-layer chain, single-level checkpointing keeps about k - 1 boundaries "
    "plus one segment's activations, 2 sqrt(n) against n at best. The step peak also holds "
    "what checkpointing does not touch: the transient gradients of the layer being "
    "differentiated (dy and dx, 1 MiB each here) and, without checkpointing, the network's "
    "output, which the caller holds. So the step-peak cut of sqrt(n) equal segments stays "
    "below its activation cut. The planner places its boundaries from the measured per-layer "
    "profile, with shorter segments where more boundaries are alive, and passes 4x on the "
    "step peak too at the 25% budget and below.\n";

// ---------------------------------------------------------------- LibTorch child (RSS growth)
int torch_child(const Args& a) {
    torch::set_num_threads(1);
    torch::manual_seed(0);
    torch::nn::Sequential net;
    for (int i = 0; i < a.layers; ++i) {
        net->push_back(torch::nn::Linear(a.width, a.width));
        net->push_back(torch::nn::Tanh());
    }
    torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(1e-3));
    const auto x = torch::randn({a.batch, a.width}), y = torch::zeros({a.batch, a.width});
    auto step = [&] {
        opt.zero_grad();  // LibTorch 1.13: zeroes, keeps the gradients allocated
        torch::mse_loss(net->forward(x), y).backward();
        opt.step();
    };
    step();  // allocates the gradients
    std::vector<double> growth;
    for (int r = 0; r < 3; ++r) {
        { std::ofstream("/proc/self/clear_refs") << "5"; }  // resets VmHWM to VmRSS
        const long before = bench::proc_status_kib("VmRSS");
        step();
        growth.push_back(double(bench::proc_status_kib("VmHWM") - before));
    }
    std::cout << "torch_rss_growth_kib " << bench::median(growth) << "\n";
    return 0;
}

/// Runs `self --torch-child` with GLIBC_TUNABLES set; returns the RSS growth in bytes or -1.
int64_t torch_rss_growth(const char* self, const Args& a) {
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=131072", 1);
        const std::string l = std::to_string(a.layers), w = std::to_string(a.width),
                          b = std::to_string(a.batch);
        execl(self, self, "--torch-child", "--layers", l.c_str(), "--width", w.c_str(), "--batch",
              b.c_str(), (char*)nullptr);
        _exit(127);
    }
    close(fd[1]);
    std::string out;
    char buf[256];
    ssize_t k;
    while ((k = read(fd[0], buf, sizeof buf)) > 0)
        out.append(buf, size_t(k));
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const auto at = out.find("torch_rss_growth_kib ");
    if (at == std::string::npos)
        return -1;
    return int64_t(std::stod(out.substr(at + 21)) * 1024);
}

// ---------------------------------------------------------------- tapegrad runs
struct Row {
    std::string config;
    int64_t budget = 0;  // 0: none
    tg::nn::CheckpointPlan plan;
    int64_t measured = 0;
    int64_t saved = 0;  // measured peak of activation memory (memory::Stats::peak_saved_bytes)
    double median_s = 0, min_s = 0;
    std::string note;
    bool reentrant = true;  // false: checkpoint_sequential(..., use_reentrant=false)
};

struct Bench {
    tg::nn::Sequential net;
    tg::Tensor x, y;
    std::unique_ptr<tg::optim::SGD> opt;

    struct Measured {
        int64_t peak = 0;   // peak above the starting live bytes
        int64_t saved = 0;  // peak of activation memory (bytes kept for backward)
        double seconds = 0;
    };
    /// One training step following `plan`.
    Measured step(const tg::nn::CheckpointPlan& plan, bool reentrant = true) {
        opt->zero_grad(false);
        const auto s0 = tg::memory::stats();
        tg::memory::reset_peak();
        const double t0 = bench::now_s();
        tg::Tensor out = tg::nn::checkpoint_sequential(net, plan, x, reentrant);
        tg::mse_loss(out, y).backward();
        opt->step();
        const double t = bench::now_s() - t0;
        const auto s1 = tg::memory::stats();
        return {s1.peak_bytes - s0.current_bytes, s1.peak_saved_bytes - s0.saved_bytes, t};
    }

    /// One warm-up step per row, then `reps` rounds of one step per row (interleaved, so load
    /// from other processes hits every row alike): the largest peak and the median time.
    void run(std::vector<Row>& rows, int reps) {
        std::vector<std::vector<double>> times(rows.size());
        for (Row& r : rows)
            if (r.note.empty())
                step(r.plan, r.reentrant);
        for (int i = 0; i < reps; ++i)
            for (size_t k = 0; k < rows.size(); ++k) {
                const size_t j = (k + size_t(i)) % rows.size();  // rotate the order
                if (!rows[j].note.empty())
                    continue;
                const Measured m = step(rows[j].plan, rows[j].reentrant);
                rows[j].measured = std::max(rows[j].measured, m.peak);
                rows[j].saved = std::max(rows[j].saved, m.saved);
                times[j].push_back(m.seconds);
            }
        for (size_t j = 0; j < rows.size(); ++j) {
            Row& r = rows[j];
            if (!r.note.empty())
                continue;
            r.median_s = bench::median(times[j]);
            r.min_s = bench::min_of(times[j]);
            std::cerr << r.config << ": peak " << bench::fmt(mib(r.measured), 1)
                      << " MiB (predicted " << bench::fmt(mib(r.plan.predicted_peak_bytes), 1)
                      << "), step " << bench::fmt(r.median_s, 3) << " s\n";
        }
    }
};

Args parse(int argc, char** argv, bool& child) {
    Args a;
    child = false;
    bench::parse_args(argc, argv,
                      {{"--layers", [&](const std::string& v) { a.layers = std::stoi(v); }},
                       {"--width", [&](const std::string& v) { a.width = std::stoi(v); }},
                       {"--batch", [&](const std::string& v) { a.batch = std::stoi(v); }},
                       {"--reps", [&](const std::string& v) { a.reps = std::stoi(v); }},
                       {"--out", [&](const std::string& v) { a.out = v; }},
                       {"--tag", [&](const std::string& v) { a.name = "checkpoint_" + v; }}},
                      {{"--torch-child", [&] { child = true; }}});
    return a;
}

}  // namespace

int main(int argc, char** argv) {
    bool child = false;
    const Args a = parse(argc, argv, child);
    if (child)
        return torch_child(a);

    Bench b;
    tg::manual_seed(0);
    for (int i = 0; i < a.layers; ++i) {
        b.net->push_back(tg::nn::Linear(a.width, a.width));
        b.net->push_back(tg::nn::Tanh());
    }
    b.x = tg::randn({a.batch, a.width});
    b.y = tg::zeros({a.batch, a.width});
    b.opt = std::make_unique<tg::optim::SGD>(b.net->parameters(), tg::optim::SGDOptions(1e-3));
    for (tg::Tensor& p : b.net->parameters())
        p.set_grad(tg::zeros_like(p));
    const auto prof = tg::nn::profile_sequential(b.net, b.x);
    const size_t n = prof.layers.size();

    // the unplanned peak (the reference of the budgets) is measured first, alone
    std::vector<Row> rows(1);
    rows[0].config = "none";
    rows[0].plan.segments.push_back({0, n, false});
    rows[0].plan = tg::nn::predict(prof, rows[0].plan);
    b.step(rows[0].plan);
    const int64_t unplanned = b.step(rows[0].plan).peak;
    rows.push_back(Row{"sqrt(n)", 0, tg::nn::sqrt_plan(prof), 0, 0, 0, 0, ""});
    Row nr = rows.back();  // the same segments through the non-reentrant checkpoint
    nr.config = "sqrt(n) non-reentrant";
    nr.reentrant = false;
    rows.push_back(nr);
    const int64_t min_budget = tg::nn::min_checkpoint_budget(prof);
    const std::vector<std::pair<std::string, double>> budgets = {{"planner 90%", 0.9},
                                                                 {"planner 75%", 0.75},
                                                                 {"planner 50%", 0.5},
                                                                 {"planner 40%", 0.4},
                                                                 {"planner 25%", 0.25}};
    for (const auto& [name, frac] : budgets) {
        Row r{name, int64_t(frac * double(unplanned)), {}, 0, 0, 0, 0, ""};
        try {
            r.plan = tg::nn::plan_checkpoints(prof, tg::MemoryBudget{r.budget});
        } catch (const tg::error& e) {
            r.note = e.what();
            std::cerr << name << ": " << e.what() << "\n";
        }
        rows.push_back(r);
    }
    rows.push_back(Row{"planner min", min_budget,
                       tg::nn::plan_checkpoints(prof, tg::MemoryBudget{min_budget}), 0, 0, 0, 0,
                       ""});
    b.run(rows, a.reps);
    const Row none = rows[0], sq = rows[1], sq_nr = rows[2];
    const int64_t torch_growth = torch_rss_growth(argv[0], a);

    // ------------------------------------------------------------ outputs
    const double t_none = none.median_s;
    std::ofstream csv(a.out + "/" + a.name + ".csv");
    csv << "config,budget_B,budget_frac,segments,checkpointed_segments,recomputed_layers,"
           "recompute_frac,predicted_peak_B,predicted_saved_B,measured_peak_B,"
           "measured_over_predicted,within_budget,peak_reduction,median_step_s,min_step_s,"
           "time_ratio,measured_saved_B,saved_reduction\n";
    std::ostringstream md;
    md << "# bench_checkpoint: peak memory and step time with checkpointing\n\n"
       << bench::machine_markdown() << "- " << a.layers << " x (Linear(" << a.width << ","
       << a.width << ") + Tanh) = " << n << " modules, batch " << a.batch
       << ", float32, MSE vs zeros, SGD; median of " << a.reps << " steps after one warm-up\n"
       << "- peak = tg::memory peak_bytes during a step minus current_bytes at its start "
          "(parameters, allocated gradients and the input excluded): saved activations, kept "
          "boundaries, recomputed segments and the gradient workspace of backward\n"
       << "- activations = activation memory, measured: the peak of tg::memory saved_bytes "
          "during the step, i.e. of the distinct buffers recorded ops keep for backward (kept "
          "boundaries, recomputed segments, the output; not the parameters, the input batch or "
          "the target, nor the transient gradient buffers); in parentheses the planner's "
          "prediction of the same\n"
       << "- parameters "
       << bench::fmt(mib(int64_t(n / 2) * (int64_t(a.width) * a.width + a.width) * 4), 1)
       << " MiB; saved activations without checkpointing (saved_report of the graph) "
       << bench::fmt(mib(prof.saved_bytes_total()), 1) << " MiB\n\n"
       << "| config | budget MiB | segments (ckpt) | recomputed layers | predicted peak MiB | "
          "measured peak MiB | meas/pred | <= budget | peak cut | activations MiB (model) | "
          "activation cut | step s (median) | time ratio |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Row& r : rows) {
        size_t ck = 0;
        for (const auto& s : r.plan.segments)
            ck += s.checkpointed;
        const bool ran = r.measured > 0;
        const double ratio = ran ? double(r.measured) / double(r.plan.predicted_peak_bytes) : 0;
        const std::string within =
            r.budget == 0 || !ran ? "" : (r.measured <= r.budget ? "yes" : "NO");
        csv << r.config << "," << r.budget << ","
            << (r.budget ? bench::fmt(double(r.budget) / double(unplanned), 3) : "") << ","
            << r.plan.segments.size() << "," << ck << "," << r.plan.recomputed_layers << ","
            << bench::fmt(r.plan.recompute_fraction(), 3) << "," << r.plan.predicted_peak_bytes
            << "," << r.plan.predicted_saved_bytes << "," << r.measured << ","
            << bench::fmt(ratio, 4) << "," << within << ","
            << (ran ? bench::fmt(double(unplanned) / double(r.measured), 3) : "") << ","
            << bench::fmt(r.median_s, 4) << "," << bench::fmt(r.min_s, 4) << ","
            << (ran ? bench::fmt(r.median_s / t_none, 3) : "") << "," << r.saved << ","
            << (ran && r.saved ? bench::fmt(double(none.saved) / double(r.saved), 3) : "") << "\n";
        if (!ran) {
            md << "| " << r.config << " | " << bench::fmt(mib(r.budget), 1)
               << " | infeasible: " << r.note << " |||||||||\n";
            continue;
        }
        md << "| " << r.config << " | " << (r.budget ? bench::fmt(mib(r.budget), 1) : "-") << " | "
           << r.plan.segments.size() << " (" << ck << ") | " << r.plan.recomputed_layers << " ("
           << bench::fmt(r.plan.recompute_fraction(), 2) << ") | "
           << bench::fmt(mib(r.plan.predicted_peak_bytes), 2) << " | "
           << bench::fmt(mib(r.measured), 2) << " | " << bench::fmt(ratio, 4) << " | "
           << (within.empty() ? "-" : within) << " | "
           << bench::fmt(double(unplanned) / double(r.measured), 2) << "x | "
           << bench::fmt(mib(r.saved), 2) << " ("
           << bench::fmt(mib(r.plan.predicted_saved_bytes), 1) << ") | "
           << bench::fmt(double(none.saved) / double(r.saved), 2) << "x | "
           << bench::fmt(r.median_s, 3) << " | " << bench::fmt(r.median_s / t_none, 3) << " |\n";
    }
    md << "\nLibTorch 1.13 without checkpointing (no allocator statistics on the CPU): peak RSS "
          "growth during a steady-state step = "
       << (torch_growth >= 0 ? bench::fmt(mib(torch_growth), 1) + " MiB" : std::string("n/a"))
       << " (tapegrad's allocator-measured peak for the same step: "
       << bench::fmt(mib(unplanned), 1) << " MiB). LibTorch has no C++ checkpointing.\n\n";
    const double cut = double(unplanned) / double(sq.measured);
    const double act_cut = double(none.saved) / double(sq.saved);
    const double tr = sq.median_s / t_none;
    md << "Bars:\n\n- sqrt(n) cut of the peak activation memory (measured) "
       << bench::fmt(act_cut, 2) << "x; bar >= 4x: **" << (act_cut >= 4 ? "PASS" : "FAIL")
       << "** (the step peak, activations plus the gradient workspace, falls " << bench::fmt(cut, 2)
       << "x)\n- sqrt(n) step time " << bench::fmt(tr, 3)
       << "x of no checkpointing; bar <= 1.35x: **" << (tr <= 1.35 ? "PASS" : "FAIL") << "**\n";
    const double tr_nr = sq_nr.median_s / t_none;
    md << "- sqrt(n) with the non-reentrant checkpoint (the segments' last layers not run again): "
          "activations "
       << bench::fmt(double(none.saved) / double(sq_nr.saved), 2) << "x less, step peak "
       << bench::fmt(double(unplanned) / double(sq_nr.measured), 2) << "x less, step time "
       << bench::fmt(tr_nr, 3) << "x: **" << (tr_nr <= 1.35 ? "PASS" : "FAIL")
       << "** (its predicted and recomputed-layer columns are the reentrant model's: the "
          "planner models that one)\n";
    bool all_within = true;
    for (const Row& r : rows)
        if (r.budget && r.measured && r.measured > r.budget)
            all_within = false;
    md << "- planner measured peak <= budget for every feasible budget: **"
       << (all_within ? "PASS" : "FAIL") << "**; smallest feasible budget "
       << bench::fmt(mib(min_budget), 1) << " MiB ("
       << bench::fmt(100.0 * double(min_budget) / double(unplanned), 1)
       << "% of the unplanned peak)\n\n"
       << kBarNote << "\nPlot: " << a.name << ".png (scripts/plot_checkpoint.gp).\n";
    std::ofstream(a.out + "/" + a.name + ".md") << md.str();
    std::cout << md.str();
    return 0;
}
