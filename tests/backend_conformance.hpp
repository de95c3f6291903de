#pragma once
/// The backend conformance suite (after ggml's test-backend-ops): every op of ops.hpp run on a
/// device and on the CPU from the same inputs, forward values and input gradients compared
/// with per-dtype tolerances, with contiguous and non-contiguous (transposed-storage) inputs.
/// Used by test_backend_opencl.cpp and test_backend_cuda.cpp.
///
/// The ops are the rows of the op table, op_cases.hpp (which says how to add one); the
/// gradcheck suite, test_ops_grad.cpp, runs the same rows.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "op_cases.hpp"
#include "tapegrad/memory.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "test_util.hpp"

namespace conformance {

using tg::Tensor;

/// int64 constants on like's device (labels and indices of the other device suites).
inline Tensor longs(const std::vector<int64_t>& v, const Tensor& like) {
    return tg::tensor(v, tg::kInt64).to(like.device());
}

/// An input of the other device suites: values from seed, on dev; transposed storage when
/// noncontig and >= 2-D.
inline Tensor make_input(const tg::Shape& s, uint64_t seed, tg::Dtype dt, tg::Device dev,
                         bool noncontig, bool requires_grad) {
    tg::NoGradGuard g;
    Tensor base = tgtest::from_values(tgtest::random_values(tg::numel_of(s), seed), s, dt);
    Tensor x = noncontig && s.size() >= 2
                   ? base.transpose(-1, -2).contiguous().to(dev).transpose(-1, -2)
                   : base.to(dev);
    x = x.detach();
    if (requires_grad)
        x.requires_grad_(true);
    return x;
}

/// max|a - b| / max|b| (0 when b is all zeros and a equals it).
inline double norm_relative_error(const Tensor& a, const Tensor& b) {
    const std::vector<double> av = tgtest::values_of(a), bv = tgtest::values_of(b);
    double diff = 0, scale = 0;
    for (size_t i = 0; i < av.size() && i < bv.size(); ++i) {
        diff = std::max(diff, std::abs(av[i] - bv[i]));
        scale = std::max(scale, std::abs(bv[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

/// The largest norm_relative_error over pairs of tensors (dev[i] on a device, cpu[i] on the CPU).
inline double worst_relative_error(const std::vector<Tensor>& dev, const std::vector<Tensor>& cpu) {
    double w = 0;
    for (size_t i = 0; i < cpu.size(); ++i)
        w = std::max(w, norm_relative_error(dev[i].to(tg::Device::cpu()), cpu[i]));
    return w;
}

/// Families and rows held to a tighter bound than the suite's tolerance: the largest difference
/// between the device and the CPU relative to the largest value, per dtype {float32, float64}.
/// The row and plane normalisations are fused kernels on the CPU and OpenCL alike (issue 31's
/// bound).
inline std::pair<double, double> strict_bound(const std::string& family,
                                              const std::string& row = "") {
    if (family == "convolution")
        return {1e-5, 1e-12};
    // (not batch_norm_train_after_linear: the linear's bias gradient, a sum over the batch of
    // batch_norm's dx, is zero up to rounding, so relative to its largest value it is noise)
    for (const char* fused :
         {"layer_norm", "rms_norm", "batch_norm", "group_norm", "instance_norm"})
        if (row.rfind(fused, 0) == 0 && row != "batch_norm_train_after_linear")
            return {1e-6, 1e-12};
    return {0, 0};
}

/// One row of the op table on the CPU and on dev from the same inputs (its specs' values and
/// layouts, of dtype dt; with transposed_storage, each >= 2-D input's buffer is stored transposed
/// as well): compares the values and, unless kValuesOnly, the input gradients of sum(y * dy) for
/// a fixed random dy.
inline void compare_case(const opcases::OpCase& c, tg::Device dev, tg::Dtype dt,
                         bool transposed_storage, double strict = 0) {
    const double tol = dt == tg::kFloat32 ? 2e-4 : 1e-10;
    const bool grad = !(c.flags & opcases::kValuesOnly);
    const uint64_t seed = opcases::name_seed(c.name);
    const tg::Device cpu = tg::Device::cpu();
    opcases::V xc, xd;
    for (size_t k = 0; k < c.inputs.size(); ++k) {
        xc.push_back(opcases::make_leaf(c.inputs[k], seed + k, dt, cpu, transposed_storage, grad));
        xd.push_back(opcases::make_leaf(c.inputs[k], seed + k, dt, dev, transposed_storage, grad));
        BOOST_TEST_REQUIRE(xd.back().device() == dev);
        const tg::Shape& s = c.inputs[k].shape;
        if (transposed_storage && c.inputs[k].layout == opcases::Layout::Contiguous &&
            s.size() >= 2 && s[s.size() - 1] > 1 && s[s.size() - 2] > 1) {
            BOOST_TEST(!xc.back().is_contiguous(), "input " << k << " should be strided");
            BOOST_TEST(!xd.back().is_contiguous(), "input " << k << " should be strided");
        }
    }
    const Tensor yc = c.fn(xc), yd = c.fn(xd);
    BOOST_TEST_REQUIRE(yd.device() == dev);
    BOOST_TEST(yd.dtype() == yc.dtype());
    tgtest::check_close(yd.to(cpu), yc, tol, tol);
    if (strict > 0)
        BOOST_TEST(norm_relative_error(yd.to(cpu), yc) <= strict);
    if (!grad)
        return;
    BOOST_TEST_REQUIRE(yc.requires_grad());
    BOOST_TEST_REQUIRE(yd.requires_grad());
    const opcases::In dy_spec{yc.sizes()};  // in y's dtype (to_float64 rows)
    const Tensor dyc = opcases::make_leaf(dy_spec, seed + 1000, yc.dtype(), cpu, false, false);
    const Tensor dyd = opcases::make_leaf(dy_spec, seed + 1000, yc.dtype(), dev, false, false);
    (yc * dyc).sum().backward();
    (yd * dyd).sum().backward();
    for (size_t k = 0; k < xc.size(); ++k) {
        BOOST_TEST_CONTEXT("gradient of input " << k) {
            BOOST_TEST_REQUIRE(xd[k].grad().defined() == xc[k].grad().defined());
            if (!xc[k].grad().defined())
                continue;
            BOOST_TEST_REQUIRE(xd[k].grad().device() == dev);
            tgtest::check_close(xd[k].grad().to(cpu), xc[k].grad(), tol, tol);
            if (strict > 0)
                BOOST_TEST(norm_relative_error(xd[k].grad().to(cpu), xc[k].grad()) <= strict);
        }
    }
}

/// compare_case, with failures named by row, dtype, layout and device; an exception fails the
/// row and the next one runs.
inline void run_case(const opcases::OpCase& c, tg::Device dev, tg::Dtype dt,
                     bool transposed_storage, double strict = 0) {
    BOOST_TEST_CONTEXT(c.name << " " << dt << (transposed_storage ? " transposed storage" : "")
                              << " on " << dev) {
        try {
            compare_case(c, dev, dt, transposed_storage, strict);
        } catch (const std::exception& e) {
            BOOST_ERROR("threw: " << e.what());
        }
    }
}

/// Every row of the op table, both float dtypes, with the specs' layouts and (unless
/// kNoTransposedStorage) with transposed storage.
inline void run_all(tg::Device dev) {
    for (const opcases::Family& f : opcases::all_families())
        for (const opcases::OpCase& c : f.cases)
            for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64}) {
                const auto [s32, s64] = strict_bound(f.name, c.name);
                for (bool ts : {false, true})
                    if (!ts || !(c.flags & opcases::kNoTransposedStorage))
                        run_case(c, dev, dt, ts, dt == tg::kFloat32 ? s32 : s64);
            }
}

/// A 2-layer MLP on a synthetic 3-class problem, trained `steps` full-batch Adam steps on dev;
/// returns the loss every 10 steps.
inline std::vector<double> train_mlp(tg::Device dev, int steps) {
    using namespace tg;
    manual_seed(3);
    Tensor x = randn({128, 8});
    Tensor w_true = randn({8, 3});
    Tensor y = argmax(matmul(x, w_true), 1);
    manual_seed(5);
    nn::Sequential model(nn::Linear(8, 32), nn::ReLU(), nn::Linear(32, 3));
    model->to(dev);
    x = x.to(dev);
    y = y.to(dev);
    optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
    std::vector<double> curve;
    for (int s = 0; s < steps; ++s) {
        Tensor loss = cross_entropy(model->forward(x), y);
        opt.zero_grad();
        loss.backward();
        opt.step();
        if (s % 10 == 0)
            curve.push_back(loss.item<double>());
    }
    return curve;
}

/// clip_grad_norm_ without its read back of the norm (LibTorch's returns a double): the total
/// norm and the scaling stay on the device.
inline void clip_on_device(const std::vector<tg::Tensor>& params, double max_norm) {
    std::vector<tg::Tensor> grads;
    for (const tg::Tensor& p : params)
        if (p.grad().defined())
            grads.push_back(p.grad());
    tg::nn::utils::clip_grads_with_norm_(params, max_norm, tg::nn::utils::get_total_norm(grads));
}

/// Bytes moved host<->device by `steps` training steps after a warm-up step, for an optimizer
/// made by make_opt; clip adds clip_on_device. The loss is not read inside the region.
template <class MakeOpt>
tg::memory::Transfers step_transfers(tg::Device dev, MakeOpt make_opt, bool clip, int steps = 3) {
    using namespace tg;
    manual_seed(8);
    Tensor x = randn({32, 6}).to(dev);
    Tensor y = randint(0, 4, {32}, kInt64).to(dev);
    nn::Sequential model(nn::Linear(6, 16), nn::ReLU(), nn::Linear(16, 4));
    model->to(dev);
    auto opt = make_opt(model->parameters());
    Tensor loss;
    auto step = [&] {
        loss = cross_entropy(model->forward(x), y);
        opt.zero_grad();
        loss.backward();
        if (clip)
            clip_on_device(model->parameters(), 0.5);
        opt.step();
    };
    step();
    memory::reset_transfers(dev);
    for (int s = 0; s < steps; ++s)
        step();
    const memory::Transfers t = memory::transfers(dev);
    BOOST_TEST(std::isfinite(loss.item<double>()));
    return t;
}

}  // namespace conformance
