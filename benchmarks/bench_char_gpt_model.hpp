#pragma once
/// examples/char_gpt.cpp's model at its full size (6 pre-norm causal blocks, d_model 256, 4 heads,
/// feed-forward 1024 with GELU, dropout 0.1, context 128, vocabulary 96, batch 16) as separate
/// modules, with a batch of token ids and targets: the model bench_memory runs under budgets and
/// bench_planner plans as stages.
#include <cstdint>
#include <memory>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"

namespace bench {

struct CharGptModel {
    static constexpr int64_t V = 96, T = 128, D = 256, H = 4, B = 16;
    tg::nn::Embedding tok{nullptr}, pos{nullptr};
    std::vector<tg::nn::TransformerEncoderLayer> blocks;
    tg::nn::LayerNorm ln_f{nullptr};
    tg::nn::Linear head{nullptr};
    std::vector<tg::Tensor> params;
    tg::Tensor ids, targets;
    /// seed >= 0: tg::manual_seed(seed) first; otherwise the generator as it is.
    explicit CharGptModel(int64_t seed = -1) {
        namespace nn = tg::nn;
        if (seed >= 0)
            tg::manual_seed(uint64_t(seed));
        tok = nn::Embedding(V, D);
        pos = nn::Embedding(T, D);
        std::vector<std::shared_ptr<nn::Module>> modules = {tok.ptr(), pos.ptr()};
        for (int i = 0; i < 6; ++i) {
            blocks.emplace_back(nn::TransformerEncoderLayerOptions(D, H)
                                    .dim_feedforward(4 * D)
                                    .dropout(0.1)
                                    .activation(tg::kGELU)
                                    .norm_first(true)
                                    .batch_first(true));
            modules.push_back(blocks.back().ptr());
        }
        ln_f = nn::LayerNorm(nn::LayerNormOptions({D}));
        head = nn::Linear(D, V);
        modules.push_back(ln_f.ptr());
        modules.push_back(head.ptr());
        for (const auto& m : modules)
            for (const tg::Tensor& t : m->parameters())
                params.push_back(t);
        ids = tg::randint(0, V, {B, T});
        targets = tg::randint(0, V, {B * T});
    }
};

}  // namespace bench
