#pragma once
/// Op table rows (op_cases.hpp says how to add one): embedding, layer_norm, rms_norm and
/// scaled_dot_product_attention (plain, batched over heads, causal, with floating and int64
/// masks, with dropout from a fixed generator). Included by op_cases.hpp. test_attention.cpp
/// holds what a row cannot say: attention against the composed softmax(q·kᵀ)·v over several
/// blocks of rows, its saved bytes, thread counts and checkpointing.

namespace opcases {

inline std::vector<OpCase> transformer_cases() {
    const tg::Tensor tokens = index_of({0, 2, 2, 4, 0, 1}, {2, 3});  // repeated tokens
    const tg::Tensor no_tokens = index_of({}, {0, 2});
    // a key padding mask [2,1,5]: 1 = may attend
    const tg::Tensor keep = index_of({1, 1, 1, 0, 0, 1, 1, 1, 1, 0}, {2, 1, 5});
    const tg::Tensor no_mask;
    auto sdpa = [](const tg::Tensor& q, const tg::Tensor& k, const tg::Tensor& v,
                   const tg::Tensor& m = {}, bool causal = false) {
        return tg::scaled_dot_product_attention(q, k, v, m, 0.0, causal);
    };
    return {
        {"embedding", {U({5, 3})}, F(tg::embedding(x[0], on(tokens, x[0])))},
        // the padding row gets no gradient by definition (not the derivative): no finite
        // differences; test_attention.cpp checks that row
        {"embedding_padding_idx", {U({5, 3})}, F(tg::embedding(x[0], on(tokens, x[0]), 2)), kNoFD},
        {"embedding_padding_idx_negative",  // F:: counts it from the end: row 0
         {UT({5, 3})},
         F(tg::nn::functional::embedding(
             on(tokens, x[0]), x[0], tg::nn::functional::EmbeddingFuncOptions().padding_idx(-5))),
         kNoFD},
        {"embedding_scale_grad_by_freq",  // a scaled gradient, not the derivative
         {U({5, 3})},
         F(tg::embedding(x[0], on(tokens, x[0]), -1, true)),
         kNoFD},
        {"embedding_empty", {U({5, 3})}, F(tg::embedding(x[0], on(no_tokens, x[0])))},
        {"layer_norm_1d", {U({3, 4}), P({4}), U({4})}, F(tg::layer_norm(x[0], {4}, x[1], x[2]))},
        {"layer_norm_2d_shape",
         {U({2, 3, 4}), P({3, 4}), U({3, 4})},
         F(tg::layer_norm(x[0], {3, 4}, x[1], x[2], 1e-3))},
        {"layer_norm_no_affine", {UT({4, 5})}, F(tg::layer_norm(x[0], {5}))},
        {"layer_norm_weight_only", {US({2, 2, 3}), U({3})}, F(tg::layer_norm(x[0], {3}, x[1]))},
        {"layer_norm_empty", {U({0, 4}), P({4}), U({4})}, F(tg::layer_norm(x[0], {4}, x[1], x[2]))},
        {"rms_norm", {U({3, 4}), P({4})}, F(tg::rms_norm(x[0], {4}, x[1]))},
        {"rms_norm_2d_shape",
         {UT({2, 3, 4}), U({3, 4})},
         F(tg::rms_norm(x[0], {3, 4}, x[1], 1e-4))},
        {"rms_norm_no_affine", {US({3, 5})}, F(tg::rms_norm(x[0], {5}))},
        {"rms_norm_empty", {U({0, 2, 3}), U({3})}, F(tg::rms_norm(x[0], {3}, x[1]))},
        // rows longer than a SIMD vector, on the fused kernels (CPU, OpenCL)
        {"layer_norm_rows",
         {U({9, 40}), P({40}), U({40})},
         F(tg::layer_norm(x[0], {40}, x[1], x[2]))},
        {"rms_norm_rows", {UT({9, 40}), U({40})}, F(tg::rms_norm(x[0], {40}, x[1]))},
        {"attention", {U({2, 3, 4}), U({2, 5, 4}), U({2, 5, 3})}, F(sdpa(x[0], x[1], x[2]))},
        {"attention_heads",
         {U({2, 2, 4, 3}), UT({2, 2, 4, 3}), U({2, 2, 4, 2})},
         F(sdpa(x[0], x[1], x[2]))},
        {"attention_causal",
         {U({2, 5, 3}), U({2, 5, 3}), U({2, 5, 2})},
         F(sdpa(x[0], x[1], x[2], no_mask, true))},
        {"attention_causal_more_keys",
         {U({1, 3, 2}), U({1, 5, 2}), U({1, 5, 3})},
         F(sdpa(x[0], x[1], x[2], no_mask, true))},
        {"attention_causal_more_queries",
         {U({1, 5, 2}), U({1, 3, 2}), U({1, 3, 2})},
         F(sdpa(x[0], x[1], x[2], no_mask, true))},
        {"attention_float_mask",  // the mask is differentiated too (a relative-position bias)
         {U({2, 3, 4}), U({2, 5, 4}), U({2, 5, 3}), U({3, 5})},
         F(sdpa(x[0], x[1], x[2], x[3]))},
        {"attention_key_padding",
         {U({2, 3, 4}), U({2, 5, 4}), U({2, 5, 3})},
         F(sdpa(x[0], x[1], x[2], on(keep, x[0])))},
        {"attention_scale",
         {U({1, 2, 3}), U({1, 4, 3}), U({1, 4, 3})},
         F(tg::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, false, 0.7))},
        {"attention_dropout",  // a fixed generator: every call draws the same masks
         {U({2, 4, 3}), U({2, 5, 3}), U({2, 5, 2})},
         F(tg::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.4, false, std::nullopt,
                                            tg::Generator(11)))},
        {"attention_dropout_causal",
         {U({1, 6, 3}), U({1, 6, 3}), U({1, 6, 2})},
         F(tg::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.25, true, std::nullopt,
                                            tg::Generator(12)))},
        {"attention_empty_queries",
         {U({2, 0, 3}), U({2, 4, 3}), U({2, 4, 2})},
         F(sdpa(x[0], x[1], x[2]))},
        {"attention_empty_keys",
         {U({2, 3, 3}), U({2, 0, 3}), U({2, 0, 2})},
         F(sdpa(x[0], x[1], x[2]))},
    };
}

}  // namespace opcases
