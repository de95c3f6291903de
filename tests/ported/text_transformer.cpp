// A LibTorch text model of the kind users write: token and position embeddings, two
// TransformerEncoderLayers (LibTorch's defaults: dropout 0.1, ReLU, post-norm, [T, N, E]) under a
// causal float mask, a linear head, cross entropy on the next token, Adam, and greedy decoding
// at the end. Written for LibTorch; tapegrad builds it after scripts/port-from-libtorch.sh alone
// (tests/ported/README.md). Prints the loss of every step.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <limits>

const int64_t kVocab = 12, kDim = 16, kContext = 10, kBatch = 4;

struct TinyLMImpl : torch::nn::Module {
    TinyLMImpl() {
        tokens = register_module("tokens", torch::nn::Embedding(kVocab, kDim));
        positions = register_module("positions", torch::nn::Embedding(kContext, kDim));
        for (int i = 0; i < 2; ++i)
            blocks->push_back(torch::nn::TransformerEncoderLayer(
                torch::nn::TransformerEncoderLayerOptions(kDim, 2).dim_feedforward(32)));
        register_module("blocks", blocks);
        head = register_module("head", torch::nn::Linear(kDim, kVocab));
    }
    // ids [N, T] -> logits [N, T, V]
    torch::Tensor forward(const torch::Tensor& ids) {
        const int64_t T = ids.size(1);
        auto h = tokens(ids) + positions(torch::arange(T, torch::kLong)).unsqueeze(0);
        auto mask = torch::triu(
            torch::full({T, T}, -std::numeric_limits<double>::infinity(), h.options()), 1);
        h = h.transpose(0, 1);  // [T, N, E]
        for (const auto& block : *blocks)
            h = block->as<torch::nn::TransformerEncoderLayer>()->forward(h, mask);
        return head(h.transpose(0, 1));
    }
    torch::nn::Embedding tokens{nullptr}, positions{nullptr};
    torch::nn::ModuleList blocks;
    torch::nn::Linear head{nullptr};
};
TORCH_MODULE(TinyLM);

/// A batch of sequences that count up in steps of 1 or 2 modulo kVocab from different starts.
torch::Tensor batch_at(int64_t step) {
    auto start = (torch::arange(kBatch, torch::kLong) * 3 + step) % kVocab;
    auto pos = torch::arange(kContext + 1, torch::kLong);
    auto stride = 1 + torch::arange(kBatch, torch::kLong) % 2;
    return (start.unsqueeze(1) + stride.unsqueeze(1) * pos.unsqueeze(0)) % kVocab;
}

int main() {
    torch::manual_seed(3);
    TinyLM model;
    model->to(torch::kFloat64);
    torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(3e-3));
    for (int64_t step = 0; step < 20; ++step) {
        auto seq = batch_at(step);
        auto x = seq.narrow(1, 0, kContext), y = seq.narrow(1, 1, kContext);
        auto logits = model->forward(x);
        auto loss =
            torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), y.reshape({-1}));
        opt.zero_grad();
        loss.backward();
        opt.step();
        std::printf("step %ld loss %.17g\n", long(step), loss.item<double>());
    }
    model->eval();
    torch::NoGradGuard no_grad;
    auto ids = torch::tensor({1, 2, 3}, torch::kLong).unsqueeze(0);
    for (int i = 0; i < 5; ++i) {
        auto next = model->forward(ids).select(1, ids.size(1) - 1).argmax(-1, true);
        ids = torch::cat({ids, next}, 1);
    }
    std::printf("decoded");
    for (int64_t i = 0; i < ids.size(1); ++i)
        std::printf(" %ld", long(ids[0][i].item<int64_t>()));
    std::printf("\n");
    return 0;
}
