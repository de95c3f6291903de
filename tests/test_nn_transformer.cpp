/// The transformer modules: ModuleList and ModuleDict, Embedding, LayerNorm and RMSNorm,
/// MultiheadAttention (against the same computation written with plain ops, with LibTorch's
/// mask conventions) and TransformerEncoderLayer (post-norm and pre-norm, gradchecked in
/// float64 with its parameters, checkpointed with dropout).
#define BOOST_TEST_MODULE test_nn_transformer
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
namespace nn = tg::nn;

namespace {

std::vector<std::string> names(const nn::Module& m) {
    std::vector<std::string> n;
    for (const auto& p : m.named_parameters())
        n.push_back(p.first);
    return n;
}

/// MultiheadAttention written with plain ops from its parameters: [N, L, E] in and out.
tg::Tensor mha_reference(nn::MultiheadAttentionImpl& m, const tg::Tensor& q, const tg::Tensor& k,
                         const tg::Tensor& v, const tg::Tensor& additive_mask) {
    const int64_t E = m.options.embed_dim(), H = m.options.num_heads(), Dh = E / H;
    const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
    auto proj = [&](const tg::Tensor& x, int64_t i, int64_t T) {
        const tg::Tensor w = m.in_proj_weight.narrow(0, i * E, E),
                         b = m.in_proj_bias.narrow(0, i * E, E);
        return (tg::matmul(x.reshape({N * T, E}), w.t()) + b)
            .reshape({N, T, H, Dh})
            .permute({0, 2, 1, 3})
            .reshape({N * H, T, Dh});
    };
    tg::Tensor s = tg::matmul(proj(q, 0, L), proj(k, 1, S).transpose(1, 2)) / std::sqrt(double(Dh));
    if (additive_mask.defined())
        s = (s.reshape({N, H, L, S}) + additive_mask).reshape({N * H, L, S});
    const tg::Tensor y = tg::matmul(tg::softmax(s, -1), proj(v, 2, S))
                             .reshape({N, H, L, Dh})
                             .permute({0, 2, 1, 3})
                             .reshape({N, L, E});
    return tg::matmul(y, m.out_proj->weight.t()) + m.out_proj->bias;
}

}  // namespace

BOOST_AUTO_TEST_CASE(module_list_and_dict_register_their_modules) {
    nn::ModuleList list(nn::Linear(2, 3), nn::ReLU());
    list->push_back(nn::Linear(3, 1));
    BOOST_TEST(list->size() == 3u);
    BOOST_TEST(
        (names(*list) == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
    BOOST_TEST(list->at<nn::LinearImpl>(2).out_features() == 1);
    check_throws<tg::shape_error>([&] { (void)list[3]; }, {"ModuleList", "index 3"});
    check_throws<tg::error>([&] { (void)list->at<nn::LinearImpl>(1); }, {"ReLU"});
    check_throws<tg::error>([&] { (*list)(tg::zeros({2})); }, {"ModuleList"});
    size_t count = 0;
    for (const auto& m : *list)
        count += m != nullptr;
    BOOST_TEST(count == 3u);

    nn::ModuleDict dict(std::vector<nn::ModuleDictImpl::Item>{{"enc", nn::Linear(4, 2).ptr()},
                                                              {"act", nn::Tanh().ptr()}});
    dict->insert("dec", nn::Linear(2, 4));
    BOOST_TEST((dict->keys() == std::vector<std::string>{"enc", "act", "dec"}));
    BOOST_TEST(dict->contains("dec"));
    BOOST_TEST(!dict->contains("x"));
    BOOST_TEST(dict->at<nn::LinearImpl>("dec").in_features() == 2);
    BOOST_TEST((names(*dict) ==
                std::vector<std::string>{"enc.weight", "enc.bias", "dec.weight", "dec.bias"}));
    check_throws<tg::value_error>([&] { (void)(*dict)["x"]; }, {"ModuleDict", "\"x\""});
    check_throws<tg::value_error>([&] { dict->insert("enc", nn::Tanh()); }, {"enc"});
    // Sequential is a ModuleList with a forward
    nn::Sequential seq(nn::Linear(2, 2), nn::Tanh());
    BOOST_TEST(seq->size() == 2u);
    BOOST_TEST(tg::shape_str(seq(tg::zeros({5, 2})).sizes()) == "[5,2]");
}

BOOST_AUTO_TEST_CASE(embedding_module) {
    tg::manual_seed(3);
    nn::Embedding emb(nn::EmbeddingOptions(10, 4).padding_idx(-1));
    BOOST_TEST(emb->options.padding_idx().value() == 9);
    check_close(emb->weight.narrow(0, 9, 1), std::vector<double>(4, 0.0), 0, 0);
    const tg::Tensor ids = tg::tensor(std::vector<int64_t>{1, 9, 1, 3}).reshape({2, 2});
    const tg::Tensor y = emb(ids);
    BOOST_TEST(tg::shape_str(y.sizes()) == "[2,2,4]");
    y.sum().backward();
    check_close(emb->weight.grad().sum({1}),
                std::vector<double>{0, 8, 0, 4, 0, 0, 0, 0, 0, 0});  // token 1 twice, 9 padding
    std::ostringstream os;
    os << *emb;
    BOOST_TEST(os.str() == "Embedding(num_embeddings=10, embedding_dim=4, padding_idx=9)");
    check_throws<tg::dtype_error>([&] { emb(tg::zeros({2})); }, {"Embedding", "int64"});
    check_throws<tg::value_error>([] { nn::Embedding(nn::EmbeddingOptions(3, 2).padding_idx(3)); },
                                  {"Embedding", "padding_idx 3"});
    check_throws<tg::shape_error>([] { nn::Embedding(0, 2); }, {"Embedding"});
}

BOOST_AUTO_TEST_CASE(layer_norm_and_rms_norm_modules) {
    nn::LayerNorm ln(nn::LayerNormOptions({2, 3}).eps(1e-6));
    BOOST_TEST((names(*ln) == std::vector<std::string>{"weight", "bias"}));
    const tg::Tensor x = make_const({4, 2, 3}, 21, -3, 3);
    ln->to(tg::kFloat64);
    const tg::Tensor y = ln(x).reshape({4, 6});
    check_close(tg::mean(y, {1}), std::vector<double>(4, 0.0), 1e-12);
    check_close(tg::var(y, {1}, false), std::vector<double>(4, 1.0), 1e-5);
    nn::RMSNorm rms(nn::RMSNormOptions({3}).elementwise_affine(false));
    BOOST_TEST(rms->parameters().empty());
    const tg::Tensor r = rms(x.to(tg::kFloat32)).to(tg::kFloat64);
    check_close(tg::mean(r * r, {2}), std::vector<double>(8, 1.0), 1e-5);
    nn::LayerNorm no_bias(nn::LayerNormOptions({3}).bias(false));
    BOOST_TEST((names(*no_bias) == std::vector<std::string>{"weight"}));
    check_throws<tg::shape_error>(
        [&] {
            ln(tg::zeros({4, 3, 2}, tg::kFloat64));
        },
        {"layer_norm", "[4,3,2]", "[2,3]"});
    check_throws<tg::shape_error>([] { nn::LayerNorm(nn::LayerNormOptions({})); }, {"LayerNorm"});
}

BOOST_AUTO_TEST_CASE(multihead_attention_matches_plain_ops) {
    tg::manual_seed(4);
    const double inf = std::numeric_limits<double>::infinity();
    for (bool batch_first : {false, true}) {
        nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).batch_first(batch_first));
        mha->to(tg::kFloat64);
        {  // LibTorch initialises the projection biases to zero: give them values to check
            tg::NoGradGuard g;
            mha->in_proj_bias.copy_(make_const({24}, 30));
            mha->out_proj->bias.copy_(make_const({8}, 31));
        }
        const tg::Tensor x = make_const({2, 5, 8}, 32), kv = make_const({2, 6, 8}, 33);
        auto io = [&](const tg::Tensor& t) { return batch_first ? t : t.transpose(0, 1); };
        BOOST_TEST_CONTEXT("batch_first " << batch_first) {
            // self-attention (one in-projection GEMM), no mask
            auto [y, w] = mha(io(x), io(x), io(x));
            check_close(io(y), mha_reference(*mha, x, x, x, {}), 1e-12, 1e-12);
            BOOST_TEST(tg::shape_str(w.sizes()) == "[2,5,5]");
            check_close(w.sum({2}), std::vector<double>(10, 1.0), 1e-12);
            // cross-attention with a key padding mask (true = ignore) and a float attn_mask
            const tg::Tensor kpm =
                tg::tensor(std::vector<int64_t>{0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1})
                    .reshape({2, 6})
                    .to(tg::kBool);
            std::vector<double> am(30, 0);
            am[3] = am[17] = -inf;  // (0,3) and (2,5) may not attend
            am[8] = 0.5;            // and (1,2) a little more
            const tg::Tensor attn = tg::tensor(am, tg::kFloat64).reshape({5, 6});
            auto [y2, w2] = mha(io(x), io(kv), io(kv), kpm, true, attn, false);
            tg::Tensor add = tg::zeros({2, 1, 5, 6}, tg::kFloat64);
            add = tg::where(kpm.reshape({2, 1, 1, 6}), tg::full({}, -inf, tg::kFloat64), add);
            add = add + attn;
            check_close(io(y2), mha_reference(*mha, x, kv, kv, add), 1e-12, 1e-12);
            BOOST_TEST(tg::shape_str(w2.sizes()) == "[2,2,5,6]");
            BOOST_TEST(w2.narrow(0, 0, 1).narrow(3, 4, 2).abs().sum().item<double>() == 0.0);
            // causal
            auto [y3, w3] = mha(io(x), io(x), io(x), tg::Tensor(), false, tg::Tensor(), true, true);
            BOOST_TEST(!w3.defined());
            const tg::Tensor i = tg::arange(5).reshape({5, 1}), j = tg::arange(5).reshape({1, 5});
            const tg::Tensor causal = tg::where(tg::gt(j, i), tg::full({}, -inf, tg::kFloat64),
                                                tg::zeros({}, tg::kFloat64));
            check_close(io(y3), mha_reference(*mha, x, x, x, causal), 1e-12, 1e-12);
        }
    }
    nn::MultiheadAttention mha(8, 2);
    BOOST_TEST((names(*mha) == std::vector<std::string>{"in_proj_weight", "in_proj_bias",
                                                        "out_proj.weight", "out_proj.bias"}));
    check_throws<tg::value_error>([] { nn::MultiheadAttention(8, 3); }, {"MultiheadAttention"});
    check_throws<tg::shape_error>(
        [&] {
            mha(tg::zeros({5, 2, 7}), tg::zeros({5, 2, 7}), tg::zeros({5, 2, 7}));
        },
        {"MultiheadAttention", "[5,2,7]"});
    check_throws<tg::shape_error>(
        [&] {
            const tg::Tensor x = tg::zeros({5, 2, 8});
            mha(x, x, x, tg::zeros({2, 4}, tg::kBool));
        },
        {"key_padding_mask", "[2,4]", "[2, 5]"});
}

BOOST_AUTO_TEST_CASE(encoder_layer_gradcheck_post_and_pre_norm) {
    for (bool norm_first : {false, true})
        for (bool causal : {false, true}) {
            tg::manual_seed(5);
            nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(6, 2)
                                                  .dim_feedforward(10)
                                                  .dropout(0.0)
                                                  .activation(tg::kGELU)
                                                  .norm_first(norm_first)
                                                  .batch_first(true));
            layer->to(tg::kFloat64);
            std::vector<tg::Tensor> in = {make_input({2, 4, 6}, 40)};
            const size_t n_params = layer->parameters().size();
            for (const tg::Tensor& p : layer->parameters())
                in.push_back(p);
            BOOST_TEST_CONTEXT("norm_first " << norm_first << ", causal " << causal) {
                BOOST_TEST(n_params == 12u);
                BOOST_TEST(tg::gradcheck(
                    [&](const std::vector<tg::Tensor>& v) {
                        return (layer->forward(v[0], {}, {}, causal) * make_const({2, 4, 6}, 41))
                            .sum();
                    },
                    in));
            }
        }
    nn::TransformerEncoderLayer layer(6, 2);
    BOOST_TEST(names(*layer).front() == "self_attn.in_proj_weight");
    BOOST_TEST(names(*layer).back() == "norm2.bias");
    std::ostringstream os;
    os << *layer;
    // as LibTorch prints it: the class name and the children
    BOOST_TEST(os.str().rfind("TransformerEncoderLayerImpl(\n  (self_attn): MultiheadAttention(\n"
                              "    (out_proj): Linear(in_features=6, out_features=6, bias=true)\n",
                              0) == 0);
    BOOST_TEST(
        contains(os.str(), "(linear1): Linear(in_features=6, out_features=2048, bias=true)"));
}

/// A pre-norm block with dropout, checkpointed: the recomputation draws the same masks in the
/// attention and the feed-forward dropouts, so the gradients are the plain graph's, bit for bit.
BOOST_AUTO_TEST_CASE(checkpointed_encoder_layer_with_dropout_is_bit_identical) {
    tg::manual_seed(6);
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2)
                                          .dim_feedforward(16)
                                          .dropout(0.3)
                                          .norm_first(true)
                                          .batch_first(true));
    const tg::Tensor x = make_const({2, 7, 8}, 42).to(tg::kFloat32);
    auto grads = [&](bool checkpointed) {
        layer->zero_grad();
        tg::manual_seed(7);
        auto f = [&](const std::vector<tg::Tensor>& in) {
            return layer->forward(in[0], {}, {}, true);
        };
        const tg::Tensor y = checkpointed ? tg::checkpoint(f, {x}) : f({x});
        (y * y).sum().backward();
        std::vector<double> g;
        for (const tg::Tensor& p : layer->parameters())
            for (double v : values_of(p.grad()))
                g.push_back(v);
        return g;
    };
    const std::vector<double> plain = grads(false);
    BOOST_TEST(plain == grads(true));
    layer->eval();  // no dropout: two calls agree
    check_close(layer(x), layer(x), 0, 0);
}
