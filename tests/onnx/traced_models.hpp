#pragma once
// Custom modules whose forwards call functional ops and have no ONNX emitter: export_model
// traces them (docs/onnx.md "Functional forwards"). tests/test_onnx_export.cpp and
// tests/onnx/opencv_runtime.cpp export them.
#include "tapegrad/tapegrad.hpp"

namespace onnxtest {

/// A residual MLP block on [N, T, D] in functional ops: layer norm, linear, gelu, silu, sigmoid,
/// tanh, relu, neg, matmul with a parameter, an expanded buffer, mean, pow, sum, sqrt, exp, log,
/// narrow, cat, the numbers on either side, flatten and log_softmax.
struct ResidualMlpImpl : tg::nn::Module {
    tg::nn::LayerNorm norm{nullptr};
    tg::nn::Linear fc1{nullptr};
    tg::Tensor w2, scale;
    ResidualMlpImpl(int64_t d, int64_t h) : Module("ResidualMlp") {
        norm = register_module("norm", tg::nn::LayerNorm(tg::nn::LayerNormOptions({d})));
        fc1 = register_module("fc1", tg::nn::Linear(d, h));
        w2 = register_parameter("w2", tg::randn({h, d}) * 0.2);
        scale = register_buffer("scale", tg::full({d}, 0.5));
    }
    tg::Tensor forward(const tg::Tensor& x) override {
        tg::Tensor h = tg::gelu(fc1(norm(x)));
        h = tg::silu(h) - tg::sigmoid(h) * 0.25 + tg::tanh(h) / 3.0 + tg::relu(-h);
        tg::Tensor y = x + tg::matmul(h, w2) * scale.expand({x.size(1), x.size(2)});
        const tg::Tensor c = y - y.mean({-1}, true);
        y = c / tg::sqrt(c.pow(2).sum({-1}, true) + 1.0) + tg::log(tg::exp(y) + 1.0);
        const int64_t d = y.size(-1);
        y = tg::cat({y.narrow(-1, 0, 2), 1.0 - y.narrow(-1, 2, d - 2)}, -1);
        return tg::log_softmax(y.flatten(1), 1);
    }
};

/// examples/char_gpt.cpp's block (pre-norm, causal self-attention, GELU feed-forward) in
/// functional ops on [N, T, E]: the heads by reshape, transpose and permute,
/// F::scaled_dot_product_attention
/// with is_causal, dropout modules (the identity in eval).
struct AttentionBlockImpl : tg::nn::Module {
    int64_t heads;
    tg::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
    tg::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
    tg::nn::Dropout drop{nullptr};
    AttentionBlockImpl(int64_t e, int64_t h) : Module("AttentionBlock"), heads(h) {
        ln1 = register_module("ln1", tg::nn::LayerNorm(tg::nn::LayerNormOptions({e})));
        qkv = register_module("qkv", tg::nn::Linear(e, 3 * e));
        proj = register_module("proj", tg::nn::Linear(e, e));
        ln2 = register_module("ln2", tg::nn::LayerNorm(tg::nn::LayerNormOptions({e})));
        fc1 = register_module("fc1", tg::nn::Linear(e, 4 * e));
        fc2 = register_module("fc2", tg::nn::Linear(4 * e, e));
        drop = register_module("drop", tg::nn::Dropout(0.1));
    }
    tg::Tensor forward(const tg::Tensor& x) override {
        const int64_t N = x.size(0), T = x.size(1), E = x.size(2), D = E / heads;
        auto split = [&](const tg::Tensor& t) {  // [N, T, E] -> [N, H, T, D]
            return t.reshape({N, T, heads, D}).transpose(1, 2);
        };
        const tg::Tensor p = qkv(ln1(x));
        const tg::Tensor a = tg::scaled_dot_product_attention(
            split(p.narrow(2, 0, E)), split(p.narrow(2, E, E)), split(p.narrow(2, 2 * E, E)), {},
            is_training() ? 0.1 : 0.0, /*is_causal=*/true);
        const tg::Tensor y = x + drop(proj(a.permute({0, 2, 1, 3}).contiguous().view({N, T, E})));
        return y + drop(fc2(tg::gelu(fc1(ln2(y)))));
    }
};

/// examples/char_gpt.cpp's model in small: token plus position embeddings (an arange of
/// positions: a constant), the block above, a final layer norm and the head; ids [N, T] int64.
struct TinyGptImpl : tg::nn::Module {
    tg::nn::Embedding tok{nullptr}, pos{nullptr};
    std::shared_ptr<AttentionBlockImpl> block;
    tg::nn::LayerNorm ln_f{nullptr};
    tg::nn::Linear head{nullptr};
    TinyGptImpl(int64_t vocab, int64_t t, int64_t e) : Module("TinyGpt") {
        tok = register_module("tok", tg::nn::Embedding(vocab, e));
        pos = register_module("pos", tg::nn::Embedding(t, e));
        block = register_module("block", std::make_shared<AttentionBlockImpl>(e, 2));
        ln_f = register_module("ln_f", tg::nn::LayerNorm(tg::nn::LayerNormOptions({e})));
        head = register_module("head", tg::nn::Linear(e, vocab));
    }
    tg::Tensor forward(const tg::Tensor& ids) override {
        const tg::Tensor h = tok(ids) + pos(tg::arange(ids.size(1), tg::TensorOptions(tg::kInt64)));
        return head(ln_f(block->forward(h)));
    }
};

/// examples/char_gpt.cpp's model itself in small: its blocks are nn::TransformerEncoderLayers
/// (pre-norm, GELU, batch_first) in a ModuleList, called from the forward with is_causal, so the
/// trace goes through MultiheadAttention's own ops.
struct LayerGptImpl : tg::nn::Module {
    tg::nn::Embedding tok{nullptr}, pos{nullptr};
    tg::nn::ModuleList blocks{nullptr};
    tg::nn::LayerNorm ln_f{nullptr};
    tg::nn::Linear head{nullptr};
    LayerGptImpl(int64_t vocab, int64_t t, int64_t e) : Module("LayerGpt") {
        tok = register_module("tok", tg::nn::Embedding(vocab, e));
        pos = register_module("pos", tg::nn::Embedding(t, e));
        blocks = register_module("blocks", tg::nn::ModuleList());
        for (int i = 0; i < 2; ++i)
            blocks->push_back(
                tg::nn::TransformerEncoderLayer(tg::nn::TransformerEncoderLayerOptions(e, 2)
                                                    .dim_feedforward(4 * e)
                                                    .dropout(0.1)
                                                    .activation(tg::kGELU)
                                                    .norm_first(true)
                                                    .batch_first(true)));
        ln_f = register_module("ln_f", tg::nn::LayerNorm(tg::nn::LayerNormOptions({e})));
        head = register_module("head", tg::nn::Linear(e, vocab));
    }
    tg::Tensor forward(const tg::Tensor& ids) override {
        tg::Tensor h = tok(ids) + pos(tg::arange(ids.size(1), tg::TensorOptions(tg::kInt64)));
        for (size_t i = 0; i < blocks->size(); ++i)
            h = blocks->at<tg::nn::TransformerEncoderLayerImpl>(i).forward(h, {}, {}, true);
        return head(ln_f(h));
    }
};

/// Self-attention of [N, H, T, D] with masks built in the forward from constants: a bool mask
/// (keys up to one ahead; Where) and an additive float one (Add; the sqrt of an int64 tensor, a
/// Cast first), and an explicit scale.
struct MaskedAttentionImpl : tg::nn::Module {
    MaskedAttentionImpl() : Module("MaskedAttention") {}
    tg::Tensor forward(const tg::Tensor& x) override {
        const int64_t T = x.size(2);
        const tg::Tensor i = tg::arange(T, tg::TensorOptions(tg::kInt64));
        const tg::Tensor ahead = i.unsqueeze(0) <= i.unsqueeze(1) + 1;  // [T, T] bool
        const tg::Tensor bias = tg::sqrt(tg::arange(T * T).reshape({T, T})) * -0.1;
        const tg::Tensor a = tg::scaled_dot_product_attention(x, x, x, ahead);
        return a + tg::scaled_dot_product_attention(a, x, x, bias, 0.0, false, 0.3);
    }
};

/// What OpenCV 4.6 runs of a traced forward (no LayerNorm, no broadcasting of two computed
/// tensors): linear, relu, tanh, sigmoid, numbers, cat, a reshape and softmax on [N, D].
struct FunctionalMlpImpl : tg::nn::Module {
    tg::nn::Linear fc1{nullptr}, fc2{nullptr};
    FunctionalMlpImpl() : Module("FunctionalMlp") {
        fc1 = register_module("fc1", tg::nn::Linear(6, 8));
        fc2 = register_module("fc2", tg::nn::Linear(16, 4));
    }
    tg::Tensor forward(const tg::Tensor& x) override {
        const tg::Tensor h = fc1(x);
        const tg::Tensor u = tg::cat({tg::relu(h) * 2.0 + 0.5, tg::tanh(h) + tg::sigmoid(h)}, 1);
        return tg::softmax(fc2(u.reshape({x.size(0), 4, 4}).reshape({x.size(0), 16})), 1);
    }
};

}  // namespace onnxtest
