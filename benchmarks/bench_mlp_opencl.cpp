/// bench_mlp_opencl: the MLP training step on an OpenCL device (PoCL here) in
/// tapegrad, against the bare CLBlast GEMM sequence the same step needs (the limit on that
/// device), plus the bytes moved host<->device per step (bar: 0 after the first step).
/// Model: 784 -> 256 -> 128 -> 10, ReLU, cross_entropy, SGD(0.05, momentum 0.9), float32.
/// Each side runs in a process of its own (this program again with --side tg|clblast --batch
/// N, which uses only that side), alternated over --rounds rounds (default 3); medians.
/// Options: --device opencl[:i] (default opencl, device 0), --batches 256,512 (default),
/// --warmup 2, --reps 10, --rounds 3, --csv FILE, --md FILE. Built only with TG_OPENCL; the only
/// translation unit of the benchmarks that sees the OpenCL and CLBlast headers.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <clblast.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "bench_driver.hpp"
#include "bench_env.hpp"
#include "bench_mlp.hpp"
#include "tapegrad/memory.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace bench {
namespace {

const std::vector<int64_t> kWidths{784, 256, 128, 10};

void cl_check(cl_int err, const char* what) {
    if (err != CL_SUCCESS)
        throw std::runtime_error(std::string(what) + " failed with OpenCL error " +
                                 std::to_string(err));
}

/// The GEMMs of one step, called directly on CLBlast: forward y = x·Wᵀ per layer, backward
/// dW = dyᵀ·x and dx = dy·W (no dx for the first layer). Row-major, as tapegrad calls them.
/// Uses the device with the same index over all platforms as tg::Device::opencl(index).
class ClblastMlp {
public:
    ClblastMlp(int index, int64_t batch) : batch_(size_t(batch)) {
        cl_uint np = 0;
        cl_check(clGetPlatformIDs(0, nullptr, &np), "clGetPlatformIDs");
        std::vector<cl_platform_id> plats(np);
        cl_check(clGetPlatformIDs(np, plats.data(), nullptr), "clGetPlatformIDs");
        std::vector<cl_device_id> devs;
        for (cl_platform_id p : plats) {
            cl_uint nd = 0;
            if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS)
                continue;
            std::vector<cl_device_id> d(nd);
            clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, d.data(), nullptr);
            devs.insert(devs.end(), d.begin(), d.end());
        }
        if (index < 0 || size_t(index) >= devs.size())
            throw std::runtime_error("no OpenCL device " + std::to_string(index));
        dev_ = devs[size_t(index)];
        cl_int err = CL_SUCCESS;
        ctx_ = clCreateContext(nullptr, 1, &dev_, nullptr, nullptr, &err);
        cl_check(err, "clCreateContext");
        q_ = clCreateCommandQueue(ctx_, dev_, 0, &err);
        cl_check(err, "clCreateCommandQueue");
        const size_t L = kWidths.size() - 1;
        for (size_t i = 0; i <= L; ++i) {
            act_.push_back(buf(batch_ * size_t(kWidths[i])));
            dact_.push_back(buf(batch_ * size_t(kWidths[i])));
        }
        for (size_t i = 0; i < L; ++i) {
            w_.push_back(buf(size_t(kWidths[i + 1] * kWidths[i])));
            dw_.push_back(buf(size_t(kWidths[i + 1] * kWidths[i])));
        }
    }
    ~ClblastMlp() {
        for (auto* v : {&act_, &dact_, &w_, &dw_})
            for (cl_mem m : *v)
                clReleaseMemObject(m);
        clReleaseCommandQueue(q_);
        clReleaseContext(ctx_);
    }
    ClblastMlp(const ClblastMlp&) = delete;
    ClblastMlp& operator=(const ClblastMlp&) = delete;

    /// One step's GEMMs, finished; returns seconds.
    double step() {
        using clblast::Transpose;
        const auto row = clblast::Layout::kRowMajor;
        const size_t L = kWidths.size() - 1, B = batch_;
        const double t0 = now_s();
        for (size_t i = 0; i < L; ++i) {  // [B,in] x [out,in]ᵀ -> [B,out]
            const size_t in = size_t(kWidths[i]), out = size_t(kWidths[i + 1]);
            gemm_ok(clblast::Gemm<float>(row, Transpose::kNo, Transpose::kYes, B, out, in, 1.f,
                                         act_[i], 0, in, w_[i], 0, in, 0.f, act_[i + 1], 0, out,
                                         &q_));
        }
        for (size_t i = L; i-- > 0;) {
            const size_t in = size_t(kWidths[i]), out = size_t(kWidths[i + 1]);
            // dW = dyᵀ·x: [out,B] x [B,in]
            gemm_ok(clblast::Gemm<float>(row, Transpose::kYes, Transpose::kNo, out, in, B, 1.f,
                                         dact_[i + 1], 0, out, act_[i], 0, in, 0.f, dw_[i], 0, in,
                                         &q_));
            if (i > 0)  // dx = dy·W: [B,out] x [out,in]
                gemm_ok(clblast::Gemm<float>(row, Transpose::kNo, Transpose::kNo, B, in, out, 1.f,
                                             dact_[i + 1], 0, out, w_[i], 0, in, 0.f, dact_[i], 0,
                                             in, &q_));
        }
        cl_check(clFinish(q_), "clFinish");
        return now_s() - t0;
    }

private:
    cl_mem buf(size_t n) {
        std::vector<float> h(n, 0.01f);
        cl_int err = CL_SUCCESS;
        cl_mem m =
            clCreateBuffer(ctx_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, h.data(), &err);
        cl_check(err, "clCreateBuffer");
        return m;
    }
    static void gemm_ok(clblast::StatusCode s) {
        if (s != clblast::StatusCode::kSuccess)
            throw std::runtime_error("clblast::Gemm failed with status " + std::to_string(int(s)));
    }
    size_t batch_;
    cl_device_id dev_ = nullptr;
    cl_context ctx_ = nullptr;
    cl_command_queue q_ = nullptr;
    std::vector<cl_mem> act_, dact_, w_, dw_;
};

/// The same step in tapegrad on dev; step() returns seconds (synchronised by reading the loss,
/// 4 bytes, after the transfer counter was read).
class TgMlp {
public:
    TgMlp(tg::Device dev, int64_t batch) : dev_(dev) {
        tg::manual_seed(0);
        x_ = tg::rand({batch, kWidths[0]}).to(dev);
        y_ = tg::randint(0, kWidths.back(), {batch}, tg::kInt64).to(dev);
        model_->to(dev);
        opt_ = std::make_unique<tg::optim::SGD>(model_->parameters(),
                                                tg::optim::SGDOptions(0.05).momentum(0.9));
    }
    double step() {
        const double t0 = now_s();
        tg::memory::reset_transfers(dev_);
        loss_ = tg::cross_entropy(model_->forward(x_), y_);
        opt_->zero_grad();
        loss_.backward();
        opt_->step();
        last_bytes_ = tg::memory::transfers(dev_).total();
        last_loss_ = loss_.item<float>();
        return now_s() - t0;
    }
    int64_t last_bytes() const { return last_bytes_; }
    double last_loss() const { return last_loss_; }

private:
    tg::Device dev_;
    tg::Tensor x_, y_, loss_;
    tg::nn::Sequential model_{tg::nn::Linear(784, 256), tg::nn::ReLU(), tg::nn::Linear(256, 128),
                              tg::nn::ReLU(), tg::nn::Linear(128, 10)};
    std::unique_ptr<tg::optim::SGD> opt_;
    int64_t last_bytes_ = 0;
    double last_loss_ = 0;
};

/// Per batch size: the tapegrad step on `device` vs the CLBlast GEMMs, and the bytes moved.
/// Throws std::runtime_error without the device.
std::string join(const std::vector<double>& v) {
    std::string out;
    for (double x : v)
        out += (out.empty() ? "" : ",") + fmt(x, 4);
    return out;
}

/// One side in this process: --side tg or clblast, one batch size; prints its result line.
void run_side(const std::string& side, const tg::Device& dev, int index, int64_t batch, int warmup,
              int reps) {
    std::vector<double> ms;
    if (side == "tg") {
        TgMlp t(dev, batch);
        t.step();  // compiles the kernels
        const int64_t first_bytes = t.last_bytes();
        for (int w = 0; w < warmup; ++w)
            t.step();
        int64_t max_bytes = 0;
        for (int r = 0; r < reps; ++r) {
            ms.push_back(t.step() * 1e3);
            max_bytes = std::max(max_bytes, t.last_bytes());
        }
        std::printf("result step_ms=%s first_bytes=%lld max_bytes=%lld loss=%.4f\n",
                    join(ms).c_str(), (long long)first_bytes, (long long)max_bytes, t.last_loss());
    } else if (side == "clblast") {
        ClblastMlp c(index, batch);
        for (int w = 0; w < warmup + 1; ++w)
            c.step();
        for (int r = 0; r < reps; ++r)
            ms.push_back(c.step() * 1e3);
        std::printf("result step_ms=%s\n", join(ms).c_str());
    } else {
        throw std::runtime_error("--side tg|clblast, not " + side);
    }
}

/// The driver: for each batch size, --rounds rounds of one process per side (this program
/// again, with --side), the order alternating; medians over every timed step.
int run_opencl_step(const std::string& device, const std::vector<int64_t>& batches, int warmup,
                    int reps, int rounds, const std::string& csv_path, const std::string& md_path) {
    const tg::Device dev(device == "opencl" ? std::string("opencl:0") : device);
    if (!tg::is_available(dev))
        throw std::runtime_error(dev.str() + " is not available");
    std::string md =
        "# bench_mlp_opencl --device " + device + ": MLP step on OpenCL vs raw CLBlast GEMMs\n\n" +
        machine_markdown() +
        "- model 784 -> 256 -> 128 -> 10 (ReLU), cross_entropy, SGD(0.05, momentum 0.9), "
        "float32; the CLBlast column is the step's 8 GEMMs alone (forward 3, dW 3, dX 2) called "
        "directly on a context of their own\n"
        "- each side a process of its own per batch size and round, " +
        std::to_string(rounds) + " rounds (order alternating) of " + std::to_string(warmup) +
        " warm-up + " + std::to_string(reps) +
        " timed steps; medians; bytes are tg::memory::transfers over forward, backward and step "
        "(the loss is read after)\n";
    const double wall0 = now_s();
    const long long steal0 = host_steal_jiffies();
    Table table;
    table.header = {"device",
                    "batch",
                    "tapegrad_step_ms",
                    "clblast_gemms_ms",
                    "ratio",
                    "first_step_bytes",
                    "bytes_per_step",
                    "bar_ratio_le_1.15",
                    "loss"};
    bool pass = true;
    const std::string self = self_dir() + "/bench_mlp_opencl --device " + dev.str() + " --warmup " +
                             std::to_string(warmup) + " --reps " + std::to_string(reps);
    for (int64_t batch : batches) {
        Config t{"tapegrad",
                 "tapegrad",
                 "step",
                 "",
                 self + " --side tg --batch " + std::to_string(batch),
                 {}};
        Config c{"clblast",
                 "clblast",
                 "step",
                 "",
                 self + " --side clblast --batch " + std::to_string(batch),
                 {}};
        for (int r = 0; r < rounds; ++r)
            for (Config* x : r % 2 ? std::vector<Config*>{&c, &t} : std::vector<Config*>{&t, &c})
                x->rounds.push_back(run_child(x->cmd));
        int64_t first_bytes = 0, max_bytes = 0;
        for (const KV& kv : t.rounds) {
            first_bytes = std::max(first_bytes, int64_t(std::stoll(kv.at("first_bytes"))));
            max_bytes = std::max(max_bytes, int64_t(std::stoll(kv.at("max_bytes"))));
        }
        const double tm = t.med(), cm = c.med(), ratio = tm / cm;
        const bool ok = ratio <= 1.15 && max_bytes == 0;
        pass = pass && ok;
        table.add({dev.str(), std::to_string(batch), fmt(tm, 2), fmt(cm, 2), fmt(ratio, 3),
                   std::to_string(first_bytes), std::to_string(max_bytes), ok ? "PASS" : "FAIL",
                   t.get("loss")});
    }
    md += "- wall " + fmt(now_s() - wall0, 1) + " s, host steal " +
          std::to_string(host_steal_jiffies() - steal0) + " jiffies\n\n" + table.markdown();
    md += std::string(
              "\nBar tapegrad step <= 1.15 x raw CLBlast GEMMs and 0 bytes per step "
              "after the first: **") +
          (pass ? "PASS" : "FAIL") +
          "** (bytes_per_step is the largest over the timed steps; first_step_bytes includes "
          "nothing but what the first step itself moves)\n";
    std::cout << md;
    write_file(csv_path, table.csv());
    write_file(md_path, md);
    return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
    const bench::MlpOptions o = bench::parse_mlp_options(argc, argv);
    try {
        const std::string device = bench::arg_value(argc, argv, "--device", "opencl");
        const std::string side = bench::arg_value(argc, argv, "--side", "");
        if (!side.empty()) {
            const tg::Device dev(device == "opencl" ? std::string("opencl:0") : device);
            bench::run_side(side, dev, dev.index,
                            std::stoll(bench::arg_value(argc, argv, "--batch", "256")), o.warmup,
                            o.reps);
            return 0;
        }
        std::vector<int64_t> batches;
        std::stringstream list(bench::arg_value(argc, argv, "--batches", "256,512"));
        for (std::string b; std::getline(list, b, ',');)
            batches.push_back(std::stoll(b));
        return bench::run_opencl_step(device, batches, o.warmup, o.reps,
                                      std::stoi(bench::arg_value(argc, argv, "--rounds", "3")),
                                      o.csv, o.md);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_mlp_opencl: %s\n", e.what());
        return 1;
    }
}
