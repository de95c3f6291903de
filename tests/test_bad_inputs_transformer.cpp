/// Bad-input catalogue (tests/bad_inputs.hpp): the transformer ops and modules.
/// The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_transformer
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;

namespace {
struct Fixtures {
    tg::Tensor q = tg::zeros({2, 3, 4});  // float32 query [B,L,E]
    tg::Tensor k = tg::zeros({2, 5, 4});  // key [B,S,E]
    tg::Tensor v = tg::zeros({2, 5, 3});  // value [B,S,Ev]
    tg::Tensor w = tg::zeros({5, 3});     // an embedding table
    tg::Tensor x = tg::zeros({2, 3});
    tg::Tensor ids = tg::tensor(std::vector<int64_t>{1, 5});
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(transformer_ops, Fixtures) {
    check_table(
        "Transformer ops",
        {
            TG_BAD(tg::scaled_dot_product_attention(q, tg::zeros({2, 5, 3}), v), shape_error,
                   "scaled_dot_product_attention", "[2,3,4]", "[2,5,3]", "4 != 3"),
            TG_BAD(tg::scaled_dot_product_attention(q, k, tg::zeros({2, 4, 3})), shape_error,
                   "scaled_dot_product_attention", "5 != 4"),
            TG_BAD(tg::scaled_dot_product_attention(q, tg::zeros({3, 5, 4}), v), shape_error,
                   "scaled_dot_product_attention", "batch dims"),
            TG_BAD(tg::scaled_dot_product_attention(tg::zeros({4}), k, v), shape_error,
                   "scaled_dot_product_attention", "[4]"),
            TG_BAD(tg::scaled_dot_product_attention(q, k, v, {}, 1.0), value_error,
                   "scaled_dot_product_attention", "dropout_p 1"),
            TG_BAD(tg::scaled_dot_product_attention(q, k, v, {}, std::nan("")), value_error,
                   "scaled_dot_product_attention", "nan"),
            TG_BAD(tg::scaled_dot_product_attention(q, k, v, {}, 0.0, false, INFINITY), value_error,
                   "scaled_dot_product_attention", "scale inf"),
            TG_BAD(tg::scaled_dot_product_attention(q, k, v, tg::zeros({3, 5}, tg::kFloat64)),
                   dtype_error, "scaled_dot_product_attention", "float64"),
            TG_BAD(tg::scaled_dot_product_attention(q, k, v, tg::zeros({4, 5})), shape_error,
                   "scaled_dot_product_attention", "attn_mask [4,5]", "[2,3,5]"),
            TG_BAD(tg::scaled_dot_product_attention(q.to(tg::kInt64), k, v), dtype_error,
                   "scaled_dot_product_attention", "int64"),
            TG_BAD(tg::scaled_dot_product_attention(q, k.to(tg::kFloat64), v), dtype_error,
                   "scaled_dot_product_attention", "float64"),
            TG_BAD(tg::scaled_dot_product_attention(q, k, tg::Tensor()), value_error,
                   "scaled_dot_product_attention", "undefined"),
            TG_BAD(tg::layer_norm(x, {4}), shape_error, "layer_norm", "[2,3]", "[4]"),
            TG_BAD(tg::layer_norm(x, {3}, tg::zeros({4})), shape_error, "layer_norm", "weight [4]"),
            TG_BAD(tg::layer_norm(x, {3}, {}, tg::zeros({3}, tg::kFloat64)), dtype_error,
                   "layer_norm", "float64"),
            TG_BAD(tg::layer_norm(x, {3}, {}, {}, -1), value_error, "layer_norm", "eps -1"),
            TG_BAD(tg::rms_norm(x, {}), shape_error, "rms_norm", "[2,3]"),
            TG_BAD(tg::rms_norm(x.to(tg::kInt64), {3}), dtype_error, "rms_norm", "int64"),
            TG_BAD(tg::embedding(w, ids), shape_error, "embedding", "index 5", "size 5"),
            TG_BAD(tg::embedding(w, tg::tensor(std::vector<int64_t>{-1})), shape_error, "embedding",
                   "index -1"),
            TG_BAD(tg::embedding(w, x), dtype_error, "embedding", "int64"),
            TG_BAD(tg::embedding(tg::zeros({5}), ids), shape_error, "embedding", "2-D"),
            TG_BAD(tg::embedding(w, ids, 5), value_error, "embedding", "padding_idx 5"),
        });
}

BOOST_FIXTURE_TEST_CASE(transformer_modules, Fixtures) {
    tg::nn::MultiheadAttention mha(8, 2);
    const tg::Tensor s = tg::zeros({5, 2, 8});
    check_table(
        "Transformer modules",
        {
            TG_BAD(tg::nn::Embedding(0, 2), shape_error, "Embedding(0, 2)"),
            TG_BAD(tg::nn::Embedding(tg::nn::EmbeddingOptions(3, 2).padding_idx(3)), value_error,
                   "Embedding", "padding_idx 3"),
            TG_BAD(tg::nn::Embedding(3, 2)(x), dtype_error, "Embedding", "int64"),
            TG_BAD(tg::nn::LayerNorm(tg::nn::LayerNormOptions({})), shape_error, "LayerNorm",
                   "normalized_shape"),
            TG_BAD(tg::nn::RMSNorm(tg::nn::RMSNormOptions({3, 0})), shape_error, "RMSNorm",
                   "[3,0]"),
            TG_BAD(tg::nn::MultiheadAttention(8, 3), value_error, "MultiheadAttention(8, 3)",
                   "divide"),
            TG_BAD(mha(tg::zeros({5, 2, 7}), s, s), shape_error, "MultiheadAttention", "[5,2,7]"),
            TG_BAD(mha(s, tg::zeros({4, 3, 8}), tg::zeros({4, 3, 8})), shape_error,
                   "MultiheadAttention", "batch sizes"),
            TG_BAD(mha(s, s, s, tg::zeros({2, 4}, tg::kBool)), shape_error, "key_padding_mask",
                   "[2,4]"),
            TG_BAD(mha(s, s, s, tg::Tensor(), true, tg::zeros({4, 4}, tg::kBool)), dtype_error,
                   "MultiheadAttention", "attn_mask is bool", "adds"),
            TG_BAD(mha(s, s, s, tg::zeros({2, 4})), dtype_error, "MultiheadAttention",
                   "key_padding_mask is float32", "must be bool"),
            TG_BAD(mha(s, s, s, tg::Tensor(), true, tg::zeros({4, 5})), shape_error, "attn_mask",
                   "[4,5]"),
            TG_BAD(tg::nn::MultiheadAttention(tg::nn::MultiheadAttentionOptions(8, 2).vdim(-1)),
                   value_error, "MultiheadAttention", "vdim -1"),
            TG_BAD(tg::nn::MultiheadAttention(tg::nn::MultiheadAttentionOptions(8, 2).kdim(3))(s, s,
                                                                                               s),
                   shape_error, "MultiheadAttention", "key", "3]"),
            TG_BAD(tg::nn::MultiheadAttention(
                       tg::nn::MultiheadAttentionOptions(8, 2).add_zero_attn(true))
                       ->forward(s, s, s, {}, false, {}, true, true),
                   value_error, "MultiheadAttention", "is_causal", "add_zero_attn"),
            TG_BAD(tg::nn::TransformerEncoderLayer(
                       tg::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(0)),
                   value_error, "TransformerEncoderLayer", "dim_feedforward"),
            TG_BAD(tg::nn::TransformerEncoderLayer(
                       tg::nn::TransformerEncoderLayerOptions(8, 2).activation(tg::kTanh)),
                   value_error, "TransformerEncoderLayer", "kReLU, kGELU or a function", "kTanh"),
            TG_BAD(tg::nn::ModuleList()[0], shape_error, "ModuleList", "index 0"),
            TG_BAD((*tg::nn::ModuleDict())["x"], value_error, "ModuleDict", "\"x\""),
        });
}
