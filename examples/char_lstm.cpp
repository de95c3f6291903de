// A character-level LSTM language model on the same data as char_gpt: the fortune cookie files
// of Debian's `fortunes` package (/usr/share/games/fortunes, or --data DIR), joined in name
// order, the first 90% for training and the rest for validation. Embedding, a stacked nn::LSTM
// (batch_first, dropout between layers) and a Linear head; Adam with a cosine schedule and
// gradient clipping, on random windows of --context characters from a zero state.
//
//   char_lstm [--steps 1000] [--minutes 10] [--batch 32] [--context 100] [--layers 2]
//             [--embed 64] [--hidden 256] [--lr 2e-3] [--dropout 0.1] [--eval-every 50]
//             [--checkpoint-every 0] [--csv char_lstm.csv] [--prompt "The "] [--sample 300]
//             [--seed 0] [--data DIR] [--device cpu|opencl[:i]|cuda[:i]]
//
// --checkpoint-every k keeps the LSTM's state every k steps and recomputes the rest in backward
// (docs/rnn.md: the same gradients, bit for bit). Writes step,elapsed_s,train_loss,val_loss,
// tokens_per_s to the CSV every --eval-every steps (scripts/plot.sh draws it), and samples text
// from the prompt at the end, carrying the LSTM's state from character to character.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
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
    int64_t steps = 1000, batch = 32, context = 100, layers = 2, embed = 64, hidden = 256,
            eval_every = 50, checkpoint_every = 0, sample = 300, seed = 0;
    double minutes = 10, lr = 2e-3, dropout = 0.1;
    std::string csv = "char_lstm.csv", prompt = "The ", data = "/usr/share/games/fortunes",
                device = "cpu";
};

Args parse(int argc, char** argv) {
    Args a;
    std::map<std::string, int64_t*> ints = {
        {"--steps", &a.steps},           {"--batch", &a.batch},
        {"--context", &a.context},       {"--layers", &a.layers},
        {"--embed", &a.embed},           {"--hidden", &a.hidden},
        {"--sample", &a.sample},         {"--seed", &a.seed},
        {"--eval-every", &a.eval_every}, {"--checkpoint-every", &a.checkpoint_every}};
    std::map<std::string, double*> reals = {
        {"--minutes", &a.minutes}, {"--lr", &a.lr}, {"--dropout", &a.dropout}};
    std::map<std::string, std::string*> strings = {
        {"--csv", &a.csv}, {"--prompt", &a.prompt}, {"--data", &a.data}, {"--device", &a.device}};
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (i + 1 >= argc)
            throw tg::value_error("char_lstm: " + k + " needs a value (see char_lstm.cpp)");
        const char* v = argv[++i];
        if (ints.count(k))
            *ints[k] = std::stoll(v);
        else if (reals.count(k))
            *reals[k] = std::stod(v);
        else if (strings.count(k))
            *strings[k] = v;
        else
            throw tg::value_error("char_lstm: unknown option " + k);
    }
    if (a.batch < 1 || a.context < 2 || a.steps < 1 || a.eval_every < 1)
        throw tg::value_error("char_lstm: batch, steps, eval-every >= 1 and context >= 2");
    return a;
}

/// Embedding, LSTM, head: ids [B, T] (and a state) -> logits [B, T, V] and the final state.
struct CharLstmImpl : nn::Module {
    CharLstmImpl(int64_t vocab, const Args& a) : Module("CharLstm") {
        emb = register_module("emb", nn::Embedding(vocab, a.embed));
        lstm = register_module("lstm", nn::LSTM(nn::LSTMOptions(a.embed, a.hidden)
                                                    .num_layers(a.layers)
                                                    .dropout(a.dropout)
                                                    .batch_first(true)
                                                    .checkpoint_every(a.checkpoint_every)));
        head = register_module("head", nn::Linear(a.hidden, vocab));
    }
    std::tuple<tg::Tensor, std::tuple<tg::Tensor, tg::Tensor>> forward(
        const tg::Tensor& ids, std::optional<std::tuple<tg::Tensor, tg::Tensor>> state = {}) {
        auto [h, s] = lstm->forward(emb(ids), state);
        return {head(h), s};
    }
    nn::Embedding emb{nullptr};
    nn::LSTM lstm{nullptr};
    nn::Linear head{nullptr};
};
TG_MODULE(CharLstm);

double evaluate(CharLstm& model, const Corpus& c, const Args& a, int64_t batches, tg::Device d) {
    tg::NoGradGuard g;
    model->eval();
    std::mt19937_64 rng(1234);  // the same windows every time
    double total = 0;
    for (int64_t i = 0; i < batches; ++i) {
        auto [x, y] = get_batch(c, c.split, c.ids.size(), a.batch, a.context, rng, d);
        const tg::Tensor logits = std::get<0>(model->forward(x));
        total += tg::cross_entropy(logits.reshape({-1, logits.size(2)}), y).item<double>();
    }
    model->train();
    return total / double(batches);
}

/// Feeds the prompt, then draws one character at a time from the carried state.
std::string sample(CharLstm& model, const Corpus& c, const Args& a, std::mt19937_64& rng,
                   tg::Device d) {
    tg::NoGradGuard g;
    model->eval();
    std::vector<int64_t> ids;
    for (char ch : a.prompt)
        if (c.index.count(ch))
            ids.push_back(c.index.at(ch));
    if (ids.empty())
        ids.push_back(0);
    std::string out = a.prompt;
    auto [logits, state] = model->forward(tg::tensor(ids).reshape({1, -1}).to(d));
    for (int64_t i = 0; i < a.sample; ++i) {
        const int64_t n = logits.size(1);
        const tg::Tensor p = tg::softmax(logits.narrow(1, n - 1, 1).reshape({-1}), 0);
        const std::vector<float> probs = p.to(tg::Device::cpu()).to_vector<float>();
        std::discrete_distribution<int64_t> pick(probs.begin(), probs.end());
        const int64_t next = pick(rng);
        out += c.chars[size_t(next)];
        std::tie(logits, state) =
            model->forward(tg::tensor(std::vector<int64_t>{next}).reshape({1, 1}).to(d), state);
    }
    model->train();
    return out;
}

}  // namespace

int main(int argc, char** argv) try {
    const Args a = parse(argc, argv);
    tg::manual_seed(uint64_t(a.seed));
    std::mt19937_64 rng(uint64_t(a.seed));
    const Corpus c = tokenize(read_corpus(a.data, "char_lstm"));
    const int64_t V = int64_t(c.chars.size());
    const tg::Device device = parse_device(a.device);
    if (!tg::is_available(device))
        throw tg::backend_unavailable("char_lstm: device " + device.str() + " is not available");
    CharLstm model(V, a);
    model->to(device);
    int64_t n_params = 0;
    for (const tg::Tensor& p : model->parameters())
        n_params += p.numel();
    std::printf(
        "char_lstm: %zu characters (%lld kinds), %lld parameters, %lld layers of %lld, "
        "context %lld, batch %lld%s\n",
        c.ids.size(), (long long)V, (long long)n_params, (long long)a.layers, (long long)a.hidden,
        (long long)a.context, (long long)a.batch,
        a.checkpoint_every > 0 ? ", time-checkpointed" : "");
    tg::optim::Adam opt(model->parameters(), tg::optim::AdamOptions(a.lr));
    std::ofstream csv(a.csv);
    csv << "step,elapsed_s,train_loss,val_loss,tokens_per_s\n";
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    double train_sum = 0, last_eval = 0;
    int64_t train_n = 0, tokens = 0, step = 0;
    for (; step < a.steps && elapsed() < a.minutes * 60; ++step) {
        const double t = double(step) / double(a.steps);
        opt.param_groups()[0].options().set_lr(a.lr * (0.1 + 0.9 * 0.5 * (1 + std::cos(M_PI * t))));
        auto [x, y] = get_batch(c, 0, c.split, a.batch, a.context, rng, device);
        const tg::Tensor logits = std::get<0>(model->forward(x));
        const tg::Tensor loss = tg::cross_entropy(logits.reshape({-1, V}), y);
        opt.zero_grad();
        loss.backward();
        nn::utils::clip_grad_norm_(model->parameters(), 1.0);
        opt.step();
        train_sum += loss.item<double>();
        ++train_n;
        tokens += a.batch * a.context;
        if ((step + 1) % a.eval_every == 0 || step + 1 == a.steps) {
            const double now = elapsed(), val = evaluate(model, c, a, 8, device);
            const double tps = double(tokens) / std::max(1e-9, now - last_eval);
            std::printf("step %5lld  %6.0f s  train %.4f  val %.4f  %.0f tokens/s\n",
                        (long long)step + 1, now, train_sum / double(train_n), val, tps);
            std::fflush(stdout);
            csv << step + 1 << "," << now << "," << train_sum / double(train_n) << "," << val << ","
                << tps << "\n";
            csv.flush();
            train_sum = 0, train_n = 0, tokens = 0;
            last_eval = elapsed();
        }
    }
    std::printf("final validation loss %.4f after %lld steps, %.0f s\n",
                evaluate(model, c, a, 16, device), (long long)step, elapsed());
    std::printf("--- sample ---\n%s\n", sample(model, c, a, rng, device).c_str());
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
