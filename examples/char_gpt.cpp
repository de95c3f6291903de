// A character-level GPT trained on the fortune cookie files of Debian's `fortunes` package
// (/usr/share/games/fortunes, or --data DIR): the files joined in name order, the first 90% of
// the text for training and the rest for validation. Pre-norm causal transformer blocks
// (nn::TransformerEncoderLayer with norm_first, GELU, batch_first), learned positions, AdamW with
// linear warm-up and a cosine schedule, gradient clipping, and micro-batch accumulation.
//
//   char_gpt [--steps 2000] [--minutes 10] [--batch 16] [--accum 2] [--context 128]
//            [--layers 6] [--d-model 256] [--heads 4] [--lr 1e-3] [--warmup 100]
//            [--dropout 0.1] [--eval-every 100] [--checkpoint] [--memory-budget MiB] [--report]
//            [--csv char_gpt.csv] [--prompt "The "] [--sample 300] [--seed 0] [--data DIR]
//            [--device cpu|opencl[:i]|cuda[:i]] [--distributed]
//
// --checkpoint recomputes each block in backward (every block but the last is a checkpointed
// segment); --memory-budget plans the segments whose blocks' step fits that many MiB
// (nn::plan_checkpoints over the blocks as stages); --report prints what one micro-batch's graph
// keeps per block. Writes step,elapsed_s,train_loss,val_loss,tokens_per_s to the CSV every
// --eval-every steps, and samples text from the prompt at the end.
//
// --distributed trains data-parallel under mpirun (docs/distributed.md): each rank draws its own
// windows (--batch per micro-batch and rank), nn::DistributedDataParallel averages the gradients
// once per step (the first accum-1 micro-batches under no_sync), rank 0 decides when to stop and
// prints, evaluates, samples and writes the CSV.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "device_arg.hpp"
#include "fortunes.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace nn = tg::nn;

namespace {

struct Args {
    int64_t steps = 2000, batch = 16, accum = 2, context = 128, layers = 6, d_model = 256,
            heads = 4, warmup = 100, eval_every = 100, sample = 300, seed = 0;
    double minutes = 10, lr = 1e-3, dropout = 0.1, memory_budget = 0;
    bool checkpoint = false, report = false, distributed = false;
    std::string csv = "char_gpt.csv", prompt = "The ", data = "/usr/share/games/fortunes",
                device = "cpu";
};

Args parse(int argc, char** argv) {
    Args a;
    std::map<std::string, int64_t*> ints = {
        {"--steps", &a.steps},     {"--batch", &a.batch},   {"--accum", &a.accum},
        {"--context", &a.context}, {"--layers", &a.layers}, {"--d-model", &a.d_model},
        {"--heads", &a.heads},     {"--warmup", &a.warmup}, {"--eval-every", &a.eval_every},
        {"--sample", &a.sample},   {"--seed", &a.seed}};
    std::map<std::string, double*> reals = {{"--minutes", &a.minutes},
                                            {"--lr", &a.lr},
                                            {"--dropout", &a.dropout},
                                            {"--memory-budget", &a.memory_budget}};
    std::map<std::string, std::string*> strings = {
        {"--csv", &a.csv}, {"--prompt", &a.prompt}, {"--data", &a.data}, {"--device", &a.device}};
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (k == "--distributed") {
            a.distributed = true;
            continue;
        }
        if (k == "--checkpoint" || k == "--report") {
            (k == "--report" ? a.report : a.checkpoint) = true;
            continue;
        }
        if (i + 1 >= argc)
            throw tg::value_error("char_gpt: " + k +
                                  " needs a value (see the top of char_gpt.cpp)");
        const char* v = argv[++i];
        if (ints.count(k))
            *ints[k] = std::stoll(v);
        else if (reals.count(k))
            *reals[k] = std::stod(v);
        else if (strings.count(k))
            *strings[k] = v;
        else
            throw tg::value_error("char_gpt: unknown option " + k);
    }
    if (a.batch < 1 || a.accum < 1 || a.context < 2 || a.steps < 1 || a.eval_every < 1)
        throw tg::value_error("char_gpt: batch, accum, steps, eval-every >= 1 and context >= 2");
    return a;
}

/// Decoder-only transformer: token and position embeddings, pre-norm causal blocks, a final
/// LayerNorm and the logits. The blocks are also a chain of stages for the checkpoint planner.
struct GptImpl : nn::Module {
    GptImpl(int64_t vocab, const Args& a) : Module("Gpt") {
        tok = register_module("tok", nn::Embedding(vocab, a.d_model));
        pos = register_module("pos", nn::Embedding(a.context, a.d_model));
        blocks = register_module("blocks", nn::ModuleList());
        for (int64_t i = 0; i < a.layers; ++i) {
            nn::TransformerEncoderLayer block(nn::TransformerEncoderLayerOptions(a.d_model, a.heads)
                                                  .dim_feedforward(4 * a.d_model)
                                                  .dropout(a.dropout)
                                                  .activation(tg::kGELU)
                                                  .norm_first(true)
                                                  .batch_first(true));
            blocks->push_back(block);
            // called through the holder (a record scope named after the block, and the hooks a
            // wrapper such as FullyShardedDataParallel sets on it), not block->forward
            stages.push_back({block->label(), [block](const tg::Tensor& h) {
                                  return block(h, tg::Tensor(), tg::Tensor(), /*is_causal=*/true);
                              }});
        }
        ln_f = register_module("ln_f", nn::LayerNorm(nn::LayerNormOptions({a.d_model})));
        head = register_module("head", nn::Linear(a.d_model, vocab));
        {
            tg::NoGradGuard g;  // GPT-2's small embeddings
            tok->weight.mul_(0.02);
            pos->weight.mul_(0.02);
        }
    }
    /// The blocks' input for ids [B,T]: token plus position embeddings.
    tg::Tensor embed(const tg::Tensor& ids) {
        return tok(ids) +
               pos(tg::arange(ids.size(1), tg::TensorOptions(tg::kInt64).device(ids.device())));
    }
    /// ids [B,T] -> logits [B,T,V]; in training the blocks follow `plan` when it has segments.
    tg::Tensor forward(const tg::Tensor& ids) override {
        tg::Tensor h = embed(ids);
        if (is_training() && !plan.segments.empty())
            h = nn::checkpoint_stages(stages, plan, h);
        else
            for (const nn::Stage& s : stages)
                h = s.fn(h);
        return head(ln_f(h));
    }
    std::vector<nn::Stage> stages;
    nn::CheckpointPlan plan;  // empty: no checkpointing
    nn::Embedding tok{nullptr}, pos{nullptr};
    nn::ModuleList blocks{nullptr};
    nn::LayerNorm ln_f{nullptr};
    nn::Linear head{nullptr};
};
TG_MODULE(Gpt);

double lr_at(const Args& a, int64_t step) {
    if (step < a.warmup)
        return a.lr * double(step + 1) / double(a.warmup);
    const double t = double(step - a.warmup) / double(std::max<int64_t>(1, a.steps - a.warmup));
    return a.lr * (0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * std::min(1.0, t))));
}

/// Mean loss over `batches` fixed validation batches.
double evaluate(Gpt& model, const Corpus& c, const Args& a, int64_t batches, tg::Device device) {
    tg::NoGradGuard g;
    model->eval();
    std::mt19937_64 rng(1234);  // the same windows every time
    double total = 0;
    for (int64_t i = 0; i < batches; ++i) {
        auto [x, y] = get_batch(c, c.split, c.ids.size(), a.batch, a.context, rng, device);
        const tg::Tensor logits = model(x);
        total += tg::cross_entropy(logits.reshape({-1, logits.size(2)}), y).item<double>();
    }
    model->train();
    return total / double(batches);
}

std::string sample(Gpt& model, const Corpus& c, const Args& a, std::mt19937_64& rng,
                   tg::Device device) {
    tg::NoGradGuard g;
    model->eval();
    std::vector<int64_t> ctx;
    for (char ch : a.prompt)
        if (c.index.count(ch))
            ctx.push_back(c.index.at(ch));
    if (ctx.empty())
        ctx.push_back(0);
    std::string out = a.prompt;
    for (int64_t i = 0; i < a.sample; ++i) {
        const int64_t n = std::min<int64_t>(int64_t(ctx.size()), a.context);
        const std::vector<int64_t> window(ctx.end() - n, ctx.end());
        const tg::Tensor logits = model(tg::tensor(window).reshape({1, n}).to(device));
        const tg::Tensor p = tg::softmax(logits.narrow(1, n - 1, 1).reshape({-1}), 0);
        const std::vector<float> probs = p.to(tg::Device::cpu()).to_vector<float>();
        std::discrete_distribution<int64_t> pick(probs.begin(), probs.end());
        const int64_t next = pick(rng);
        ctx.push_back(next);
        out += c.chars[size_t(next)];
    }
    model->train();
    return out;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args a = parse(argc, argv);
    if (a.distributed)
        tg::distributed::init(&argc, &argv);
    const int rank = a.distributed ? tg::distributed::rank() : 0;
    const int world = a.distributed ? tg::distributed::world_size() : 1;
    const bool lead = rank == 0;  // prints, evaluates, samples, writes the CSV
    tg::manual_seed(uint64_t(a.seed));
    std::mt19937_64 rng(uint64_t(a.seed) + uint64_t(rank));  // each rank its own windows
    const Corpus c = tokenize(read_corpus(a.data, "char_gpt"));
    const int64_t V = int64_t(c.chars.size());
    const tg::Device device = parse_device(a.device);
    if (!tg::is_available(device))
        throw tg::backend_unavailable("char_gpt: device " + device.str() + " is not available");
    Gpt model(V, a);
    model->to(device);
    int64_t n_params = 0;
    for (const tg::Tensor& p : model->parameters())
        n_params += p.numel();
    if (lead)
        std::printf(
            "char_gpt: %zu characters (%lld kinds), %lld parameters, %lld blocks of d=%lld, "
            "%lld heads, context %lld, %d x %lld x %lld sequences per step%s\n",
            c.ids.size(), (long long)V, (long long)n_params, (long long)a.layers,
            (long long)a.d_model, (long long)a.heads, (long long)a.context, world,
            (long long)a.accum, (long long)a.batch,
            a.checkpoint || a.memory_budget > 0 ? ", checkpointed" : "");
    if (a.checkpoint || a.memory_budget > 0) {
        auto [x, y] = get_batch(c, 0, c.split, a.batch, a.context, rng, device);
        const tg::Tensor h = model->embed(x).detach().requires_grad_(true);
        const auto profile = nn::profile_stages(model->stages, model->blocks->parameters(), h);
        model->plan = a.memory_budget > 0
                          ? nn::plan_checkpoints(
                                profile, tg::MemoryBudget{int64_t(a.memory_budget * 1048576)})
                          : nn::sqrt_plan(profile, a.layers);
        if (lead)
            std::cout << model->plan;
    }
    std::unique_ptr<nn::DistributedDataParallel> ddp;
    if (a.distributed)  // every rank starts from rank 0's weights
        ddp = std::make_unique<nn::DistributedDataParallel>(model);
    tg::optim::AdamW opt(model->parameters(), tg::optim::AdamWOptions(a.lr).weight_decay(0.1));
    // token-count normalisation: every micro-batch has batch·context tokens here
    tg::optim::Accumulator acc(opt, a.accum * a.batch);
    std::ofstream csv;
    if (lead) {
        csv.open(a.csv);
        csv << "step,elapsed_s,train_loss,val_loss,tokens_per_s\n";
    }
    const bool tty = lead && isatty(2);
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double train_sum = 0, last_eval_time = 0;
    int64_t train_n = 0, tokens = 0, step = 0;
    auto go_on = [&] {  // the ranks stop together: rank 0's clock decides
        int64_t go = step < a.steps && elapsed() < a.minutes * 60;
        if (a.distributed) {
            tg::Tensor t = tg::tensor(std::vector<int64_t>{go});
            tg::distributed::broadcast(t, 0);
            go = t.item<int64_t>();
        }
        return go != 0;
    };
    for (; go_on(); ++step) {
        opt.param_groups()[0].options().set_lr(lr_at(a, step));
        for (int64_t k = 0; k < a.accum; ++k) {
            auto [x, y] = get_batch(c, 0, c.split, a.batch, a.context, rng, device);
            std::optional<nn::DistributedDataParallel::NoSync> local;  // all but the last
            if (ddp && k + 1 < a.accum)
                local.emplace(ddp->no_sync());
            const tg::Tensor logits = ddp ? (*ddp)(x) : model(x);
            const tg::Tensor loss = tg::cross_entropy(logits.reshape({-1, V}), y);
            if (lead && a.report && step == 0 && k == 0)
                for (const auto& [scope, bytes] : tg::autograd::saved_report(loss).by_scope(2))
                    std::printf("saved by %-32s %8.2f MiB\n", scope.c_str(),
                                double(bytes) / 1048576.0);
            acc.backward(loss, a.batch);
            train_sum += loss.item<double>();
            ++train_n;
            tokens += a.batch * a.context * world;
        }
        nn::utils::clip_grad_norm_(model->parameters(), 1.0);
        acc.step();
        if (tty) {  // a progress bar on a terminal: steps, loss, tokens/s since the last eval
            const int done = int(40 * (step + 1) / a.steps);
            std::fprintf(stderr, "\r[%s%s] %lld/%lld  loss %.3f  %.0f tokens/s ",
                         std::string(size_t(done), '=').c_str(),
                         std::string(size_t(40 - done), ' ').c_str(), (long long)step + 1,
                         (long long)a.steps, train_sum / double(std::max<int64_t>(train_n, 1)),
                         double(tokens) / std::max(1e-9, elapsed() - last_eval_time));
        }
        if (lead && ((step + 1) % a.eval_every == 0 || step + 1 == a.steps)) {
            const double now = elapsed();
            const double val = evaluate(model, c, a, 8, device);
            const double tps = double(tokens) / std::max(1e-9, now - last_eval_time);
            if (tty)
                std::fprintf(stderr, "\r\033[K");  // clear the progress bar's line
            std::printf("step %5lld  %6.0f s  train %.4f  val %.4f  %.0f tokens/s\n",
                        (long long)step + 1, now, train_sum / double(train_n), val, tps);
            std::fflush(stdout);
            csv << step + 1 << "," << now << "," << train_sum / double(train_n) << "," << val << ","
                << tps << "\n";
            csv.flush();
            train_sum = 0, train_n = 0, tokens = 0;
            last_eval_time = elapsed();
        }
    }
    if (!lead)
        return 0;
    std::printf("final validation loss %.4f after %lld steps, %.0f s\n",
                evaluate(model, c, a, 16, device), (long long)step, elapsed());
    std::printf("--- sample ---\n%s\n", sample(model, c, a, rng, device).c_str());
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
