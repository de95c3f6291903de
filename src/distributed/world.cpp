// init() and finalize(), the communication thread (Note [One communication thread]) and the
// default group's collectives.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "distributed/comm_thread.hpp"

namespace tg::distributed {

Work::~Work() = default;
ProcessGroup::~ProcessGroup() = default;

namespace detail {

double steady_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void TaskWork::complete(std::exception_ptr err, double t) {
    std::lock_guard<std::mutex> lock(m_);
    ended_.store(t);
    done_ = true;
    err_ = std::move(err);
    cv_.notify_all();
}

bool TaskWork::is_completed() {
    std::lock_guard<std::mutex> lock(m_);
    return done_;
}

void TaskWork::wait() {
    std::function<void()> finish;
    {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [this] { return done_; });
        if (err_)
            std::rethrow_exception(err_);
        if (!finished_) {
            finished_ = true;
            finish = std::move(finish_);
        }
    }
    if (finish)
        finish();
}

CommThread::CommThread() : thread_([this] { loop(); }) {}

CommThread::~CommThread() {
    {
        std::lock_guard<std::mutex> lock(m_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void CommThread::post(std::function<void()> task, std::shared_ptr<TaskWork> work) {
    {
        std::lock_guard<std::mutex> lock(m_);
        queue_.emplace_back(std::move(task), std::move(work));
    }
    cv_.notify_all();
}

void CommThread::run_sync(std::function<void()> task) {
    auto work = std::make_shared<TaskWork>(nullptr);
    post(std::move(task), work);
    work->wait();
}

void CommThread::loop() {
    for (;;) {
        std::pair<std::function<void()>, std::shared_ptr<TaskWork>> item;
        {
            std::unique_lock<std::mutex> lock(m_);
            cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
            if (queue_.empty())
                return;  // stopping, and everything posted has run
            item = std::move(queue_.front());
            queue_.pop_front();
        }
        std::exception_ptr err;
        if (item.second)
            item.second->start(steady_seconds());
        try {
            item.first();
        } catch (...) {
            err = std::current_exception();
        }
        if (item.second)
            item.second->complete(err, steady_seconds());
    }
}

namespace {
struct World {
    std::unique_ptr<CommThread> thread;
    std::shared_ptr<ProcessGroup> group;
    bool owns_mpi = false;  // init() called MPI_Init_thread, so finalize() calls MPI_Finalize
    int local_rank = 0;
    std::terminate_handler prev_terminate = nullptr;
};
World& world() {
    static World w;
    return w;
}

World& initialized(const char* what) {
    World& w = world();
    if (!w.group)
        throw distributed_error(std::string(what) +
                                ": tg::distributed::init() has not been called");
    return w;
}

/// Note [Abort on an uncaught exception]: a rank that dies of an exception while the others wait
/// in a collective would leave them waiting forever. std::terminate on any rank prints the
/// exception and takes every rank down with MPI_Abort (mpirun then reports the job as failed).
[[noreturn]] void abort_all() {
    int r = -1, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    std::string what = "std::terminate called";
    if (std::exception_ptr e = std::current_exception()) {
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            what = ex.what();
        } catch (...) {
            what = "an exception that is not a std::exception";
        }
    }
    std::fprintf(stderr, "tapegrad rank %d of %d: %s; aborting every rank\n", r, n, what.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
}

void finalize_at_exit() {
    finalize();
}
}  // namespace

CommThread& comm_thread() {
    World& w = world();
    if (!w.thread)
        throw distributed_error("collective: tg::distributed::init() has not been called");
    return *w.thread;
}

CommThread* comm_thread_if_running() {
    return world().thread.get();
}

void check_tensor(const char* what, const Tensor& t) {
    if (!t.defined())
        throw value_error(std::string(what) + ": undefined tensor");
    if (!t.is_contiguous())
        throw value_error(std::string(what) + ": tensor " + shape_str(t.sizes()) +
                          " is not contiguous (call .contiguous() first)");
    if (t.dtype() != Dtype::Float32 && t.dtype() != Dtype::Float64 && t.dtype() != Dtype::Int64)
        throw dtype_error(std::string(what) + ": unsupported dtype " + dtype_name(t.dtype()));
    if (t.device().type == DeviceType::CUDA)
        throw device_error(std::string(what) + ": tensor " + shape_str(t.sizes()) + " on " +
                           t.device().str() + ": the MPI group carries CPU and OpenCL tensors; " +
                           "use new_group(\"nccl\") for CUDA tensors");
}

}  // namespace detail

void init(int* argc, char*** argv) {
    detail::World& w = detail::world();
    if (w.group)
        return;
    int started = 0, provided = 0;
    MPI_Initialized(&started);
    if (!started) {
        if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
            throw distributed_error("init: MPI_Init_thread failed");
        w.owns_mpi = true;
        std::atexit(detail::finalize_at_exit);
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED)
        throw distributed_error(
            "init: MPI provides thread level " + std::to_string(provided) +
            ", tapegrad needs MPI_THREAD_SERIALIZED (call MPI_Init_thread with it, or let "
            "tg::distributed::init() start MPI)");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &w.local_rank);
    MPI_Comm_free(&node);
    w.thread = std::make_unique<detail::CommThread>();
    w.group = detail::make_mpi_group();
    w.prev_terminate = std::set_terminate(detail::abort_all);  // Note [Abort on an uncaught ...]
}

bool is_initialized() {
    return detail::world().group != nullptr;
}

void finalize() {
    detail::World& w = detail::world();
    if (!w.group)
        return;
    w.thread->run_sync([] {});  // everything posted before has run
    w.group.reset();            // frees its communicator on the thread
    w.thread.reset();           // runs what is left, joins
    std::set_terminate(w.prev_terminate);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (w.owns_mpi && !finalized)
        MPI_Finalize();
    w.owns_mpi = false;
}

int rank() {
    return detail::initialized("rank").group->rank();
}
int world_size() {
    return detail::initialized("world_size").group->size();
}
int local_rank() {
    return detail::initialized("local_rank").local_rank;
}
std::shared_ptr<ProcessGroup> default_group() {
    return detail::initialized("default_group").group;
}

std::shared_ptr<ProcessGroup> new_group(const std::string& backend) {
    detail::initialized("new_group");
    if (backend == "mpi")
        return detail::make_mpi_group();
    if (backend == "nccl") {
#ifdef TG_NCCL
        return detail::make_nccl_group();
#else
        throw backend_unavailable(
            "new_group(\"nccl\"): tapegrad was built without NCCL (it needs TG_CUDA and NCCL, "
            "e.g. the CUDA toolkit's libnccl; see docs/distributed.md)");
#endif
    }
    throw value_error("new_group: unknown backend '" + backend +
                      "' (expected \"mpi\" or \"nccl\")");
}

std::shared_ptr<ProcessGroup> new_subgroup(const std::vector<int>& ranks) {
    const int world = detail::initialized("new_subgroup").group->size();
    std::vector<char> seen(size_t(world), 0);
    if (ranks.empty())
        throw value_error("new_subgroup: the list of ranks is empty");
    for (int r : ranks) {
        if (r < 0 || r >= world)
            throw value_error("new_subgroup: rank " + std::to_string(r) +
                              " is not a rank of a world of " + std::to_string(world));
        if (seen[size_t(r)]++)
            throw value_error("new_subgroup: rank " + std::to_string(r) + " is listed twice");
    }
    return detail::make_mpi_subgroup(ranks);
}

void barrier() {
    default_group()->barrier()->wait();
}
void all_reduce(const Tensor& t, ReduceOp op) {
    default_group()->all_reduce(t, op)->wait();
}
void broadcast(const Tensor& t, int root) {
    default_group()->broadcast(t, root)->wait();
}
void all_gather(const std::vector<Tensor>& outputs, const Tensor& input) {
    default_group()->all_gather(outputs, input)->wait();
}
void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs, ReduceOp op) {
    default_group()->reduce_scatter(output, inputs, op)->wait();
}
std::shared_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op) {
    return default_group()->all_reduce(t, op);
}
std::shared_ptr<Work> broadcast_async(const Tensor& t, int root) {
    return default_group()->broadcast(t, root);
}

}  // namespace tg::distributed
