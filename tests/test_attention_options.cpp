/// MultiheadAttention's kdim, vdim, add_bias_kv and add_zero_attn (issue 15): the output, the
/// weights and the gradients against LibTorch 1.13's for the same parameters
/// (scripts/libtorch_reference.cpp, attention()), a gradcheck with different kdim and vdim
/// (which LibTorch 1.13's C++ module cannot run: it asserts key and value have one shape), the
/// masks widened over the appended keys, and the parameters' names.
#define BOOST_TEST_MODULE test_attention_options
#include <boost/test/unit_test.hpp>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

namespace nn = tg::nn;
using tgtest::check_close;

namespace {

nn::MultiheadAttention with_options(int64_t kdim, int64_t vdim) {
    nn::MultiheadAttention mha(
        nn::MultiheadAttentionOptions(4, 2).kdim(kdim).vdim(vdim).add_bias_kv(true).add_zero_attn(
            true));
    mha->to(tg::kFloat64);
    return mha;
}

tg::Tensor wave(int64_t n, double step, bool cosine) {
    const tg::Tensor a = tg::arange(double(n), tg::kFloat64) * step;
    return cosine ? tg::cos(a) : tg::sin(a);
}

}  // namespace

BOOST_AUTO_TEST_CASE(kdim_bias_kv_zero_attn_as_libtorch) {
    nn::MultiheadAttention mha = with_options(3, 3);
    std::vector<tg::Tensor> params = {mha->q_proj_weight,    mha->k_proj_weight, mha->v_proj_weight,
                                      mha->in_proj_bias,     mha->bias_k,        mha->bias_v,
                                      mha->out_proj->weight, mha->out_proj->bias};
    BOOST_TEST(!mha->in_proj_weight.defined());
    BOOST_TEST(mha->parameters().size() == 8u);
    {
        tg::NoGradGuard g;
        for (size_t k = 0; k < params.size(); ++k)
            params[k].copy_(
                tg::sin(tg::arange(double(params[k].numel()), tg::kFloat64) * 0.3 + double(k))
                    .reshape(params[k].sizes()) *
                0.5);
    }
    const tg::Tensor q = wave(24, 0.7, true).reshape({3, 2, 4}).requires_grad_(true);
    const tg::Tensor key = wave(12, 0.4, false).reshape({2, 2, 3});
    const tg::Tensor value = wave(12, 0.25, true).reshape({2, 2, 3});
    const tg::Tensor pad = tg::tensor({0.0, 1.0, 0.0, 0.0}, tg::kBool).reshape({2, 2});
    auto [y, w] = mha->forward(q, key, value, pad);
    const double tol = 1e-13;
    check_close(
        y, {0.056220964983961397,  -0.22639859510888688, 0.28399529313481942,  1.0061701708764828,
            0.47095008725392351,   0.12275871013352208,  0.12230588503838874,  0.53983404395310375,
            0.0093747548210348364, -0.29001671519210276, 0.28473646502298311,  1.070325429721851,
            0.54536395125177917,   0.16826405241759718,  0.080870448334032896, 0.46429979806912719,
            -0.012970751112208134, -0.32807281723054665, 0.27950212359865467,  1.1045881233509272,
            0.53158921234324452,   0.16079029601242306,  0.089228840065598447, 0.47783101059207428},
        tol, tol);
    BOOST_TEST(w.sizes() == tg::Shape({2, 3, 4}));  // the 2 keys, bias_k's and the zero one
    check_close(w, {0.36696580999807737,  0,
                    0.30752048566415446,  0.32551370433776816,
                    0.41598211077168851,  0,
                    0.27405067383346088,  0.30996721539485067,
                    0.4392366583932612,   0,
                    0.26628320519691651,  0.29448013640982229,
                    0.14565199366539364,  0.41396218928936529,
                    0.2502940293416635,   0.19009178770357754,
                    0.088781367698428995, 0.51922880238602653,
                    0.21562167752566758,  0.17636815238987685,
                    0.094777532367417011, 0.49559359675782544,
                    0.21716819805725038,  0.19246067281750712},
                tol, tol);
    (y * tg::arange(24.0, tg::kFloat64).reshape({3, 2, 4})).sum().backward();
    check_close(mha->bias_k.grad(),
                {-1.7017997960309017, -3.3369551896488918, 1.1440387602785664, -4.1431714026284148},
                1e-12, 1e-12);
    check_close(mha->k_proj_weight.grad(),
                {-1.2184734933981636, -1.3645415268312249, -1.2951784567246019, -2.9418991600731346,
                 -3.5197479799889497, -3.5419059861034046, 2.3298796296329112, 3.0787576551501021,
                 3.341567542660179, -3.4188571762807274, -2.6382807979863943, -1.4411778922234202},
                1e-12, 1e-12);
    check_close(
        q.grad(),
        {0.027483419560457245, 0.061823308668255833,  0.090640705738063113, 0.11136143851508089,
         0.21169504699880609,  0.29193683132328152,   0.34610076796686984,  0.36934855378300951,
         0.075403370362247313, -0.030815536371472194, -0.13428178301753677, -0.22575303791152748,
         0.089950906427635854, 0.11257817585478502,   0.12514917211891505,  0.12654096556333622,
         0.10643013364217907,  -0.12490273313599201,  -0.34507841075484147, -0.53442926167115556,
         0.15870699838693123,  0.19844925361506696,   0.22046462804949968,  0.22278655385931592},
        1e-12, 1e-12);
}

BOOST_AUTO_TEST_CASE(different_kdim_and_vdim_gradcheck_with_masks) {
    tg::manual_seed(3);
    nn::MultiheadAttention mha = with_options(3, 5);
    BOOST_TEST(mha->k_proj_weight.sizes() == tg::Shape({4, 3}));
    BOOST_TEST(mha->v_proj_weight.sizes() == tg::Shape({4, 5}));
    const tg::Tensor key = wave(18, 0.4, false).reshape({3, 2, 3});
    const tg::Tensor value = wave(30, 0.25, true).reshape({3, 2, 5});
    // [L, S], added to the scores: -inf where a query may not attend
    const tg::Tensor causal =
        tg::where(tg::triu(tg::ones({2, 3}, tg::kBool), 1),
                  tg::full({}, -std::numeric_limits<double>::infinity(), tg::kFloat64),
                  tg::zeros({}, tg::kFloat64));
    const tg::Tensor pad = tg::tensor({0.0, 0.0, 1.0, 0.0, 0.0, 0.0}, tg::kBool).reshape({2, 3});
    std::vector<tg::Tensor> in = {wave(16, 0.7, true).reshape({2, 2, 4}), key, value};
    for (const tg::Tensor& p : mha->parameters())
        in.push_back(p);
    BOOST_TEST(tg::gradcheck(
        [&](const std::vector<tg::Tensor>& v) {
            auto [y, w] = mha->forward(v[0], v[1], v[2], pad, true, causal);
            return (y * tgtest::make_const({2, 2, 4}, 7)).sum() + (w * w).sum();
        },
        in));
    std::ostringstream os;
    os << *mha;
    // as LibTorch prints it: the name and out_proj, not the options
    BOOST_TEST(os.str() ==
               "MultiheadAttention(\n  (out_proj): Linear(in_features=4, "
               "out_features=4, bias=true)\n)");
    BOOST_CHECK_THROW(mha->forward(in[0], key, key), tg::shape_error);  // value has 5 features
    BOOST_CHECK_THROW(mha->forward(in[0], key, value, {}, false, {}, true, /*is_causal=*/true),
                      tg::value_error);
    BOOST_CHECK_THROW(nn::MultiheadAttention(nn::MultiheadAttentionOptions(4, 2).kdim(0)),
                      tg::value_error);
}
