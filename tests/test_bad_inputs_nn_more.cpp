/// Bad-input catalogue (tests/bad_inputs.hpp): the rest of torch::nn (issue 30): Identity,
/// Unflatten, Bilinear, the distances, the dropouts, EmbeddingBag, the parameter containers and
/// the transformer stacks. The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_nn_more
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;
namespace nn = tg::nn;
namespace F = tg::nn::functional;

namespace {
struct Fixtures {
    tg::Tensor x = tg::zeros({4, 3});
    tg::Tensor y = tg::zeros({4, 2});
    tg::Tensor w = tg::zeros({5, 3, 2});
    tg::Tensor ix = tg::zeros({4, 3}, tg::kInt64);
    tg::Tensor u;
    nn::Bilinear bil{3, 2, 5};
    nn::ParameterList plist{tg::zeros({2}), tg::ones({3})};
    nn::ParameterDict pdict;
    tg::Tensor emb = tg::zeros({6, 3});  // an embedding table
    tg::Tensor tok = tg::tensor(std::vector<int64_t>{1, 2, 3, 4});
    tg::Tensor off = tg::tensor(std::vector<int64_t>{0, 2});
    nn::TransformerDecoderLayer dec_layer{
        nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(8)};
    nn::Transformer tf{nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(8)};
    tg::Tensor seq = tg::zeros({3, 2, 4});  // [T, N, E]
    /// F::multi_head_attention_forward's options for E = 4, 2 heads, with bias_k and bias_v.
    F::MultiheadAttentionForwardFuncOptions mha_options() const {
        return F::MultiheadAttentionForwardFuncOptions(
            4, 2, tg::zeros({12, 4}), tg::zeros({12}), tg::zeros({1, 1, 4}), tg::zeros({1, 1, 4}),
            false, 0.0, tg::zeros({4, 4}), tg::zeros({4}));
    }
    F::EmbeddingBagFuncOptions bag_options() const {
        return F::EmbeddingBagFuncOptions().offsets(off);
    }
    Fixtures() { pdict->insert("a", tg::zeros({2})); }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(distances_and_bilinear, Fixtures) {
    check_table(
        "Distances and bilinear",
        {
            TG_BAD(tg::bilinear(x, y, tg::zeros({5, 2, 2})), shape_error, "bilinear", "[5,2,2]",
                   "[out, 3, 2]"),
            TG_BAD(tg::bilinear(x, tg::zeros({3, 2}), w), shape_error, "bilinear", "batch", "[4,3]",
                   "[3,2]"),
            TG_BAD(tg::bilinear(x, tg::zeros({4, 1, 2}), w), shape_error, "bilinear",
                   "number of dims"),
            TG_BAD(tg::bilinear(x, y, w, tg::zeros({4})), shape_error, "bilinear", "bias [4]",
                   "[5]"),
            TG_BAD(tg::bilinear(x, y.to(tg::kFloat64), w), dtype_error, "bilinear", "float64"),
            TG_BAD(tg::bilinear(ix, y, w), dtype_error, "bilinear", "int64"),
            TG_BAD(tg::bilinear(x, y, u), value_error, "bilinear", "undefined weight"),
            TG_BAD(nn::Bilinear(-1, 2, 3), shape_error, "Bilinear(-1, 2, 3)", ">= 0"),
            TG_BAD(nn::Bilinear(0, 2, 3), value_error, "Bilinear(0, 2, 3)", "in1_features"),
            TG_BAD(bil(x.to(tg::kFloat64), y.to(tg::kFloat64)), dtype_error, "Bilinear", "float64",
                   "float32"),
            TG_BAD(bil(y, x), shape_error, "bilinear", "weight [5,3,2]"),
            TG_BAD(tg::cosine_similarity(x, y), shape_error, "cosine_similarity", "[4,3]", "[4,2]"),
            TG_BAD(tg::cosine_similarity(x, x, 2), shape_error, "cosine_similarity", "2"),
            TG_BAD(tg::cosine_similarity(ix, x), dtype_error, "cosine_similarity", "int64"),
            TG_BAD(nn::CosineSimilarity()(x, u), value_error, "cosine_similarity", "undefined"),
            TG_BAD(tg::pairwise_distance(x, y), shape_error, "pairwise_distance", "[4,3]", "[4,2]"),
            TG_BAD(tg::pairwise_distance(x, ix), dtype_error, "pairwise_distance", "int64"),
            TG_BAD(F::pdist(tg::zeros({2, 3, 4})), shape_error, "pdist", "[2,3,4]", "2-D"),
            TG_BAD(F::pdist(x, -1), value_error, "pdist", "p = -1", ">= 0"),
            TG_BAD(F::pdist(ix), dtype_error, "pdist", "int64"),
            TG_BAD(nn::Unflatten(nn::UnflattenOptions(1, {2, 2}))(x), shape_error, "Unflatten",
                   "[2, 2]", "dim 1 (3)"),
            TG_BAD(nn::Unflatten(nn::UnflattenOptions(1, {-1, -1}))(x), value_error, "Unflatten",
                   "only one dimension can be inferred"),
            TG_BAD(nn::Unflatten(nn::UnflattenOptions(1, {}))(x), value_error, "Unflatten",
                   "non-empty"),
            TG_BAD(nn::Unflatten(nn::UnflattenOptions(3, {1, 3}))(x), shape_error, "Unflatten",
                   "3"),
        });
}

BOOST_FIXTURE_TEST_CASE(dropouts, Fixtures) {
    check_table(
        "Dropouts",
        {
            TG_BAD(tg::alpha_dropout(x, 1.5, true), value_error, "alpha_dropout", "1.5"),
            TG_BAD(tg::alpha_dropout(ix, 0.5, true), dtype_error, "alpha_dropout", "int64"),
            TG_BAD(tg::alpha_dropout(u, 0.5, true), value_error, "alpha_dropout", "undefined"),
            TG_BAD(tg::feature_alpha_dropout(tg::zeros({3}), 0.5, true), shape_error,
                   "feature_alpha_dropout", "[3]", "at least 2 dims"),
            TG_BAD(nn::AlphaDropout(-0.1), value_error, "AlphaDropout", "[0, 1]"),
            TG_BAD(nn::FeatureAlphaDropout(2.0), value_error, "FeatureAlphaDropout", "[0, 1]"),
            TG_BAD(nn::Dropout3d(1.5), value_error, "Dropout3d", "[0, 1]"),
            TG_BAD(nn::Dropout3d()(x), shape_error, "Dropout3d", "[4,3]", "5-D [N,C,D,H,W]"),
            TG_BAD(F::dropout2d(x), shape_error, "F::dropout2d", "[4,3]", "4-D [N,C,H,W]"),
            TG_BAD(F::dropout3d(tg::zeros({2, 3, 2, 2, 2}), F::Dropout3dFuncOptions().p(2)),
                   value_error, "F::dropout3d", "between 0 and 1"),
        });
}

BOOST_FIXTURE_TEST_CASE(parameter_containers, Fixtures) {
    check_table("Parameter containers",
                {
                    TG_BAD(plist->at(5), shape_error, "ParameterList", "index 5", "size 2"),
                    TG_BAD(plist->append(u), value_error, "ParameterList", "undefined"),
                    TG_BAD(pdict->pop("zz"), value_error, "ParameterDict", "'zz'"),
                    TG_BAD(pdict->get("zz"), value_error, "ParameterDict", "'zz'"),
                    TG_BAD(pdict->insert("a", x), value_error, "ParameterDict", "\"a\"", "already"),
                    TG_BAD(pdict->insert("b.c", x), value_error, "ParameterDict", "b.c", "dotted"),
                });
}

BOOST_FIXTURE_TEST_CASE(embedding_bag, Fixtures) {
    check_table(
        "EmbeddingBag",
        {
            TG_BAD(F::embedding_bag(tg::zeros({2, 2, 2}, tg::kInt64), emb), shape_error,
                   "F::embedding_bag", "[2,2,2]", "1-D"),
            TG_BAD(F::embedding_bag(tok.reshape({2, 2}), emb, bag_options()), value_error,
                   "F::embedding_bag", "2-D", "offsets must be undefined"),
            TG_BAD(F::embedding_bag(tok, emb), value_error, "F::embedding_bag", "needs offsets"),
            TG_BAD(F::embedding_bag(tok, emb,
                                    bag_options().offsets(tg::tensor(std::vector<int64_t>{1, 2}))),
                   value_error, "embedding_bag", "offsets[0]", "got 1"),
            TG_BAD(F::embedding_bag(
                       tok, emb, bag_options().offsets(tg::tensor(std::vector<int64_t>{0, 3, 2}))),
                   value_error, "embedding_bag", "must not decrease", "offsets[1] = 3"),
            TG_BAD(F::embedding_bag(tok, emb,
                                    bag_options().offsets(tg::tensor(std::vector<int64_t>{0, 7}))),
                   value_error, "embedding_bag", "offsets[-1] = 7", "4"),
            TG_BAD(F::embedding_bag(tg::tensor(std::vector<int64_t>{1, 9}), emb, bag_options()),
                   shape_error, "embedding_bag", "index 9", "6 embeddings"),
            TG_BAD(F::embedding_bag(tok.to(tg::kFloat32), emb, bag_options()), dtype_error,
                   "embedding_bag", "indices", "float32"),
            TG_BAD(F::embedding_bag(tok, emb, bag_options().per_sample_weights(tg::ones({4}))),
                   value_error, "embedding_bag", "per_sample_weights", "mode sum"),
            TG_BAD(F::embedding_bag(tok, emb,
                                    bag_options().mode(tg::kSum).per_sample_weights(
                                        tg::ones({4}, tg::kFloat64))),
                   dtype_error, "embedding_bag", "per_sample_weights float64"),
            TG_BAD(F::embedding_bag(tok, emb,
                                    bag_options().mode(tg::kSum).per_sample_weights(tg::ones({3}))),
                   shape_error, "embedding_bag", "per_sample_weights [3]", "[4]"),
            TG_BAD(
                F::embedding_bag(tok, emb, bag_options().mode(tg::kMax).scale_grad_by_freq(true)),
                value_error, "embedding_bag", "max mode", "frequency"),
            TG_BAD(F::embedding_bag(tok, emb, bag_options().sparse(true)), value_error,
                   "embedding_bag", "sparse"),
            TG_BAD(F::embedding_bag(tok, emb, bag_options().padding_idx(6)), value_error,
                   "embedding_bag", "padding_idx", "6"),
            TG_BAD(nn::EmbeddingBag(0, 3), value_error, "EmbeddingBag(0, 3)", "positive"),
            TG_BAD(nn::EmbeddingBag(nn::EmbeddingBagOptions(6, 3).padding_idx(-7)), value_error,
                   "EmbeddingBag(6, 3)", "padding_idx -7"),
            TG_BAD(nn::EmbeddingBag(nn::EmbeddingBagOptions(6, 3)._weight(tg::zeros({6, 2}))),
                   value_error, "EmbeddingBag(6, 3)", "_weight [6,2]"),
            TG_BAD(nn::EmbeddingBagOptions(6, 3).mode(tg::kNone), value_error, "EmbeddingBagMode",
                   "kNone"),
        });
}

BOOST_FIXTURE_TEST_CASE(transformer_stacks, Fixtures) {
    check_table(
        "Transformer stacks and AnyModule",
        {
            TG_BAD(nn::TransformerDecoderLayer(
                       nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(0)),
                   value_error, "TransformerDecoderLayer", "dim_feedforward 0"),
            TG_BAD(nn::TransformerDecoderLayer(4, 3), value_error, "MultiheadAttention(4, 3)",
                   "divide"),
            TG_BAD(dec_layer->forward(seq, tg::zeros({3, 2, 5})), shape_error, "multihead_attn",
                   "key", "[3,2,5]"),
            TG_BAD(dec_layer->forward(seq, seq, tg::zeros({3, 3}, tg::kBool)), dtype_error,
                   "self_attn", "attn_mask is bool"),
            TG_BAD(dec_layer->forward(seq, seq, {}, {}, tg::zeros({2, 3})), dtype_error,
                   "self_attn", "key_padding_mask is float32", "bool"),
            TG_BAD(nn::TransformerEncoder(nn::TransformerEncoderLayer(nullptr), 2), value_error,
                   "TransformerEncoder", "empty"),
            TG_BAD(nn::TransformerDecoder(dec_layer, -1), value_error, "TransformerDecoder",
                   "num_layers -1"),
            TG_BAD(nn::TransformerDecoder(dec_layer, 0)->forward(seq, seq), value_error,
                   "TransformerDecoder", "no layers and no norm"),
            TG_BAD(tf->forward(tg::zeros({3, 4}), seq), shape_error, "Transformer", "3-D", "[3,4]"),
            TG_BAD(tf->forward(seq, tg::zeros({3, 1, 4})), shape_error, "Transformer",
                   "same batch size", "[3,1,4]"),
            TG_BAD(tf->forward(seq, tg::zeros({3, 2, 5})), shape_error, "Transformer",
                   "d_model = 4", "[3,2,5]"),
            TG_BAD(nn::TransformerImpl::generate_square_subsequent_mask(-1), value_error,
                   "generate_square_subsequent_mask", "-1"),
            TG_BAD(nn::Transformer(
                       nn::TransformerOptions(4, 2).custom_encoder(nn::AnyModule(nn::Linear(4, 4))))
                       ->forward(seq, seq),
                   value_error, "AnyModule", "Linear", "3 tensors"),
            TG_BAD(F::multi_head_attention_forward(tg::zeros({3, 2, 5}), seq, seq, mha_options()),
                   value_error, "F::multi_head_attention_forward", "embed_dim_to_check 4",
                   "[3,2,5]"),
            TG_BAD(F::multi_head_attention_forward(seq, seq, seq,
                                                   mha_options().in_proj_weight(tg::zeros({4, 4}))),
                   shape_error, "F::multi_head_attention_forward", "in_proj_weight", "[12, 4]"),
            TG_BAD(F::multi_head_attention_forward(seq, seq, seq,
                                                   mha_options().use_separate_proj_weight(true)),
                   value_error, "F::multi_head_attention_forward", "q_proj_weight"),
            TG_BAD(F::multi_head_attention_forward(seq, seq, seq,
                                                   mha_options().static_k(tg::zeros({4, 3, 2}))),
                   value_error, "F::multi_head_attention_forward", "static_k", "add_bias_kv"),
            TG_BAD(F::multi_head_attention_forward(
                       seq, seq, seq,
                       mha_options().bias_k({}).bias_v({}).static_v(tg::zeros({4, 3, 3}))),
                   shape_error, "F::multi_head_attention_forward", "static_v [4,3,3]", "[4, S, 2]"),
            TG_BAD(nn::AnyModule().forward(x), value_error, "AnyModule::forward", "empty"),
            TG_BAD(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({3}))).forward(x, x),
                   value_error, "AnyModule", "LayerNorm", "2 tensors"),
            TG_BAD(nn::AnyModule(nn::Sequential(nn::ReLU())).clone(), value_error,
                   "AnyModule::clone", "Sequential", "options"),
            TG_BAD(nn::AnyModule(nn::Linear(3, 2)).get<nn::ReLUImpl>(), value_error,
                   "AnyModule::get", "Linear"),
        });
}
