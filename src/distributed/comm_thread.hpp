#pragma once
// Note [One communication thread]: every MPI call a process makes after MPI_Init_thread runs on
// one thread, in the order the calls were posted. So MPI_THREAD_SERIALIZED suffices, collectives
// of every group keep one order (the order every rank posts them in), and a collective runs
// while the thread that posted it goes on with backward: that is how nn::DistributedDataParallel
// overlaps its all-reduces with the rest of backward.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "tapegrad/distributed.hpp"

namespace tg::distributed::detail {

/// A Work whose communication a task on the communication thread completes; finish() runs once
/// on the first thread that waits (device write-back, version bump).
class TaskWork final : public Work {
public:
    explicit TaskWork(std::function<void()> finish) : finish_(std::move(finish)) {}
    void wait() override;
    bool is_completed() override;
    /// Called by the communication thread when the task starts, and when it ends (err: its
    /// exception, or null); t in steady-clock seconds.
    void start(double t) { started_.store(t); }
    void complete(std::exception_ptr err, double t);

private:
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    bool finished_ = false;
    std::exception_ptr err_;
    std::function<void()> finish_;
};

/// The thread of Note [One communication thread].
class CommThread {
public:
    CommThread();
    ~CommThread();  // runs what was posted, then joins
    CommThread(const CommThread&) = delete;
    CommThread& operator=(const CommThread&) = delete;
    /// Runs task on the thread; its exception goes to work (if any) or is rethrown by the next
    /// run_sync.
    void post(std::function<void()> task, std::shared_ptr<TaskWork> work);
    /// Runs task on the thread and waits for it, rethrowing its exception.
    void run_sync(std::function<void()> task);

private:
    void loop();
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<std::pair<std::function<void()>, std::shared_ptr<TaskWork>>> queue_;
    bool stop_ = false;
    std::thread thread_;
};

/// Seconds of std::chrono::steady_clock (Work::started_at's clock).
double steady_seconds();

/// The process's communication thread (distributed_error before init()).
CommThread& comm_thread();

/// The communication thread, or null after finalize().
CommThread* comm_thread_if_running();

/// An MPI group over a duplicate of MPI_COMM_WORLD (made on the communication thread).
std::shared_ptr<ProcessGroup> make_mpi_group();
/// The MPI group of world ranks `ranks` (MPI_Comm_split), nullptr on the other ranks.
std::shared_ptr<ProcessGroup> make_mpi_subgroup(const std::vector<int>& ranks);

/// A NCCL group over the world (TG_NCCL builds only; nccl_group.cpp).
std::shared_ptr<ProcessGroup> make_nccl_group();

/// Checks a collective's tensor: defined (value_error), contiguous (value_error), float32,
/// float64 or int64 (dtype_error); `what` names the collective.
void check_tensor(const char* what, const Tensor& t);

}  // namespace tg::distributed::detail
