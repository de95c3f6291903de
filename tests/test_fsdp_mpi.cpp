// nn::FullyShardedDataParallel (ZeRO stages 1 to 3), run by CTest under mpirun with 1, 2 and 3
// ranks (tests/CMakeLists.txt): each stage against DDP, bit for bit in float64, after 20 AdamW
// steps on a small transformer and a small CNN, with and without gradient accumulation; the
// memory each rank holds for parameters, gradients and optimizer state; clipping by a norm over
// the shards; stage 3's units gathered and freed around their forward and backward; sharded
// checkpoints saved by a group of one size and loaded by another (new_subgroup), and their
// errors on every rank; a memory limit that DDP exceeds and stage 3 trains under.
#define BOOST_TEST_MODULE fsdp_mpi
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <functional>
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

/// A model, its input batch and target batch for `rows` rows.
struct Case {
    std::function<nn::Sequential()> make;
    std::function<Tensor(int64_t, tg::Generator&)> x, y;
};

Case transformer() {
    return {[] {
                nn::Sequential s(
                    nn::Linear(4, 8),
                    nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2)
                                                    .dim_feedforward(16)
                                                    .dropout(0)
                                                    .batch_first(true)),
                    nn::Linear(8, 3));
                s->to(tg::kFloat64);
                return s;
            },
            [](int64_t n, tg::Generator& g) {
                return tg::randn({n, 3, 4}, g, f64);
            },
            [](int64_t n, tg::Generator& g) {
                return tg::randn({n, 3, 3}, g, f64);
            }};
}

nn::TransformerEncoderLayer block() {
    return nn::TransformerEncoderLayer(
        nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0).batch_first(true));
}

/// transformer()'s shape with three blocks inside nested Sequentials, for wrap policies.
Case nested_blocks() {
    Case c = transformer();
    c.make = [] {
        nn::Sequential s(nn::Linear(4, 8), nn::Sequential(block(), block()),
                         nn::Sequential(nn::Sequential(block())), nn::Linear(8, 3));
        s->to(tg::kFloat64);
        return s;
    };
    return c;
}

Case cnn() {
    return {[] {
                nn::Sequential s(nn::Conv2d(nn::Conv2dOptions(1, 3, 3)), nn::ReLU(), nn::Flatten(),
                                 nn::Linear(3 * 4 * 4, 2));
                s->to(tg::kFloat64);
                return s;
            },
            [](int64_t n, tg::Generator& g) {
                return tg::randn({n, 1, 6, 6}, g, f64);
            },
            [](int64_t n, tg::Generator& g) {
                return tg::randn({n, 2}, g, f64);
            }};
}

/// Bytes of the distinct storages behind `ts` (and their gradients): views are counted once.
int64_t bytes_held(const std::vector<Tensor>& ts) {
    std::set<const tg::Storage*> seen;
    int64_t total = 0;
    auto add = [&](const Tensor& t) {
        if (t.defined() && seen.insert(t.impl()->storage.get()).second)
            total += int64_t(t.impl()->storage->nbytes);
    };
    for (const Tensor& t : ts) {
        add(t);
        if (t.defined())
            add(t.grad());
    }
    return total;
}

std::vector<Tensor> optimizer_state(tg::optim::Optimizer& opt) {
    std::vector<Tensor> out;
    for (auto& [impl, st] : opt.state())
        for (auto& [name, t] : st->tensors())
            if (t->defined())
                out.push_back(*t);
    return out;
}

bool bitwise_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i) {
        Tensor x = a[i].detach().contiguous(), y = b[i].detach().contiguous();
        if (x.sizes() != y.sizes() || std::memcmp(x.data_ptr<double>(), y.data_ptr<double>(),
                                                  size_t(x.numel()) * sizeof(double)) != 0)
            return false;
    }
    return true;
}

struct Result {
    std::vector<Tensor> ddp, fsdp;
    int64_t ddp_bytes = 0, fsdp_bytes = 0;  // parameters + gradients + optimizer state, per rank
    std::vector<double> ddp_norms, fsdp_norms;
    bool clipped_grads_agree = true;  // stage 1: the module's clipped gradients, DDP's bits
};

/// `steps` AdamW steps of DDP and of FSDP at `stage` from the same weights on the same data,
/// each rank on its slice of the batch, in `micro` micro-batches (all but the last under
/// no_sync); clip > 0 clips the gradients by their global 2-norm first.
Result run(const Case& c, int stage, int micro, double clip = 0, int steps = 20, double cap_mb = 25,
           bool checkpoint = false, const nn::WrapPolicy& policy = {}) {
    const int world = dist::world_size(), r = dist::rank();
    tg::manual_seed(11 + uint64_t(r));  // different weights per rank: both wrappers broadcast
    auto a = c.make(), b = c.make();
    {
        tg::NoGradGuard g;
        auto pa = a->parameters(), pb = b->parameters();
        for (size_t i = 0; i < pa.size(); ++i)
            pb[i].copy_(pa[i]);
    }
    nn::DistributedDataParallel ddp(a, nn::DistributedDataParallelOptions().bucket_cap_mb(0.001));
    auto model = nn::FullyShardedDataParallel(b, nn::ShardingOptions()
                                                     .stage(stage)
                                                     .bucket_cap_mb(cap_mb)
                                                     .checkpoint(checkpoint)
                                                     .wrap_policy(policy));
    tg::optim::AdamW opt_a(a->parameters(), tg::optim::AdamWOptions(1e-2).weight_decay(0.1));
    tg::optim::AdamW opt_b(model->parameters(), tg::optim::AdamWOptions(1e-2).weight_decay(0.1));
    tg::Generator gen(5);
    const int64_t global = 6 * int64_t(world) * micro, local = global / world, mb = local / micro;
    Result out;
    for (int s = 0; s < steps; ++s) {
        Tensor x = c.x(global, gen), y = c.y(global, gen);
        opt_a.zero_grad();
        opt_b.zero_grad();
        for (int m = 0; m < micro; ++m) {
            Tensor xm = x.narrow(0, r * local + m * mb, mb),
                   ym = y.narrow(0, r * local + m * mb, mb);
            if (m + 1 < micro) {
                auto g1 = ddp.no_sync();
                auto g2 = model->no_sync();
                (tg::mse_loss(ddp(xm), ym) / double(micro)).backward();
                (tg::mse_loss(model(xm), ym) / double(micro)).backward();
            } else {
                (tg::mse_loss(ddp(xm), ym) / double(micro)).backward();
                (tg::mse_loss(model(xm), ym) / double(micro)).backward();
            }
        }
        if (clip > 0) {
            out.ddp_norms.push_back(nn::utils::clip_grad_norm_(a->parameters(), clip));
            out.fsdp_norms.push_back(model->clip_grad_norm_(clip));
            if (stage == 1) {
                std::vector<Tensor> ga, gb;
                for (const Tensor& p : a->parameters())
                    ga.push_back(p.grad());
                for (const Tensor& p : b->parameters())
                    gb.push_back(p.grad());
                out.clipped_grads_agree = out.clipped_grads_agree && bitwise_equal(ga, gb);
            }
        }
        opt_a.step();
        opt_b.step();
    }
    auto held_a = a->parameters(), held_b = model->full_parameters();
    for (const Tensor& t : optimizer_state(opt_a))
        held_a.push_back(t);
    for (const Tensor& t : model->parameters())
        held_b.push_back(t);
    for (const Tensor& t : optimizer_state(opt_b))
        held_b.push_back(t);
    out.ddp_bytes = bytes_held(held_a);
    out.fsdp_bytes = bytes_held(held_b);
    model->gather_parameters();
    out.ddp = a->parameters();
    out.fsdp = model->full_parameters();
    return out;
}

/// Whether every rank holds exactly the same values.
bool identical_across_ranks(const std::vector<Tensor>& ps) {
    for (const Tensor& p : ps) {
        std::vector<Tensor> all;
        for (int r = 0; r < dist::world_size(); ++r)
            all.push_back(tg::empty(p.sizes(), f64));
        dist::all_gather(all, p.detach().contiguous());
        if (!bitwise_equal(all, std::vector<Tensor>(all.size(), all[0])))
            return false;
    }
    return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(stages_equal_ddp_bit_for_bit_with_and_without_accumulation) {
    // one unit (the default 25 MiB), or units of 1 KiB reduce-scattered while backward runs;
    // each child checkpointed (at stage 3 its recomputation gathers the unit again) or not
    for (int stage : {1, 2, 3})
        for (int micro : {1, 2})
            for (const Case& c : {transformer(), cnn()})
                for (double cap : {25.0, 0.001})
                    for (bool ckpt : {false, true})
                        if ((stage < 3 || cap > 1) && (!ckpt || cap > 1))
                            BOOST_TEST_CONTEXT("stage " << stage << ", micro-batches " << micro
                                                        << ", units of " << cap
                                                        << " MiB, checkpoint " << ckpt) {
                                Result res = run(c, stage, micro, 0, 20, cap, ckpt);
                                BOOST_TEST(bitwise_equal(res.ddp, res.fsdp));
                                BOOST_TEST(identical_across_ranks(res.fsdp));
                            }
}

BOOST_AUTO_TEST_CASE(memory_per_rank_follows_the_zero_model) {
    // One dtype for everything (no mixed precision): with AdamW's two moments, DDP holds 4
    // copies of the parameters per rank (weights, gradients, exp_avg, exp_avg_sq); stage 1
    // 2 + 2/N, stage 2 1 + 3/N, stage 3 4/N (+ the padding to a multiple of N), between steps
    const double n = dist::world_size();
    Result s1 = run(transformer(), 1, 1, 0, 2), s2 = run(transformer(), 2, 1, 0, 2),
           s3 = run(transformer(), 3, 1, 0, 2);
    const double r1 = double(s1.fsdp_bytes) / double(s1.ddp_bytes),
                 r2 = double(s2.fsdp_bytes) / double(s2.ddp_bytes),
                 r3 = double(s3.fsdp_bytes) / double(s3.ddp_bytes);
    BOOST_TEST_MESSAGE("world " << n << ": stage 1 " << r1 << "x DDP, stage 2 " << r2
                                << "x, stage 3 " << r3 << "x");
    BOOST_TEST(r1 <= (2 + 2 / n) / 4 + 0.01);
    BOOST_TEST(r2 <= (1 + 3 / n) / 4 + 0.01);
    BOOST_TEST(r3 <= 1 / n + 0.01);
    if (n >= 3) {
        BOOST_TEST(r1 <= 0.67);
        BOOST_TEST(r2 <= 0.51);
        BOOST_TEST(r3 <= 0.36);
    }
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_over_the_shards_matches_ddp) {
    // stage 1 has the full averaged gradients on every rank: the same norm, bit for bit; stage 2
    // all-reduces the shards' sums of squares, which rounds differently (and Adam's early steps
    // amplify a last-bit difference in the clip coefficient), so: close norms, close weights
    for (int stage : {1, 2}) {
        Result res = run(cnn(), stage, 1, 0.05, 5);
        BOOST_TEST_CONTEXT("stage " << stage) {
            BOOST_TEST(res.fsdp_norms.size() == 5u);
            BOOST_TEST(res.fsdp_norms[0] == res.ddp_norms[0], boost::test_tools::tolerance(1e-13));
            for (size_t i = 0; i < res.ddp_norms.size(); ++i)
                BOOST_TEST(res.fsdp_norms[i] == res.ddp_norms[i],
                           boost::test_tools::tolerance(1e-6));
            if (stage == 1) {
                BOOST_TEST(bitwise_equal(res.ddp, res.fsdp));
                BOOST_TEST(res.clipped_grads_agree);
            }
            for (size_t i = 0; i < res.ddp.size(); ++i)
                BOOST_TEST((res.ddp[i] - res.fsdp[i]).abs().max().item<double>() < 1e-7);
            BOOST_TEST(identical_across_ranks(res.fsdp));
        }
    }
}

BOOST_AUTO_TEST_CASE(units_reduce_scattered_while_backward_runs) {
    auto m = transformer().make();
    auto model =
        nn::FullyShardedDataParallel(m, nn::ShardingOptions().stage(2).bucket_cap_mb(0.001));
    const size_t units = model->parameters().size();
    BOOST_TEST(units > 3u);
    auto group = dist::default_group();
    // the first layer's weight is backward's last gradient: by then the later layers' units
    // have been launched, before backward ends
    uint64_t launched_before_last = 0;
    const auto before = group->stats().reduce_scatters;
    m->parameters()[0].register_post_accumulate_grad_hook(
        [&](const Tensor&) { launched_before_last = group->stats().reduce_scatters - before; });
    tg::Generator gen(3);
    auto c = transformer();
    tg::mse_loss(model(c.x(4, gen)), c.y(4, gen)).backward();
    BOOST_TEST(launched_before_last >= units - 1);
    BOOST_TEST(group->stats().reduce_scatters - before == units);
    BOOST_TEST(model->stats().syncs == 1u);
    // stage 2 keeps only the shards' gradients
    for (const Tensor& p : m->parameters())
        BOOST_TEST(!p.grad().defined());
    for (const Tensor& sh : model->parameters())
        BOOST_TEST(sh.grad().defined());
}

BOOST_AUTO_TEST_CASE(stage_1_gathers_each_units_averaged_gradient_while_backward_runs) {
    // the all-gather that gives every rank the full averaged gradients is posted right after
    // each unit's reduce-scatter, not after backward (Note [Sharded parameters])
    auto m = transformer().make();
    auto model =
        nn::FullyShardedDataParallel(m, nn::ShardingOptions().stage(1).bucket_cap_mb(0.001));
    const size_t units = model->parameters().size();
    BOOST_TEST(units > 3u);
    auto group = dist::default_group();
    uint64_t gathered_before_last = 0;
    const auto before = group->stats().all_gathers;
    m->parameters()[0].register_post_accumulate_grad_hook(
        [&](const Tensor&) { gathered_before_last = group->stats().all_gathers - before; });
    tg::Generator gen(3);
    auto c = transformer();
    tg::mse_loss(model(c.x(4, gen)), c.y(4, gen)).backward();
    BOOST_TEST(gathered_before_last >= units - 1);
    BOOST_TEST(group->stats().all_gathers - before == units);
    BOOST_TEST(model->stats().all_gathers == units);  // the parameters were gathered at wrapping
    for (const Tensor& sh : model->parameters())
        BOOST_TEST(sh.grad().defined());
}

BOOST_AUTO_TEST_CASE(shards_alias_the_module_and_bad_options_throw) {
    auto m = cnn().make();
    auto model = nn::FullyShardedDataParallel(m, nn::ShardingOptions().stage(2));
    const int64_t total = 3 * 1 * 9 + 3 + 3 * 16 * 2 + 2, world = dist::world_size();
    auto shards = model->parameters();
    BOOST_TEST(shards.size() == 1u);
    BOOST_TEST(shards[0].numel() == (total + world - 1) / world);
    BOOST_TEST(shards[0].is_leaf());
    BOOST_TEST(shards[0].requires_grad());
    // units in bucket order (modules in reverse): rank 0's shard starts with the last linear's
    // weight's memory
    if (dist::rank() == 0)
        BOOST_TEST(shards[0].data_ptr<double>() == m->parameters()[2].data_ptr<double>());
    BOOST_CHECK_THROW(nn::FullyShardedDataParallel(cnn().make(), nn::ShardingOptions().stage(4)),
                      tg::value_error);
    BOOST_CHECK_THROW(nn::FullyShardedDataParallel(cnn().make(), nn::ShardingOptions().stage(0)),
                      tg::value_error);
    BOOST_CHECK_THROW(nn::FullyShardedDataParallel(std::shared_ptr<nn::Module>()), tg::value_error);
    BOOST_CHECK_THROW(
        nn::FullyShardedDataParallel(cnn().make(), nn::ShardingOptions().bucket_cap_mb(0)),
        tg::value_error);
    // refused before any collective, on every rank alike
    BOOST_CHECK_THROW(model->clip_grad_norm_(-1.0), tg::value_error);
    BOOST_CHECK_THROW(model->clip_grad_norm_(1.0, -2.0), tg::value_error);
    BOOST_CHECK_THROW(model->clip_grad_norm_(1.0, 0.0), tg::value_error);  // stage 2
}

BOOST_AUTO_TEST_CASE(models_that_differ_across_ranks_are_refused_on_every_rank) {
    if (dist::world_size() < 2)
        return;
    nn::Sequential m(nn::Linear(4, dist::rank() == 1 ? 5 : 6));
    m->to(tg::kFloat64);
    try {
        nn::FullyShardedDataParallel fsdp(m);
        BOOST_FAIL("no distributed_error");
    } catch (const tg::distributed_error& e) {
        const std::string what = e.what();
        BOOST_TEST(what.find("FullyShardedDataParallel: the ranks' parameters differ") !=
                   std::string::npos);
        BOOST_TEST(what.find("rank 1") != std::string::npos);
    }
}

/// One weight registered under two names (as a language model ties its embedding and output).
struct Tied : nn::Module {
    Tensor w, bias;
    Tied() {
        w = register_parameter("w", tg::randn({4, 4}, f64));
        register_parameter("w_again", w);
        bias = register_parameter("bias", tg::zeros({4}, f64));
    }
    Tensor forward(const Tensor& x) override { return tg::matmul(tg::matmul(x, w), w) + bias; }
};

BOOST_AUTO_TEST_CASE(a_tied_parameter_is_sharded_once) {
    auto m = std::make_shared<Tied>();
    BOOST_TEST(m->parameters().size() == 3u);
    auto model = nn::FullyShardedDataParallel(m);
    const int64_t world = dist::world_size(), distinct = 16 + 4;
    BOOST_TEST(model->parameters()[0].numel() == (distinct + world - 1) / world);
    tg::Generator gen(2);
    tg::mse_loss(model(tg::randn({3, 4}, gen, f64)), tg::randn({3, 4}, gen, f64)).backward();
    BOOST_TEST(m->w.grad().defined());
    BOOST_TEST(m->w.data_ptr<double>() == m->parameters()[1].data_ptr<double>());
}

BOOST_AUTO_TEST_CASE(a_model_converted_after_wrapping_is_refused) {
    auto m = cnn().make();
    auto model = nn::FullyShardedDataParallel(m);
    tg::Generator gen(4);
    Tensor x = cnn().x(2, gen);
    BOOST_CHECK_NO_THROW(model(x));
    m->to(tg::kFloat32);
    BOOST_CHECK_THROW(model(x.to(tg::kFloat32)), tg::value_error);
}

namespace {
/// Bytes of memory behind the module's parameters (a freed stage-3 parameter has none).
int64_t parameter_bytes(nn::Module& m) {
    std::set<const tg::Storage*> seen;
    int64_t total = 0;
    for (const Tensor& p : m.parameters())
        if (seen.insert(p.impl()->storage.get()).second)
            total += int64_t(p.impl()->storage->nbytes);
    return total;
}
}  // namespace

BOOST_AUTO_TEST_CASE(stage_3_gathers_each_child_around_its_forward_and_backward) {
    auto m = transformer().make();  // three children with parameters: three units
    auto model = nn::FullyShardedDataParallel(m, nn::ShardingOptions().stage(3));
    BOOST_TEST(model->parameters().size() == 3u);
    BOOST_TEST(parameter_bytes(*m) == 0);  // only the shards are held
    // in backward, when the first linear's weight (among the last gradients) is done, the
    // transformer layer's unit has been freed already
    int64_t layer_bytes = -1;
    auto layer = m->ptr(1)->parameters();
    m->parameters()[0].register_post_accumulate_grad_hook(
        [&](const Tensor&) { layer_bytes = int64_t(layer[0].impl()->storage->nbytes); });
    int64_t after_forward = -1;
    tg::Generator gen(3);
    auto c = transformer();
    Tensor x = c.x(4, gen), y = c.y(4, gen);
    for (int step = 0; step < 2; ++step) {
        const auto before = model->stats();
        Tensor loss = tg::mse_loss(model(x), y);
        after_forward = parameter_bytes(*m);
        loss.backward();
        const auto after = model->stats();
        BOOST_TEST(after.all_gathers - before.all_gathers == 6u);  // 3 forward, 3 backward
        BOOST_TEST(after.reduce_scatters - before.reduce_scatters == 3u);
        // the step's timeline: each collective waited for once, after it ran
        size_t gathers = 0, scatters = 0;
        for (const auto& sp : after.last) {
            gathers += std::string(sp.what) == "all-gather";
            scatters += std::string(sp.what) == "reduce-scatter";
            BOOST_TEST(sp.started <= sp.ended);
            BOOST_TEST(sp.wait_from <= sp.wait_to);
            BOOST_TEST(sp.ended <= sp.wait_to);
        }
        BOOST_TEST(gathers == 6u);
        BOOST_TEST(scatters == 3u);
        BOOST_TEST(after.last.size() == 9u);
        BOOST_TEST(after_forward == 0);  // freed after each child, saved as handles
        BOOST_TEST(layer_bytes == 0);
        BOOST_TEST(parameter_bytes(*m) == 0);
        for (const Tensor& p : m->parameters())
            BOOST_TEST(!p.grad().defined());
        for (const Tensor& sh : model->parameters())
            BOOST_TEST(sh.grad().defined());
    }
    // the transformer layer's 600 parameters or gradients and, prefetched while it runs, the
    // next child's unit (forward: the last linear's 27, backward: the first's 40), plus the
    // last linear's gradients if their reduce-scatter is still in flight (padded to 3 ranks)
    BOOST_TEST(model->stats().peak_full_bytes > 600 * sizeof(double));
    BOOST_TEST(model->stats().peak_full_bytes <= (600 + 42 + 27 + 1) * sizeof(double));
    // gather_parameters() materialises them all until the next forward
    model->gather_parameters();
    const int64_t full =
        (8 * 4 + 8 + 24 * 8 + 24 + 8 * 8 + 8 + 16 * 8 + 16 + 8 * 16 + 8 + 4 * 8 + 3 * 8 + 3) *
        int64_t(sizeof(double));
    BOOST_TEST(parameter_bytes(*m) >= full);
    BOOST_TEST(identical_across_ranks(model->full_parameters()));
    tg::NoGradGuard no_grad;
    model(x);
    BOOST_TEST(parameter_bytes(*m) == 0);
}

BOOST_AUTO_TEST_CASE(stage_3_checkpointed_units_keep_no_activations_and_regather_once) {
    auto c = transformer();
    tg::Generator gen(6);
    Tensor x = c.x(8, gen), y = c.y(8, gen);
    int64_t saved[2] = {0, 0};
    for (bool ckpt : {false, true}) {
        auto m = c.make();
        auto model =
            nn::FullyShardedDataParallel(m, nn::ShardingOptions().stage(3).checkpoint(ckpt));
        const auto before = model->stats();
        const int64_t base = tg::memory::stats().saved_bytes;
        Tensor loss = tg::mse_loss(model(x), y);
        saved[ckpt] = tg::memory::stats().saved_bytes - base;
        BOOST_TEST(parameter_bytes(*m) == 0);
        loss.backward();
        // the recomputation in backward gathers each unit once, as the plain backward does
        BOOST_TEST(model->stats().all_gathers - before.all_gathers == 6u);
        BOOST_TEST(parameter_bytes(*m) == 0);
        for (const Tensor& sh : model->parameters())
            BOOST_TEST(sh.grad().defined());
    }
    BOOST_TEST_MESSAGE("activations saved: " << saved[0] << " B plain, " << saved[1]
                                             << " B checkpointed");
    BOOST_TEST(saved[1] < saved[0] / 2);
}

/// Blocks in a ModuleList that the model's own forward iterates (as examples/char_gpt.cpp's).
struct ListOfBlocks : nn::Module {
    nn::ModuleList blocks;
    ListOfBlocks() {
        register_module("blocks", blocks);
        blocks->push_back(block());
        to(tg::kFloat64);
    }
    Tensor forward(const Tensor& x) override {
        Tensor h = x;
        for (const auto& b : *blocks)
            h = b->forward(h);
        return h;
    }
};

BOOST_AUTO_TEST_CASE(stage_3_wrap_each_block_gives_a_unit_per_block_and_equals_ddp) {
    const auto policy = nn::wrap_each<nn::TransformerEncoderLayer>();
    for (bool ckpt : {false, true})
        BOOST_TEST_CONTEXT("checkpoint " << ckpt) {
            Result res = run(nested_blocks(), 3, 1, 0, 5, 25, ckpt, policy);
            BOOST_TEST(bitwise_equal(res.ddp, res.fsdp));
            BOOST_TEST(identical_across_ranks(res.fsdp));
        }
    auto c = nested_blocks();
    tg::Generator gen(3);
    Tensor x = c.x(4, gen), y = c.y(4, gen);
    uint64_t peak[2] = {0, 0};
    for (bool wrap : {false, true}) {
        auto m = c.make();
        auto model = nn::FullyShardedDataParallel(
            m, nn::ShardingOptions().stage(3).wrap_policy(wrap ? policy : nn::WrapPolicy()));
        // the linears and a unit per block (the nested Sequentials opened), or one per child
        BOOST_TEST(model->parameters().size() == (wrap ? 5u : 4u));
        tg::mse_loss(model(x), y).backward();
        BOOST_TEST(parameter_bytes(*m) == 0);
        peak[wrap] = model->stats().peak_full_bytes;
    }
    BOOST_TEST_MESSAGE("peak full bytes: " << peak[0] << " a unit per child, " << peak[1]
                                           << " a unit per block");
    // a block is 600 parameters: a unit per block holds at most three blocks' worth (one in use,
    // the next prefetched, a gradient buffer whose reduce-scatter is in flight) and a linear;
    // without the policy the two-block child is gathered whole
    BOOST_TEST(peak[0] >= 1200 * sizeof(double));
    BOOST_TEST(peak[1] > 600 * sizeof(double));
    BOOST_TEST(peak[1] <= (3 * 600 + 42) * sizeof(double));
}

/// A linear, three blocks in a ModuleList that the model's own forward calls through
/// operator(), and a head: a GPT's shape (Note [Units the model calls]).
struct CalledBlocks : nn::Module {
    nn::Linear embed{nullptr}, head{nullptr};
    nn::ModuleList blocks;
    CalledBlocks() {
        embed = register_module("embed", nn::Linear(4, 8));
        register_module("blocks", blocks);
        for (int i = 0; i < 3; ++i)
            blocks->push_back(block());
        head = register_module("head", nn::Linear(8, 3));
        to(tg::kFloat64);
    }
    Tensor forward(const Tensor& x) override {
        Tensor h = embed(x);
        for (const auto& b : *blocks)
            h = (*b)(h);
        return head(h);
    }
};

Case called_blocks() {
    Case c = transformer();
    c.make = [] { return nn::Sequential(std::make_shared<CalledBlocks>()); };
    return c;
}

BOOST_AUTO_TEST_CASE(stage_3_blocks_the_model_calls_itself_are_units_and_equal_ddp) {
    const auto policy = nn::wrap_each<nn::TransformerEncoderLayer>();
    for (int micro : {1, 2})
        BOOST_TEST_CONTEXT("micro-batches " << micro) {
            Result res = run(called_blocks(), 3, micro, 0, 5, 25, false, policy);
            BOOST_TEST(bitwise_equal(res.ddp, res.fsdp));
            BOOST_TEST(identical_across_ranks(res.fsdp));
        }
    auto c = called_blocks();
    auto m = c.make();
    auto model =
        nn::FullyShardedDataParallel(m, nn::ShardingOptions().stage(3).wrap_policy(policy));
    BOOST_TEST(model->parameters().size() == 4u);  // the linears' unit and one per block
    tg::Generator gen(3);
    Tensor x = c.x(4, gen), y = c.y(4, gen);
    // while the first block runs its forward, the later blocks hold no memory
    auto blocks = m->ptr(0)->as<CalledBlocks>()->blocks;
    int64_t later = -1;
    blocks->ptr(0)->parameters()[0].register_hook([&](const Tensor& g) {
        later = parameter_bytes(*blocks->ptr(2));
        return g;
    });
    for (int step = 0; step < 3; ++step) {  // the first forward is the probe, every unit gathered
        const auto before = model->stats();
        Tensor loss = tg::mse_loss(model(x), y);
        BOOST_TEST(parameter_bytes(*m) == 0);
        loss.backward();
        BOOST_TEST(parameter_bytes(*m) == 0);
        BOOST_TEST(later == 0);  // in backward, the last block's unit was freed before the first's
        if (step > 0)            // each unit before its forward and again for its backward
            BOOST_TEST(model->stats().all_gathers - before.all_gathers == 8u);
    }
    // with checkpoint such a block is refused when the wrapper is built
    BOOST_CHECK_THROW(
        nn::FullyShardedDataParallel(
            c.make(), nn::ShardingOptions().stage(3).checkpoint(true).wrap_policy(policy)),
        tg::value_error);
    // a block the forward calls as ->forward(x) is refused by the first forward, not read freed
    auto direct = std::make_shared<ListOfBlocks>();
    auto wrapped =
        nn::FullyShardedDataParallel(direct, nn::ShardingOptions().stage(3).wrap_policy(policy));
    Tensor xd = tg::randn({2, 3, 8}, gen, f64);
    BOOST_CHECK_THROW(wrapped(xd), tg::value_error);
    BOOST_CHECK_THROW(wrapped(xd), tg::value_error);
    BOOST_TEST(parameter_bytes(*direct) == 0);
}

BOOST_AUTO_TEST_CASE(wrap_size_based_units_by_elements_and_equals_ddp) {
    // a block is 600 elements, its largest layer 216 (in_proj); the linears 40 and 27
    BOOST_CHECK_THROW(nn::wrap_size_based(0), tg::value_error);
    auto m = std::make_shared<CalledBlocks>();
    const auto p500 = nn::wrap_size_based(500);
    BOOST_TEST(p500(*m->blocks->ptr(0)));
    BOOST_TEST(!p500(*m->embed));
    BOOST_TEST(!p500(*m->blocks));  // a ModuleList: its blocks are units, it is not
    BOOST_TEST(!p500(*m));          // 67 elements outside the blocks' units
    BOOST_TEST(nn::wrap_size_based(60)(*m));
    BOOST_TEST(!nn::wrap_size_based(1)(*m->blocks));
    BOOST_TEST(nn::wrap_size_based(1)(*m->head));
    // bottom-up: the attention is 288 elements (in_proj 216, out_proj 72): with 200 it is a
    // unit and the rest of its block (312) another; a block's 600 are a unit up to 600; the
    // model counts all 1867 elements once no block is a unit
    const auto attn = m->blocks->ptr(0)->as<nn::TransformerEncoderLayerImpl>()->self_attn;
    BOOST_TEST(nn::wrap_size_based(200)(*attn));
    BOOST_TEST(nn::wrap_size_based(200)(*m->blocks->ptr(0)));
    BOOST_TEST(!nn::wrap_size_based(289)(*attn));
    BOOST_TEST(nn::wrap_size_based(600)(*m->blocks->ptr(0)));
    BOOST_TEST(!nn::wrap_size_based(601)(*m->blocks->ptr(0)));
    BOOST_TEST(nn::wrap_size_based(1867)(*m));
    BOOST_TEST(!nn::wrap_size_based(1868)(*m));
    // the same units as wrap_each<TransformerEncoderLayer>: the same run as DDP
    Result res = run(called_blocks(), 3, 1, 0, 5, 25, false, p500);
    BOOST_TEST(bitwise_equal(res.ddp, res.fsdp));
    auto c = called_blocks();
    auto model =
        nn::FullyShardedDataParallel(c.make(), nn::ShardingOptions().stage(3).wrap_policy(p500));
    BOOST_TEST(model->parameters().size() == 4u);  // the linears' unit and one per block
}

BOOST_AUTO_TEST_CASE(stage_3_other_modules_are_one_unit_and_shared_children_are_refused) {
    auto tied = std::make_shared<Tied>();
    auto model = nn::FullyShardedDataParallel(tied, nn::ShardingOptions().stage(3));
    BOOST_TEST(model->parameters().size() == 1u);
    tg::Generator gen(2);
    tg::mse_loss(model(tg::randn({3, 4}, gen, f64)), tg::randn({3, 4}, gen, f64)).backward();
    BOOST_TEST(model->parameters()[0].grad().defined());
    BOOST_TEST(parameter_bytes(*tied) == 0);
    // a double backward through a unit's parameters is refused, not silently wrong
    Tensor x = tg::randn({3, 4}, gen, f64);
    BOOST_CHECK_THROW(tg::mse_loss(model(x), x).backward({}, false, true), tg::autograd_error);
    nn::Linear shared(4, 4);
    nn::Sequential twice(shared, nn::ReLU(), shared);
    BOOST_CHECK_THROW(nn::FullyShardedDataParallel(twice, nn::ShardingOptions().stage(3)),
                      tg::value_error);
}

namespace {

/// The first `n` world ranks as a group (the world itself when n is its size), null elsewhere.
std::shared_ptr<dist::ProcessGroup> first_ranks(int n) {
    std::vector<int> ranks;
    for (int r = 0; r < n; ++r)
        ranks.push_back(r);
    return dist::new_subgroup(ranks);
}

/// A directory every rank names alike, removed by rank 0 when the test ends.
struct SharedDir {
    std::string path;
    SharedDir() {
        Tensor pid = tg::full({1}, double(::getpid()), tg::kInt64);
        dist::broadcast(pid, 0);
        path = "fsdp_ckpt_" + std::to_string(pid.item<int64_t>());
    }
    ~SharedDir() {
        dist::barrier();
        if (dist::rank() == 0)
            std::filesystem::remove_all(path);
    }
};

/// `steps` AdamW steps of `model` (each member of its group on its slice of a batch of 6).
template <class Model>
void train(Model& model, tg::optim::Optimizer& opt, int rank, int size, int steps,
           tg::Generator& gen) {
    const Case c = transformer();
    const int64_t local = 6 / size;
    for (int s = 0; s < steps; ++s) {
        Tensor x = c.x(6, gen), y = c.y(6, gen);
        opt.zero_grad();
        tg::mse_loss(model(x.narrow(0, rank * local, local)), y.narrow(0, rank * local, local))
            .backward();
        opt.step();
    }
}

/// Two AdamW steps of an MLP with 4 inputs and 3 outputs on every rank's own batch.
template <class Model>
void train_mlp(Model& model, tg::optim::Optimizer& opt, tg::Generator& gen) {
    for (int s = 0; s < 2; ++s) {
        opt.zero_grad();
        Tensor x = tg::randn({4, 4}, gen, f64);
        tg::mse_loss(model(x), tg::randn({4, model->full_parameters().back().size(0)}, gen, f64))
            .backward();
        opt.step();
    }
}

/// Copies rank 0's AdamW state to every rank of g (a rank without state gets rank 0's).
void broadcast_state(tg::optim::Optimizer& opt, dist::ProcessGroup& g) {
    for (const Tensor& p : opt.parameters()) {
        auto& st = opt.state()[p.impl()];
        if (!st)
            st = opt.make_state();
        Tensor step = tg::full({1}, double(st->step()), tg::kInt64);
        g.broadcast(step, 0)->wait();
        st->step(step.item<int64_t>());
        for (auto& [name, t] : st->tensors())
            if (name != "max_exp_avg_sq") {
                if (!t->defined())
                    *t = tg::zeros(p.sizes(), f64);
                g.broadcast(*t, 0)->wait();
            }
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_sharded_checkpoint_loads_at_another_world_size_and_continues_bitwise) {
    // Saved by a group of `from` ranks after 3 AdamW steps, loaded by a group of `to` (3 -> 2
    // and 2 -> 3 at np 3), possibly at another stage and with other units, and trained 3 more
    // steps: the same bits as DDP trained 3 steps at `from` ranks and 3 at `to`.
    const int world = dist::world_size(), r = dist::rank();
    std::vector<std::pair<int, int>> sizes = {{world, std::max(1, world - 1)}};
    if (world > 1)
        sizes.push_back({world - 1, world});
    struct Stages {
        int save, load;
        double save_cap, load_cap;
    };
    for (auto [from, to] : sizes)
        for (Stages st : {Stages{3, 1, 25, 25}, Stages{2, 3, 0.001, 25}, Stages{1, 2, 25, 0.001}})
            BOOST_TEST_CONTEXT("from " << from << " ranks at stage " << st.save << " to " << to
                                       << " at stage " << st.load) {
                SharedDir dir;
                auto g_from = first_ranks(from), g_to = first_ranks(to);
                tg::manual_seed(3);
                auto ref = transformer().make();
                tg::optim::AdamW opt_ref(ref->parameters(), tg::optim::AdamWOptions(1e-2));
                tg::Generator gen_ref(9), gen(9);
                std::vector<Tensor> expect, got;
                if (g_from) {
                    nn::DistributedDataParallel ddp(
                        ref,
                        nn::DistributedDataParallelOptions().bucket_cap_mb(0.001).process_group(
                            g_from));
                    train(ddp, opt_ref, r, from, 3, gen_ref);
                    tg::manual_seed(3);
                    auto b = transformer().make();
                    auto model = nn::FullyShardedDataParallel(b, nn::ShardingOptions()
                                                                     .stage(st.save)
                                                                     .bucket_cap_mb(st.save_cap)
                                                                     .process_group(g_from));
                    tg::optim::AdamW opt(model->parameters(), tg::optim::AdamWOptions(1e-2));
                    train(model, opt, r, from, 3, gen);
                    dist::save_sharded(model, opt, dir.path);
                }
                if (g_to) {
                    if (!g_from)  // this rank joins: the data stream where the others are
                        for (int s = 0; s < 3; ++s) {
                            transformer().x(6, gen), transformer().y(6, gen);
                            transformer().x(6, gen_ref), transformer().y(6, gen_ref);
                        }
                    broadcast_state(opt_ref, *g_to);
                    nn::DistributedDataParallel ddp(
                        ref,
                        nn::DistributedDataParallelOptions().bucket_cap_mb(0.001).process_group(
                            g_to));
                    train(ddp, opt_ref, r, to, 3, gen_ref);
                    expect = ref->parameters();
                    tg::manual_seed(100 + uint64_t(r));  // other weights: the load replaces them
                    auto c = transformer().make();
                    auto model = nn::FullyShardedDataParallel(c, nn::ShardingOptions()
                                                                     .stage(st.load)
                                                                     .bucket_cap_mb(st.load_cap)
                                                                     .process_group(g_to));
                    tg::optim::AdamW opt(model->parameters(), tg::optim::AdamWOptions(1e-2));
                    dist::load_sharded(model, opt, dir.path);
                    train(model, opt, r, to, 3, gen);
                    model->gather_parameters();
                    got = model->full_parameters();
                    BOOST_TEST(bitwise_equal(expect, got));
                }
            }
}

BOOST_AUTO_TEST_CASE(damaged_or_mismatched_sharded_checkpoints_throw_on_every_rank) {
    // every rank throws io_error naming the file and what differs, whichever rank found it, and
    // the model and optimizer are left as they were
    const int world = dist::world_size();
    SharedDir dir;
    auto make = [](int64_t out) {
        tg::manual_seed(4);
        nn::Sequential s(nn::Linear(4, 6), nn::BatchNorm1d(6), nn::Tanh(), nn::Linear(6, out));
        s->to(tg::kFloat64);
        return s;
    };
    auto saved = nn::FullyShardedDataParallel(make(3), nn::ShardingOptions().stage(3));
    tg::optim::AdamW saved_opt(saved->parameters(), tg::optim::AdamWOptions(1e-2));
    tg::Generator gen(2);
    train_mlp(saved, saved_opt, gen);
    auto save = [&] { dist::save_sharded(saved, saved_opt, dir.path); };
    auto expect_error = [&](auto& model, auto& opt, const std::string& file,
                            const std::string& what) {
        model->gather_parameters();
        std::vector<Tensor> before;
        for (const Tensor& p : model->full_parameters())
            before.push_back(p.detach().clone());
        const size_t states = opt.state().size();
        try {
            dist::load_sharded(model, opt, dir.path);
            BOOST_TEST(false, "no error for " << what);
        } catch (const tg::io_error& e) {
            const std::string msg = e.what();
            BOOST_TEST(msg.find(file) != std::string::npos, msg);
            BOOST_TEST(msg.find(what) != std::string::npos, msg);
        }
        model->gather_parameters();
        BOOST_TEST(bitwise_equal(before, model->full_parameters()));
        BOOST_TEST(opt.state().size() == states);
    };
    const std::string last =
        "shard-0000" + std::to_string(world - 1) + "-of-0000" + std::to_string(world) + ".tgsv";
    {  // another model: a shape differs
        save();
        auto other = nn::FullyShardedDataParallel(make(2), nn::ShardingOptions().stage(2));
        tg::optim::AdamW opt(other->parameters());
        expect_error(other, opt, "manifest.tgsv", "\"3.weight\": shape [3,6] in file, [2,6]");
    }
    auto model = nn::FullyShardedDataParallel(make(3), nn::ShardingOptions().stage(1));
    {  // another optimizer
        tg::optim::SGD opt(model->parameters(), tg::optim::SGDOptions(0.1));
        expect_error(model, opt, "manifest.tgsv", "optimizer AdamW in file, SGD given");
    }
    tg::optim::AdamW opt(model->parameters());
    train_mlp(model, opt, gen);  // some state to keep
    {                            // the last rank's shard truncated: only the last rank reads it
        save();
        dist::barrier();
        if (dist::rank() == 0)
            std::filesystem::resize_file(dir.path + "/" + last,
                                         std::filesystem::file_size(dir.path + "/" + last) - 9);
        dist::barrier();
        expect_error(model, opt, last, "truncated");
    }
    {  // a shard missing
        save();
        dist::barrier();
        if (dist::rank() == 0)
            std::filesystem::remove(dir.path + "/" + last);
        dist::barrier();
        expect_error(model, opt, last, "load_sharded(");
    }
    {  // a shard from another save
        save();
        dist::barrier();
        if (dist::rank() == 0)
            std::filesystem::copy_file(dir.path + "/" + last, dir.path + "/old");
        dist::barrier();
        save();
        dist::barrier();
        if (dist::rank() == 0)
            std::filesystem::rename(dir.path + "/old", dir.path + "/" + last);
        dist::barrier();
        expect_error(model, opt, last, "another save");
    }
    save();  // and a good one loads: the parameters, the buffers and the optimizer's steps
    dist::load_sharded(model, opt, dir.path);
    model->gather_parameters();
    saved->gather_parameters();
    BOOST_TEST(bitwise_equal(model->full_parameters(), saved->full_parameters()));
    auto as_f64 = [](std::vector<Tensor> ts) {
        for (Tensor& t : ts)
            t = t.to(tg::kFloat64);
        return ts;
    };
    BOOST_TEST(
        bitwise_equal(as_f64(model->module()->buffers()), as_f64(saved->module()->buffers())));
    for (auto& [impl, st] : opt.state())
        BOOST_TEST(st->step() == 2);
    BOOST_TEST(opt.state().size() == 1);  // stage 1's one unit
}

BOOST_AUTO_TEST_CASE(new_subgroup_holds_the_listed_ranks_in_order) {
    const int world = dist::world_size(), r = dist::rank();
    std::vector<int> ranks;  // every rank but 0, last first (all of them at np 1)
    for (int k = world - 1; k >= (world > 1 ? 1 : 0); --k)
        ranks.push_back(k);
    auto g = dist::new_subgroup(ranks);
    const bool member = world == 1 || r != 0;
    BOOST_TEST(bool(g) == member);
    if (g) {
        BOOST_TEST(g->size() == int(ranks.size()));
        BOOST_TEST(ranks[size_t(g->rank())] == r);
        Tensor t = tg::full({1}, double(r), tg::kInt64);
        g->all_reduce(t)->wait();
        int64_t sum = 0;
        for (int k : ranks)
            sum += k;
        BOOST_TEST(t.item<int64_t>() == sum);
    }
    BOOST_CHECK_THROW(dist::new_subgroup({}), tg::value_error);
    BOOST_CHECK_THROW(dist::new_subgroup({0, 0}), tg::value_error);
    BOOST_CHECK_THROW(dist::new_subgroup({world}), tg::value_error);
}

BOOST_AUTO_TEST_CASE(a_model_too_big_for_ddp_under_a_memory_limit_trains_under_stage_3) {
    // 8 layers of P/8 parameter bytes each. DDP holds 4P (weights, gradients, two AdamW moments),
    // stage 3 at N ranks 4P/N plus one unit gathered with its gradients: a limit of 3P above what
    // the process held before refuses DDP's first step and lets stage 3 train at 2 and 3 ranks.
    const int world = dist::world_size(), r = dist::rank();
    auto make = [] {
        tg::manual_seed(6);
        nn::Sequential s;
        for (int i = 0; i < 8; ++i)
            s->push_back(nn::Linear(128, 128));
        s->to(tg::kFloat64);
        return s;
    };
    const int64_t P = 8 * 128 * 129 * 8;
    struct Unlimit {
        ~Unlimit() { tg::memory::set_limit(0); }
    } unlimit;
    tg::Generator gen(8);
    auto steps = [&](auto& model, tg::optim::Optimizer& opt) {
        for (int s = 0; s < 3; ++s) {
            opt.zero_grad();
            Tensor x = tg::randn({4 * world, 128}, gen, f64).narrow(0, 4 * r, 4);
            model(x).pow(2).mean().backward();
            opt.step();
        }
    };
    tg::memory::set_limit(tg::memory::stats().current_bytes + 3 * P);
    bool ddp_failed = false;
    try {
        auto m = make();
        nn::DistributedDataParallel ddp(m);
        tg::optim::AdamW opt(m->parameters());
        steps(ddp, opt);
    } catch (const tg::out_of_memory& e) {
        ddp_failed = true;
        BOOST_TEST_MESSAGE("DDP: " << e.what());
    }
    BOOST_TEST(ddp_failed);
    dist::barrier();
    if (world < 2)
        return;
    tg::memory::reset_peak();
    const int64_t before = tg::memory::stats().current_bytes;
    auto model = nn::FullyShardedDataParallel(make(), nn::ShardingOptions().stage(3));
    tg::optim::AdamW opt(model->parameters());
    BOOST_CHECK_NO_THROW(steps(model, opt));
    BOOST_TEST_MESSAGE("stage 3 at " << world << " ranks: peak "
                                     << double(tg::memory::stats().peak_bytes - before) / double(P)
                                     << " P above the start, limit 3 P");
    BOOST_TEST(opt.state().size() == 8);  // every unit stepped
}
