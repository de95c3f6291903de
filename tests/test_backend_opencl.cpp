// The OpenCL backend against the CPU (backend_device_tests.hpp, backend_conformance.hpp): every
// op forward and backward, MLP training, zero host<->device bytes per optimizer step, device
// errors, allocator statistics; then the fused batch and group norms (CUDA composes them), tightly
// against the CPU. Skips cleanly without an OpenCL device (not built, no platform).
#define BOOST_TEST_MODULE backend_opencl
#include <boost/test/unit_test.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tapegrad/tapegrad.hpp"

namespace {
const tg::Device kDev = tg::Device::opencl(0);
}  // namespace

#include "backend_device_tests.hpp"

// batch_norm and group_norm run on the fused plane kernels here (backend.hpp's PlaneNormOp).
namespace {

/// Three training steps and one evaluation of a fresh module (the same seed) on `dev`: every
/// output, parameter gradient and buffer.
template <class Make>
std::vector<tg::Tensor> norm_module_run(Make make, tg::Device dev, tg::Dtype dt) {
    using namespace tg;
    manual_seed(11);
    auto m = make();
    m->to(dt);
    m->to(dev);
    std::vector<Tensor> out;
    for (int step = 0; step < 4; ++step) {
        m->train(step < 3);
        manual_seed(20 + step);
        const Tensor x = (randn({4, 6, 5, 3}, TensorOptions().dtype(dt)) * 2.0 + 0.5)
                             .to(dev)
                             .requires_grad_(true);
        const Tensor r = randn({4, 6, 5, 3}, TensorOptions().dtype(dt)).to(dev);
        const Tensor y = (*m)(x);
        out.push_back(y.detach());
        if (step < 3) {
            m->zero_grad();
            (y * r).sum().backward();
            out.push_back(x.grad());
            for (const Tensor& p : m->parameters())
                out.push_back(p.grad().detach().clone());
        }
        for (const Tensor& b : m->buffers())
            if (b.dtype() == dt)
                out.push_back(b.detach().clone());
    }
    return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(plane_norm_modules_match_cpu_tightly,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace tg;
    using nn::BatchNormOptions;
    const std::vector<std::pair<std::string, std::function<std::shared_ptr<nn::Module>()>>> cases =
        {{"BatchNorm2d", [] { return nn::BatchNorm2d(6).ptr(); }},
         {"BatchNorm2d momentum None (cumulative average)",
          [] { return nn::BatchNorm2d(BatchNormOptions(6).momentum(std::nullopt)).ptr(); }},
         {"BatchNorm2d affine=false",
          [] { return nn::BatchNorm2d(BatchNormOptions(6).affine(false)).ptr(); }},
         {"BatchNorm2d track_running_stats=false",
          [] { return nn::BatchNorm2d(BatchNormOptions(6).track_running_stats(false)).ptr(); }},
         {"GroupNorm 3 groups", [] { return nn::GroupNorm(nn::GroupNormOptions(3, 6)).ptr(); }},
         {"GroupNorm affine=false",
          [] { return nn::GroupNorm(nn::GroupNormOptions(2, 6).affine(false)).ptr(); }}};
    for (const auto& [name, make] : cases)
        for (Dtype dt : {kFloat32, kFloat64})
            BOOST_TEST_CONTEXT(name << " " << dt) {
                const auto cpu = norm_module_run(make, Device::cpu(), dt);
                const auto dev = norm_module_run(make, kDev, dt);
                BOOST_TEST_REQUIRE(dev.size() == cpu.size());
                const double w = conformance::worst_relative_error(dev, cpu);
                BOOST_TEST_MESSAGE(name << " " << dt << ": " << w);
                BOOST_TEST(w <= (dt == kFloat32 ? 1e-6 : 1e-12));
            }
    // a single value per channel cannot train, as on the CPU
    BOOST_CHECK_THROW(batch_norm(ones({1, 3}).to(kDev), {}, {}, {}, {}, true, 0.1, 1e-5, false),
                      shape_error);
}

// The fused backward writes dx and a few values per plane; the composed one held two buffers of
// x's size (dx and a temporary).
BOOST_AUTO_TEST_CASE(plane_norm_backward_holds_one_buffer_of_x,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace tg;
    manual_seed(5);
    const Tensor x = randn({8, 4, 32, 32}).to(kDev).requires_grad_(true);
    const Tensor dy = randn({8, 4, 32, 32}).to(kDev);
    const int64_t bytes = x.numel() * 4;
    for (int groups : {0, 2}) {
        const Tensor y = groups ? group_norm(x, groups, {}, {}, 1e-5, false)
                                : batch_norm(x, {}, {}, {}, {}, true, 0.1, 1e-5, false);
        const int64_t before = memory::stats(kDev).current_bytes;
        memory::reset_peak(kDev);
        const Tensor dx = autograd::grad({y}, {x}, {dy})[0];
        BOOST_TEST(memory::stats(kDev).peak_bytes - before < bytes + bytes / 4);
    }
}

// A convolution's input gradient over a batch of several chunks (conv_gemm.cpp: about 8 MiB of
// unfolded columns each on a device): each chunk's fold wrote the whole batch's element count
// from its chunk's offset, past dx's buffer (PoCL's buffers are host memory: the heap was
// corrupted, and the example CNN's training step crashed at batch 64).
BOOST_AUTO_TEST_CASE(conv_input_gradient_over_several_chunks,
                     *boost::unit_test::precondition(NeedsDevice())) {
    using namespace tg;
    manual_seed(6);
    const Tensor x = randn({20, 32, 28, 28}), w = randn({8, 32, 3, 3}) * 0.1;  // 9 + 9 + 2
    const Tensor xd = x.to(kDev).requires_grad_(true), wd = w.to(kDev).requires_grad_(true);
    const Tensor xc = x.clone().requires_grad_(true), wc = w.clone().requires_grad_(true);
    const auto o = nn::functional::Conv2dFuncOptions().padding(1);
    nn::functional::conv2d(xd, wd, o).sum().backward();
    nn::functional::conv2d(xc, wc, o).sum().backward();
    tgtest::check_close(xd.grad().to(Device::cpu()), xc.grad(), 1e-4, 1e-4);
    tgtest::check_close(wd.grad().to(Device::cpu()), wc.grad(), 1e-3, 1e-4);
}
