// bench_mlp_opencl: the MLP training step on an OpenCL device (PoCL here) in tapegrad, against
// the bare CLBlast GEMM sequence the same step needs (the limit on that device), plus the bytes
// moved host<->device per step (bar: 0 after the first step).
// Usage: bench_mlp_opencl [batch=512] [steps=10]     (sizes 784 -> 256 -> 128 -> 10, ReLU)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tapegrad/memory.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

const std::vector<int64_t> kWidths{784, 256, 128, 10};

/// The GEMMs of one step: forward y = x·Wᵀ per layer, backward dW = dyᵀ·x and dx = dy·W
/// (no dx for the first layer). Row-major, as tapegrad calls them.
double clblast_step(int64_t batch, int steps) {
    cl_platform_id plat;
    cl_device_id dev;
    clGetPlatformIDs(1, &plat, nullptr);
    clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, nullptr);
    cl_int err;
    cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    auto buf = [&](size_t n) {
        std::vector<float> h(n, 0.01f);
        return clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, h.data(), &err);
    };
    const size_t L = kWidths.size() - 1;
    std::vector<cl_mem> act, w, dw, dact;
    for (size_t i = 0; i <= L; ++i)
        act.push_back(buf(size_t(batch * kWidths[i])));
    for (size_t i = 0; i <= L; ++i)
        dact.push_back(buf(size_t(batch * kWidths[i])));
    for (size_t i = 0; i < L; ++i)
        w.push_back(buf(size_t(kWidths[i + 1] * kWidths[i])));
    for (size_t i = 0; i < L; ++i)
        dw.push_back(buf(size_t(kWidths[i + 1] * kWidths[i])));
    using clblast::Transpose;
    const auto row = clblast::Layout::kRowMajor;
    auto one = [&] {
        for (size_t i = 0; i < L; ++i) {  // [B,in] x [out,in]ᵀ -> [B,out]
            const size_t in = size_t(kWidths[i]), out = size_t(kWidths[i + 1]);
            clblast::Gemm<float>(row, Transpose::kNo, Transpose::kYes, size_t(batch), out, in, 1.f,
                                 act[i], 0, in, w[i], 0, in, 0.f, act[i + 1], 0, out, &q);
        }
        for (size_t i = L; i-- > 0;) {
            const size_t in = size_t(kWidths[i]), out = size_t(kWidths[i + 1]);
            // dW = dyᵀ·x: [out,B] x [B,in]
            clblast::Gemm<float>(row, Transpose::kYes, Transpose::kNo, out, in, size_t(batch), 1.f,
                                 dact[i + 1], 0, out, act[i], 0, in, 0.f, dw[i], 0, in, &q);
            if (i > 0)  // dx = dy·W: [B,out] x [out,in]
                clblast::Gemm<float>(row, Transpose::kNo, Transpose::kNo, size_t(batch), in, out,
                                     1.f, dact[i + 1], 0, out, w[i], 0, in, 0.f, dact[i], 0, in,
                                     &q);
        }
        clFinish(q);
    };
    one();  // compile
    std::vector<double> t;
    for (int s = 0; s < steps; ++s) {
        const double t0 = now();
        one();
        t.push_back(now() - t0);
    }
    return median(t);
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 512;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 10;
    const tg::Device dev = tg::Device::opencl(0);
    if (!tg::is_available(dev)) {
        std::printf("no OpenCL device\n");
        return 0;
    }
    tg::manual_seed(0);
    tg::Tensor x = tg::rand({batch, kWidths[0]}).to(dev);
    tg::Tensor y = tg::randint(0, kWidths.back(), {batch}, tg::kInt64).to(dev);
    tg::nn::Sequential model(tg::nn::Linear(784, 256), tg::nn::ReLU(), tg::nn::Linear(256, 128),
                             tg::nn::ReLU(), tg::nn::Linear(128, 10));
    model->to(dev);
    tg::optim::SGD opt(model->parameters(), tg::optim::SGDOptions(0.05).momentum(0.9));
    tg::Tensor loss;
    auto step = [&] {
        loss = tg::cross_entropy(model->forward(x), y);
        opt.zero_grad();
        loss.backward();
        opt.step();
    };
    step();
    (void)loss.item<float>();  // first step: compiles kernels
    std::vector<double> t;
    int64_t bytes = 0;
    for (int s = 0; s < steps; ++s) {
        const double t0 = now();
        tg::memory::reset_transfers(dev);
        step();
        bytes += tg::memory::transfers(dev).total();
        (void)loss.item<float>();  // synchronises (4 bytes, outside the counted region)
        t.push_back(now() - t0);
    }
    const double tg_ms = median(t) * 1e3;
    const double blas_ms = clblast_step(batch, steps) * 1e3;
    std::printf(
        "device,batch,tapegrad_step_ms,clblast_gemms_ms,ratio,transfer_bytes_per_step,loss\n");
    std::printf("opencl,%lld,%.2f,%.2f,%.3f,%lld,%.4f\n", (long long)batch, tg_ms, blas_ms,
                tg_ms / blas_ms, (long long)(bytes / steps), loss.item<float>());
}
