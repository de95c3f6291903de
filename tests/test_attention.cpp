/// scaled_dot_product_attention against the composed softmax(scale·q·kᵀ + mask)·v kept here as
/// the reference (float64, 1e-12, over several blocks of rows), its saved bytes (linear in T),
/// the same bits on 1 and 2 threads, dropout (rate, determinism, checkpointing), embedding's
/// padding row and gathering backward (their errors: test_bad_inputs_transformer.cpp). The
/// gradcheck, double-backward and device rows are in op_cases_transformer.hpp.
#define BOOST_TEST_MODULE test_attention
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

extern "C" void openblas_set_num_threads(int num_threads);

using namespace tgtest;

namespace {

/// The composed attention: [..., L, S] scores kept whole, as LibTorch 1.13's users write it.
tg::Tensor reference(const tg::Tensor& q, const tg::Tensor& k, const tg::Tensor& v,
                     const tg::Tensor& mask, bool causal) {
    const int64_t L = q.size(-2), S = k.size(-2), E = q.size(-1);
    tg::Shape lead(q.sizes().begin(), q.sizes().end() - 2);
    const int64_t bh = tg::numel_of(lead);
    tg::Tensor s = tg::matmul(q.reshape({bh, L, E}), k.reshape({bh, S, E}).transpose(1, 2)) *
                   (1 / std::sqrt(double(E)));
    tg::Shape full = lead;
    full.push_back(L);
    full.push_back(S);
    s = s.reshape(full);
    const double inf = std::numeric_limits<double>::infinity();
    if (mask.defined())
        s = tg::is_floating(mask.dtype())
                ? s + mask
                : tg::where(mask.expand(full).to(tg::kBool), s, tg::full({}, -inf, q.options()));
    if (causal) {
        const tg::Tensor i = tg::arange(L).reshape({L, 1}), j = tg::arange(S).reshape({1, S});
        s = tg::where(tg::gt(j, i), tg::full({}, -inf, q.options()), s);
    }
    const tg::Tensor p = tg::softmax(s, -1).reshape({bh, L, S});
    tg::Shape out = lead;
    out.push_back(L);
    out.push_back(v.size(-1));
    return tg::matmul(p, v.reshape({bh, S, v.size(-1)})).reshape(out);
}

struct Case {
    std::string name;
    tg::Shape lead;
    int64_t L, S, E, Ev;
    bool causal;
    int mask;  // 0 none, 1 int64 key padding, 2 floating [L,S] that requires grad
};

/// y and the gradients of sum(y·w) with respect to q, k, v (and a floating mask).
std::vector<tg::Tensor> run(const Case& c, bool fused) {
    auto shape = [&](int64_t a, int64_t b) {
        tg::Shape s = c.lead;
        s.push_back(a);
        s.push_back(b);
        return s;
    };
    std::vector<tg::Tensor> in = {make_input(shape(c.L, c.E), 1), make_input(shape(c.S, c.E), 2),
                                  make_input(shape(c.S, c.Ev), 3)};
    tg::Tensor mask;
    if (c.mask == 1) {  // key padding: the last third of the keys of sample 0 hidden
        std::vector<int64_t> m(size_t(c.lead[0] * c.S), 1);
        for (int64_t j = 2 * c.S / 3; j < c.S; ++j)
            m[size_t(j)] = 0;
        tg::Shape ms = {c.lead[0]};
        for (size_t d = 1; d < c.lead.size(); ++d)
            ms.push_back(1);
        ms.push_back(1);
        ms.push_back(c.S);
        mask = tg::tensor(m).reshape(ms);
    } else if (c.mask == 2) {
        mask = make_input({c.L, c.S}, 4);
        in.push_back(mask);
    }
    const tg::Tensor y =
        fused ? tg::scaled_dot_product_attention(in[0], in[1], in[2], mask, 0.0, c.causal)
              : reference(in[0], in[1], in[2], mask, c.causal);
    (y * make_const(y.sizes(), 5)).sum().backward();
    std::vector<tg::Tensor> out = {y.detach()};
    for (const tg::Tensor& t : in)
        out.push_back(t.grad());
    return out;
}

const std::vector<Case> kCases = {
    {"heads", {2, 3}, 20, 20, 8, 8, false, 0},
    {"causal, 4 blocks of rows", {1, 2}, 200, 200, 8, 4, true, 0},
    {"causal, more queries than keys", {2}, 100, 70, 5, 3, true, 0},
    {"causal, more keys than queries", {2}, 70, 130, 5, 3, true, 0},
    {"long keys, 3 blocks of rows", {1}, 40, 1100, 4, 3, false, 0},
    {"key padding mask", {2, 2}, 70, 30, 5, 5, false, 1},
    {"floating mask with a gradient", {2, 1}, 33, 47, 6, 6, false, 2},
    {"causal and key padding together", {2, 2}, 90, 90, 4, 4, true, 1},
};

/// Runs f with OpenBLAS (and tapegrad's CPU kernels) on `threads` threads.
std::vector<double> with_threads(int threads, const std::function<tg::Tensor()>& f) {
    openblas_set_num_threads(threads);
    std::vector<double> v = values_of(f());
    openblas_set_num_threads(1);
    return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fused_attention_equals_the_composed_reference) {
    for (const Case& c : kCases)
        BOOST_TEST_CONTEXT(c.name) {
            const std::vector<tg::Tensor> fused = run(c, true), ref = run(c, false);
            BOOST_TEST_REQUIRE(fused.size() == ref.size());
            for (size_t i = 0; i < fused.size(); ++i)
                BOOST_TEST_CONTEXT(
                    (i == 0 ? std::string("output") : "gradient " + std::to_string(i - 1))) {
                    check_close(fused[i], ref[i], 1e-12, 1e-12);
                }
        }
}

/// Note [Attention that saves O(T)]: the node keeps q, k, v and one number per row, so its
/// saved bytes double with T; the composed form keeps [T,T] probabilities per head.
BOOST_AUTO_TEST_CASE(saved_bytes_grow_linearly_in_T) {
    auto saved = [](int64_t T, bool fused) {
        const tg::Tensor x = tg::randn({1, 4, T, 32}, tg::TensorOptions().requires_grad(true));
        const tg::Tensor q = x * 0.5, k = x * 0.25, v = x * 2.0;  // activations, not leaves
        const int64_t before = tg::memory::stats().saved_bytes;
        const tg::Tensor y = fused ? tg::scaled_dot_product_attention(q, k, v, {}, 0.0, true)
                                   : reference(q, k, v, {}, true);
        return tg::memory::stats().saved_bytes - before;
    };
    for (int64_t T : {128, 256, 512}) {
        BOOST_TEST_CONTEXT("T = " << T) {
            const int64_t f = saved(T, true), f2 = saved(2 * T, true);
            // q, k, v (float32, [4,T,32] each) and the row log-sum-exp [4,T]
            BOOST_TEST(f == 3 * 4 * T * 32 * 4 + 4 * T * 4);
            BOOST_TEST(f2 == 2 * f);
            BOOST_TEST(saved(2 * T, false) > 3 * saved(T, false));  // quadratic
        }
    }
}

BOOST_AUTO_TEST_CASE(same_bits_on_one_and_two_threads) {
    for (bool causal : {false, true}) {
        auto grads = [causal] {
            tg::Tensor q = make_input({4, 2, 150, 16}, 7), k = make_input({4, 2, 150, 16}, 8),
                       v = make_input({4, 2, 150, 16}, 9);
            const tg::Tensor y = tg::scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
            (y * make_const(y.sizes(), 10)).sum().backward();
            return tg::cat(
                {y.detach().flatten(), q.grad().flatten(), k.grad().flatten(), v.grad().flatten()});
        };
        const std::vector<double> one = with_threads(1, grads), two = with_threads(2, grads);
        BOOST_TEST(one == two, (causal ? "causal" : "full"));
    }
    auto embedding_grad = [] {  // 4096 tokens of 100 kinds: the sorted, gathering index_add
        std::vector<int64_t> ids(4096);
        for (size_t i = 0; i < ids.size(); ++i)
            ids[i] = int64_t((i * 7919) % 100);
        tg::Tensor w = make_input({100, 32}, 11);
        const tg::Tensor y = tg::embedding(w, tg::tensor(ids).reshape({64, 64}));
        (y * make_const(y.sizes(), 12)).sum().backward();
        return w.grad();
    };
    BOOST_TEST(with_threads(1, embedding_grad) == with_threads(2, embedding_grad));
}

BOOST_AUTO_TEST_CASE(dropout_rate_and_generators) {
    // q = k = 0: every probability is 1/S, and v = identity: y = mask/S, mask 0 or 1/(1-p)
    const int64_t S = 64;
    const tg::Tensor q = tg::zeros({2, S, 8});
    const tg::Tensor v = tg::eq(tg::arange(S).reshape({S, 1}), tg::arange(S).reshape({1, S}))
                             .to(tg::kFloat32)
                             .expand({2, S, S});
    auto attn = [&](const tg::Generator& g) {
        return tg::scaled_dot_product_attention(q, q, v, {}, 0.3, false, std::nullopt, g);
    };
    const tg::Tensor y = attn(tg::Generator(1));
    const double zeros = tg::eq(y, tg::zeros({})).to(tg::kFloat64).mean().item<double>();
    BOOST_TEST(zeros > 0.27);
    BOOST_TEST(zeros < 0.33);
    const double kept = tg::max(y).item<double>();
    BOOST_TEST(std::abs(kept * S - 1 / 0.7) < 1e-5);
    BOOST_TEST(values_of(attn(tg::Generator(1))) == values_of(y));
    BOOST_TEST(values_of(attn(tg::Generator(2))) != values_of(y));
    // p = 0 and evaluation draw nothing
    tg::Generator g(3);
    (void)tg::scaled_dot_product_attention(q, q, v, {}, 0.0, false, std::nullopt, g);
    BOOST_TEST(values_of(tg::rand({4}, g)) == values_of(tg::rand({4}, tg::Generator(3))));
}

/// A checkpoint replays the default generator: the recomputed backward draws the same masks,
/// so gradients are bit-identical to the plain graph's.
BOOST_AUTO_TEST_CASE(dropout_attention_checkpointed_is_bit_identical) {
    auto grads = [](bool checkpointed) {
        tg::manual_seed(5);
        tg::Tensor w = make_input({8, 8}, 13);
        const tg::Tensor x = make_const({2, 40, 8}, 14);
        auto block = [&w](const std::vector<tg::Tensor>& in) {
            const tg::Tensor h = tg::matmul(in[0], w);
            return tg::scaled_dot_product_attention(h, h, h, {}, 0.2, true) + in[0];
        };
        const tg::Tensor y = checkpointed ? tg::checkpoint(block, {x}) : block({x});
        (y * y).sum().backward();
        return values_of(w.grad());
    };
    BOOST_TEST(grads(true) == grads(false));
}

BOOST_AUTO_TEST_CASE(embedding_padding_row_and_repeated_tokens) {
    tg::Tensor w = make_input({5, 3}, 15);
    const tg::Tensor ids = tg::tensor(std::vector<int64_t>{0, 2, 2, 4, 2, 1}).reshape({2, 3});
    const tg::Tensor y = tg::embedding(w, ids, 2);
    BOOST_TEST(tg::shape_str(y.sizes()) == "[2,3,3]");
    check_close(y.narrow(0, 0, 1).narrow(1, 1, 1).reshape({3}),
                w.detach().narrow(0, 2, 1).reshape({3}), 0, 0);
    y.sum().backward();
    // each row's gradient counts its tokens; the padding row (2) gets none
    check_close(w.grad(), std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1});
}

/// ATen's embedding(weight, indices, padding_idx = -1, scale_grad_by_freq): a negative
/// padding_idx is no padding row (tapegrad counted it from the end, so -1 never trained the last
/// row); F::embedding counts it from the end. Gradients recorded from LibTorch 1.13
/// (scripts/libtorch_reference.cpp "fidelity").
BOOST_AUTO_TEST_CASE(embedding_padding_idx_as_aten) {
    const tg::Tensor ids = tg::tensor(std::vector<int64_t>{0, 2, 2, 4, 2, 1}).reshape({2, 3});
    const tg::Tensor dy = tg::arange(18.0, tg::kFloat64).reshape({2, 3, 3});
    auto grad_of = [&](const std::function<tg::Tensor(const tg::Tensor&)>& f) {
        tg::Tensor w = tg::arange(15.0, tg::kFloat64).reshape({5, 3}).requires_grad_(true);
        (f(w) * dy).sum().backward();
        return w.grad();
    };
    check_close(grad_of([&](const tg::Tensor& w) { return tg::embedding(w, ids, -1); }),
                {0, 1, 2, 15, 16, 17, 21, 24, 27, 0, 0, 0, 9, 10, 11});
    check_close(grad_of([&](const tg::Tensor& w) { return tg::embedding(w, ids, 2, true); }),
                {0, 1, 2, 15, 16, 17, 0, 0, 0, 0, 0, 0, 9, 10, 11});
    namespace F = tg::nn::functional;
    check_close(grad_of([&](const tg::Tensor& w) {
                    return F::embedding(
                        ids, w, F::EmbeddingFuncOptions().padding_idx(-1).scale_grad_by_freq(true));
                }),
                {0, 1, 2, 15, 16, 17, 7, 8, 9, 0, 0, 0, 0, 0, 0});
    const tg::Tensor w = tg::zeros({5, 3});
    check_throws<tg::value_error>([&] { (void)tg::embedding(w, ids, -1, false, true); },
                                  {"embedding", "sparse"});
    check_throws<tg::value_error>(
        [&] { (void)F::embedding(ids, w, F::EmbeddingFuncOptions().padding_idx(-6)); },
        {"F::embedding", "padding_idx -6", "[-5, 5)"});
}
