#pragma once
/// Shared helpers of the benchmarks: a clock, medians, /proc readings and small table writers.
/// Header-only and free of LibTorch, tapegrad and BLAS headers, so every translation unit of a
/// benchmark (the LibTorch one, the tapegrad one, the raw-BLAS one) can include it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

/// Seconds since an arbitrary epoch, from the monotonic clock.
inline double now_s() {
    return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

/// Median of v (the mean of the two middle values for an even count); 0 for an empty vector.
inline double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Smallest element of v (0 for an empty vector).
inline double min_of(const std::vector<double>& v) {
    return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

/// A field of /proc/self/status in KiB (VmHWM, VmRSS, RssAnon, RssFile), or -1.
inline long proc_status_kib(const std::string& field) {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line)) {
        if (line.compare(0, field.size() + 1, field + ":") == 0) {
            return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
        }
    }
    return -1;
}

/// Total "steal" jiffies of the host (column 8 of the cpu line of /proc/stat): noise evidence.
inline long long host_steal_jiffies() {
    std::ifstream f("/proc/stat");
    std::string cpu;
    long long v[8] = {0};
    f >> cpu;
    for (auto& x : v)
        f >> x;
    return v[7];
}

/// The CPU model as lscpu shows it ("model name" of /proc/cpuinfo).
inline std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto p = line.find(':');
            return p == std::string::npos ? line : line.substr(p + 2);
        }
    }
    return "unknown";
}

/// Value of an environment variable, or "(unset)".
inline std::string env_or_unset(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "(unset)";
}

/// Formats a double with the given number of decimals.
inline std::string fmt(double x, int decimals = 1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return buf;
}

/// "1.25,1.5,..." (ms, 4 decimals) of seconds.
inline std::string ms_list(const std::vector<double>& s) {
    std::string r;
    for (size_t i = 0; i < s.size(); ++i)
        r += (i ? "," : "") + fmt(1e3 * s[i], 4);
    return r;
}

/// Prints a child process's one `result key=value ...` line on stdout (values without spaces);
/// the drivers (bench_driver.hpp) read it.
inline void print_result(const std::vector<std::pair<std::string, std::string>>& kv) {
    std::string line = "result";
    for (auto& p : kv)
        line += " " + p.first + "=" + p.second;
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

/// A table kept as rows of strings, written as CSV and as a GitHub markdown table.
struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;

    void add(std::vector<std::string> row) { rows.push_back(std::move(row)); }

    std::string csv() const {
        std::ostringstream os;
        auto line = [&](const std::vector<std::string>& r) {
            for (size_t i = 0; i < r.size(); ++i) {
                os << (i ? "," : "");
                if (r[i].find_first_of(",\"") == std::string::npos) {
                    os << r[i];
                    continue;
                }
                os << '"';  // RFC 4180: quoted, quotes doubled
                for (char ch : r[i])
                    os << (ch == '"' ? "\"\"" : std::string(1, ch));
                os << '"';
            }
            os << "\n";
        };
        line(header);
        for (auto& r : rows)
            line(r);
        return os.str();
    }

    std::string markdown() const {
        std::ostringstream os;
        auto line = [&](const std::vector<std::string>& r) {
            os << "|";
            for (auto& c : r)
                os << " " << c << " |";
            os << "\n";
        };
        line(header);
        os << "|";
        for (size_t i = 0; i < header.size(); ++i)
            os << "---|";
        os << "\n";
        for (auto& r : rows)
            line(r);
        return os.str();
    }
};

/// Writes text to path (if path is not empty) and says so on stderr.
inline void write_file(const std::string& path, const std::string& text) {
    if (path.empty())
        return;
    std::ofstream f(path);
    f << text;
    std::fprintf(stderr, "wrote %s\n", path.c_str());
}

/// The value after flag in argv ("--threads 2"), or def.
inline std::string arg_value(int argc, char** argv, const std::string& flag,
                             const std::string& def) {
    for (int i = 1; i + 1 < argc; ++i)
        if (flag == argv[i])
            return argv[i + 1];
    return def;
}

/// Whether flag appears in argv.
inline bool has_flag(int argc, char** argv, const std::string& flag) {
    for (int i = 1; i < argc; ++i)
        if (flag == argv[i])
            return true;
    return false;
}

/// Parses argv strictly: each "--flag value" calls its handler in `with_value` with the value,
/// each bare "--switch" its handler in `switches`; an unknown flag or a missing value throws.
inline void parse_args(
    int argc, char** argv,
    const std::map<std::string, std::function<void(const std::string&)>>& with_value,
    const std::map<std::string, std::function<void()>>& switches = {}) {
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        if (auto sw = switches.find(s); sw != switches.end()) {
            sw->second();
        } else if (auto v = with_value.find(s); v != with_value.end()) {
            if (i + 1 >= argc)
                throw std::runtime_error("missing value after " + s);
            v->second(argv[++i]);
        } else {
            throw std::runtime_error("unknown option " + s);
        }
    }
}

/// A deterministic generator for the benchmark's inputs and initial weights (xorshift64*),
/// so tapegrad, LibTorch and the raw-BLAS step all start from the same numbers.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 2685821657736338717ULL + 1) {}
    uint64_t next() {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 2685821657736338717ULL;
    }
    /// Uniform in [lo, hi).
    float uniform(float lo, float hi) { return lo + (hi - lo) * float((next() >> 40) * 0x1p-24); }
};

/// n floats uniform in [lo, hi).
inline std::vector<float> uniform_vec(Rng& rng, size_t n, float lo, float hi) {
    std::vector<float> v(n);
    for (auto& x : v)
        x = rng.uniform(lo, hi);
    return v;
}

}  // namespace bench
