/// Bad-input catalogue (tests/bad_inputs.hpp): data parallelism in one process, without
/// tg::distributed::init() (what needs several ranks, such as models that differ between them,
/// is in tests/test_distributed_mpi.cpp). The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_distributed
#include <string>
#include <vector>

#include "bad_inputs.hpp"

using tgtest::check_table;
namespace data = tg::data;
namespace dist = tg::distributed;
namespace nn = tg::nn;

namespace {
struct Fixtures {
    tg::Tensor images = tg::zeros({5, 2});
    tg::Tensor labels = tg::zeros({5}, tg::kInt64);
    tg::Tensor t = tg::ones({3});
    tg::Tensor leaf = tg::ones({3}).requires_grad_();
    nn::Linear fc{3, 2};
    data::DistributedSampler sampler{10, {2, 0}};
    std::shared_ptr<nn::Module> none;
    nn::DistributedDataParallelOptions options;
    /// Whether this tapegrad has MPI (without it every tg::distributed call says so; with it,
    /// rank() before init() is a distributed_error).
    static bool built_with_mpi() {
        try {
            dist::rank();
        } catch (const tg::backend_unavailable&) {
            return false;
        } catch (const tg::distributed_error&) {
        }
        return true;
    }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(data_parallel_arguments, Fixtures) {
    using data::DistributedSampler;
    check_table(
        "Data parallelism: arguments",
        {
            TG_BAD(nn::DistributedDataParallel(none), value_error, "DistributedDataParallel",
                   "null"),
            TG_BAD(nn::DistributedDataParallel(fc, options.bucket_cap_mb(0)), value_error,
                   "bucket_cap_mb", "0"),
            TG_BAD(nn::DistributedDataParallel(fc, options.bucket_cap_mb(1).gradient_chunk_mb(-1)),
                   value_error, "gradient_chunk_mb", "-1"),
            TG_BAD(DistributedSampler(10, {2, 2}), value_error, "DistributedSampler", "rank 2",
                   "num_replicas 2"),
            TG_BAD(DistributedSampler(10, {0, 0}), value_error, "DistributedSampler",
                   "num_replicas 0"),
            TG_BAD(DistributedSampler(-1, {1, 0}), value_error, "DistributedSampler", "size -1"),
            TG_BAD(sampler.set_epoch(-1), value_error, "set_epoch", "-1"),
            TG_BAD(data::DataLoader(images, labels, DistributedSampler(7, {2, 0})), shape_error,
                   "DataLoader", "sampler", "7", "5", "[5,2]"),
            TG_BAD(tg::autograd::queue_callback([] {}), autograd_error, "queue_callback",
                   "no backward pass"),
            TG_BAD(t.register_post_accumulate_grad_hook([](const tg::Tensor&) {}), autograd_error,
                   "register_post_accumulate_grad_hook", "[3]", "leaf that requires grad"),
            TG_BAD((leaf * 2).register_post_accumulate_grad_hook([](const tg::Tensor&) {}),
                   autograd_error, "register_post_accumulate_grad_hook", "leaf"),
            TG_BAD(leaf.register_post_accumulate_grad_hook(nullptr), value_error,
                   "register_post_accumulate_grad_hook", "empty"),
        });
}

BOOST_FIXTURE_TEST_CASE(collectives_before_init, Fixtures) {
    if (!built_with_mpi()) {
        BOOST_TEST_MESSAGE("built without MPI: every tg::distributed call is backend_unavailable");
        BOOST_CHECK_THROW(dist::rank(), tg::backend_unavailable);
        return;
    }
    BOOST_TEST(!dist::is_initialized());
    check_table("Data parallelism before tg::distributed::init()",
                {
                    TG_BAD(dist::rank(), distributed_error, "rank", "init()"),
                    TG_BAD(dist::world_size(), distributed_error, "world_size", "init()"),
                    TG_BAD(dist::all_reduce(t), distributed_error, "init()"),
                    TG_BAD(dist::barrier(), distributed_error, "init()"),
                    TG_BAD(dist::new_group("mpi"), distributed_error, "new_group", "init()"),
                    TG_BAD(nn::DistributedDataParallel(fc), distributed_error, "init()"),
                    TG_BAD(data::DistributedSampler(10), distributed_error, "init()"),
                });
    BOOST_TEST(!dist::is_initialized());
}
