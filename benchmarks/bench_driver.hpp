#pragma once
/// What the benchmark drivers (bench_conv, bench_cnn_epoch, bench_gpt, bench_mlp) share: running a
/// child process and reading its `result key=value ...` line (bench_common.hpp's print_result), and
/// a configuration's rounds of results. Free of LibTorch, tapegrad and BLAS headers.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"

namespace bench {

/// The directory of the running executable (the children sit beside the driver).
inline std::string self_dir() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string p(buf, n > 0 ? size_t(n) : 0);
    auto slash = p.rfind('/');
    return slash == std::string::npos ? "." : p.substr(0, slash);
}

using KV = std::map<std::string, std::string>;

/// Runs cmd and returns the key=value pairs of its `result ...` line; throws if it has none.
inline KV run_child(const std::string& cmd) {
    KV kv;
    FILE* f = popen(cmd.c_str(), "r");
    if (!f)
        throw std::runtime_error("cannot run " + cmd);
    std::string out;
    char buf[1 << 14];
    while (std::fgets(buf, sizeof buf, f))
        out += buf;
    int rc = pclose(f);
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("result ", 0) != 0)
            continue;
        std::istringstream toks(line.substr(7));
        std::string tok;
        while (toks >> tok) {
            auto eq = tok.find('=');
            if (eq != std::string::npos)
                kv[tok.substr(0, eq)] = tok.substr(eq + 1);
        }
    }
    if (kv.empty() || rc != 0)
        throw std::runtime_error("no result from `" + cmd + "` (exit " + std::to_string(rc) + ")");
    return kv;
}

/// main() of a benchmark that is its own child (bench_ddp, bench_fsdp: the driver starts
/// `mpirun ... NAME --child`): runs child or driver, an exception reported as "NAME: what", exit 1.
inline int child_or_driver(int argc, char** argv, const char* name, int (*child)(int, char**),
                           int (*driver)(int, char**)) {
    try {
        return has_flag(argc, argv, "--child") ? child(argc, argv) : driver(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", name, e.what());
        return 1;
    }
}

inline std::vector<double> parse_list(const std::string& s) {
    std::vector<double> v;
    std::istringstream is(s);
    std::string x;
    while (std::getline(is, x, ','))
        if (!x.empty())
            v.push_back(std::stod(x));
    return v;
}

/// One configuration: the command that runs it and what its rounds returned.
struct Config {
    std::string key;  // e.g. "tapegrad step gather"
    std::string side, what, variant;
    std::string cmd;
    std::vector<KV> rounds;
    std::vector<double> pooled(const std::string& field) const {
        std::vector<double> v;
        for (auto& r : rounds) {
            auto it = r.find(field);
            if (it == r.end())
                continue;
            auto x = parse_list(it->second);
            v.insert(v.end(), x.begin(), x.end());
        }
        return v;
    }
    double med(const std::string& field = "step_ms") const { return median(pooled(field)); }
    std::string round_medians(const std::string& field = "step_ms") const {
        std::string s;
        for (auto& r : rounds)
            s += (s.empty() ? "" : ";") + fmt(median(parse_list(r.at(field))), 2);
        return s;
    }
    std::string get(const std::string& k) const {
        if (rounds.empty())
            return "";
        auto it = rounds[0].find(k);
        return it == rounds[0].end() ? "" : it->second;
    }
};

/// Runs each configuration once per round, the order rotating each round (no configuration always
/// goes first or after the same neighbour), and logs each run's median of `field` (times scale,
/// in unit) to stderr after label.
inline void run_rounds(const std::vector<Config*>& cs, int rounds, const std::string& label,
                       const std::string& field = "step_ms", double scale = 1,
                       const char* unit = "ms") {
    for (int r = 0; r < rounds; ++r)
        for (size_t k = 0; k < cs.size(); ++k) {
            Config& c = *cs[(k + size_t(r)) % cs.size()];
            c.rounds.push_back(run_child(c.cmd));
            const KV& kv = c.rounds.back();
            if (kv.count(field) == 0 && kv.count("gflops"))  // peak_config's bench_peak
                std::fprintf(stderr, "%s round %d: %-60s %10.1f GFLOP/s\n", label.c_str(), r,
                             c.key.c_str(), median(parse_list(kv.at("gflops"))));
            else
                std::fprintf(
                    stderr, "%s round %d: %-60s %10.3f %s\n", label.c_str(), r, c.key.c_str(),
                    kv.count(field) ? scale * median(parse_list(kv.at(field))) : 0.0, unit);
        }
}
inline void run_rounds(std::vector<Config>& cs, int rounds, const std::string& label,
                       const std::string& field = "step_ms", double scale = 1,
                       const char* unit = "ms") {
    std::vector<Config*> ps;
    for (Config& c : cs)
        ps.push_back(&c);
    run_rounds(ps, rounds, label, field, scale, unit);
}

inline bool close_to(const std::string& a, const std::string& b, double rel) {
    auto x = parse_list(a), y = parse_list(b);
    if (x.size() != y.size() || x.empty())
        return false;
    for (size_t i = 0; i < x.size(); ++i)
        if (std::fabs(x[i] - y[i]) >
            rel * std::max(1.0, std::max(std::fabs(x[i]), std::fabs(y[i]))))
            return false;
    return true;
}

/// The host's SGEMM peak on `threads` OpenBLAS threads, as a configuration to run in the same
/// rounds as the steps it is the yardstick of (bench_peak: a 2048² cblas_sgemm per call). Its
/// med("gflops") is the peak; fraction_of_peak() divides a step's GFLOP/s by it.
inline Config peak_config(int threads, const std::string& dir) {
    const std::string t = std::to_string(threads);
    return {"sgemm peak " + t,
            "peak",
            "sgemm",
            "2048x2048x2048",
            "env OPENBLAS_NUM_THREADS=" + t + " " + dir + "/bench_peak --threads " + t,
            {}};
}

/// flops done in `ms` milliseconds as a fraction of the peak configuration's median rate.
inline double fraction_of_peak(double flops, double ms, const Config& peak) {
    const double gflops = flops / (ms * 1e-3) * 1e-9, p = peak.med("gflops");
    return p > 0 ? gflops / p : 0;
}

/// The op profile of a tapegrad child (bench_profile.hpp's profile_steps over `steps` steps) as
/// a table per step: op, phase, calls, ms and share of the step; rows below 0.5% are summed.
inline Table profile_table(const std::string& profile, double steps) {
    struct Row {
        std::string name, phase;
        double calls, ms;
    };
    std::vector<Row> rows;
    double total = 0;
    std::istringstream is(profile);
    std::string item;
    while (std::getline(is, item, ';')) {
        std::istringstream fs(item);
        std::string name, phase, calls, ms;
        if (!std::getline(fs, name, '|') || !std::getline(fs, phase, '|') ||
            !std::getline(fs, calls, '|') || !std::getline(fs, ms, '|'))
            continue;
        rows.push_back(
            {name, phase == "-" ? "" : phase, std::stod(calls) / steps, std::stod(ms) / steps});
        total += rows.back().ms;
    }
    Table t;
    t.header = {"op", "phase", "calls_per_step", "ms_per_step", "share"};
    double rest = 0;
    for (const Row& r : rows) {
        if (total > 0 && r.ms < 0.005 * total) {
            rest += r.ms;
            continue;
        }
        t.add({"`" + r.name + "`", r.phase, fmt(r.calls, 1), fmt(r.ms, 3),
               fmt(total > 0 ? 100 * r.ms / total : 0, 1) + "%"});
    }
    t.add({"(the rest, each < 0.5%)", "", "", fmt(rest, 3),
           fmt(total > 0 ? 100 * rest / total : 0, 1) + "%"});
    t.add({"total", "", "", fmt(total, 3), "100%"});
    return t;
}

}  // namespace bench
