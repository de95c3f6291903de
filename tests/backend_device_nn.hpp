#pragma once
/// Layers, losses, optimizers, schedulers, gradient accumulation and save/load on a device,
/// each compared with the same run on the CPU; training steps must move zero bytes between host
/// and device. Included by backend_device_tests.hpp (NeedsDevice, kDev); its helpers are also
/// used by backend_device_checkpoint.hpp.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tapegrad/io.hpp"

namespace device_nn {

using tg::Tensor;
namespace nn = tg::nn;
namespace optim = tg::optim;

inline Tensor on_cpu(const Tensor& t) {
    return t.to(tg::Device::cpu());
}
inline double tol_of(tg::Dtype dt) {
    return dt == tg::kFloat32 ? 2e-4 : 1e-10;
}

/// Checks two lists of tensors (device results against CPU results) within tol.
inline void check_all_close(const std::vector<Tensor>& dev, const std::vector<Tensor>& cpu,
                            double tol) {
    BOOST_TEST_REQUIRE(dev.size() == cpu.size());
    for (size_t i = 0; i < dev.size(); ++i)
        BOOST_TEST_CONTEXT("tensor " << i) {
            BOOST_TEST_REQUIRE(dev[i].defined() == cpu[i].defined());
            if (cpu[i].defined())
                tgtest::check_close(on_cpu(dev[i]), cpu[i], tol, tol);
        }
}

/// Host copies of tensors' values, for bit-exact comparisons.
inline std::vector<std::vector<double>> bits(const std::vector<Tensor>& ts) {
    std::vector<std::vector<double>> out;
    for (const Tensor& t : ts)
        out.push_back(t.defined() ? on_cpu(t).to(tg::kFloat64).contiguous().to_vector<double>()
                                  : std::vector<double>{});
    return out;
}

inline std::vector<Tensor> grads_of(const std::vector<Tensor>& params) {
    std::vector<Tensor> g;
    for (const Tensor& p : params)
        g.push_back(p.grad());
    return g;
}

/// A module made afresh (the same parameters for the same seed), run on an input of `in`.
struct ModuleCase {
    std::string name;
    std::function<std::shared_ptr<nn::Module>()> make;
    tg::Shape in;
    bool train = true;
};

inline std::vector<ModuleCase> module_cases() {
    return {
        {"Linear", [] { return nn::Linear(5, 3).ptr(); }, {4, 5}},
        {"Linear 3-D input", [] { return nn::Linear(5, 3).ptr(); }, {2, 2, 5}},
        {"Linear without bias", [] { return nn::Linear(5, 3, false).ptr(); }, {4, 5}},
        {"ReLU", [] { return nn::ReLU().ptr(); }, {4, 5}},
        {"Tanh", [] { return nn::Tanh().ptr(); }, {4, 5}},
        {"Sigmoid", [] { return nn::Sigmoid().ptr(); }, {4, 5}},
        {"GELU", [] { return nn::GELU().ptr(); }, {4, 5}},
        {"LeakyReLU", [] { return nn::LeakyReLU(0.2).ptr(); }, {4, 5}},
        {"Softmax", [] { return nn::Softmax(1).ptr(); }, {4, 5}},
        {"LogSoftmax", [] { return nn::LogSoftmax(0).ptr(); }, {4, 5}},
        {"PReLU per channel",
         [] { return nn::PReLU(nn::PReLUOptions().num_parameters(5).init(0.1)).ptr(); },
         {4, 5}},
        {"RReLU train", [] { return nn::RReLU().ptr(); }, {6, 5}},
        {"RReLU eval", [] { return nn::RReLU().ptr(); }, {6, 5}, false},
        {"Softmax2d", [] { return nn::Softmax2d().ptr(); }, {2, 3, 2, 2}},
        {"GLU", [] { return nn::GLU(1).ptr(); }, {3, 4, 2}},
        {"Activations",  // the in-place forms write a non-leaf, as in a network
         [] {
             return nn::Sequential(nn::Linear(5, 6), nn::ELU(nn::ELUOptions().inplace(true)),
                                   nn::SELU(), nn::CELU(nn::CELUOptions().alpha(0.5)), nn::SiLU(),
                                   nn::Mish(), nn::Hardtanh(nn::HardtanhOptions().inplace(true)),
                                   nn::ReLU6(), nn::Hardshrink(0.1), nn::Softshrink(0.05),
                                   nn::Tanhshrink(), nn::Softsign(), nn::Softplus(),
                                   nn::LogSigmoid(), nn::Threshold(-0.5, 0.25), nn::Softmin(1))
                 .ptr();
         },
         {4, 5}},
        {"BatchNorm3d", [] { return nn::BatchNorm3d(3).ptr(); }, {2, 3, 2, 2, 2}},
        {"InstanceNorm2d affine, running statistics",
         [] {
             return nn::InstanceNorm2d(
                        nn::InstanceNorm2dOptions(3).affine(true).track_running_stats(true))
                 .ptr();
         },
         {2, 3, 2, 3}},
        {"InstanceNorm1d eval", [] { return nn::InstanceNorm1d(3).ptr(); }, {2, 3, 4}, false},
        {"LocalResponseNorm", [] { return nn::LocalResponseNorm(3).ptr(); }, {2, 5, 2, 2}},
        {"CrossMapLRN2d", [] { return nn::CrossMapLRN2d(3).ptr(); }, {2, 5, 2, 2}},
        {"Dropout train", [] { return nn::Dropout(0.3).ptr(); }, {6, 5}},
        {"Dropout eval", [] { return nn::Dropout(0.3).ptr(); }, {6, 5}, false},
        {"Flatten", [] { return nn::Flatten().ptr(); }, {2, 3, 2}},
        {"LayerNorm", [] { return nn::LayerNorm(nn::LayerNormOptions({5})).ptr(); }, {4, 5}},
        {"RMSNorm",
         [] {
             return nn::RMSNorm(nn::RMSNormOptions({2, 5})).ptr();
         },
         {3, 2, 5}},
        {"TransformerEncoderLayer, post-norm, dropout",  // [T, N, E], MultiheadAttention inside
         [] {
             return nn::TransformerEncoderLayer(
                        nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(12).dropout(0.2))
                 .ptr();
         },
         {5, 2, 8}},
        {"TransformerEncoderLayer, pre-norm, GELU, batch_first",
         [] {
             return nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 4)
                                                    .dim_feedforward(12)
                                                    .dropout(0.1)
                                                    .activation(tg::kGELU)
                                                    .norm_first(true)
                                                    .batch_first(true))
                 .ptr();
         },
         {2, 5, 8}},
        {"Sequential",
         [] {
             return nn::Sequential(nn::Flatten(), nn::Linear(6, 8), nn::Tanh(), nn::Dropout(0.25),
                                   nn::Linear(8, 3, false), nn::GELU(), nn::LogSoftmax(1))
                 .ptr();
         },
         {4, 3, 2}},
    };
}

/// Output, input gradient and parameter gradients of one module case on d.
inline std::vector<Tensor> run_module(const ModuleCase& c, tg::Dtype dt, tg::Device d) {
    tg::manual_seed(5);
    std::shared_ptr<nn::Module> m = c.make();
    m->to(dt);
    m->train(c.train);
    m->to(d);
    const Tensor x = conformance::make_input(c.in, 3, dt, d, false, true);
    tg::manual_seed(7);  // dropout masks: the same numbers on every device
    const Tensor y = (*m)(x);
    BOOST_TEST(y.device() == d);
    const Tensor dy = conformance::make_input(y.sizes(), 99, dt, d, false, false);
    (y * dy).sum().backward();
    std::vector<Tensor> out{y, x.grad()};
    for (const Tensor& g : grads_of(m->parameters()))
        out.push_back(g);
    return out;
}

/// A loss module case: (input [4,3] requiring grad, float target [4,3], labels [4]) -> loss.
struct LossCase {
    std::string name;
    std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> f;
};

inline std::vector<LossCase> loss_cases() {
    using R = tg::Reduction;
    std::vector<LossCase> v;
    for (R r : {R::Mean, R::Sum, R::None}) {
        const std::string rn = r == R::Mean ? " mean" : r == R::Sum ? " sum" : " none";
        v.push_back({"MSELoss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor&) {
                         return nn::MSELoss(r)(x, t);
                     }});
        v.push_back({"L1Loss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor&) {
                         return nn::L1Loss(r)(x, t);
                     }});
        v.push_back({"CrossEntropyLoss" + rn, [r](const Tensor& x, const Tensor&, const Tensor& l) {
                         return nn::CrossEntropyLoss(r)(x * 3, l);
                     }});
        v.push_back({"NLLLoss" + rn, [r](const Tensor& x, const Tensor&, const Tensor& l) {
                         return nn::NLLLoss(r)(tg::log_softmax(x, 1), l);
                     }});
        v.push_back(
            {"BCEWithLogitsLoss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor&) {
                 return nn::BCEWithLogitsLoss(r)(x * 4, tg::sigmoid(t * 2));
             }});
        v.push_back({"KLDivLoss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor&) {
                         return nn::KLDivLoss(r)(tg::log_softmax(x, 1), tg::softmax(t, 1));
                     }});
        v.push_back({"PoissonNLLLoss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor&) {
                         return nn::PoissonNLLLoss(r)(x, tg::exp(t));
                     }});
        v.push_back({"MultiMarginLoss" + rn, [r](const Tensor& x, const Tensor&, const Tensor& l) {
                         return nn::MultiMarginLoss(nn::MultiMarginLossOptions(r).p(2))(x * 2, l);
                     }});
        v.push_back(
            {"MultiLabelSoftMarginLoss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor&) {
                 return nn::MultiLabelSoftMarginLoss(r)(x * 3, tg::sigmoid(t));
             }});
        v.push_back(
            {"TripletMarginLoss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor&) {
                 return nn::TripletMarginLoss(r)(x, t, x * t);
             }});
        v.push_back(
            {"CosineEmbeddingLoss" + rn, [r](const Tensor& x, const Tensor& t, const Tensor& l) {
                 const Tensor y = tg::where(tg::gt(l, 0.0), tg::ones({}, x.options()),
                                            -tg::ones({}, x.options()));
                 return nn::CosineEmbeddingLoss(r)(x, t, y);
             }});
    }
    return v;
}

inline std::vector<Tensor> run_loss(const LossCase& c, tg::Dtype dt, tg::Device d) {
    const Tensor x = conformance::make_input({4, 3}, 21, dt, d, false, true);
    const Tensor t = conformance::make_input({4, 3}, 22, dt, d, false, true);
    const Tensor labels = conformance::longs({2, 0, 1, 1}, x);
    const Tensor loss = c.f(x, t, labels);
    BOOST_TEST(loss.device() == d);
    const Tensor dy = conformance::make_input(loss.sizes(), 98, dt, d, false, false);
    (loss * dy).sum().backward();
    return {loss, x.grad(), t.grad()};
}

/// The training setup of the optimizer cases: a float64 MLP and a 16-sample batch on d.
struct Setup {
    nn::Sequential model{nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 4)};
    Tensor x, y;
    explicit Setup(tg::Device d, uint64_t seed = 8) {
        tg::manual_seed(seed);
        model = nn::Sequential(nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 4));
        model->to(tg::kFloat64);
        model->to(d);
        x = tg::randn({16, 6}, tg::kFloat64).to(d);
        y = tg::randint(0, 4, {16}, tg::kInt64).to(d);
    }
};

using MakeOpt = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;
using MakeSched = std::function<std::unique_ptr<optim::LRScheduler>(optim::Optimizer&)>;

struct OptCase {
    std::string name;
    MakeOpt make;
    MakeSched sched;  // may be empty
    bool clip = false;
};

inline std::vector<OptCase> opt_cases() {
    using optim::AdamOptions;
    using optim::AdamWOptions;
    using optim::SGDOptions;
    auto sgd = [](SGDOptions o) {
        return [o](std::vector<Tensor> p) { return std::make_unique<optim::SGD>(p, o); };
    };
    auto step_lr = [](optim::Optimizer& o) { return std::make_unique<optim::StepLR>(o, 2, 0.5); };
    auto cosine = [](optim::Optimizer& o) {
        return std::make_unique<optim::CosineAnnealingLR>(o, 3, 1e-3);
    };
    return {
        {"SGD", sgd(SGDOptions(0.1)), {}},
        {"SGD momentum dampening weight_decay, StepLR",
         sgd(SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(1e-2)), step_lr},
        {"SGD nesterov weight_decay, clip_grad_norm_",
         sgd(SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-2)),
         {},
         true},
        {"Adam, CosineAnnealingLR",
         [](std::vector<Tensor> p) { return std::make_unique<optim::Adam>(p, AdamOptions(1e-2)); },
         cosine},
        {"Adam weight_decay amsgrad, clip_grad_norm_",
         [](std::vector<Tensor> p) {
             return std::make_unique<optim::Adam>(
                 p, AdamOptions(1e-2).weight_decay(1e-2).amsgrad(true));
         },
         {},
         true},
        {"AdamW",
         [](std::vector<Tensor> p) {
             return std::make_unique<optim::AdamW>(p, AdamWOptions(1e-2));
         },
         {}},
        {"AdamW amsgrad, StepLR, clip_grad_norm_",
         [](std::vector<Tensor> p) {
             return std::make_unique<optim::AdamW>(p, AdamWOptions(1e-2).amsgrad(true));
         },
         step_lr, true},
    };
}

/// Runs `steps` training steps of c on d; returns the parameters and the last loss, and the
/// bytes moved host<->device by every step after the first in *moved.
inline std::vector<Tensor> train(const OptCase& c, tg::Device d, int steps, int64_t* moved) {
    Setup s(d);
    auto opt = c.make(s.model->parameters());
    std::unique_ptr<optim::LRScheduler> sched = c.sched ? c.sched(*opt) : nullptr;
    Tensor loss;
    for (int i = 0; i < steps; ++i) {
        if (i == 1)
            tg::memory::reset_transfers(d);
        loss = tg::cross_entropy(s.model(s.x), s.y);
        opt->zero_grad();
        loss.backward();
        if (c.clip)  // without clip_grad_norm_'s read back of the norm, as the step moves 0 bytes
            conformance::clip_on_device(s.model->parameters(), 0.5);
        opt->step();
        if (sched)
            sched->step();
    }
    *moved = tg::memory::transfers(d).total();
    std::vector<Tensor> out = s.model->parameters();
    out.push_back(loss);
    return out;
}

/// A scratch file in the working directory, removed at the end of the scope.
struct TempPath {
    std::string path;
    explicit TempPath(const std::string& name) : path("tg_device_" + name + ".tgsv") {}
    ~TempPath() {
        std::remove(path.c_str());
        std::remove((path + ".tmp").c_str());
    }
};

}  // namespace device_nn

BOOST_AUTO_TEST_CASE(every_module_matches_cpu, *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    for (const ModuleCase& c : module_cases())
        for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64})
            BOOST_TEST_CONTEXT(c.name << " " << dt) {
                check_all_close(run_module(c, dt, kDev), run_module(c, dt, tg::Device::cpu()),
                                tol_of(dt));
            }
}

BOOST_AUTO_TEST_CASE(every_loss_module_matches_cpu,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    for (const LossCase& c : loss_cases())
        for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64})
            BOOST_TEST_CONTEXT(c.name << " " << dt) {
                check_all_close(run_loss(c, dt, kDev), run_loss(c, dt, tg::Device::cpu()),
                                tol_of(dt));
            }
}

BOOST_AUTO_TEST_CASE(module_errors_on_device, *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    nn::Linear fc(5, 3);
    fc->to(kDev);
    tgtest::check_throws<tg::device_error>([&] { (void)fc(tg::ones({2, 5})); }, {kDev.str()});
    tgtest::check_throws<tg::shape_error>(
        [&] {
            (void)fc(tg::ones({2, 4}).to(kDev));
        },
        {"Linear", "[2,4]"});
    const Tensor logits = tg::ones({2, 3}).to(kDev);
    tgtest::check_throws<tg::device_error>(
        [&] {
            (void)nn::CrossEntropyLoss()(logits, tg::tensor(std::vector<int64_t>{0, 1}));
        },
        {"cpu", kDev.str()});
}

BOOST_AUTO_TEST_CASE(optimizers_match_cpu_and_move_zero_bytes,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    for (const OptCase& c : opt_cases())
        BOOST_TEST_CONTEXT(c.name) {
            int64_t moved_cpu = 0, moved_dev = -1;
            const auto ref = train(c, tg::Device::cpu(), 4, &moved_cpu);
            const auto got = train(c, kDev, 4, &moved_dev);
            check_all_close(got, ref, 1e-9);
            BOOST_TEST(moved_dev == 0);  // steps 2-4: forward, backward, clip, step, schedule
        }
}

BOOST_AUTO_TEST_CASE(accumulation_on_device_moves_zero_bytes,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    auto run = [](tg::Device d, int64_t* moved) {
        Setup s(d);
        optim::SGD opt(s.model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
        optim::Accumulator acc(opt, 16);
        for (int step = 0; step < 3; ++step) {
            if (step == 1)
                tg::memory::reset_transfers(d);
            for (int64_t k = 0; k < 4; ++k)  // 4 micro-batches of 4 samples
                acc.backward(
                    tg::cross_entropy(s.model(s.x.narrow(0, 4 * k, 4)), s.y.narrow(0, 4 * k, 4)),
                    4);
            acc.step();
        }
        *moved = tg::memory::transfers(d).total();
        return s.model->parameters();
    };
    int64_t moved_cpu = 0, moved_dev = -1;
    const auto ref = run(tg::Device::cpu(), &moved_cpu);
    check_all_close(run(kDev, &moved_dev), ref, 1e-10);
    BOOST_TEST(moved_dev == 0);
}

BOOST_AUTO_TEST_CASE(save_load_device_model, *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    TempPath model_file("model"), opt_file("adam");
    Setup a(kDev);
    optim::Adam opt_a(a.model->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
    auto step = [](Setup& s, optim::Optimizer& o) {
        o.zero_grad();
        tg::cross_entropy(s.model(s.x), s.y).backward();
        o.step();
    };
    step(a, opt_a);
    tg::save(a.model, model_file.path);
    tg::save(opt_a, opt_file.path);

    Setup b(kDev, 9);  // other parameters; a's data
    b.x = a.x;
    b.y = a.y;
    optim::Adam opt_b(b.model->parameters(), optim::AdamOptions(1e-2).amsgrad(true));
    BOOST_TEST((bits(b.model->parameters()) != bits(a.model->parameters())));
    tg::load(b.model, model_file.path);
    tg::load(opt_b, opt_file.path);
    BOOST_TEST((bits(b.model->parameters()) == bits(a.model->parameters())));
    for (const Tensor& p : b.model->parameters())
        BOOST_TEST(p.device() == kDev);
    for (auto& [impl, st] : opt_b.state())
        for (auto& [name, t] : st->tensors())
            if (t->defined())
                BOOST_TEST(t->device() == kDev, name << " is on " << t->device());
    // the loaded state is used on the device: the next steps agree bit for bit, moving nothing
    step(a, opt_a);
    tg::memory::reset_transfers(kDev);
    step(b, opt_b);
    BOOST_TEST(tg::memory::transfers(kDev).total() == 0);
    BOOST_TEST((bits(b.model->parameters()) == bits(a.model->parameters())));
    // and a file written from the device loads into a CPU model
    Setup c(tg::Device::cpu(), 10);
    tg::load(c.model, model_file.path);
    tg::save(b.model, model_file.path);
    tg::load(c.model, model_file.path);
    BOOST_TEST((bits(c.model->parameters()) == bits(b.model->parameters())));
}

BOOST_AUTO_TEST_CASE(load_state_dict_into_device_model,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace device_nn;
    // a float32 CPU model with BatchNorm state loads into a float64 model on the device: the
    // values arrive converted, every tensor stays on the device in its dtype
    tg::manual_seed(3);
    nn::Sequential cpu(nn::Linear(6, 4), nn::BatchNorm1d(4), nn::Linear(4, 2));
    (void)cpu(tg::randn({5, 6}));
    tg::manual_seed(4);
    nn::Sequential dev(nn::Linear(6, 4), nn::BatchNorm1d(4), nn::Linear(4, 2));
    dev->to(tg::kFloat64);
    dev->to(kDev);
    dev->load_state_dict(cpu->state_dict());
    auto sd = dev->state_dict();
    BOOST_TEST(sd.keys() == cpu->state_dict().keys(), boost::test_tools::per_element());
    for (auto& [key, t] : sd) {
        BOOST_TEST(t.device() == kDev, key << " is on " << t.device());
        BOOST_TEST((t.dtype() == (key == "1.num_batches_tracked" ? tg::kInt64 : tg::kFloat64)),
                   key << " is " << tg::dtype_name(t.dtype()));
    }
    BOOST_TEST((bits(sd.values()) == bits(cpu->state_dict().values())));
    // and back: the device's state into a CPU model
    tg::manual_seed(5);
    nn::Sequential back(nn::Linear(6, 4), nn::BatchNorm1d(4), nn::Linear(4, 2));
    back->load_state_dict(sd);
    BOOST_TEST((bits(back->state_dict().values()) == bits(cpu->state_dict().values())));
}

// Adam, AdamW and SGD run one fused kernel per parameter on OpenCL and CUDA (backend.hpp's
// OptimOp).
namespace device_nn {

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

/// Five steps of a fresh optimizer over three parameters (a matrix, a vector, an empty one) with
/// fixed gradients per step, on dev: the parameters after each step. *peak: the most bytes the
/// device held above its start during the steps after the first (the state then exists).
inline std::vector<tg::Tensor> optimizer_run(const MakeOptimizer& make, tg::Device dev,
                                             tg::Dtype dt, int64_t* peak) {
    using namespace tg;
    manual_seed(13);
    std::vector<Tensor> ps = {randn({33, 17}, dt).to(dev).requires_grad_(true),
                              randn({17}, dt).to(dev).requires_grad_(true),
                              randn({0, 3}, dt).to(dev).requires_grad_(true)};
    auto opt = make(ps);
    std::vector<Tensor> out;
    for (int step = 0; step < 5; ++step) {
        for (Tensor& p : ps)
            p.set_grad((randn(p.sizes(), dt) * (step % 2 ? 0.1 : 1.0)).to(dev));
        memory::reset_peak(dev);
        const int64_t before = memory::stats(dev).current_bytes;
        opt->step();
        if (step > 0)
            *peak = std::max(*peak, memory::stats(dev).peak_bytes - before);
        for (const Tensor& p : ps)
            out.push_back(p.detach().clone());
    }
    return out;
}

}  // namespace device_nn

BOOST_AUTO_TEST_CASE(fused_optimizer_steps_match_cpu_and_allocate_nothing,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace tg;
    using device_nn::MakeOptimizer;
    using optim::AdamOptions;
    using optim::AdamWOptions;
    using optim::SGDOptions;
    auto sgd = [](SGDOptions o) -> MakeOptimizer {
        return [o](std::vector<Tensor> p) { return std::make_unique<optim::SGD>(p, o); };
    };
    auto adam = [](AdamOptions o) -> MakeOptimizer {
        return [o](std::vector<Tensor> p) { return std::make_unique<optim::Adam>(p, o); };
    };
    auto adamw = [](AdamWOptions o) -> MakeOptimizer {
        return [o](std::vector<Tensor> p) { return std::make_unique<optim::AdamW>(p, o); };
    };
    const std::vector<std::pair<std::string, MakeOptimizer>> cases = {
        {"SGD", sgd(SGDOptions(0.1))},
        {"SGD weight_decay", sgd(SGDOptions(0.1).weight_decay(0.05))},
        {"SGD momentum dampening", sgd(SGDOptions(0.1).momentum(0.9).dampening(0.2))},
        {"SGD momentum weight_decay", sgd(SGDOptions(0.1).momentum(0.8).weight_decay(0.05))},
        {"SGD nesterov", sgd(SGDOptions(0.1).momentum(0.9).nesterov(true))},
        {"SGD nesterov weight_decay",
         sgd(SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.05))},
        {"Adam", adam(AdamOptions(1e-2))},
        {"Adam weight_decay", adam(AdamOptions(1e-2).weight_decay(0.1))},
        {"Adam amsgrad betas eps",
         adam(AdamOptions(1e-2).amsgrad(true).betas({0.8, 0.99}).eps(1e-6))},
        {"AdamW", adamw(AdamWOptions(1e-2))},
        {"AdamW amsgrad weight_decay", adamw(AdamWOptions(1e-2).amsgrad(true).weight_decay(0.3))},
        {"AdamW weight_decay 0", adamw(AdamWOptions(1e-2).weight_decay(0))}};
    for (const auto& [name, make] : cases)
        for (Dtype dt : {kFloat32, kFloat64})
            BOOST_TEST_CONTEXT(name << " " << dt) {
                int64_t peak_cpu = 0, peak_dev = 0;
                const auto cpu = device_nn::optimizer_run(make, Device::cpu(), dt, &peak_cpu);
                const auto dev = device_nn::optimizer_run(make, kDev, dt, &peak_dev);
                BOOST_TEST_REQUIRE(dev.size() == cpu.size());
                const double w = conformance::worst_relative_error(dev, cpu);
                BOOST_TEST_MESSAGE(name << " " << dt << ": " << w);
                BOOST_TEST(w <= (dt == kFloat32 ? 1e-6 : 1e-12));
                BOOST_TEST(peak_dev == 0);  // no temporary: the composed update allocated some
            }
}
