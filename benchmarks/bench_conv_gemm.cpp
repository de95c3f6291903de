/// bench_conv's raw-BLAS side (the only translation unit of bench_conv_gemm that includes
/// <cblas.h>): the cblas_sgemm calls of the step and nothing else, one per sample and GEMM
/// shape, as tapegrad issues them (step_gemms() in bench_conv.hpp), on operands laid out as
/// tapegrad's (a distinct unfolded/output slice per sample, the weights shared, the weight
/// gradient accumulated over the samples). Their summed time is the "GEMM-equivalent limit":
/// the step's FLOPs at the bare cblas_sgemm rate of the step's own shapes.
#include <cblas.h>

#include "bench_conv.hpp"

namespace bench::conv {

namespace {

struct Operands {
    GemmShape g;
    std::vector<float> a, b, c;
    bool per_sample_a, per_sample_c;
};

Operands make(const GemmShape& g, Rng& rng) {
    Operands o{g, {}, {}, {}, false, false};
    const bool weight_grad = g.tb;  // dW = dy·colᵀ: dy per sample, dW shared and accumulated
    o.per_sample_a = weight_grad;
    o.per_sample_c = !weight_grad;
    o.a = uniform_vec(rng, size_t(g.m * g.k * (o.per_sample_a ? N : 1)), -1.f, 1.f);
    o.b = uniform_vec(rng, size_t(g.k * g.n * N), -1.f, 1.f);
    o.c.assign(size_t(g.m * g.n * (o.per_sample_c ? N : 1)), 0.f);
    return o;
}

/// The N per-sample GEMMs of one shape.
void run(Operands& o) {
    const GemmShape& g = o.g;
    const int lda = int(g.ta ? g.m : g.k), ldb = int(g.tb ? g.k : g.n), ldc = int(g.n);
    for (int64_t s = 0; s < N; ++s) {
        const float* a = o.a.data() + (o.per_sample_a ? s * g.m * g.k : 0);
        const float* b = o.b.data() + s * g.k * g.n;
        float* c = o.c.data() + (o.per_sample_c ? s * g.m * g.n : 0);
        const float beta = o.per_sample_c || s == 0 ? 0.f : 1.f;
        cblas_sgemm(CblasRowMajor, g.ta ? CblasTrans : CblasNoTrans,
                    g.tb ? CblasTrans : CblasNoTrans, int(g.m), int(g.n), int(g.k), 1.f, a, lda, b,
                    ldb, beta, c, ldc);
    }
}

}  // namespace

void run_side(const ChildOptions& opt) {
    openblas_set_num_threads(opt.threads);
    Rng rng(7);
    std::vector<Operands> ops;
    for (const GemmShape& g : step_gemms())
        ops.push_back(make(g, rng));
    std::vector<std::vector<double>> per(ops.size());
    std::vector<double> total;
    for (int r = 0; r < opt.warmup + opt.reps; ++r) {
        double sum = 0;
        for (size_t i = 0; i < ops.size(); ++i) {
            double t0 = now_s();
            run(ops[i]);
            double t = now_s() - t0;
            sum += t;
            if (r >= opt.warmup)
                per[i].push_back(t);
        }
        if (r >= opt.warmup)
            total.push_back(sum);
    }
    std::vector<std::pair<std::string, std::string>> kv = {
        {"side", "gemm"},
        {"mode", "step"},
        {"blas_threads", std::to_string(openblas_get_num_threads())}};
    for (size_t i = 0; i < ops.size(); ++i)
        kv.push_back({std::string(ops[i].g.name) + "_ms", ms_list(per[i])});
    kv.push_back({"step_ms", ms_list(total)});
    print_result(kv);
}

}  // namespace bench::conv
