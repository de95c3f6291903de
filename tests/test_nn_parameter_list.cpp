/// ParameterList and ParameterDict as LibTorch 1.13's: what they register (with each tensor's
/// own requires_grad), references to the registered tensors, pop / update / clear, iteration
/// over items with key() and value(), printing (the strings below are what LibTorch 1.13
/// printed, minus "torch::nn::": nn_containers() in scripts/libtorch_reference.cpp), and that an
/// optimizer trains what they hold.
#define BOOST_TEST_MODULE test_nn_parameter_list
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
namespace nn = tg::nn;

namespace {
template <class M>
std::string printed(const M& m) {
    std::ostringstream os;
    os << m;
    return os.str();
}
std::vector<std::string> names(const nn::Module& m) {
    return m.named_parameters().keys();
}
}  // namespace

BOOST_AUTO_TEST_CASE(parameter_list_registers_tensors_as_given) {
    nn::ParameterList pl(tg::ones({2}).requires_grad_(true), tg::zeros({3, 1}, tg::kFloat64));
    pl->append(tg::zeros({1}, tg::kInt64));
    BOOST_TEST(printed(pl) ==
               "ParameterList(\n"
               "(0): Parameter containing: [Float of size [2]]\n"
               "(1): Parameter containing: [Double of size [3, 1]]\n"
               "(2): Parameter containing: [Long of size [1]]\n"
               ")");
    BOOST_TEST((names(*pl) == std::vector<std::string>{"0", "1", "2"}));
    BOOST_TEST(pl->parameters().size() == 3u);
    BOOST_TEST(pl[0].requires_grad());
    BOOST_TEST(!pl[1].requires_grad());  // a plain tensor stays untrained, as in LibTorch
    BOOST_TEST(pl->size() == 3u);
    {
        tg::NoGradGuard guard;
        pl[0].mul_(3);
    }
    check_close(pl->named_parameters()["0"], {3, 3}, 0, 0);
    pl[1] = tg::full({2}, 7.0);  // the reference is the registered tensor
    check_close(pl->parameters()[1], {7, 7}, 0, 0);
    std::vector<std::string> keys;
    for (auto& item : *pl)
        keys.push_back(item.key() + ":" + std::to_string(item.value().numel()));
    BOOST_TEST((keys == std::vector<std::string>{"0:2", "1:2", "2:1"}));
    nn::ParameterList more;
    more->extend(pl->parameters());
    *more += std::vector<tg::Tensor>{tg::zeros({4})};
    more->extend(*pl);  // items
    BOOST_TEST(more->size() == 7u);
    check_throws<tg::shape_error>([&] { (void)pl->at(5); }, {"ParameterList", "index 5", "size 3"});
    BOOST_TEST(nn::ParameterList()->is_empty());
}

BOOST_AUTO_TEST_CASE(parameter_dict_inserts_pops_and_updates_as_libtorchs) {
    tg::OrderedDict<std::string, tg::Tensor> od;
    od.insert("a", tg::ones({2}));
    od.insert("b", tg::ones({1}).requires_grad_(true));
    nn::ParameterDict pd(od);
    BOOST_TEST(printed(pd) ==
               "ParameterDict(\n"
               "(a): Parameter containing: [Float of size [2]]\n"
               "(b): Parameter containing: [Float of size [1]]\n"
               ")");
    BOOST_TEST(!pd["a"].requires_grad());
    BOOST_TEST(pd["b"].requires_grad());
    BOOST_TEST(pd->contains("a"));
    BOOST_TEST((pd->keys() == std::vector<std::string>{"a", "b"}));
    const tg::Tensor a = pd->pop("a");
    BOOST_TEST(a.numel() == 2);
    BOOST_TEST(pd->size() == 1u);
    BOOST_TEST(pd->parameters().size() == 1u);
    check_throws<tg::value_error>([&] { pd->update(od); }, {"ParameterDict", "'a'"});
    check_throws<tg::value_error>([&] { pd->insert("b", tg::ones({1})); }, {"b"});
    check_throws<tg::value_error>([&] { (void)pd->pop("zz"); }, {"ParameterDict", "'zz'"});
    tg::OrderedDict<std::string, tg::Tensor> nb;
    nb.insert("b", tg::full({3}, 2.0));
    pd->update(nb);
    check_close(pd->get("b"), {2, 2, 2}, 0, 0);
    pd->clear();
    BOOST_TEST(pd->empty());
    BOOST_TEST(printed(pd) == "ParameterDict(\n)");
}

BOOST_AUTO_TEST_CASE(an_optimizer_trains_what_they_hold) {
    nn::ParameterDict pd;
    pd->insert("w", tg::tensor({1.0, -2.0}, tg::kFloat64).requires_grad_(true));
    nn::ParameterList pl(tg::tensor({0.5}, tg::kFloat64).requires_grad_(true));
    std::vector<tg::Tensor> params = pd->parameters();
    params.push_back(pl[0]);
    tg::optim::SGD opt(params, tg::optim::SGDOptions(0.1));
    const tg::Tensor loss = (pd["w"] * pd["w"]).sum() + pl[0] * 3;
    loss.sum().backward();
    opt.step();
    check_close(pd["w"], {0.8, -1.6}, 1e-15, 1e-15);
    check_close(pl[0], {0.2}, 1e-15, 1e-15);
}
