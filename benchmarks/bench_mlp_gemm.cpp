/// The MLP benchmarks' raw-BLAS side: the cblas_sgemm calls of the MLP step and nothing else.
/// Their only translation unit that includes OpenBLAS's <cblas.h>.
#include <cblas.h>

#include <cmath>

#include "bench_common.hpp"
#include "bench_mlp.hpp"

namespace bench {

MlpInit make_mlp_init(const MlpSpec& s, uint64_t seed, bool zero_target) {
    Rng rng(seed);
    MlpInit init;
    init.x = uniform_vec(rng, size_t(s.batch * s.in), 0.f, 1.f);
    int64_t out = s.widths.back();
    init.y = zero_target ? std::vector<float>(size_t(s.batch * out), 0.f)
                         : uniform_vec(rng, size_t(s.batch * out), 0.f, 1.f);
    int64_t fan_in = s.in;
    for (int64_t w : s.widths) {
        float bound = 1.f / std::sqrt(float(fan_in));
        init.w.push_back(uniform_vec(rng, size_t(w * fan_in), -bound, bound));
        init.b.push_back(uniform_vec(rng, size_t(w), -bound, bound));
        fan_in = w;
    }
    return init;
}

std::string set_blas_threads(int threads) {
    openblas_set_num_threads(threads);
    return "OpenBLAS threads " + std::to_string(openblas_get_num_threads());
}

std::string blas_core() {
    return openblas_get_corename();
}

namespace {

/// Preallocated buffers; forward GEMMs, then backward GEMMs, as cblas_sgemm in row-major.
class GemmMlp : public Stepper {
public:
    GemmMlp(const MlpSpec& s, const MlpInit& init) : s_(s), x_(init.x) {
        int64_t fan_in = s.in;
        for (size_t i = 0; i < s.widths.size(); ++i) {
            int64_t out = s.widths[i];
            w_.push_back(init.w[i]);
            dw_.emplace_back(size_t(out * fan_in), 0.f);
            y_.emplace_back(size_t(s.batch * out), 0.f);
            dy_.emplace_back(size_t(s.batch * out), 1e-3f);  // stands in for the upstream grad
            dx_.emplace_back(i == 0 ? 0 : size_t(s.batch * fan_in), 0.f);
            fan_in = out;
        }
    }

    StepTimes step() override {
        StepTimes t;
        const int64_t B = s_.batch;
        double t0 = now_s();
        const float* in = x_.data();
        int64_t fan_in = s_.in;
        for (size_t i = 0; i < w_.size(); ++i) {
            int64_t out = s_.widths[i];
            // [B,in] x [out,in]ᵀ -> [B,out]
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, out, fan_in, 1.f, in, fan_in,
                        w_[i].data(), fan_in, 0.f, y_[i].data(), out);
            in = y_[i].data();
            fan_in = out;
        }
        double t1 = now_s();
        for (size_t i = w_.size(); i-- > 0;) {
            int64_t out = s_.widths[i];
            int64_t fin = i == 0 ? s_.in : s_.widths[i - 1];
            const float* xin = i == 0 ? x_.data() : y_[i - 1].data();
            // dW = dyᵀ·x: [B,out]ᵀ x [B,in] -> [out,in]
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, fin, B, 1.f, dy_[i].data(),
                        out, xin, fin, 0.f, dw_[i].data(), fin);
            if (i > 0)  // dx = dy·W: [B,out] x [out,in] -> [B,in]
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, fin, out, 1.f,
                            dy_[i].data(), out, w_[i].data(), fin, 0.f, dx_[i].data(), fin);
        }
        double t2 = now_s();
        t.fwd = t1 - t0;
        t.bwd = t2 - t1;
        return t;
    }

private:
    MlpSpec s_;
    std::vector<float> x_;
    std::vector<std::vector<float>> w_, dw_, y_, dy_, dx_;
};

}  // namespace

std::unique_ptr<Stepper> make_gemm_mlp(const MlpSpec& s, const MlpInit& init) {
    return std::make_unique<GemmMlp>(s, init);
}

}  // namespace bench
