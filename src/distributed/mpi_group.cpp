// The MPI process group: each collective stages device tensors through the host, posts one MPI
// call to the communication thread (Note [One communication thread]) and returns its Work.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "distributed/comm_thread.hpp"
#include "distributed/group_checks.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/autograd.hpp"

namespace tg::distributed::detail {
namespace {

void check_mpi(int rc, const char* what) {
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw distributed_error(std::string(what) + ": MPI error: " + std::string(msg, size_t(len)));
}

MPI_Datatype mpi_type(Dtype d) {
    switch (d) {
        case Dtype::Float32:
            return MPI_FLOAT;
        case Dtype::Float64:
            return MPI_DOUBLE;
        case Dtype::Int64:
            return MPI_INT64_T;
        case Dtype::Bool:
            return MPI_UINT8_T;
        default:  // check_tensor refuses the other dtypes
            return MPI_DATATYPE_NULL;
    }
}

MPI_Op mpi_op(ReduceOp op) {
    switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg:
            return MPI_SUM;
        case ReduceOp::Product:
            return MPI_PROD;
        case ReduceOp::Min:
            return MPI_MIN;
        case ReduceOp::Max:
            return MPI_MAX;
    }
    return MPI_OP_NULL;
}

/// The first byte of a CPU tensor.
unsigned char* bytes_of(const Tensor& t) {
    return dispatch_all(t.dtype(), [&](auto tag) {
        return reinterpret_cast<unsigned char*>(t.data_ptr<decltype(tag)>());
    });
}

/// A contiguous host copy of a tensor (the tensor itself on the CPU) and how to write it back.
struct Staged {
    Tensor dev, host;
    static Staged of(const Tensor& t) {
        NoGradGuard no_grad;
        return {t, t.device().is_cpu() ? t : t.to(Device::cpu())};
    }
    void* ptr() const { return bytes_of(host); }
    size_t bytes() const { return size_t(host.numel()) * element_size(host.dtype()); }
    /// After the collective wrote host: copy it to the device, or bump the CPU tensor's version.
    void write_back() const {
        if (dev.device().is_cpu()) {
            runtime::mark_modified(dev);
            return;
        }
        NoGradGuard no_grad;
        Tensor d = dev;
        d.copy_(host.to(d.device()));
    }
};

void divide(const Staged& s, int world) {
    const int64_t n = s.host.numel();
    if (s.host.dtype() == Dtype::Float32) {
        float* p = s.host.data_ptr<float>();
        for (int64_t i = 0; i < n; ++i)
            p[i] /= float(world);
    } else {
        double* p = s.host.data_ptr<double>();
        for (int64_t i = 0; i < n; ++i)
            p[i] /= double(world);
    }
}

class MpiGroup final : public ProcessGroup {
public:
    MpiGroup() {
        comm_thread().run_sync([this] {
            check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "new_group");
            adopt();
        });
    }
    /// world ranks `ranks` in that order; member() is false on the other ranks.
    explicit MpiGroup(const std::vector<int>& ranks) {
        comm_thread().run_sync([this, &ranks] {
            int me = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &me);
            auto at = std::find(ranks.begin(), ranks.end(), me);
            const int color = at == ranks.end() ? MPI_UNDEFINED : 0;
            check_mpi(MPI_Comm_split(MPI_COMM_WORLD, color, int(at - ranks.begin()), &comm_),
                      "new_subgroup");
            if (comm_ != MPI_COMM_NULL)
                adopt();
        });
    }
    bool member() const { return comm_ != MPI_COMM_NULL; }
    ~MpiGroup() override {
        if (comm_ == MPI_COMM_NULL)
            return;
        if (CommThread* t = comm_thread_if_running()) {
            MPI_Comm c = comm_;
            // a program may call MPI_Finalize itself before tapegrad's teardown at exit: the
            // communicator went with it then, and MPI_Comm_free would abort the process
            t->post(
                [c]() mutable {
                    int finalized = 0;
                    MPI_Finalized(&finalized);
                    if (!finalized)
                        MPI_Comm_free(&c);
                },
                nullptr);
        }
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string backend() const override { return "mpi"; }

    std::shared_ptr<Work> all_reduce(const Tensor& t, ReduceOp op) override {
        check_tensor("all_reduce", t);
        check_op("all_reduce", t, op);
        Staged s = Staged::of(t);
        ++stats_.all_reduces;
        stats_.all_reduce_bytes += s.bytes();
        return launch([s] { s.write_back(); },
                      [s, op, c = comm_, world = size_] {
                          check_mpi(MPI_Allreduce(MPI_IN_PLACE, s.ptr(), int(s.host.numel()),
                                                  mpi_type(s.host.dtype()), mpi_op(op), c),
                                    "all_reduce");
                          if (op == ReduceOp::Avg)
                              divide(s, world);
                      });
    }
    std::shared_ptr<Work> broadcast(const Tensor& t, int root) override {
        check_tensor("broadcast", t);
        check_root("broadcast", root, size_);
        Staged s = Staged::of(t);
        ++stats_.broadcasts;
        return launch([s] { s.write_back(); },
                      [s, root, c = comm_] {
                          check_mpi(MPI_Bcast(s.ptr(), int(s.host.numel()),
                                              mpi_type(s.host.dtype()), root, c),
                                    "broadcast");
                      });
    }
    std::shared_ptr<Work> all_gather(const std::vector<Tensor>& outputs,
                                     const Tensor& input) override {
        check_tensor("all_gather", input);
        check_per_rank("all_gather", "outputs", outputs, input, size_,
                       [](const Tensor& t) { check_tensor("all_gather", t); });
        Staged in = Staged::of(input);
        ++stats_.all_gathers;
        if (unsigned char* base = consecutive(outputs, in)) {
            // the outputs are the pieces of one CPU buffer: received into it, with no copy at
            // wait (in place when the input is this rank's piece already)
            const bool in_place = bytes_of(in.host) == base + size_t(rank_) * in.bytes();
            return launch(
                [outputs] {
                    for (const Tensor& o : outputs)
                        runtime::mark_modified(o);
                },
                [in, outputs, base, in_place, c = comm_] {  // outputs: base stays alive
                    const int n = int(in.host.numel());
                    const MPI_Datatype t = mpi_type(in.host.dtype());
                    check_mpi(
                        MPI_Allgather(in_place ? MPI_IN_PLACE : in.ptr(), n, t, base, n, t, c),
                        "all_gather");
                });
        }
        auto buf = std::make_shared<std::vector<unsigned char>>(in.bytes() * size_t(size_));
        return launch(
            [buf, outputs, n = in.bytes()] {
                for (size_t r = 0; r < outputs.size(); ++r)
                    write_bytes(outputs[r], buf->data() + r * n);
            },
            [in, buf, c = comm_] {
                const int n = int(in.host.numel());
                check_mpi(MPI_Allgather(in.ptr(), n, mpi_type(in.host.dtype()), buf->data(), n,
                                        mpi_type(in.host.dtype()), c),
                          "all_gather");
            });
    }
    std::shared_ptr<Work> reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                                         ReduceOp op) override {
        check_tensor("reduce_scatter", output);
        check_op("reduce_scatter", output, op);
        check_per_rank("reduce_scatter", "inputs", inputs, output, size_,
                       [](const Tensor& t) { check_tensor("reduce_scatter", t); });
        Staged out = Staged::of(output);
        const size_t n = out.bytes();
        auto send = std::make_shared<std::vector<unsigned char>>(n * inputs.size());
        for (size_t r = 0; r < inputs.size(); ++r) {
            Staged in = Staged::of(inputs[r]);
            std::memcpy(send->data() + r * n, in.ptr(), n);
        }
        ++stats_.reduce_scatters;
        return launch(
            [out] { out.write_back(); },
            [out, send, op, c = comm_, world = size_] {
                check_mpi(MPI_Reduce_scatter_block(send->data(), out.ptr(), int(out.host.numel()),
                                                   mpi_type(out.host.dtype()), mpi_op(op), c),
                          "reduce_scatter");
                if (op == ReduceOp::Avg)
                    divide(out, world);
            });
    }
    std::shared_ptr<Work> barrier() override {
        ++stats_.barriers;
        return launch({}, [c = comm_] { check_mpi(MPI_Barrier(c), "barrier"); });
    }
    GroupStats stats() const override { return stats_.snapshot(); }

private:
    /// The first byte of outputs when they are CPU tensors one after the other in memory and
    /// the input is either outside them or exactly this rank's piece; else null.
    unsigned char* consecutive(const std::vector<Tensor>& outputs, const Staged& in) const {
        const size_t n = in.bytes();
        for (const Tensor& o : outputs)
            if (!o.device().is_cpu() || n == 0)
                return nullptr;
        unsigned char* base = bytes_of(outputs[0]);
        for (size_t r = 1; r < outputs.size(); ++r)
            if (bytes_of(outputs[r]) != base + r * n)
                return nullptr;
        const unsigned char* p = bytes_of(in.host);
        const bool outside = p + n <= base || p >= base + outputs.size() * n;
        return outside || p == base + size_t(rank_) * n ? base : nullptr;
    }
    static void write_bytes(const Tensor& dst, const unsigned char* src) {
        if (dst.device().is_cpu()) {
            std::memcpy(bytes_of(dst), src, size_t(dst.numel()) * element_size(dst.dtype()));
            runtime::mark_modified(dst);
            return;
        }
        NoGradGuard no_grad;
        Tensor d = dst;
        d.copy_(
            from_blob(const_cast<unsigned char*>(src), dst.sizes(), dst.dtype()).to(d.device()));
    }
    std::shared_ptr<Work> launch(std::function<void()> finish, std::function<void()> task) {
        auto work = std::make_shared<TaskWork>(std::move(finish));
        comm_thread().post(std::move(task), work);
        return work;
    }
    void adopt() {
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0, size_ = 1;
    GroupCounters stats_;
};

}  // namespace

std::shared_ptr<ProcessGroup> make_mpi_group() {
    return std::make_shared<MpiGroup>();
}

std::shared_ptr<ProcessGroup> make_mpi_subgroup(const std::vector<int>& ranks) {
    auto g = std::make_shared<MpiGroup>(ranks);
    return g->member() ? g : nullptr;
}

}  // namespace tg::distributed::detail
