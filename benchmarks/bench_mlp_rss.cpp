/// bench_mlp_rss: peak RSS (VmHWM) of the deep MLP, 32 x (Linear(1024,1024)+tanh),
/// batch 512. Spawns one process per (impl, mode, malloc setting) and tabulates their VmHWM; the
/// children are bench_mlp_rss_tg MODE and bench_mlp_rss_torch MODE (MODE is
/// libs|params|step|steps3, bench_mlp_rss_child.cpp), each linked with one library only, found
/// next to this executable. --child torch:MODE runs that LibTorch child in this process instead.
/// Options: --threads T (OpenBLAS and LibTorch threads, also the children's), --csv FILE,
/// --md FILE, --no-tg (LibTorch rows only).
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "bench_common.hpp"
#include "bench_mlp.hpp"

using namespace bench;

namespace {

std::string self_dir() {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string p(buf, n > 0 ? size_t(n) : 0);
    auto slash = p.rfind('/');
    return slash == std::string::npos ? "." : p.substr(0, slash);
}

/// Runs cmd and returns the key=value pairs of its `impl=...` output line (none if absent).
std::map<std::string, std::string> run_child(const std::string& cmd) {
    std::map<std::string, std::string> kv;
    FILE* f = popen(cmd.c_str(), "r");
    if (!f)
        return kv;
    char line[1024];
    while (std::fgets(line, sizeof line, f)) {
        std::string s(line);
        if (s.rfind("impl=", 0) != 0)
            continue;
        size_t pos = 0;
        while (pos < s.size()) {
            size_t sp = s.find_first_of(" \n", pos);
            std::string tok = s.substr(pos, sp - pos);
            auto eq = tok.find('=');
            if (eq != std::string::npos)
                kv[tok.substr(0, eq)] = tok.substr(eq + 1);
            if (sp == std::string::npos)
                break;
            pos = sp + 1;
        }
    }
    pclose(f);
    return kv;
}

int run_deep_memory_rss(const MlpOptions& o) {
    std::string md = mlp_header(
        "bench_mlp_rss: peak RSS (VmHWM) of the deep MLP, one process per row", o,
        "- 32 x (Linear(1024,1024)+tanh), batch 512, MSE vs zeros, SGD; tapegrad children are "
        "`bench_mlp_rss_tg MODE` (no LibTorch loaded), LibTorch children `bench_mlp_rss_torch "
        "MODE` (no tapegrad loaded)\n"
        "- modes: libs = library loaded + 1 tiny op; step = model + optimizer + 1 training step; "
        "steps3 = 3 steps (steady state)\n"
        "- malloc: default glibc, or fixed = `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072` "
        "(freed big blocks go back to the OS)\n");
    const double minimum_kib = double(deep_mlp_minimum_bytes()) / 1024.0;
    std::string dir = self_dir();
    Table table;
    table.header = {"impl",
                    "malloc",
                    "mode",
                    "VmHWM_kB",
                    "RssAnon_kB",
                    "RssFile_kB",
                    "above_own_libs_MiB",
                    "above_libs_over_minimum",
                    "loss"};
    std::map<std::string, long> hwm;
    for (std::string malloc_kind : {"default", "fixed"}) {
        std::string env = "env OPENBLAS_NUM_THREADS=" + std::to_string(o.threads) + " ";
        if (malloc_kind == "fixed")
            env += "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072 ";
        for (std::string impl : {"tapegrad", "libtorch"}) {
            if (impl == "tapegrad" && !o.run_tg)
                continue;
            long libs = 0;
            for (std::string mode : {"libs", "step", "steps3"}) {
                std::string cmd = impl == "tapegrad" ? env + dir + "/bench_mlp_rss_tg " + mode +
                                                           " " + std::to_string(o.threads)
                                                     : env + dir + "/bench_mlp_rss_torch " + mode +
                                                           " " + std::to_string(o.threads);
                auto kv = run_child(cmd + " 2>/dev/null");
                long v = kv.count("VmHWM_kB") ? std::stol(kv["VmHWM_kB"]) : -1;
                if (mode == "libs")
                    libs = v;
                hwm[impl + "/" + malloc_kind + "/" + mode] = v;
                double above = double(v - libs);
                table.add({impl, malloc_kind, mode, std::to_string(v), kv["RssAnon_kB"],
                           kv["RssFile_kB"], mode == "libs" ? "" : fmt(above / 1024.0, 1),
                           mode == "libs" ? "" : fmt(above / minimum_kib, 3), kv["loss"]});
                std::fprintf(stderr, "%s %s %s: VmHWM %ld kB\n", impl.c_str(), malloc_kind.c_str(),
                             mode.c_str(), v);
            }
        }
    }
    md += "- minimum (params + grads + one activation) = " + fmt(minimum_kib, 0) + " KiB\n\n" +
          table.markdown();
    if (o.run_tg) {
        bool pass = true;
        md += "\n";
        for (std::string mode : {"step", "steps3"}) {
            long t = hwm["tapegrad/default/" + mode], l = hwm["libtorch/default/" + mode];
            bool p = t > 0 && l > 0 && t <= l;
            pass = pass && p;
            md += "- " + mode + ", default malloc: tapegrad " + std::to_string(t) +
                  " kB vs LibTorch " + std::to_string(l) + " kB (" + fmt(double(t) / double(l), 3) +
                  "x)\n";
        }
        md += std::string("\nBar peak RSS (separate process, default malloc) <= LibTorch's: **") +
              (pass ? "PASS" : "FAIL") + "**\n";
    }
    std::cout << md;
    write_file(o.csv, table.csv());
    write_file(o.md, md);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const MlpOptions o = parse_mlp_options(argc, argv);
    try {
        if (has_flag(argc, argv, "--child")) {
            const std::string m = arg_value(argc, argv, "--child", "");
            if (m.rfind("torch:", 0) == 0) {  // child: no banner, nothing but the result line
                torch_rss_child(m.substr(6), o.threads);
                return 0;
            }
            std::fprintf(stderr,
                         "bench_mlp_rss: --child takes torch:MODE; tapegrad children run as "
                         "bench_mlp_rss_tg MODE\n");
            return 2;
        }
        return run_deep_memory_rss(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_mlp_rss: %s\n", e.what());
        return 1;
    }
}
