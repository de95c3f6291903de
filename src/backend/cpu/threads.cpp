// Note [Elementwise threads]: elementwise kernels are memory-bound, but one core cannot draw a
// socket's bandwidth, so above kParallelMin elements they are split into one slice per thread.
// The thread count follows OpenBLAS's, so one setting (openblas_set_num_threads or
// OPENBLAS_NUM_THREADS) governs both. The workers sleep on a condition variable between
// kernels: they never spin, so they do not take cores from OpenBLAS's threads (an OpenMP pool
// spinning after each parallel region costs LibTorch about 25% on 2 cores, DESIGN.md §4). The
// caller claims slices too, so a kernel never waits for a worker that is slow to wake.
#include "backend/cpu/threads.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

extern "C" int openblas_get_num_threads(void);

namespace tg::backend::cpu {

namespace {

class Pool {
public:
    void run(int parts, const std::function<void(int)>& f) {
        // One kernel at a time; a second caller (another user thread) runs its kernel alone.
        std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
        if (parts < 2 || !busy.owns_lock()) {
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
            (*f)(i);
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
    return std::max(1, std::min(openblas_get_num_threads(), hw));
}

void cpu_parallel(int parts, const std::function<void(int)>& f) {
    static Pool* pool = new Pool;  // never destroyed: kernels may run during static teardown
    pool->run(parts, f);
}

}  // namespace tg::backend::cpu
