/// bench_gpt's tapegrad side: the model with tg::layer_norm, tg::linear, the fused
/// tg::scaled_dot_product_attention and tg::gelu; checkpointing per block or by the planner
/// over the chain embed -> blocks -> head (nn::Stage).
#include <malloc.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench_gpt.hpp"
#include "bench_profile.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace bench::gpt {

namespace {

constexpr double kDropout = 0.1;

struct Model {
    std::vector<tg::Tensor> p;  // params() order
    bool train = true;
    double dropout = kDropout;

    tg::Tensor drop(const tg::Tensor& x) const { return tg::dropout(x, dropout, train); }
    const tg::Tensor& w(int64_t block, size_t k) const {
        return p[2 + size_t(block) * kPerBlock + k];
    }

    tg::Tensor embed(const tg::Tensor& ids) const {
        return tg::embedding(p[0], ids) + tg::embedding(p[1], tg::arange(T, tg::kInt64));
    }
    tg::Tensor block(int64_t i, const tg::Tensor& h) const {
        const tg::Tensor a = tg::layer_norm(h, {D}, w(i, 0), w(i, 1));
        const tg::Tensor qkv = tg::linear(a, w(i, 2), w(i, 3));
        auto heads = [&](int64_t k) {
            return qkv.narrow(2, k * D, D).reshape({B, T, H, D / H}).permute({0, 2, 1, 3});
        };
        const tg::Tensor y = tg::scaled_dot_product_attention(heads(0), heads(1), heads(2), {},
                                                              train ? dropout : 0.0, true);
        const tg::Tensor x =
            h + drop(tg::linear(y.permute({0, 2, 1, 3}).reshape({B, T, D}), w(i, 4), w(i, 5)));
        const tg::Tensor m = tg::layer_norm(x, {D}, w(i, 6), w(i, 7));
        return x + drop(tg::linear(drop(tg::gelu(tg::linear(m, w(i, 8), w(i, 9)))), w(i, 10),
                                   w(i, 11)));
    }
    tg::Tensor head(const tg::Tensor& h) const {
        const size_t n = p.size();
        return tg::linear(tg::layer_norm(h, {D}, p[n - 4], p[n - 3]), p[n - 2], p[n - 1]);
    }
    /// The chain the planner segments: embed, the blocks, the head (ids -> logits).
    std::vector<tg::nn::Stage> stages() const {
        std::vector<tg::nn::Stage> s = {
            {"embed", [this](const tg::Tensor& ids) { return embed(ids); }}};
        for (int64_t i = 0; i < L; ++i)
            s.push_back({"block" + std::to_string(i),
                         [this, i](const tg::Tensor& h) { return block(i, h); }});
        s.push_back({"head", [this](const tg::Tensor& h) { return head(h); }});
        return s;
    }
};

}  // namespace

void run_side(const ChildOptions& o) {
    Model m;
    const auto init = initial_values();
    const auto ps = params();
    for (size_t i = 0; i < ps.size(); ++i)
        m.p.push_back(tg::tensor(init[i])
                          .reshape(tg::Shape(ps[i].shape.begin(), ps[i].shape.end()))
                          .detach()
                          .requires_grad_(true));
    const std::vector<int64_t> tok = tokens();
    const tg::Tensor all = tg::tensor(tok).reshape({B, T + 1});
    const tg::Tensor x = all.narrow(1, 0, T).contiguous(), y = all.narrow(1, 1, T).reshape({B * T});
    const std::vector<tg::nn::Stage> stages = m.stages();

    // the loss without dropout: both sides start from the same numbers
    double check_loss;
    {
        tg::NoGradGuard g;
        m.train = false;
        tg::Tensor h = m.embed(x);
        for (int64_t i = 0; i < L; ++i)
            h = m.block(i, h);
        check_loss = tg::cross_entropy(m.head(h).reshape({B * T, V}), y).item<double>();
        m.train = true;
    }

    tg::nn::CheckpointPlan plan;  // none: one plain segment
    plan.segments.push_back({0, stages.size(), false});
    if (o.checkpoint == 1) {  // every block its own checkpointed segment but the last
        plan.segments = {{0, 1, false}};
        for (int64_t i = 0; i < L; ++i)
            plan.segments.push_back({size_t(1 + i), size_t(2 + i), i + 1 < L});
        plan.segments.push_back({size_t(L + 1), size_t(L + 2), false});
    } else if (o.checkpoint == 2) {
        plan = tg::nn::plan_checkpoints(stages, m.p, x,
                                        tg::MemoryBudget{int64_t(o.budget_mib * 1048576)});
    }
    tg::optim::AdamW opt(m.p, tg::optim::AdamWOptions(1e-4));
    auto step = [&] {
        opt.zero_grad(false);
        const tg::Tensor logits = tg::nn::checkpoint_stages(stages, plan, x);
        const tg::Tensor loss = tg::cross_entropy(logits.reshape({B * T, V}), y);
        loss.backward();
        opt.step();
        return loss.item<double>();
    };
    std::vector<double> ms;  // seconds
    double loss = 0;
    for (int r = 0; r < o.warmup; ++r)
        loss = step();
    if (o.mode == "memory") {
        // tapegrad's own count, then the RSS, each for one step from a trimmed heap
        opt.zero_grad(false);
        tg::memory::empty_cache();
        malloc_trim(0);
        const auto s0 = tg::memory::stats();
        tg::memory::reset_peak();
        const long rss0 = proc_status_kib("VmRSS");
        const bool hwm = reset_peak_rss();
        loss = step();
        const long rss1 = proc_status_kib("VmHWM");
        const auto s1 = tg::memory::stats();
        print_result(
            {{"side", "tapegrad"},
             {"checkpoint", std::to_string(o.checkpoint)},
             {"peak_live_mib", fmt(double(s1.peak_bytes - s0.current_bytes) / 1048576, 2)},
             {"peak_saved_mib", fmt(double(s1.peak_saved_bytes - s0.saved_bytes) / 1048576, 2)},
             {"peak_rss_mib", hwm ? fmt(double(rss1 - rss0) / 1024, 2) : "n/a"},
             {"predicted_peak_mib", fmt(double(plan.predicted_peak_bytes) / 1048576, 2)},
             {"segments", std::to_string(plan.segments.size())},
             {"loss", fmt(loss, 5)},
             {"check_loss", fmt(check_loss, 6)}});
        return;
    }
    for (int r = 0; r < o.reps; ++r) {
        const double t0 = now_s();
        loss = step();
        ms.push_back(now_s() - t0);
    }
    const int profiled = 3;  // then a few steps under the op profiler (not timed above)
    const std::string profile = profile_steps(profiled, step);
    print_result({{"side", "tapegrad"},
                  {"checkpoint", std::to_string(o.checkpoint)},
                  {"step_ms", ms_list(ms)},
                  {"profile_steps", std::to_string(profiled)},
                  {"profile", profile},
                  {"loss", fmt(loss, 5)},
                  {"check_loss", fmt(check_loss, 6)}});
}

}  // namespace bench::gpt
