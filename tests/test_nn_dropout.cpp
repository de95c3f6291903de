/// AlphaDropout, FeatureAlphaDropout, Dropout3d and F::dropout2d, dropout3d, alpha_dropout and
/// feature_alpha_dropout against LibTorch 1.13: in training after the same manual_seed they draw
/// LibTorch's masks and give its numbers (float32 bit for bit, float64 to 1e-12 with gradients),
/// and leave the generator where LibTorch leaves it. Values printed by nn_dropout() in
/// scripts/libtorch_reference.cpp.
#define BOOST_TEST_MODULE test_nn_dropout
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "libtorch_values.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using V = std::vector<tg::Tensor>;
namespace nn = tg::nn;
namespace F = tg::nn::functional;

namespace {

const LibTorchValues kRef(R"(
alpha_f64: 0.45409206813706288 0.76542582036235307 -1.0595481589864801 1.2252461949417224
    -1.0595481589864801 -1.0595481589864801 1.1398971954702359 0.90526941514182258
    -1.0595481589864801 -1.0595481589864801 -0.0020717435599775236 -0.23524409271875862
alpha_f64_d0: 0.72446664586575626 0.84365440914203182 0 0.73879879047173358 0 0
    -0.067435864389556996 -0.37324954772954461 -0 -0 -0.8608865446453916 -0.8064850761181469
feature_alpha_f64: 0.60709464636989297 0.91927096611763304 1.1891956854728352 1.3803357599448742
    1.4668212771325835 1.4369468280065087 1.2947557791084883 1.0594930218585037
    0.76300026678285482 0.44540641737063952 0.14969631123970195 -0.084107075983954283
    -0.91064196955483934 -0.91064196955483934 -0.91064196955483934 -0.91064196955483934
    0.3004104201693481 0.61297760674961854 0.92474856224070789 1.1935265504005663
    -0.91064196955483934 -0.91064196955483934 -0.91064196955483934 -0.91064196955483934
feature_alpha_f64_d0: 0.72642728155829417 0.84593760458818534 0.85095424130976582
    0.74079821347687647 0.53037862269141145 0.24817477344325958 -0.06761836714994468
    -0.37425967896150436 -0.63024669895714724 -0.80093278486986064 -0.86321637569598508
    -0.80866767960273755 -0 -0 -0 0 0.51334021799139395 0.72958899102670272 0.84709131678322713
    0.84994380669815028 0 0 0 -0
alpha_after_f64: 0.10993588570774804 0.99361693895470005 0.92419207329466924
alpha_f32: -0.65811938047409058 -0.65811938047409058 1.6182043552398682 1.8254094123840332
    -0.65811938047409058 1.8867784738540649 -0.65811938047409058 1.4776005744934082
    -0.65811938047409058 -0.65811938047409058 0.49133768677711487 -0.65811938047409058
    0.085843324661254883 -0.65811938047409058 0.15180432796478271
alpha_f32_d0: 0 0 0.92247486114501953 0.80306047201156616 0 0.26903325319290161 -0
    -0.40571528673171997 -0 -0 -0.93576759099960327 -0 -0.6988525390625 -0 -0.096393615007400513
feature_alpha_f32: -0.7791939377784729 -0.7791939377784729 -0.7791939377784729
    1.5731456279754639 1.66194748878479 1.6312730312347412 1.4852734804153442 1.2437093257904053
    0.93927532434463501 -0.7791939377784729 -0.7791939377784729 -0.7791939377784729
    -0.07453000545501709 -0.10299152135848999 -0.012053310871124268 -0.7791939377784729
    -0.7791939377784729 -0.7791939377784729 -0.7791939377784729 -0.7791939377784729
    -0.7791939377784729 -0.7791939377784729 -0.7791939377784729 -0.7791939377784729
alpha_after_f32: 0.72386845717563564 0.29094478618068986 0.32884050893293748
module_alpha: 0.30903996214409446 -1.2361598485763778 0.90167402394672735 1.096272746673951
    1.184323205090998 1.153908182714495 1.0091442101397812 0.76962441193634856
    0.46776666915286402 0.14442601119638607 -0.15663492073827295 -0.39466894185443424
module_feature_alpha: 0.52897265889784117 0.83983543813533479 1.1086243985262554
    1.2989602152277064 1.3850818283548278 1.3553330815856137 1.213740328237598
    0.97946748323480093 -0.98237779509599088 -0.98237779509599088 -0.98237779509599088
    -0.98237779509599088 -0.29898304039494927 -0.32658545864515631 -0.2383920992904851
    -0.046339519785838834 0.22357886419220768 0.5348308656166062 0.84528998624370999
    1.112937040526214 -0.98237779509599088 -0.98237779509599088 -0.98237779509599088
    -0.98237779509599088
module_dropout3d: 0 0 0 0 0 0 0 0 0 -0 -0 -0 -0 -0 -0 -0 -0.64591556361462299
    0.012390254681400318 0.66901911013160842 1.2350993675360269 1.6340147196575034
    1.8117738449829099 1.7443178798052075 1.4407766725609605 0.94223310167450314
    0.31616270069169738 -0.35269883864344947 -0.97382424475325691 -1.4631471077517584
    -1.7544398736494313 -1.8082774330981621 -1.6173731249899741 -1.2075649518547185
    -0.63431852742920314 0.024779933961126283 0.6805245475377395 1.2441633560900929
    1.6394104910298017 1.8127711068309094 1.7407816574161474 0 0 0 -0 -0 -0 -0 -0
module_dropout3d_unbatched: 0 0.65748260357265809 1.2259780211420819 1.6285430648728139
    1.810692444613891 1.747773096318727 1.4483008586110668 0.95280789397686561 0 -0 -0 -0
f_dropout3d: 0 0.51659347423566004 0.96326844518306443 1.2795695509714966 1.4226869207680573
    1.3732502899647141 1.1379506746229811 0.74863477383896582 0.25799466842033275
    -0.26756380506129024 -0.75690877272641921 -1.1438096888225966 -1.3759013293904521
    -1.4217711796702324 -1.2752109706117638 -0.95605693896608857
f_dropout2d_unbatched: 0 0 0 0 2.4897021113441 2.4031880074382497 1.991413680590217
    1.3101108542181903 0 -0 -0 -0
f_alpha_training: -0.77919393051803154 -0.77919393051803154 1.3768860357992887
    -0.77919393051803154 1.6619475856202377
f_feature_alpha_training: 0.77919393051803154 1.0997316193985092 1.3768860357992887
    1.5731456296506678 1.6619475856202377 1.6312729755563247 -0.77919393051803154
    -0.77919393051803154
module_after: 0.017579030477041124 0.59618281303383058 0.71050116049666057
alpha_p1: 0 0 0
)");

/// t holds exactly LibTorch's values.
void exact(const tg::Tensor& t, const std::string& name) {
    BOOST_TEST_CONTEXT(name) {
        BOOST_TEST(values_of(t) == kRef(name), boost::test_tools::per_element());
    }
}

template <class M>
std::string printed(const M& m) {
    std::ostringstream os;
    os << m;
    return os.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(alpha_dropouts_draw_libtorchs_masks_in_float64) {
    tg::manual_seed(7);
    check_grads(kRef, "alpha_f64", {wave37({3, 4})},
                [](const V& x) { return tg::alpha_dropout(x[0], 0.3, true); });
    check_grads(kRef, "feature_alpha_f64", {wave37({2, 3, 2, 2})},
                [](const V& x) { return tg::feature_alpha_dropout(x[0], 0.4, true); });
    exact(tg::rand({3}, tg::kFloat64), "alpha_after_f64");
}

BOOST_AUTO_TEST_CASE(alpha_dropouts_are_libtorchs_bits_in_float32) {
    tg::manual_seed(8);
    tg::Tensor x32 = wave37({3, 5}).to(tg::kFloat32).requires_grad_(true);
    const tg::Tensor y32 = tg::alpha_dropout(x32, 0.6, true);
    exact(y32, "alpha_f32");
    (y32 * wave37({3, 5}, 1.0).to(tg::kFloat32)).sum().backward();
    exact(x32.grad(), "alpha_f32_d0");
    exact(tg::feature_alpha_dropout(wave37({2, 4, 3}).to(tg::kFloat32), 0.5, true),
          "feature_alpha_f32");
    exact(tg::rand({3}, tg::kFloat64), "alpha_after_f32");
}

BOOST_AUTO_TEST_CASE(modules_and_functions_draw_as_libtorchs) {
    tg::manual_seed(9);
    nn::AlphaDropout ad(0.2);
    nn::FeatureAlphaDropout fad(nn::FeatureAlphaDropoutOptions(0.35).inplace(true));
    nn::Dropout3d d3(0.45);
    const tg::Tensor in = wave37({3, 2, 4});
    check_close(ad(wave37({4, 3})), kRef("module_alpha"), 1e-15, 1e-15);
    check_close(fad(in), kRef("module_feature_alpha"), 1e-15, 1e-15);
    check_close(in, wave37({3, 2, 4}), 0, 0);  // inplace is ignored, as LibTorch's module does
    check_close(d3(wave37({2, 3, 2, 2, 2})), kRef("module_dropout3d"), 1e-15, 1e-15);
    check_close(d3(wave37({3, 2, 1, 2})), kRef("module_dropout3d_unbatched"), 1e-15, 1e-15);
    check_close(F::dropout3d(wave37({2, 2, 1, 2, 2}), F::Dropout3dFuncOptions().p(0.3)),
                kRef("f_dropout3d"), 1e-15, 1e-15);
    check_close(F::dropout2d(wave37({3, 2, 2}), F::Dropout2dFuncOptions().p(0.6)),
                kRef("f_dropout2d_unbatched"), 1e-15, 1e-15);
    check_close(F::alpha_dropout(wave37({5}), F::AlphaDropoutFuncOptions().p(0.5).training(true)),
                kRef("f_alpha_training"), 1e-15, 1e-15);
    check_close(F::feature_alpha_dropout(wave37({2, 2, 2}),
                                         F::FeatureAlphaDropoutFuncOptions().p(0.5).training(true)),
                kRef("f_feature_alpha_training"), 1e-15, 1e-15);
    exact(tg::rand({3}, tg::kFloat64), "module_after");
    exact(tg::alpha_dropout(wave37({3}), 1.0, true), "alpha_p1");
}

BOOST_AUTO_TEST_CASE(not_training_returns_the_input_and_draws_nothing) {
    tg::manual_seed(3);
    const tg::Tensor x = wave37({2, 3, 2, 2, 2});
    nn::AlphaDropout ad(0.5);
    nn::Dropout3d d3(nn::Dropout3dOptions(0.5).inplace(true));
    ad->eval();
    d3->eval();
    BOOST_TEST(ad(x).impl() == x.impl());
    BOOST_TEST(d3(x).impl() == x.impl());
    // F::alpha_dropout is not in training unless asked, as LibTorch's default options
    BOOST_TEST(F::alpha_dropout(x).impl() == x.impl());
    BOOST_TEST(tg::feature_alpha_dropout(x, 0, true).impl() == x.impl());
    const double first = tg::rand({1}, tg::kFloat64).item<double>();
    tg::manual_seed(3);
    BOOST_TEST(tg::rand({1}, tg::kFloat64).item<double>() == first);
    // a leaf that requires grad passes through an in-place dropout in eval mode, as in LibTorch
    tg::Tensor leaf = wave37({2, 3, 2, 2, 2}).requires_grad_(true);
    BOOST_TEST(d3(leaf).impl() == leaf.impl());
    nn::Dropout d(nn::DropoutOptions(0.5).inplace(true));
    d->eval();
    BOOST_TEST(d(leaf).impl() == leaf.impl());  // was x.copy_(x): an autograd_error for a leaf
}

BOOST_AUTO_TEST_CASE(inplace_functions_write_into_their_input) {
    tg::manual_seed(4);
    tg::Tensor x = wave37({2, 3, 2, 2});
    const tg::Tensor y = F::dropout2d(x, F::Dropout2dFuncOptions().p(0.5).inplace(true));
    BOOST_TEST(y.impl() == x.impl());
    tg::manual_seed(4);
    check_close(x, tg::feature_dropout(wave37({2, 3, 2, 2}), 0.5, true), 0, 0);
}

BOOST_AUTO_TEST_CASE(modules_print_as_libtorchs) {
    BOOST_TEST(printed(nn::AlphaDropout(0.25)) == "AlphaDropout(p=0.25, inplace=false)");
    BOOST_TEST(printed(nn::FeatureAlphaDropout(nn::FeatureAlphaDropoutOptions(0.2).inplace(
                   true))) == "FeatureAlphaDropout(p=0.2, inplace=true)");
    BOOST_TEST(printed(nn::Dropout3d(0.3)) == "Dropout3d(p=0.3, inplace=false)");
}
