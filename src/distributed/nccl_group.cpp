// The NCCL process group, for CUDA tensors (built with TG_CUDA and TG_MPI when NCCL is found:
// TG_NCCL). Each rank drives the GPU local_rank() % device_count; the NCCL unique id travels over
// the MPI world group. Collectives are enqueued on the group's own non-blocking stream after an
// event on the default stream (which the CUDA backend runs everything on, Note in
// backend/cuda/backend.cu), so they start after the kernels that produced their input and
// overlap whatever the default stream does next; Work::wait synchronises with an event.
#include <cuda_runtime.h>
#include <nccl.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "distributed/comm_thread.hpp"
#include "distributed/group_checks.hpp"
#include "tapegrad/autograd.hpp"

namespace tg::distributed::detail {
namespace {

void check_cuda(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw distributed_error(std::string(what) + ": CUDA error: " + cudaGetErrorString(e));
}
void check_nccl(ncclResult_t r, const char* what) {
    if (r != ncclSuccess)
        throw distributed_error(std::string(what) + ": NCCL error: " + ncclGetErrorString(r));
}

ncclDataType_t nccl_type(Dtype d) {
    switch (d) {
        case Dtype::Float32:
            return ncclFloat32;
        case Dtype::Float64:
            return ncclFloat64;
        case Dtype::Int64:
            return ncclInt64;
        case Dtype::Bool:
            return ncclUint8;
        default:  // check_tensor refuses the other dtypes
            return ncclFloat32;
    }
}

ncclRedOp_t nccl_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::Sum:
            return ncclSum;
        case ReduceOp::Product:
            return ncclProd;
        case ReduceOp::Min:
            return ncclMin;
        case ReduceOp::Max:
            return ncclMax;
        case ReduceOp::Avg:
            return ncclAvg;
    }
    return ncclSum;
}

void* device_ptr(const Tensor& t) {
    return static_cast<unsigned char*>(t.impl()->storage->data) +
           t.storage_offset() * int64_t(element_size(t.dtype()));
}

class CudaWork final : public Work {
public:
    CudaWork(cudaEvent_t done, double started) : done_(done) { started_.store(started); }
    ~CudaWork() override { cudaEventDestroy(done_); }
    void wait() override {
        check_cuda(cudaEventSynchronize(done_), "Work::wait");
        ended_.store(steady_seconds());
    }
    bool is_completed() override { return cudaEventQuery(done_) == cudaSuccess; }

private:
    cudaEvent_t done_;
};

class NcclGroup final : public ProcessGroup {
public:
    NcclGroup() {
        auto world = default_group();
        rank_ = world->rank();
        size_ = world->size();
        int devices = 0;
        const cudaError_t e = cudaGetDeviceCount(&devices);
        if (e != cudaSuccess || devices == 0) {
            cudaGetLastError();
            throw backend_unavailable(std::string("new_group(\"nccl\"): no CUDA device (") +
                                      (e != cudaSuccess ? cudaGetErrorString(e) : "none found") +
                                      ")");
        }
        device_ = local_rank() % devices;
        check_cuda(cudaSetDevice(device_), "new_group(\"nccl\")");
        ncclUniqueId id;
        if (rank_ == 0)
            check_nccl(ncclGetUniqueId(&id), "new_group(\"nccl\")");
        static_assert(sizeof(id) % sizeof(int64_t) == 0, "the NCCL id travels as int64 words");
        Tensor words = tg::zeros({int64_t(sizeof(id) / sizeof(int64_t))}, kInt64);
        if (rank_ == 0)
            std::memcpy(words.data_ptr<int64_t>(), &id, sizeof(id));
        world->broadcast(words, 0)->wait();
        std::memcpy(&id, words.data_ptr<int64_t>(), sizeof(id));
        check_nccl(ncclCommInitRank(&comm_, size_, id, rank_), "new_group(\"nccl\")");
        check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                   "new_group(\"nccl\")");
    }
    ~NcclGroup() override {
        ncclCommDestroy(comm_);
        cudaStreamDestroy(stream_);
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string backend() const override { return "nccl"; }

    std::shared_ptr<Work> all_reduce(const Tensor& t, ReduceOp op) override {
        check(t, "all_reduce");
        check_op("all_reduce", t, op);
        ++stats_.all_reduces;
        stats_.all_reduce_bytes += uint64_t(t.numel()) * element_size(t.dtype());
        return launch([&] {
            check_nccl(ncclAllReduce(device_ptr(t), device_ptr(t), size_t(t.numel()),
                                     nccl_type(t.dtype()), nccl_op(op), comm_, stream_),
                       "all_reduce");
        });
    }
    std::shared_ptr<Work> broadcast(const Tensor& t, int root) override {
        check(t, "broadcast");
        check_root("broadcast", root, size_);
        ++stats_.broadcasts;
        return launch([&] {
            check_nccl(ncclBroadcast(device_ptr(t), device_ptr(t), size_t(t.numel()),
                                     nccl_type(t.dtype()), root, comm_, stream_),
                       "broadcast");
        });
    }
    std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs,
                                     const Tensor& input) override {
        check(input, "all_gather");
        check_per_rank("all_gather", "outputs", outputs, input, size_,
                       [this](const Tensor& t) { check(t, "all_gather"); });
        ++stats_.all_gathers;
        return launch([&] {
            check_nccl(ncclGroupStart(), "all_gather");
            for (int r = 0; r < size_; ++r)  // root r broadcasts its input into outputs[r]
                check_nccl(ncclBroadcast(device_ptr(input), device_ptr(outputs[size_t(r)]),
                                         size_t(input.numel()), nccl_type(input.dtype()), r, comm_,
                                         stream_),
                           "all_gather");
            check_nccl(ncclGroupEnd(), "all_gather");
        });
    }
    std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                                         ReduceOp op) override {
        check(output, "reduce_scatter");
        check_op("reduce_scatter", output, op);
        check_per_rank("reduce_scatter", "inputs", inputs, output, size_,
                       [this](const Tensor& t) { check(t, "reduce_scatter"); });
        ++stats_.reduce_scatters;
        return launch([&] {
            check_nccl(ncclGroupStart(), "reduce_scatter");
            for (int r = 0; r < size_; ++r)  // rank r receives the reduction of inputs[r]
                check_nccl(ncclReduce(device_ptr(inputs[size_t(r)]), device_ptr(output),
                                      size_t(output.numel()), nccl_type(output.dtype()),
                                      nccl_op(op), r, comm_, stream_),
                           "reduce_scatter");
            check_nccl(ncclGroupEnd(), "reduce_scatter");
        });
    }
    std::shared_ptr<Work> barrier() override {
        ++stats_.barriers;
        return default_group()->barrier();
    }
    GroupStats stats() const override { return stats_.snapshot(); }

private:
    void check(const Tensor& t, const char* what) const {
        if (!t.defined())
            throw value_error(std::string(what) + ": undefined tensor");
        if (t.device().type != DeviceType::CUDA)
            throw device_error(std::string(what) + ": tensor " + shape_str(t.sizes()) + " on " +
                               t.device().str() + ": the NCCL group carries CUDA tensors");
        if (t.device().index != device_)
            throw device_error(
                std::string(what) + ": tensor on " + t.device().str() +
                ", this rank's NCCL communicator drives cuda:" + std::to_string(device_));
        if (!t.is_contiguous())
            throw value_error(std::string(what) + ": tensor " + shape_str(t.sizes()) +
                              " is not contiguous (call .contiguous() first)");
    }
    /// Orders the collective after the default stream's work, enqueues it, returns its Work.
    template <class F>
    std::shared_ptr<Work> launch(F&& enqueue) {
        check_cuda(cudaSetDevice(device_), "collective");
        cudaEvent_t ready, done;
        check_cuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "collective");
        check_cuda(cudaEventRecord(ready, cudaStreamLegacy), "collective");
        check_cuda(cudaStreamWaitEvent(stream_, ready, 0), "collective");
        cudaEventDestroy(ready);
        enqueue();
        check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "collective");
        check_cuda(cudaEventRecord(done, stream_), "collective");
        return std::make_shared<CudaWork>(done, steady_seconds());
    }

    ncclComm_t comm_ = nullptr;
    cudaStream_t stream_ = nullptr;
    int rank_ = 0, size_ = 1, device_ = 0;
    GroupCounters stats_;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_nccl_group() {
    return std::make_shared<NcclGroup>();
}

}  // namespace tg::distributed::detail
