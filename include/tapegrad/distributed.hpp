#pragma once
/// Collectives across processes, for data-parallel training (docs/distributed.md). tapegrad
/// moves no bytes itself: MPI (Open MPI, started by mpirun or Slurm's srun) carries CPU and
/// OpenCL tensors, NCCL CUDA tensors.
///
///     tg::distributed::init(&argc, &argv);           // rank and world size from the launcher
///     auto t = tg::ones({4});
///     tg::distributed::all_reduce(t);                // t = the sum of every rank's t
///     if (tg::distributed::rank() == 0) save(...);
///     tg::distributed::barrier();
///
/// Collectives are called in the same order on every rank, as in MPI. nn::DistributedDataParallel
/// (tapegrad/nn/distributed_data_parallel.hpp) builds on them.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tapegrad/error.hpp"
#include "tapegrad/tensor.hpp"
#pragma GCC visibility push(default)

namespace tg {

/// Misuse across ranks (parameters that differ between ranks, collectives before init()) and
/// errors the communication library reports.
struct distributed_error : error {
    using error::error;
};

namespace distributed {

/// How all_reduce and reduce_scatter combine the ranks' values (LibTorch's c10d::ReduceOp).
/// Avg is Sum divided by the world size, for floating-point tensors only.
enum class ReduceOp : uint8_t { Sum, Product, Min, Max, Avg };

/// A collective in flight. wait() blocks until it is done, writes device tensors back and
/// rethrows the collective's error; waiting twice is allowed.
class Work {
public:
    virtual ~Work();
    virtual void wait() = 0;
    /// Whether the communication finished (wait() may still have a device copy to do).
    virtual bool is_completed() = 0;
    /// When the communication started and ended, in seconds of std::chrono::steady_clock (0
    /// until then): for timelines of what overlapped what.
    double started_at() const { return started_.load(); }
    double ended_at() const { return ended_.load(); }

protected:
    std::atomic<double> started_{0}, ended_{0};
};

/// What a group has done since it was made: collectives launched and the bytes all-reduced.
struct GroupStats {
    uint64_t all_reduces = 0, broadcasts = 0, all_gathers = 0, reduce_scatters = 0, barriers = 0;
    uint64_t all_reduce_bytes = 0;
};

/// The ranks that communicate, and how. Every collective is asynchronous: it returns at once and
/// runs in order on the group's communication thread, so backward can go on while it runs.
/// Tensors must be contiguous, float32, float64 or int64 (value_error, dtype_error otherwise),
/// and must not be touched until wait() returns.
class ProcessGroup {
public:
    virtual ~ProcessGroup();
    virtual int rank() const = 0;
    virtual int size() const = 0;
    /// "mpi" or "nccl".
    virtual std::string backend() const = 0;
    /// t becomes the reduction of every rank's t, in place.
    virtual std::shared_ptr<Work> all_reduce(const Tensor& t, ReduceOp op = ReduceOp::Sum) = 0;
    /// t becomes root's t on every rank.
    virtual std::shared_ptr<Work> broadcast(const Tensor& t, int root = 0) = 0;
    /// outputs[r] becomes rank r's input; outputs holds size() tensors of input's shape and dtype.
    virtual std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs,
                                             const Tensor& input) = 0;
    /// output becomes the reduction over all ranks of their inputs[rank()]; inputs holds size()
    /// tensors of output's shape and dtype.
    virtual std::shared_ptr<Work> reduce_scatter(const Tensor& output,
                                                 const std::vector<Tensor>& inputs,
                                                 ReduceOp op = ReduceOp::Sum) = 0;
    virtual std::shared_ptr<Work> barrier() = 0;
    virtual GroupStats stats() const = 0;
};

/// Starts MPI with MPI_THREAD_SERIALIZED (unless the program already did) and makes the world
/// the default group; a process started without a launcher is a world of one. Also makes an
/// exception that no rank catches abort every rank (MPI_Abort) after printing "tapegrad rank r of
/// n: <what>", instead of leaving the others waiting in a collective. Calling it again does
/// nothing. backend_unavailable when tapegrad was built without MPI (TG_MPI=OFF).
void init(int* argc = nullptr, char*** argv = nullptr);
/// Whether init() ran (and finalize() did not).
bool is_initialized();
/// Waits for the default group's collectives, stops its thread and finalizes MPI (if init()
/// started it). Runs at exit if the program does not call it.
void finalize();
/// This process's rank in the world, the world's size, and its rank among the processes on its
/// machine (for choosing a GPU). distributed_error before init().
int rank();
int world_size();
int local_rank();
/// The world group made by init() (distributed_error before init()).
std::shared_ptr<ProcessGroup> default_group();
/// A new group over the whole world with its own communicator: "mpi", or "nccl" for CUDA tensors
/// (backend_unavailable when not built). Collective: every rank must call it.
std::shared_ptr<ProcessGroup> new_group(const std::string& backend = "mpi");
/// A group of the listed world ranks ("mpi"), its rank i being ranks[i], with its own
/// communicator, as torch.distributed.new_group(ranks): collective over the whole world (every
/// rank passes the same list); a rank not in the list gets nullptr. value_error for an empty
/// list, a repeated rank or one outside [0, world_size()).
std::shared_ptr<ProcessGroup> new_subgroup(const std::vector<int>& ranks);

/// The default group's collectives, waited for.
void barrier();
void all_reduce(const Tensor& t, ReduceOp op = ReduceOp::Sum);
void broadcast(const Tensor& t, int root = 0);
void all_gather(const std::vector<Tensor>& outputs, const Tensor& input);
void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                    ReduceOp op = ReduceOp::Sum);
/// The same, not waited for.
std::shared_ptr<Work> all_reduce_async(const Tensor& t, ReduceOp op = ReduceOp::Sum);
std::shared_ptr<Work> broadcast_async(const Tensor& t, int root = 0);

}  // namespace distributed
}  // namespace tg

#pragma GCC visibility pop
