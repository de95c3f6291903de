// tg::distributed and nn::DistributedDataParallel, run by CTest under mpirun with 1, 2 and 3
// ranks (tests/CMakeLists.txt): collectives, DDP against a single-process run on the global
// batch (f64, 1e-12) with bitwise-identical ranks, no_sync windows with one all-reduce per
// bucket, checkpointing inside, a memory budget, unused parameters, mismatched models, the
// sampler.
#define BOOST_TEST_MODULE distributed_mpi
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <set>
#include <tapegrad/tapegrad.hpp>

using tg::Tensor;
namespace dist = tg::distributed;
namespace nn = tg::nn;

struct MpiFixture {
    MpiFixture() { dist::init(); }
    ~MpiFixture() { dist::finalize(); }
};
BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

namespace {

const tg::TensorOptions f64 = tg::kFloat64;

/// Every rank's copy of t (f64 or int64), gathered.
std::vector<Tensor> gathered(const Tensor& t) {
    std::vector<Tensor> out;
    for (int r = 0; r < dist::world_size(); ++r)
        out.push_back(tg::empty(t.sizes(), tg::TensorOptions(t.dtype())));
    dist::all_gather(out, t.contiguous());
    return out;
}

/// Whether every rank holds exactly (bitwise) the same values in every parameter.
bool identical_across_ranks(const std::vector<Tensor>& params) {
    for (const Tensor& p : params) {
        auto all = gathered(p.detach());
        for (const Tensor& a : all)
            if (std::memcmp(a.data_ptr<double>(), all[0].data_ptr<double>(),
                            size_t(a.numel()) * sizeof(double)) != 0)
                return false;
    }
    return true;
}

double max_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i)
        m = std::max(m, (a[i] - b[i]).abs().max().item<double>());
    return m;
}

nn::Sequential mlp() {
    nn::Sequential s(nn::Linear(6, 16), nn::Tanh(), nn::Linear(16, 16), nn::Tanh(),
                     nn::Linear(16, 3));
    s->to(tg::kFloat64);
    return s;
}

/// A copy of src's parameter values in a fresh model (the single-process reference).
nn::Sequential clone_of(const nn::Sequential& src) {
    auto dst = mlp();
    tg::NoGradGuard g;
    auto a = src->parameters(), b = dst->parameters();
    for (size_t i = 0; i < a.size(); ++i)
        b[i].copy_(a[i]);
    return dst;
}

/// Trains `steps` SGD steps on batches of `global` rows (the same data on every rank), each
/// rank running DDP on its slice, cut into `micro` micro-batches per step (all but the last
/// under no_sync). The reference runs the whole batch in one process. Returns both parameter
/// sets and checks one all-reduce per bucket per step.
struct Run {
    std::vector<Tensor> ddp, ref;
    size_t buckets = 0;
    uint64_t chunks = 0;  // gradient chunks all-reduced before their bucket
};
Run train(int steps, int64_t global, int micro, bool ckpt, double cap_mb = 0.0005,
          double chunk_mb = 2, bool reentrant = true) {
    const int world = dist::world_size(), r = dist::rank();
    tg::manual_seed(100 + uint64_t(r));  // different initial weights: DDP must broadcast rank 0's
    auto model = mlp();
    nn::DistributedDataParallel ddp(
        model,
        nn::DistributedDataParallelOptions().bucket_cap_mb(cap_mb).gradient_chunk_mb(chunk_mb));
    auto ref = clone_of(model);
    tg::optim::SGD opt(model->parameters(), 0.05), ref_opt(ref->parameters(), 0.05);
    tg::Generator gen(7);
    const int64_t local = global / world, mb = local / micro;
    auto group = dist::default_group();
    Run out;
    out.buckets = ddp.buckets().size();
    for (int s = 0; s < steps; ++s) {
        Tensor x = tg::randn({global, 6}, gen, f64), y = tg::randn({global, 3}, gen, f64);
        ref_opt.zero_grad();
        tg::mse_loss(ref(x), y).backward();
        ref_opt.step();
        opt.zero_grad();
        const auto before = group->stats().all_reduces;
        const auto ddp_before = ddp.stats();
        for (int m = 0; m < micro; ++m) {
            Tensor xm = x.narrow(0, r * local + m * mb, mb),
                   ym = y.narrow(0, r * local + m * mb, mb);
            auto run = [&] {
                Tensor out_m = ckpt ? nn::checkpoint_sequential(model, 2, xm, reentrant) : ddp(xm);
                (tg::mse_loss(out_m, ym) / double(micro)).backward();
            };
            if (m + 1 < micro) {
                auto guard = ddp.no_sync();
                run();
            } else {
                run();
            }
        }
        // one all-reduce per bucket per window (a bucket sent in chunks: one per chunk, and
        // one for the rest if the chunks did not cover it)
        const auto ddp_after = ddp.stats();
        const auto chunks = ddp_after.chunk_all_reduces - ddp_before.chunk_all_reduces;
        BOOST_TEST(ddp_after.bucket_launches - ddp_before.bucket_launches == out.buckets);
        BOOST_TEST(group->stats().all_reduces - before ==
                   ddp_after.all_reduces - ddp_before.all_reduces);
        if (chunks == 0)
            BOOST_TEST(group->stats().all_reduces - before == out.buckets);
        out.chunks += chunks;
        opt.step();
    }
    out.ddp = model->parameters();
    out.ref = ref->parameters();
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(collectives_reduce_broadcast_gather_scatter) {
    const int n = dist::world_size(), r = dist::rank();
    BOOST_TEST(n >= 1);
    BOOST_TEST(r < n);
    BOOST_TEST(dist::local_rank() >= 0);
    Tensor a = tg::full({3}, double(r + 1), f64);
    dist::all_reduce(a);
    BOOST_TEST(a.to_vector<double>() == std::vector<double>(3, n * (n + 1) / 2.0),
               boost::test_tools::per_element());
    Tensor m = tg::tensor({double(r), -double(r)}, tg::kFloat32);
    dist::all_reduce(m, dist::ReduceOp::Max);
    BOOST_TEST(m.to_vector<float>() == (std::vector<float>{float(n - 1), 0.f}),
               boost::test_tools::per_element());
    Tensor avg = tg::full({2}, double(r), f64);
    dist::all_reduce(avg, dist::ReduceOp::Avg);
    BOOST_TEST(avg.to_vector<double>()[0] == (n - 1) / 2.0);
    Tensor i = tg::tensor(std::vector<int64_t>{int64_t(r) + 2});
    dist::all_reduce(i, dist::ReduceOp::Product);
    int64_t prod = 1;
    for (int k = 0; k < n; ++k)
        prod *= k + 2;
    BOOST_TEST(i.item<int64_t>() == prod);

    Tensor b = tg::full({2, 2}, double(r), f64);
    dist::broadcast(b, n - 1);
    BOOST_TEST(b.sum().item<double>() == 4.0 * (n - 1));

    auto all = gathered(tg::full({2}, double(10 * r), f64));
    for (int k = 0; k < n; ++k)
        BOOST_TEST(all[size_t(k)].to_vector<double>()[1] == 10.0 * k);

    std::vector<Tensor> inputs;
    for (int k = 0; k < n; ++k)
        inputs.push_back(tg::full({2}, double(k * 100 + r), f64));
    Tensor out = tg::empty({2}, f64);
    dist::reduce_scatter(out, inputs);
    BOOST_TEST(out.to_vector<double>()[0] == double(r * 100 * n) + n * (n - 1) / 2.0);

    auto work = dist::all_reduce_async(tg::ones({4}, f64));
    work->wait();
    BOOST_TEST(work->is_completed());
    work->wait();  // twice is fine
    const auto before = dist::default_group()->stats();
    dist::barrier();
    BOOST_TEST(dist::default_group()->stats().barriers == before.barriers + 1);
}

BOOST_AUTO_TEST_CASE(all_gather_into_the_pieces_of_one_buffer) {
    // outputs that are consecutive pieces of one buffer are received into it directly: from a
    // separate input, and in place from this rank's own piece (as FullyShardedDataParallel does)
    const int world = dist::world_size(), r = dist::rank();
    for (bool in_place : {false, true}) {
        Tensor flat = tg::full({3 * int64_t(world)}, -1.0, f64);
        std::vector<Tensor> pieces;
        for (int k = 0; k < world; ++k)
            pieces.push_back(flat.narrow(0, 3 * k, 3));
        Tensor mine = tg::arange(3, f64) + 10.0 * r;
        if (in_place)
            pieces[size_t(r)].copy_(mine);
        const uint32_t version = flat._version();
        dist::all_gather(pieces, in_place ? pieces[size_t(r)] : mine);
        BOOST_TEST_CONTEXT("in place " << in_place) {
            for (int k = 0; k < world; ++k)
                for (int i = 0; i < 3; ++i)
                    BOOST_TEST(flat[3 * k + i].item<double>() == 10.0 * k + i);
            BOOST_TEST(flat._version() > version);
        }
    }
}

BOOST_AUTO_TEST_CASE(collectives_reject_bad_tensors_before_communicating) {
    const int n = dist::world_size();
    BOOST_CHECK_THROW(dist::all_reduce(tg::ones({3, 4}, f64).t()), tg::value_error);
    BOOST_CHECK_THROW(dist::all_reduce(Tensor()), tg::value_error);
    BOOST_CHECK_THROW(dist::all_reduce(tg::ones({2}, tg::kInt64), dist::ReduceOp::Avg),
                      tg::dtype_error);
    BOOST_CHECK_THROW(dist::broadcast(tg::ones({2}), n), tg::value_error);
    if (n > 1)
        BOOST_CHECK_THROW(dist::all_gather({tg::ones({2})}, tg::ones({2})), tg::value_error);
    std::vector<Tensor> wrong(size_t(n), tg::ones({3}));
    BOOST_CHECK_THROW(dist::all_gather(wrong, tg::ones({2})), tg::shape_error);
    BOOST_CHECK_THROW(dist::new_group("gloo"), tg::value_error);
    dist::barrier();  // every rank is still in step
}

BOOST_AUTO_TEST_CASE(collectives_on_opencl_tensors) {
    if (!tg::is_available(tg::Device::opencl(0)))
        return;
    const int n = dist::world_size(), r = dist::rank();
    Tensor a =
        tg::full({5}, double(r + 1), tg::TensorOptions(tg::kFloat32).device(tg::Device::opencl(0)));
    dist::all_reduce(a);
    BOOST_TEST(a.device() == tg::Device::opencl(0));
    BOOST_TEST(a.to(tg::Device::cpu()).to_vector<float>()[4] == float(n * (n + 1) / 2));
}

BOOST_AUTO_TEST_CASE(ddp_equals_one_process_on_the_global_batch) {
    Run run = train(20, 12, 1, false);
    BOOST_TEST(run.buckets > 1);  // a small cap: several buckets, launched during backward
    BOOST_TEST(identical_across_ranks(run.ddp));
    BOOST_TEST(max_diff(run.ddp, run.ref) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(ddp_one_bucket_with_the_default_cap) {
    Run run = train(5, 12, 1, false, 25);
    BOOST_TEST(run.buckets == 1u);
    BOOST_TEST(identical_across_ranks(run.ddp));
    BOOST_TEST(max_diff(run.ddp, run.ref) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(ddp_no_sync_accumulates_with_one_all_reduce_per_bucket) {
    Run run = train(20, 24, 4, false);  // 4 micro-batches per rank and step, 3 under no_sync
    BOOST_TEST(identical_across_ranks(run.ddp));
    BOOST_TEST(max_diff(run.ddp, run.ref) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(ddp_gradient_chunks_all_reduced_while_backward_runs) {
    // chunks of 512 bytes: the 16x16 and 16x6 weights (f64) go in row blocks of 4 and 10 rows,
    // 6 chunks per step
    Run run = train(20, 12, 1, false, 0.0005, 0.0005);
    BOOST_TEST(run.chunks == 20u * 6);
    BOOST_TEST(identical_across_ranks(run.ddp));
    BOOST_TEST(max_diff(run.ddp, run.ref) <= 1e-12);
    Run accumulated = train(10, 18, 3, false, 0.0005, 0.0005);  // no_sync windows too
    BOOST_TEST(accumulated.chunks > 0u);
    BOOST_TEST(max_diff(accumulated.ddp, accumulated.ref) <= 1e-12);
}

BOOST_AUTO_TEST_CASE(ddp_with_checkpointed_segments) {
    for (bool reentrant : {true, false}) {
        Run run = train(20, 24, 2, true, 0.0005, 2, reentrant);
        BOOST_TEST(identical_across_ranks(run.ddp));
        BOOST_TEST(max_diff(run.ddp, run.ref) <= 1e-12);
    }
}

BOOST_AUTO_TEST_CASE(ddp_under_a_memory_budget) {
    // the budget evicts activations in forward and recomputes them while backward runs: the
    // reducer's hooks still fire once per gradient (whole or in chunks), with the same
    // all-reduces, and the gradients equal the unconstrained step's bit for bit
    const int r = dist::rank(), world = dist::world_size();
    for (double chunk_mb : {2.0, 0.0005}) {
        tg::manual_seed(300);
        nn::Sequential net;
        for (int i = 0; i < 24; ++i) {
            net->push_back(nn::Linear(16, 16));
            net->push_back(nn::Tanh());
        }
        net->to(tg::kFloat64);
        nn::DistributedDataParallel ddp(
            net,
            nn::DistributedDataParallelOptions().bucket_cap_mb(0.0005).gradient_chunk_mb(chunk_mb));
        tg::Generator gen(9);
        const Tensor x = tg::randn({8 * world, 16}, gen, f64).narrow(0, 8 * r, 8).contiguous();
        auto group = dist::default_group();
        uint64_t reduces[2] = {0, 0}, launches[2] = {0, 0};
        auto step = [&](int k) {
            net->zero_grad();
            const auto before = ddp.stats();
            const auto group_before = group->stats().all_reduces;
            Tensor y = ddp(x);
            (y * y).sum().backward();
            launches[k] = ddp.stats().bucket_launches - before.bucket_launches;
            reduces[k] = group->stats().all_reduces - group_before;
            std::vector<double> g;
            for (const Tensor& p : net->parameters()) {
                auto gi = p.grad().to_vector<double>();
                g.insert(g.end(), gi.begin(), gi.end());
            }
            return g;
        };
        tg::memory::reset_peak();
        const std::vector<double> plain = step(0);
        const int64_t limit = tg::memory::stats().peak_saved_bytes / 3;
        tg::autograd::MemoryBudget budget(limit);
        BOOST_TEST(step(1) == plain);  // bit for bit
        const auto rep = budget.report();
        BOOST_TEST(rep.rematerializations > 0);
        BOOST_TEST(rep.peak_saved_bytes <= limit);
        BOOST_TEST(launches[1] == ddp.buckets().size());
        BOOST_TEST(launches[1] == launches[0]);
        BOOST_TEST(reduces[1] == reduces[0]);
    }
}

BOOST_AUTO_TEST_CASE(ddp_on_opencl_matches_the_cpu) {
    if (!tg::is_available(tg::Device::opencl(0)))
        return;
    const int r = dist::rank(), world = dist::world_size();
    tg::manual_seed(5);
    nn::Sequential cpu(nn::Linear(6, 16), nn::Tanh(), nn::Linear(16, 3));
    nn::Sequential dev(nn::Linear(6, 16), nn::Tanh(), nn::Linear(16, 3));
    {
        tg::NoGradGuard g;
        auto a = cpu->parameters(), b = dev->parameters();
        for (size_t i = 0; i < a.size(); ++i)
            b[i].copy_(a[i]);
    }
    dev->to(tg::Device::opencl(0));
    // chunks of 128 bytes: the weights go in row blocks through the host
    nn::DistributedDataParallel ddp_cpu(
        cpu, nn::DistributedDataParallelOptions().gradient_chunk_mb(0.0001));
    nn::DistributedDataParallel ddp_dev(
        dev, nn::DistributedDataParallelOptions().gradient_chunk_mb(0.0001));
    tg::optim::SGD opt_cpu(cpu->parameters(), 0.1), opt_dev(dev->parameters(), 0.1);
    tg::Generator gen(3);
    for (int step = 0; step < 5; ++step) {
        Tensor x = tg::randn({4 * world, 6}, gen).narrow(0, 4 * r, 4),
               y = tg::randn({4 * world, 3}, gen).narrow(0, 4 * r, 4);
        opt_cpu.zero_grad();
        opt_dev.zero_grad();
        tg::mse_loss(ddp_cpu(x), y).backward();
        tg::mse_loss(ddp_dev(x.to(tg::Device::opencl(0))), y.to(tg::Device::opencl(0))).backward();
        opt_cpu.step();
        opt_dev.step();
    }
    BOOST_TEST(ddp_dev.stats().chunk_all_reduces > 0u);
    auto a = cpu->parameters(), b = dev->parameters();
    for (size_t i = 0; i < a.size(); ++i)
        BOOST_TEST((a[i] - b[i].to(tg::Device::cpu())).abs().max().item<double>() < 1e-5);
}

BOOST_AUTO_TEST_CASE(nccl_group_on_cuda_tensors_or_skipped) {
    if (!tg::cuda::is_available()) {  // no GPU (CI): new_group("nccl") says so, on every rank
        BOOST_CHECK_THROW(dist::new_group("nccl"), tg::backend_unavailable);
        return;
    }
    auto nccl = dist::new_group("nccl");
    const tg::Device d = tg::Device::cuda(dist::local_rank() % tg::cuda::device_count());
    Tensor t = tg::full({8}, double(dist::rank() + 1), tg::TensorOptions(tg::kFloat32).device(d));
    nccl->all_reduce(t)->wait();
    const int n = dist::world_size();
    BOOST_TEST(t.to(tg::Device::cpu()).to_vector<float>()[7] == float(n * (n + 1) / 2));
}

namespace {
struct TwoHeadsImpl : nn::Module {
    TwoHeadsImpl() : Module("TwoHeads") {
        a = register_module("a", nn::Linear(4, 2));
        b = register_module("b", nn::Linear(4, 2));
        to(tg::kFloat64);
    }
    Tensor forward(const Tensor& x) override {  // b is used by rank 0 only
        return tg::distributed::rank() == 0 ? a(x) + b(x) : a(x);
    }
    nn::Linear a{nullptr}, b{nullptr};
};
TG_MODULE(TwoHeads);
}  // namespace

BOOST_AUTO_TEST_CASE(ddp_parameters_without_gradient_on_some_ranks) {
    for (bool find_unused : {false, true}) {
        tg::manual_seed(3);
        TwoHeads net;
        // b's weight [2,4] in pieces of one row: rank 0 sends them as backward writes them,
        // the others (b unused) when backward ends; the same collectives either way
        nn::DistributedDataParallel ddp(net, nn::DistributedDataParallelOptions()
                                                 .bucket_cap_mb(0.0001)
                                                 .gradient_chunk_mb(0.00001)
                                                 .find_unused_parameters(find_unused));
        Tensor x = tg::ones({3, 4}, f64);
        ddp(x).sum().backward();
        // b's gradient: rank 0's, averaged with zeros from the others
        const int n = dist::world_size();
        Tensor gb = net->b->bias.grad();
        BOOST_REQUIRE(gb.defined());
        BOOST_TEST(std::abs(gb.to_vector<double>()[0] - 3.0 / n) < 1e-15);
        BOOST_TEST(std::abs(net->a->bias.grad().to_vector<double>()[0] - 3.0) < 1e-15);
        BOOST_TEST(identical_across_ranks(net->parameters()));
    }
}

BOOST_AUTO_TEST_CASE(ddp_rejects_models_that_differ_across_ranks) {
    if (dist::world_size() == 1)
        return;
    nn::Sequential s(nn::Linear(4, 4), nn::Tanh(), nn::Linear(4, dist::rank() == 1 ? 5 : 4));
    try {
        nn::DistributedDataParallel ddp(s);
        BOOST_FAIL("expected distributed_error");
    } catch (const tg::distributed_error& e) {
        const std::string msg = e.what();
        BOOST_TEST(
            msg.find("'2.weight [4,4] float32' on rank 0 but '2.weight [5,4] float32' on rank 1") !=
                std::string::npos,
            msg);
    }
    BOOST_CHECK_THROW(nn::DistributedDataParallel(
                          nn::Linear(2, 2), nn::DistributedDataParallelOptions().bucket_cap_mb(0)),
                      tg::value_error);
}

BOOST_AUTO_TEST_CASE(sampler_splits_each_epoch_between_the_ranks) {
    const int n = dist::world_size(), r = dist::rank();
    tg::data::DistributedSampler s(10, true, 5);
    BOOST_TEST(s.num_replicas() == n);
    BOOST_TEST(s.size() == (10 + n - 1) / n);
    for (int epoch : {0, 1}) {
        s.set_epoch(epoch);
        auto mine = s.indices();
        auto all = gathered(tg::tensor(mine));
        std::multiset<int64_t> rows;
        for (const Tensor& t : all)
            for (int64_t v : t.to_vector<int64_t>())
                rows.insert(v);
        BOOST_TEST(rows.size() == size_t(s.size() * n));
        for (int64_t v = 0; v < 10; ++v)
            BOOST_TEST(rows.count(v) >= 1u);  // every row, some twice (padding)
    }
    s.set_epoch(0);
    auto e0 = s.indices();
    s.set_epoch(1);
    if (n < 10)
        BOOST_TEST(e0 != s.indices());
    tg::data::DistributedSampler drop(10, {3, 2}, false, 0, true);
    BOOST_TEST(drop.indices() == (std::vector<int64_t>{2, 5, 8}), boost::test_tools::per_element());
    tg::data::DistributedSampler pad(10, {4, 3}, false);
    BOOST_TEST(pad.indices() == (std::vector<int64_t>{3, 7, 1}), boost::test_tools::per_element());
    BOOST_CHECK_THROW(tg::data::DistributedSampler(10, {2, 2}), tg::value_error);
    BOOST_CHECK_THROW(s.set_epoch(-1), tg::value_error);

    tg::data::DataLoader loader(tg::arange(10, f64).reshape({10, 1}), tg::arange(10, f64),
                                tg::data::DistributedSampler(10, {4, 1}, false),
                                tg::data::DataLoaderOptions().batch_size(2));
    std::vector<double> seen;
    for (auto& batch : loader)
        for (double v : batch.target.to_vector<double>())
            seen.push_back(v);
    BOOST_TEST(seen == (std::vector<double>{1, 5, 9}), boost::test_tools::per_element());
    (void)r;
}
