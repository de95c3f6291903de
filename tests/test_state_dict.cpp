// Module::state_dict / load_state_dict: PyTorch's keys and order, round trips, strict errors,
// conversions into float64 models. The device case is in backend_device_nn.hpp.
#define BOOST_TEST_MODULE state_dict
#include <boost/test/unit_test.hpp>

#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

namespace nn = tg::nn;
using tg::Tensor;

namespace {

struct NetImpl : nn::Module {
    NetImpl() : Module("Net") {
        fc1 = register_module("fc1", nn::Linear(4, 3));
        bn = register_module("bn", nn::BatchNorm1d(3));
        register_parameter("scale", tg::ones({1}));
        register_buffer("step", tg::zeros({1}));
        head =
            register_module("head", nn::Sequential(nn::Linear(3, 2), nn::ReLU(), nn::Linear(2, 1)));
    }
    Tensor forward(const Tensor& x) override {
        return head(bn(fc1(x)) * named_parameters(false)["scale"]);
    }
    nn::Linear fc1{nullptr};
    nn::BatchNorm1d bn{nullptr};
    nn::Sequential head{nullptr};
};
TG_MODULE(Net);

using Keys = std::vector<std::string>;

Keys keys_of(const tg::OrderedDict<std::string, Tensor>& d) {
    return d.keys();
}

/// Checks the names LibTorch 1.13 gives (named_parameters, named_buffers; recorded by
/// scripts/libtorch_reference.cpp, state_dicts()) and the state_dict keys PyTorch gives.
void check_keys(const nn::Module& m, const Keys& params, const Keys& buffers, const Keys& state) {
    BOOST_TEST(keys_of(m.named_parameters()) == params, boost::test_tools::per_element());
    BOOST_TEST(keys_of(m.named_buffers()) == buffers, boost::test_tools::per_element());
    BOOST_TEST(keys_of(m.state_dict()) == state, boost::test_tools::per_element());
}

std::vector<double> values(const Tensor& t) {
    return t.detach().to(tg::kFloat64).contiguous().to_vector<double>();
}

/// A trained-looking Net: one training step, so BatchNorm's running statistics and counter move.
Net trained_net(uint64_t seed) {
    tg::manual_seed(seed);
    Net net;
    net->train();
    (void)net(tg::randn({5, 4}));
    net->eval();
    return net;
}

}  // namespace

BOOST_AUTO_TEST_CASE(keys_match_libtorch_and_pytorch) {
    // LibTorch 1.13 (scripts/libtorch_reference.cpp, state_dicts())
    nn::Sequential seq(nn::Linear(2, 3), nn::ReLU(), nn::BatchNorm1d(3), nn::Linear(3, 1));
    check_keys(*seq, {"0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias"},
               {"2.running_mean", "2.running_var", "2.num_batches_tracked"},
               {"0.weight", "0.bias", "2.weight", "2.bias", "2.running_mean", "2.running_var",
                "2.num_batches_tracked", "3.weight", "3.bias"});
    Net net;
    check_keys(*net,
               {"scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "head.0.weight",
                "head.0.bias", "head.2.weight", "head.2.bias"},
               {"step", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"},
               {"scale", "step", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias",
                "bn.running_mean", "bn.running_var", "bn.num_batches_tracked", "head.0.weight",
                "head.0.bias", "head.2.weight", "head.2.bias"});
    nn::BatchNorm2d bn(4);
    check_keys(*bn, {"weight", "bias"}, {"running_mean", "running_var", "num_batches_tracked"},
               {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"});
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
    const Keys mha_keys = {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
    check_keys(*mha, mha_keys, {}, mha_keys);
    nn::MultiheadAttention mha_kv(
        nn::MultiheadAttentionOptions(8, 2).kdim(4).vdim(6).add_bias_kv(true));
    const Keys kv_keys = {"q_proj_weight", "k_proj_weight", "v_proj_weight",   "in_proj_bias",
                          "bias_k",        "bias_v",        "out_proj.weight", "out_proj.bias"};
    check_keys(*mha_kv, kv_keys, {}, kv_keys);
    nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
    Keys lstm_keys;
    for (const char* layer : {"l0", "l1"})
        for (const char* dir : {"", "_reverse"})
            for (const char* w : {"weight_ih_", "weight_hh_", "bias_ih_", "bias_hh_"})
                lstm_keys.push_back(std::string(w) + layer + dir);
    check_keys(*lstm, lstm_keys, {}, lstm_keys);
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
    const Keys layer_keys = {"self_attn.in_proj_weight",
                             "self_attn.in_proj_bias",
                             "self_attn.out_proj.weight",
                             "self_attn.out_proj.bias",
                             "linear1.weight",
                             "linear1.bias",
                             "linear2.weight",
                             "linear2.bias",
                             "norm1.weight",
                             "norm1.bias",
                             "norm2.weight",
                             "norm2.bias"};
    check_keys(*layer, layer_keys, {}, layer_keys);
}

BOOST_AUTO_TEST_CASE(state_dict_shares_storage_and_does_not_require_grad) {
    nn::Linear fc(3, 2);
    auto sd = fc->state_dict();
    BOOST_TEST(!sd["weight"].requires_grad());
    BOOST_TEST(sd["weight"].data_ptr<float>() == fc->weight.data_ptr<float>());
}

BOOST_AUTO_TEST_CASE(round_trip_gives_equal_outputs) {
    Net a = trained_net(1);
    Net b = trained_net(2);
    b->eval();
    const Tensor x = tgtest::wave({6, 4}).to(tg::kFloat32);
    BOOST_TEST(values(a(x)) != values(b(x)));
    const Tensor w_before = b->fc1->weight;
    auto result = b->load_state_dict(a->state_dict());
    BOOST_TEST(result.missing_keys.empty());
    BOOST_TEST(result.unexpected_keys.empty());
    BOOST_TEST(values(a(x)) == values(b(x)), boost::test_tools::per_element());
    // in place: the same tensors, still leaves that require grad
    BOOST_TEST(b->fc1->weight.data_ptr<float>() == w_before.data_ptr<float>());
    BOOST_TEST(b->fc1->weight.requires_grad());
    BOOST_TEST(b->bn->num_batches_tracked.item<int64_t>() == 1);
    // and the copy is not shared with a
    tg::NoGradGuard guard;
    a->fc1->weight.fill_(0.25);
    BOOST_TEST(values(b->fc1->weight) != values(a->fc1->weight));
}

BOOST_AUTO_TEST_CASE(strict_errors_list_every_bad_key_and_change_nothing) {
    Net a = trained_net(1);
    Net b = trained_net(2);
    auto sd = a->state_dict();
    tg::StateDict bad;
    for (auto& [key, v] : sd)
        if (key != "fc1.bias" && key != "bn.running_var")
            bad.insert(key, key == "head.2.weight" ? tg::zeros({3, 2}) : v);
    bad.insert("head.1.weight", tg::zeros({2}));
    bad.insert("extra", tg::zeros({1}));
    const auto before = values(b->fc1->weight);
    tgtest::check_throws<tg::value_error>(
        [&] { b->load_state_dict(bad); },
        {"Error(s) in loading state_dict for Net:",
         "Missing key(s) in state_dict: \"fc1.bias\", \"bn.running_var\". ",
         "Unexpected key(s) in state_dict: \"head.1.weight\", \"extra\". ",
         "size mismatch for head.2.weight: copying a param with shape [3,2] from checkpoint, the "
         "shape in current model is [1,2]."});
    BOOST_TEST(values(b->fc1->weight) == before, boost::test_tools::per_element());
    // non-strict: the matching keys load, the others are reported; a shape mismatch still throws
    tgtest::check_throws<tg::value_error>([&] { b->load_state_dict(bad, false); },
                                          {"size mismatch for head.2.weight"});
    BOOST_TEST(values(b->fc1->weight) == before, boost::test_tools::per_element());
    bad.erase("head.2.weight");
    auto result = b->load_state_dict(bad, false);
    BOOST_TEST(result.missing_keys == (Keys{"fc1.bias", "bn.running_var", "head.2.weight"}),
               boost::test_tools::per_element());
    BOOST_TEST(result.unexpected_keys == (Keys{"head.1.weight", "extra"}),
               boost::test_tools::per_element());
    BOOST_TEST(values(b->fc1->weight) == values(a->fc1->weight), boost::test_tools::per_element());
    BOOST_TEST(values(b->fc1->bias) != values(a->fc1->bias));
}

BOOST_AUTO_TEST_CASE(undefined_value_is_an_error) {
    nn::Linear fc(3, 2);
    auto sd = fc->state_dict();
    sd["bias"] = Tensor();
    tgtest::check_throws<tg::value_error>([&] { fc->load_state_dict(sd); },
                                          {"undefined tensor for bias"});
}

BOOST_AUTO_TEST_CASE(loads_convert_into_the_model_dtype) {
    Net a = trained_net(1);
    Net b = trained_net(2);
    b->to(tg::kFloat64);
    b->load_state_dict(a->state_dict());
    BOOST_TEST(b->fc1->weight.dtype() == tg::kFloat64);
    BOOST_TEST(b->bn->num_batches_tracked.dtype() == tg::kInt64);
    BOOST_TEST(b->bn->num_batches_tracked.item<int64_t>() == 1);
    BOOST_TEST(values(b->fc1->weight) == values(a->fc1->weight), boost::test_tools::per_element());
    // float64 values into a float32 model are rounded
    auto sd64 = b->state_dict();
    BOOST_TEST(sd64["bn.running_mean"].dtype() == tg::kFloat64);
    Net c = trained_net(3);
    c->load_state_dict(sd64);
    BOOST_TEST(c->fc1->weight.dtype() == tg::kFloat32);
    BOOST_TEST(values(c->bn->running_mean) == values(a->bn->running_mean),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(one_element_vector_loads_into_a_scalar) {
    // PyTorch reads a [1] value for a 0-D buffer as its element (old BatchNorm checkpoints)
    nn::BatchNorm1d bn(2);
    auto sd = bn->state_dict();
    sd["num_batches_tracked"] = tg::full({1}, 7, tg::kInt64);
    bn->load_state_dict(sd);
    BOOST_TEST(bn->num_batches_tracked.item<int64_t>() == 7);
}
