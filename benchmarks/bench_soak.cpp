/// bench_soak: many training steps, the resident set (/proc/self/status) and tg::memory::stats
/// sampled as they run; both must stay flat. Two phases of --steps steps each, on one model:
///   one-thread    every step on the main thread;
///   threads       steps taken in turns by short-lived threads, two alive at a time and five
///                 steps each (2,000 threads for 10,000 steps), on batches a long-lived loader
///                 thread makes: tensors made on one thread are freed on another (the batches,
///                 the gradients) and threads keep exiting (Note [Pool slabs] in
///                 src/core/pool.cpp).
/// The model: Linear(256,512) ReLU Dropout(0.2) Linear(512,256) Tanh Dropout(0.1) Linear(256,10),
/// Adam, batch 64, cross-entropy, float32. Every --every steps a row: phase, step, seconds,
/// threads started, RSS, and current/peak/cached/saved bytes of the CPU allocator. Samples in the
/// threads phase are taken with no worker alive and the loader's queue full, so the tensors alive
/// are the same each time.
/// Bars, per phase, from the sample at a tenth of the steps (warm-up: first allocations, malloc
/// arenas, cached thread stacks) to the last: RSS grows by at most 8 MiB, and current_bytes is
/// the same at every sample.
/// Usage: bench_soak [--steps 10000] [--every 500] [--csv FILE] [--md FILE]
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_common.hpp"
#include "bench_env.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace {

constexpr int64_t kBatch = 64, kIn = 256, kClasses = 10;
constexpr size_t kQueue = 4;        // batches the loader keeps ready
constexpr int kStepsPerThread = 5;  // in the threads phase
constexpr double kRssBarMib = 8;

struct Batch {
    tg::Tensor x, y;
};

Batch make_batch() {
    return {tg::randn({kBatch, kIn}), tg::randint(0, kClasses, {kBatch})};
}

struct Model {
    tg::nn::Sequential net{tg::nn::Linear(kIn, 512),     tg::nn::ReLU(), tg::nn::Dropout(0.2),
                           tg::nn::Linear(512, 256),     tg::nn::Tanh(), tg::nn::Dropout(0.1),
                           tg::nn::Linear(256, kClasses)};
    tg::optim::Adam opt{net->parameters(), tg::optim::AdamOptions(1e-3)};
    std::mutex mu;  // one step at a time

    void step(const Batch& b) {
        std::lock_guard<std::mutex> lock(mu);
        opt.zero_grad();
        tg::cross_entropy(net->forward(b.x), b.y).backward();
        opt.step();
    }
};

/// A long-lived thread that keeps kQueue batches ready.
class Loader {
public:
    Loader() : thread_([this] { run(); }) {}
    ~Loader() {
        {
            std::lock_guard<std::mutex> l(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    Batch take() {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return !queue_.empty(); });
        Batch b = std::move(queue_.front());
        queue_.pop_front();
        cv_.notify_all();
        return b;
    }
    /// Waits until the queue is full: the loader then holds no batch of its own.
    void wait_full() {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return queue_.size() == kQueue; });
    }

private:
    void run() {
        for (;;) {
            {
                std::unique_lock<std::mutex> l(mu_);
                cv_.wait(l, [&] { return stop_ || queue_.size() < kQueue; });
                if (stop_)
                    return;
            }
            Batch b = make_batch();
            std::lock_guard<std::mutex> l(mu_);
            queue_.push_back(std::move(b));
            cv_.notify_all();
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Batch> queue_;
    bool stop_ = false;
    std::thread thread_;  // last: starts once the rest exists
};

struct Sample {
    std::string phase;
    int64_t step, threads;
    double seconds, rss_mib;
    tg::memory::Stats mem;
};

Sample sample(const std::string& phase, int64_t step, int64_t threads, double t0) {
    return {phase,
            step,
            threads,
            bench::now_s() - t0,
            double(bench::proc_status_kib("VmRSS")) / 1024,
            tg::memory::stats()};
}

std::string hostname() {
    char buf[256] = {};
    return gethostname(buf, sizeof buf - 1) == 0 ? buf : "unknown";
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t steps = std::stoll(bench::arg_value(argc, argv, "--steps", "10000"));
    const int64_t every = std::stoll(bench::arg_value(argc, argv, "--every", "500"));
    const std::string csv_path = bench::arg_value(argc, argv, "--csv", "");
    const std::string md_path = bench::arg_value(argc, argv, "--md", "");
    if (steps < 10 || every < 1 || every % (2 * kStepsPerThread) != 0) {
        std::fprintf(stderr, "bench_soak: --steps >= 10, --every a multiple of %d\n",
                     2 * kStepsPerThread);
        return 2;
    }
    tg::manual_seed(0);
    Model model;
    std::vector<Sample> samples;

    // one thread
    double t0 = bench::now_s();
    Batch batch = make_batch();
    for (int64_t s = 1; s <= steps; ++s) {
        model.step(batch);
        if (s % every == 0)
            samples.push_back(sample("one-thread", s, 0, t0));
    }
    std::fprintf(stderr, "bench_soak: one-thread done\n");
    batch = Batch();

    // threads come and go; rounds of two workers, five steps each
    t0 = bench::now_s();
    int64_t started = 0;
    {
        Loader loader;
        for (int64_t s = 0; s < steps;) {
            std::thread a([&] {
                for (int i = 0; i < kStepsPerThread; ++i)
                    model.step(loader.take());
            });
            std::thread b([&] {
                for (int i = 0; i < kStepsPerThread; ++i)
                    model.step(loader.take());
            });
            a.join();
            b.join();
            started += 2;
            s += 2 * kStepsPerThread;
            if (s % every == 0) {
                loader.wait_full();
                samples.push_back(sample("threads", s, started, t0));
            }
        }
    }
    std::fprintf(stderr, "bench_soak: threads done\n");

    bench::Table t;
    t.header = {"phase",         "step",       "seconds",      "threads_started", "rss_mib",
                "current_bytes", "peak_bytes", "cached_bytes", "saved_bytes"};
    for (const Sample& s : samples)
        t.add({s.phase, std::to_string(s.step), bench::fmt(s.seconds, 2), std::to_string(s.threads),
               bench::fmt(s.rss_mib, 1), std::to_string(s.mem.current_bytes),
               std::to_string(s.mem.peak_bytes), std::to_string(s.mem.cached_bytes),
               std::to_string(s.mem.saved_bytes)});
    bench::write_file(csv_path, t.csv());

    std::string verdicts;
    bool all_pass = true;
    for (const char* phase : {"one-thread", "threads"}) {
        const Sample* first = nullptr;  // the first sample at or past a tenth of the steps
        const Sample* last = nullptr;
        bool flat_bytes = true;
        for (const Sample& s : samples) {
            if (s.phase != phase || s.step * 10 < steps)
                continue;
            if (!first)
                first = &s;
            flat_bytes = flat_bytes && s.mem.current_bytes == first->mem.current_bytes;
            last = &s;
        }
        if (!first)
            continue;
        const double grew = last->rss_mib - first->rss_mib;
        const bool pass = grew <= kRssBarMib && flat_bytes;
        all_pass = all_pass && pass;
        verdicts +=
            "- " + std::string(phase) + ": RSS " + bench::fmt(first->rss_mib) + " MiB at step " +
            std::to_string(first->step) + ", " + bench::fmt(last->rss_mib) + " MiB at step " +
            std::to_string(last->step) + " (" + (grew >= 0 ? "+" : "") + bench::fmt(grew) +
            " MiB, bar <= +" + bench::fmt(kRssBarMib, 0) + "); current_bytes " +
            (flat_bytes
                 ? "the same at every sample (" + std::to_string(first->mem.current_bytes) + ")"
                 : std::string("NOT the same at every sample")) +
            ": " + (pass ? "PASS" : "FAIL") + "\n";
    }
    std::string md = "# bench_soak: " + std::to_string(steps) +
                     " training steps per phase, memory over time\n\n";
    md += "- host: " + hostname() + "\n" + bench::machine_markdown();
    md += "- threads phase: " + std::to_string(started) + " threads started, " +
          std::to_string(kStepsPerThread) + " steps each, two at a time, plus one loader\n\n";
    md += verdicts + "\n" + t.markdown();
    bench::write_file(md_path, md);
    std::fputs(verdicts.c_str(), stdout);
    return all_pass ? 0 : 1;
}
