// Note [Elementwise threads]: elementwise kernels are memory-bound, but one core cannot draw a
// socket's bandwidth, so above kParallelMin elements they are split into one slice per thread.
// The thread count follows OpenBLAS's, so one setting (openblas_set_num_threads or
// OPENBLAS_NUM_THREADS) governs both. The workers sleep on a condition variable between
// kernels: they never spin, so they do not take cores from OpenBLAS's threads (an OpenMP pool
// spinning after each parallel region costs LibTorch about 25% on 2 cores, DESIGN.md §4). The
// caller claims slices too, so a kernel never waits for a worker that is slow to wake. Inside
// a part, kernels run on the part's thread; while a cpu_parallel_blas region runs, OpenBLAS is
// set to one thread and cpu_threads() reports the count from before.
#include "backend/cpu/threads.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tapegrad/error.hpp"
#include "tapegrad/threads.hpp"

extern "C" int openblas_get_num_threads(void);
extern "C" void openblas_set_num_threads(int);

namespace tg::backend::cpu {

namespace {

/// Whether this thread is running a part of a cpu_parallel call (then kernels do not split).
thread_local bool tl_in_part = false;

/// cpu_parallel_blas regions under way, and OpenBLAS's thread count from before the first.
std::mutex blas_mu;
int blas_regions = 0;
std::atomic<int> blas_saved{0};

class Pool {
public:
    void run(int parts, const std::function<void(int)>& f) {
        // One kernel at a time; a second caller (another user thread) runs its kernel alone.
        if (parts < 2 || tl_in_part) {  // a part's own kernels run on its thread
            for (int i = 0; i < parts; ++i)
                f(i);
            return;
        }
        std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
        if (!busy.owns_lock()) {
            for (int i = 0; i < parts; ++i)
                f(i);
            return;
        }
        std::unique_lock<std::mutex> l(mu_);
        while (int(workers_.size()) < parts - 1)
            workers_.emplace_back([this] { work(); });
        job_ = &f;
        next_ = 0;
        parts_ = parts;
        left_ = parts;
        l.unlock();
        work_.notify_all();
        l.lock();
        claim(l);
        done_.wait(l, [this] { return left_ == 0; });
        job_ = nullptr;
    }

private:
    /// Runs unclaimed parts of the current job until none is left; l holds mu_.
    void claim(std::unique_lock<std::mutex>& l) {
        while (job_ && next_ < parts_) {
            const int i = next_++;
            const auto* f = job_;
            l.unlock();
            tl_in_part = true;
            (*f)(i);
            tl_in_part = false;
            l.lock();
            if (--left_ == 0)
                done_.notify_all();
        }
    }
    void work() {
        std::unique_lock<std::mutex> l(mu_);
        for (;;) {
            work_.wait(l, [this] { return job_ && next_ < parts_; });
            claim(l);
        }
    }

    std::mutex run_mu_, mu_;
    std::condition_variable work_, done_;
    std::vector<std::thread> workers_;
    const std::function<void(int)>* job_ = nullptr;
    int next_ = 0, parts_ = 0, left_ = 0;
};

}  // namespace

int cpu_threads() {
    static const int hw = std::max(1, int(std::thread::hardware_concurrency()));
    if (tl_in_part)
        return 1;
    const int saved = blas_saved.load(std::memory_order_relaxed);  // inside cpu_parallel_blas
    return std::max(1, std::min(saved > 0 ? saved : openblas_get_num_threads(), hw));
}

void cpu_parallel(int parts, const std::function<void(int)>& f) {
    static Pool* pool = new Pool;  // never destroyed: kernels may run during static teardown
    pool->run(parts, f);
}

void cpu_parallel_blas(int parts, const std::function<void(int)>& f) {
    std::vector<std::exception_ptr> errors(size_t(std::max(parts, 0)));
    auto guarded = [&](int i) {
        try {
            f(i);
        } catch (...) {
            errors[size_t(i)] = std::current_exception();
        }
    };
    if (parts < 2 || tl_in_part) {
        for (int i = 0; i < parts; ++i)
            guarded(i);
    } else {
        {  // the first region sets OpenBLAS to one thread; the last sets it back
            std::lock_guard<std::mutex> l(blas_mu);
            if (blas_regions++ == 0) {
                blas_saved.store(openblas_get_num_threads());
                openblas_set_num_threads(1);
            }
        }
        cpu_parallel(parts, guarded);
        std::lock_guard<std::mutex> l(blas_mu);
        if (--blas_regions == 0) {
            openblas_set_num_threads(blas_saved.load());
            blas_saved.store(0);
        }
    }
    for (auto& e : errors)
        if (e)
            std::rethrow_exception(e);
}

}  // namespace tg::backend::cpu

namespace tg {

void set_num_threads(int n) {
    if (n < 1)
        throw value_error("set_num_threads: " + std::to_string(n) + " threads: need at least 1");
    using namespace backend::cpu;
    // Inside a cpu_parallel_blas region OpenBLAS runs one thread per part; the region's end
    // restores the saved count, so that is the one to change.
    std::lock_guard<std::mutex> l(blas_mu);
    if (blas_regions > 0)
        blas_saved.store(n);
    else
        openblas_set_num_threads(n);
}

int get_num_threads() {
    return backend::cpu::cpu_threads();
}

}  // namespace tg
