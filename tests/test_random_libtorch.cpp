/// tapegrad's random streams are LibTorch 1.13's (Note [LibTorch's random streams] in
/// src/core/random.cpp, docs/random.md): after manual_seed(s), every random op, the modules'
/// initialisations, dropout's masks and make_data_loader's RandomSampler draw exactly what
/// LibTorch draws after torch::manual_seed(s), and leave the generator where LibTorch leaves it
/// (each group ends with a draw after). Every value is compared exactly, float32 included: the
/// reference values below are LibTorch's own, printed by random_streams() in
/// scripts/libtorch_reference.cpp (lines longer than 96 characters wrapped, the rest indented).
#define BOOST_TEST_MODULE test_random_libtorch
#include <boost/test/unit_test.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tapegrad/nn.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using namespace tgtest;
using tg::Tensor;

namespace {

const char* const kLibTorch = R"(
rand_f32: 0.75763159990310669 0.27931088209152222 0.40306925773620605 0.73468446731567383
    0.029281556606292725
rand_f64: 0.39886918179157627 0.034975598695703769 0.51022343270234849 0.19732722580919804
    0.44119612958942656
randn_f32_5: -1.8349257707595825 -2.2149498462677002 0.043601147830486298 1.3240029811859131
    -0.10054071992635727
randn_f32_20: -0.095361880958080292 0.13937149941921234 -1.5785011053085327 -0.3206208348274231
    1.1718047857284546 -0.92739170789718628 0.54514151811599731 0.066280260682106018
    -0.43704012036323547 0.7626006007194519 0.44151091575622559 1.1651384830474854
    -0.84246337413787842 0.13741245865821838 0.93864470720291138 -0.18600109219551086
    -0.64463931322097778 1.5392458438873291 -0.86958760023117065 -3.3311536312103271
randn_f64_17: 1.255014303041333 -0.89802977706297704 1.7565947548237131 -0.77240995415712399
    1.1859099624120371 -1.3503906333286724 -0.67491688728011534 0.42199324826541496
    1.7478630448691623 1.3094123180313184 -0.16571857941530932 0.073238437870568635
    1.1078131850892621 -0.021329104294291763 0.11430809262425601 -1.8311841979330936
    2.4006904331812726
randn_f64_3: 0.64428808630177203 -0.45753108120272562 -1.9599123780245873
randn_f64_2: -1.1241621202413654 -1.5599067473411437
uniform_f32: -0.0042761517688632011 -0.27810230851173401 -0.32342582941055298
    -0.21253181993961334 -0.11319499462842941 -0.25750455260276794
uniform_f64: -0.10061701428349573 -0.31520714433834207 -0.19983075877688242 0.033291279039570243
    0.15788024752652008 0.1314155297547788
normal_f32_33: 0.45691341161727905 0.38161164522171021 0.17226982116699219 0.11742581427097321
    0.15625298023223877 0.49943563342094421 0.30405724048614502 0.10961301624774933
    0.19631928205490112 0.58132994174957275 0.20972859859466553 0.92497056722640991
    0.55217969417572021 0.46596866846084595 0.84141391515731812 0.7436225414276123
    0.74931776523590088 0.33604985475540161 0.4668964147567749 0.83617645502090454
    0.52616894245147705 0.19376005232334137 0.62965482473373413 0.92293483018875122
    0.30941835045814514 0.015525395981967449 0.16811856627464294 0.33801916241645813
    0.58504629135131836 0.20220313966274261 0.64750397205352783 0.096422821283340454
    0.53486150503158569
randint: 8 0 -4 -3 -2 6 3 -5
randint_wide: 413472211127 265565097528 934375825813
randint_high_f32: 2 3 1 5 2
randperm_10: 1 4 7 3 6 2 8 9 0 5
bernoulli_f32: 0 0 1 0 0 0 0 1 0 0 1 0
bernoulli_p_f32: 0 0 1 0 0 0 1 0
bernoulli_p_f64: 0 1 1 1 0 0 1 1
rand_like: 0.39750075340270996 0.66589683294296265 0.93253815174102783 0.64753907918930054
    0.33892989158630371 0.25465190410614014
randn_like_f64: -0.74292748767889938 -0.053250809608737529 0.45652364654878919
    0.61174553572941393 0.25390812921790001 0.80619416048359416
streams_after: 0.71465116966705933 0.40333189695333094 0.98192327538240187
views_2d: 0.22939014434814453 -1.3264806270599365 -1.2412971258163452 -0.10280492901802063
    0.42718768119812012 0.23807275295257568 -0.11493468284606934 -0.94976311922073364
    0.61810493469238281 -0.2384750097990036 0.13142800331115723 0.066457867622375488
    -0.21989834308624268 0.024509044364094734 -0.49122968316078186 -0.059134393930435181
    0.4231947660446167 -0.58993160724639893 -0.38443446159362793 -1.5652565956115723
    0.42580392956733704 -1.4817981719970703 -0.079249739646911621 0.70930945873260498
views_permuted: -0.47656956315040588 0.24804358184337616 0.15592518448829651
    -0.16073541343212128 0.41723370552062988 1.0003632307052612 0.60076212882995605
    0.10979536175727844 -0.84113240242004395 -0.29079723358154297 -0.14798073470592499
    -0.92664778232574463 -1.3256446123123169 1.4205228090286255 -0.41900748014450073
    0.35768657922744751 -0.15081223845481873 0.10868088901042938 -0.11352437734603882
    -1.3955414295196533 -1.3766498565673828 -0.09680592268705368 -0.96562182903289795
    0.25834789872169495
views_after: 0.917353760801913 0.26407184515017934 0.53830280978127332
gen_randn: 1.9269152879714966 1.4872840642929077 0.90071719884872437 -2.1055209636688232
    -0.75813114643096924 1.0783176422119141 0.80080056190490723 1.680620551109314
    0.3558599054813385 -0.6866229772567749 -0.49335634708404541 0.2414877861738205
    -0.23162432014942169 0.041759490966796875 -0.2515752911567688 0.85985851287841797
    -0.3097267746925354 -0.39571049809455872 0.80340933799743652 -0.62159538269042969
gen_randperm: 3 4 6 0 2 5 7 1
gen_normal_f64: -0.68577297517016134 -0.32950885121732354 -0.27473504363434403
gen_default_seed: 0.267295241355896 0.8725283145904541 0.33528882265090942
dropout_f32: -5.2941174507141113 -4.9999995231628418 -0 -4.4117646217346191 -0
    -3.8235292434692383 -3.5294115543365479 -3.2352938652038574 -2.9411764144897461
    -2.6470587253570557 -2.3529410362243652 -2.0588233470916748 -1.7647057771682739
    -1.470588207244873 -1.1764705181121826 -0.88235288858413696 -0.58823525905609131 -0 0 0 0 0
    1.1764705181121826 1.470588207244873 0 2.0588233470916748 0 2.6470587253570557
    2.9411764144897461 0 3.5294115543365479 3.8235292434692383 4.1176466941833496
    4.4117646217346191 4.7058820724487305 4.9999995231628418 5.2941174507141113
    5.5882349014282227 5.8823528289794922 6.1764702796936035
dropout_grad_f32: 0 1.1764705181121826 0 3.5294115543365479 0 5.8823528289794922
    7.0588231086730957 8.2352933883666992 9.4117641448974609 10.588234901428223
    11.764705657958984 12.94117546081543 14.117646217346191 15.294116973876953
    16.470586776733398 17.647058486938477 18.823528289794922 0 21.176469802856445 0 0 0
    25.882350921630859 27.058822631835938 0 29.411762237548828 0 31.764703750610352
    32.941173553466797 0 35.294116973876953 36.470584869384766 37.647056579589844
    38.823528289794922 39.999996185302734 41.176467895507812 42.352939605712891
    43.529407501220703 44.705879211425781 45.882350921630859
feature_dropout_f32: -19.166666030883789 -17.5 -15.833333015441895 -14.166666030883789 -0 -0 -0
    -0 -5.8333330154418945 -4.1666665077209473 -2.5 -0.83333331346511841 0.83333331346511841 2.5
    4.1666665077209473 5.8333330154418945 7.5 9.1666660308837891 10.833333015441895 12.5
    14.166666030883789 15.833333015441895 17.5 19.166666030883789
dropout_after_f32: 0.80726575194508776 0.3548459022378917 0.56492488065009117
dropout_f64: -5.2941176470588234 -5 -0 -4.4117647058823533 -0 -3.8235294117647061
    -3.5294117647058822 -3.2352941176470589 -2.9411764705882355 -2.6470588235294117
    -2.3529411764705883 -2.0588235294117649 -1.7647058823529411 -1.4705882352941178
    -1.1764705882352942 -0.88235294117647056 -0.58823529411764708 -0 0 0 0 0 1.1764705882352942
    1.4705882352941178 0 2.0588235294117649 0 2.6470588235294117 2.9411764705882355 0
    3.5294117647058822 3.8235294117647061 4.1176470588235299 4.4117647058823533
    4.7058823529411766 5 5.2941176470588234 5.5882352941176476 5.882352941176471
    6.1764705882352944
dropout_grad_f64: 0 1.1764705882352942 0 3.5294117647058822 0 5.882352941176471
    7.0588235294117645 8.2352941176470598 9.4117647058823533 10.588235294117647
    11.764705882352942 12.941176470588236 14.117647058823529 15.294117647058824
    16.47058823529412 17.647058823529413 18.823529411764707 0 21.176470588235293 0 0 0
    25.882352941176471 27.058823529411764 0 29.411764705882355 0 31.764705882352942
    32.941176470588239 0 35.294117647058826 36.470588235294116 37.647058823529413
    38.82352941176471 40 41.176470588235297 42.352941176470587 43.529411764705884
    44.705882352941181 45.882352941176471
feature_dropout_f64: -19.166666666666668 -17.5 -15.833333333333334 -14.166666666666668 -0 -0 -0
    -0 -5.8333333333333339 -4.166666666666667 -2.5 -0.83333333333333337 0.83333333333333337 2.5
    4.166666666666667 5.8333333333333339 7.5 9.1666666666666679 10.833333333333334 12.5
    14.166666666666668 15.833333333333334 17.5 19.166666666666668
dropout_after_f64: 0.80726575194508776 0.3548459022378917 0.56492488065009117
linear_weight: 0.29748734831809998 -0.25482982397079468 -0.11192598193883896 0.2709902822971344
    -0.54353880882263184 0.34624692797660828 -0.11877556145191193 0.29372340440750122
    0.080261491239070892 -0.070693165063858032 0.16013438999652863 0.028481718152761459
linear_bias: 0.2108645886182785 -0.22499397397041321 -0.042093891650438309 -0.051977302879095078
conv1d_weight: 0.059173122048377991 -0.0016308794729411602 0.35687708854675293
    0.12704284489154816 -0.1520342230796814 -0.24656619131565094 -0.068428806960582733
    -0.17609411478042603 -0.1308225691318512 0.019547583535313606 0.24336814880371094
    0.2218979150056839 -0.39908349514007568 0.25308150053024292 0.11404982954263687
    0.38724616169929504 0.26946830749511719 -0.37197041511535645
conv1d_bias: -0.3881659209728241 -0.19691126048564911 0.35848763585090637
conv2d_weight: -0.083284497261047363 0.21397972106933594 -0.23235571384429932
    0.49060899019241333 -0.21154922246932983 0.37496238946914673 0.0059208273887634277
    -0.26340872049331665 0.2570074200630188 -0.26541006565093994 0.1470523476600647
    -0.14437860250473022 -0.05481719970703125 -0.48069405555725098 -0.23839086294174194
    0.2713170051574707
conv2d_bias: -0.12153863906860352 0.49802476167678833 0.40079420804977417 -0.023411810398101807
convt_weight: -0.19268576800823212 0.17579223215579987 0.089592374861240387 -0.186605304479599
    0.18750737607479095 0.1752551943063736 0.25602450966835022 -0.16181962192058563
    -0.047517649829387665 -0.0055921762250363827 0.042163163423538208 -0.21908083558082581
    -0.20485033094882965 0.15704058110713959 -0.067691989243030548 0.14101012051105499
    0.016457350924611092 0.09478498250246048 0.063476398587226868 0.10496211051940918
    0.1430993527173996 -0.26734551787376404 0.14530505239963531 -0.20297418534755707
convt_bias: -0.21780797839164734 0.01755560003221035 -0.049192313104867935
embedding_weight: -1.4343858957290649 -0.5008130669593811 0.17163313925266266
    -0.15999312698841095 0 0 0 0 1.2465683221817017 0.50572139024734497 0.95051121711730957
    1.2966482639312744 -0.10103476792573929 0.3433537483215332 -1.0702778100967407
    -0.87426316738128662 -1.4647994041442871 -1.2629283666610718 1.1220188140869141
    1.5663341283798218
modules_after: 0.58091379806923527 0.98665997979075126 0.13152384427051234
mha_in_proj_weight: -0.1964232474565506 0.0064571923576295376 0.26607376337051392
    0.14967639744281769 -0.24683475494384766 -0.28259578347206116 0.16025000810623169
    0.3549516499042511
mha_out_proj_weight: -0.35053861141204834 -0.27890458703041077 -0.15143223106861115
    -0.33449342846870422 0.25090238451957703 0.025198714807629585 -0.26147273182868958
    -0.15670804679393768
mha_q_proj_weight: -0.26569125056266785 0.54810714721679688 0.52766788005828857
    0.3853975236415863 -0.16435380280017853 -0.21977417171001434 -0.4563329815864563
    -0.16094635426998138
mha_k_proj_weight: 0.063868202269077301 0.16300764679908752 0.10873518139123917
    0.0012437362456694245 0.59241282939910889 -0.34807351231575012 0.094759553670883179
    -0.1011495366692543
mha_v_proj_weight: -0.66602236032485962 -0.41869217157363892 0.4889170229434967
    0.57181143760681152 0.35313266515731812 0.032046221196651459 0.43523672223091125
    -0.018881335854530334
mha_bias_k: -0.059320170432329178 -0.76419812440872192 0.09489595890045166 0.0018254620954394341
    -0.50517261028289795 -0.1038673147559166 0.60527616739273071 0.25356981158256531
mha_bias_v: -0.16452227532863617 -0.50697511434555054 -0.018740177154541016 -0.2811228334903717
    -0.20440742373466492 0.45367923378944397 0.23358529806137085 0.3599088191986084
layer_self_attn.in_proj_weight: 0.35595816373825073 0.038825385272502899 -0.26884081959724426
    -0.32137319445610046
layer_self_attn.in_proj_bias: 0 0 0 0
layer_self_attn.out_proj.weight: -0.31457287073135376 -0.30418053269386292 -0.28167188167572021
    0.12256573140621185
layer_self_attn.out_proj.bias: 0 0 0 0
layer_linear1.weight: -0.31317982077598572 -0.15136703848838806 0.13727535307407379
    -0.2617189884185791
layer_linear1.bias: 0.31852841377258301 0.11414752900600433 0.18958894908428192
    -0.23320837318897247
layer_linear2.weight: 0.17686137557029724 -0.060747921466827393 -0.18359217047691345
    -0.018845945596694946
layer_linear2.bias: 0.2021404504776001 -0.18711939454078674 0.20735618472099304
    0.17614653706550598
layer_norm1.weight: 1 1 1 1
layer_norm1.bias: 0 0 0 0
layer_norm2.weight: 1 1 1 1
layer_norm2.bias: 0 0 0 0
init_after: 0.24402077191908744 0.36007987092763183 0.49344503427962672
layer_train_out: -1.255622919412511 -1.3845658078365517 0.91248757218835252 1.2876151931064916
    0.69936779383893422 -0.18231924187337345 0.82477188337174001 -0.9017344733830821
    2.2053591317628798 0.55262614761559925 -0.25009077418242864 -0.63918502359571783
    -1.0658807854904759 -1.0618893511358205 -0.047311322079810328 0.3063719771057738
    -1.9771345340126116 -0.90368165637028552 -0.62167475198952915 0.48991379958077175
    0.74398876496911426 0.46624282825875785 1.2565667667546987 0.54577878280908387
    2.2195699174492107 0.75109533967536701 0.078375789888475308 -0.39674301990956273
    -0.75488205732496905 -1.2504656990878773 -0.2851536157529278 -0.36179665493771673
    -1.7417703370748459 -1.0452784420539822 -0.83450259850823216 0.38947444001891368
    0.80650145968653741 0.37372036414717996 1.281162500523918 0.77069261326051108
    2.1258497860004355 0.60538251374130148 0.60594123489406759 -0.18474785143401351
    -0.52913841420406416 -0.93698656149619886 -0.58514401541947281 -1.1011566920820555
layer_train_after: 0.33205419152942484 0.024074816835033874 0.8223327598574538
mha_train_out: -0.054894324348944826 0.40436464925479526 -0.15656839601894587
    -0.16107961417626956 -0.11970821066585723 -0.29434190680008943 0.15761007820221964
    0.097210525789074284 -0.21778437484363528 0.43001957472698393 -0.15441500864933211
    -0.15517426481001742 0.068392124753299824 -0.32062430530799907 0.096669766785602185
    0.082382119722809732 -0.17692243283908346 0.22097404964892725 -0.046571082256360127
    -0.036120845598970358 -0.1193009480539345 -0.27936128942127031 0.15732032422952485
    0.094822291844682272
mha_train_weights: 0 0.45670234960611444 0.47367170655203933 0.51033978333529473
    0.45285042282717158 0.46538122240896218 0.50702238533514554 0.23965929758053292
    0.23239016380309035 0.24625716443717258 0.2373212185510685 0.50454687744097193
    0.47787125437591099 0.23838821570457977 0.26867535318138247 0.24512385935095218
    0.23937426110131441 0.47955054452107221
mha_train_after: 0.74046174803455667 0.39151327374230893 0.4984663217935883
loader_epoch_0: 2 3 1 8 9 0 6 7 4 5
loader_epoch_1: 2 8 1 5 6 9 3 7 0 4
loader_after: 2 9 8 3 6 7 1 0 4 5
distributed_epoch_0: 9 1 4 7
distributed_epoch_0_again: 9 1 4 7
distributed_epoch_1: 1 4 6 3
distributed_no_duplicates: 0 5 1
distributed_sequential: 8 9 0 1
state_fresh: 5056 3379175162911937 5 0 0 0 0 0 0 0 1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
    0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
state_kept: 5056 5645971785698985 5 0 0 0 0 0 0 0 105 2 0 0 1 0 0 0 8 0 0 0 0 0 0 0 0 0 0 0 0 0
    0 0 44 7 140 236 91 92 229 63 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
state_700: 5056 1076013562927344 5 0 0 0 0 0 0 0 29 2 0 0 1 0 0 0 84 0 0 0 0 0 0 0 0 0 0 0 0 0 0
    0 44 7 140 236 91 92 229 63 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
state_624: 5056 1788746946821661 1 0 0 0 0 0 0 0 1 0 0 0 1 0 0 0 112 2 0 0 0 0 0 0 0 0 0 0 0 0 0
    0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
multinomial_rep_f32: 4 1 4 1 4 6 0 4 0 1 3 3
multinomial_norep_f32: 6 4 1 3 0
multinomial_one_f32: 6
multinomial_rep_2d_f64: 1 5 3 2 2 1 2 4 4 3 0 1 5 0 0 1 1 3 0 3 0
multinomial_norep_2d_f64: 5 1 4 2 0 5 3 4 1 0 4 3
multinomial_one_2d_f64: 2 2 0 0 1 1
multinomial_all_f32: 1 4 3 0 2
multinomial_rep_2d_f32: 5 5 4 5 3 3 1 4 2
multinomial_zero_ties: 3 5 0 4 2 1
multinomial_zero_ties_2d: 3 30 10 11 1 2 4 5 6 7 8 9 22 15 19 18 17 16 13 12 0 31 39 38 37 36 35
    34 33 32 21 29 28 27 26 25 24 23 20 14 17 5 10 11 1 2 3 4 6 7 8 9 23 15 0 19 18 16 13 12 21
    31 39 38 37 36 35 34 33 32 22 30 29 28 27 26 25 24 20 14
multinomial_zero_ties_few: 30 3 28 5 17 26
multinomial_after: 0.29296503653323014 0.59759320239378477 0.036776077536166851
geometric_f32: 1 3 4 2 2 1
cauchy_f32: -11.813603401184082 -1.4664514064788818 -0.23106914758682251 5.3493471145629883
    0.87527042627334595
log_normal_f32: 0.76219779253005981 2.4405901432037354 2.1757476329803467 1.0751379728317261
    0.8619728684425354
log_normal_20_f32: 1.6173456907272339 0.52201300859451294 0.3672659695148468
    0.072866231203079224 11.308955192565918 0.021406713873147964 6.6114616394042969
    38.219760894775391 0.98303043842315674 0.020339123904705048 0.020103134214878082
    21.878549575805664 77.211090087890625 3.0784385204315186 16.607227325439453
    0.21840409934520721 2.8297061920166016 111.49253082275391 9.2235946655273438
    0.41451406478881836
random_f32: 14318953 9172287 16387289 16692321
random_to_f32: 0 1 9 0
random_from_to_f32: 0 2 1 -3
distributions_after_f32: 0.37168240230834948 0.59030318397349002 0.52921280319838315
geometric_f64: 1 3 4 2 2 1
cauchy_f64: -11.813603386376837 -1.4664514148585572 -0.23106915136021355 5.3493472362244834
    0.87527045363432532
log_normal_f64: 0.76219781469802794 2.4405901571264166 2.1757477165909287 1.0751379670101275
    0.86197288953060791
log_normal_20_f64: 1.6173457267051858 0.52201298430363385 0.36726597518061466
    0.072866231907355278 11.308955496536655 0.021406713121271254 6.6114616098843078
    38.219759564650758 0.9830304146999137 0.020339124603834708 0.020103133612426091
    21.878549414474506 77.211089537929567 3.0784385127750968 16.607226615314772
    0.21840410477270683 2.8297063075484474 111.49253303490082 9.2235947587851896
    0.41451406247420075
random_f64: 7456379888202995 7333004644888754 2739109817295203 4233617688962023
random_to_f64: 7 1 4 6
random_from_to_f64: -1 0 0 3
distributions_after_f64: 0.52921280319838315 0.14265273112686216 0.42430479883806094
random_i32: 949382604 1898004827 799817767 790253146
random_u8: 153 179 6 123
random_bool: 1 0 1 0 1 1
random_i64_to: 285 960 748 885
random_geometric_i64: 2 1 1 1
random_after: 0.27450350707005533 0.63666505572365795 0.68972848871895576
)";

/// The values LibTorch printed under `name`.
const std::vector<double>& libtorch_values(const std::string& name) {
    static const std::map<std::string, std::vector<double>> table = [] {
        std::map<std::string, std::vector<double>> t;
        std::istringstream in(kLibTorch);
        std::string line, current;
        while (std::getline(in, line)) {
            if (line.empty())
                continue;
            std::istringstream words(line);
            if (line[0] != ' ') {
                words >> current;
                current.pop_back();  // the colon
            }
            for (std::string w; words >> w;)
                t[current].push_back(std::stod(w));
        }
        return t;
    }();
    const auto it = table.find(name);
    BOOST_TEST_REQUIRE((it != table.end()), "no reference values named " << name);
    return it->second;
}

/// t holds exactly LibTorch's values (as float64: float32 values convert exactly).
void exact(const Tensor& t, const std::string& name) {
    BOOST_TEST_CONTEXT(name) {
        BOOST_TEST(values_of(t) == libtorch_values(name), boost::test_tools::per_element());
    }
}

/// What show_state printed for a generator state: its size, a hash of its bytes, and its first
/// 24 and last 40 bytes.
std::vector<double> state_digest(const Tensor& st) {
    const std::vector<int64_t> b = st.to(tg::kInt64).to_vector<int64_t>();
    uint64_t h = 0;
    for (int64_t v : b)
        h = (h * 131 + uint64_t(v)) % 9007199254740881ull;
    std::vector<double> out{double(b.size()), double(h)};
    for (size_t i = 0; i < 24; ++i)
        out.push_back(double(b[i]));
    for (size_t i = 5016; i < b.size(); ++i)
        out.push_back(double(b[i]));
    return out;
}

/// The first k and last k values of t (what show_ends printed).
Tensor ends(const Tensor& t, int64_t k = 4) {
    const Tensor flat = t.detach().contiguous().reshape({-1});
    return tg::cat({flat.narrow(0, 0, k), flat.narrow(0, flat.numel() - k, k)});
}

/// A dataset of your own: example i is ([i], i).
class Numbers : public tg::data::datasets::Dataset<Numbers> {
public:
    explicit Numbers(size_t n) : n_(n) {}
    tg::data::Example<> get(size_t i) override {
        return {tg::tensor({double(i)}), tg::tensor(int64_t(i))};
    }
    std::optional<size_t> size() const override { return n_; }

private:
    size_t n_;
};

/// Every index a sampler gives in one epoch, asked for 3 at a time.
std::vector<double> drain(tg::data::samplers::Sampler<>& s) {
    std::vector<double> out;
    while (auto batch = s.next(3))
        for (size_t i : *batch)
            out.push_back(double(i));
    return out;
}

const auto kF64 = tg::kFloat64;

}  // namespace

BOOST_AUTO_TEST_CASE(random_ops_draw_libtorchs_numbers) {
    tg::manual_seed(1);
    exact(tg::rand({5}), "rand_f32");
    exact(tg::rand({5}, kF64), "rand_f64");
    exact(tg::randn({5}), "randn_f32_5");    // one at a time, Box-Muller in double
    exact(tg::randn({20}), "randn_f32_20");  // 16 at a time in float, the last 16 again
    exact(tg::randn({17}, kF64), "randn_f64_17");
    exact(tg::randn({3}, kF64), "randn_f64_3");  // keeps the pair's second value
    exact(tg::randn({2}, kF64), "randn_f64_2");  // ... and starts with it
    exact(tg::empty({6}).uniform_(-0.37, 0.2113), "uniform_f32");
    exact(tg::empty({6}, kF64).uniform_(-0.37, 0.2113), "uniform_f64");
    exact(tg::empty({33}).normal_(0.37, 0.31), "normal_f32_33");
    exact(tg::randint(-5, 9, {8}), "randint");
    exact(tg::randint(0, int64_t(1) << 40, {3}), "randint_wide");
    exact(tg::randint(7, {5}, tg::kFloat32), "randint_high_f32");
    exact(tg::randperm(10), "randperm_10");
    exact(tg::empty({12}).bernoulli_(0.3), "bernoulli_f32");
    const Tensor p = tg::tensor({0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.6, 0.4});
    exact(tg::bernoulli(p), "bernoulli_p_f32");
    exact(tg::bernoulli(p.to(kF64)), "bernoulli_p_f64");
    exact(tg::rand_like(tg::zeros({2, 3})), "rand_like");
    exact(tg::randn_like(tg::zeros({2, 3}, kF64)), "randn_like_f64");
    exact(tg::rand({3}, kF64), "streams_after");
}

BOOST_AUTO_TEST_CASE(multinomial_draws_libtorchs_samples) {
    tg::manual_seed(21);
    const Tensor w = tg::tensor({1.0, 3.0, 0.5, 2.0, 4.0, 0.0, 2.5});  // unnormalised weights
    const Tensor r = tg::multinomial(w, 12, true);  // with replacement: cumulative search
    BOOST_TEST((r.dtype() == tg::kInt64 && r.sizes() == tg::Shape{12}));
    exact(r, "multinomial_rep_f32");
    exact(tg::multinomial(w, 5), "multinomial_norep_f32");      // w / exponential_(1), top 5
    exact(tg::multinomial(w, 1, true), "multinomial_one_f32");  // one sample: cumulative too
    const Tensor w2 = (tg::arange(18, kF64).reshape({3, 6}) * 0.37).sin().abs() + 0.01;
    exact(tg::multinomial(w2, 7, true), "multinomial_rep_2d_f64");
    const Tensor r2 = tg::multinomial(w2, 4);
    BOOST_TEST((r2.sizes() == tg::Shape{3, 4}));
    exact(r2, "multinomial_norep_2d_f64");
    exact(w2.t().multinomial(1), "multinomial_one_2d_f64");  // draws in w2's memory order
    exact(tg::multinomial(w.narrow(0, 0, 5), 5), "multinomial_all_f32");
    exact(w2.to(tg::kFloat32).multinomial(3, true), "multinomial_rep_2d_f32");
    Tensor z = tg::zeros({2, 40});  // more samples than positive weights: topk's ties
    z.index_put_({0, 3}, 1);
    z.index_put_({0, 30}, 2);
    z.index_put_({1, 5}, 1);
    z.index_put_({1, 17}, 0.5);
    exact(tg::multinomial(z[0].narrow(0, 0, 6), 6), "multinomial_zero_ties");
    exact(tg::multinomial(z, 40), "multinomial_zero_ties_2d");
    exact(tg::multinomial(z, 3), "multinomial_zero_ties_few");
    exact(tg::rand({3}, kF64), "multinomial_after");
    // a Generator: its stream, and the default generator does not move
    tg::manual_seed(5);
    const std::vector<double> next = values_of(tg::rand({3}, kF64));
    tg::manual_seed(5);
    tg::Generator g(21);
    exact(tg::multinomial(w, 12, true, g), "multinomial_rep_f32");
    exact(w.multinomial(5, false, g), "multinomial_norep_f32");
    BOOST_TEST(values_of(tg::rand({3}, kF64)) == next);
    BOOST_TEST(tg::multinomial(tg::zeros({0, 3}), 2, true).numel() == 0);
}

BOOST_AUTO_TEST_CASE(more_in_place_draws_are_libtorchs) {
    for (auto dtype : {tg::kFloat32, kF64}) {
        const std::string f = dtype == tg::kFloat32 ? "_f32" : "_f64";
        tg::manual_seed(22);
        exact(tg::empty({6}, dtype).geometric_(0.3), "geometric" + f);
        exact(tg::empty({5}, dtype).cauchy_(0.5, 2.0), "cauchy" + f);
        exact(tg::empty({5}, dtype).log_normal_(0.2, 0.7), "log_normal" + f);
        exact(tg::empty({20}, dtype).log_normal_(), "log_normal_20" + f);  // one at a time
        exact(tg::empty({4}, dtype).random_(), "random" + f);
        exact(tg::empty({4}, dtype).random_(10), "random_to" + f);
        exact(tg::empty({4}, dtype).random_(-3, 5), "random_from_to" + f);
        exact(tg::rand({3}, kF64), "distributions_after" + f);
    }
    tg::manual_seed(23);
    const Tensor ri = tg::empty({4}, tg::kInt64).random_();
    // LibTorch printed these as integers (above 2^53, so not in the table of doubles)
    const std::vector<int64_t> want{319089628852908774, 8245004772820346825, 4896868233876612584,
                                    5209283917872081133};
    BOOST_TEST(ri.to_vector<int64_t>() == want, boost::test_tools::per_element());
    exact(tg::empty({4}, tg::kInt32).random_(), "random_i32");
    exact(tg::empty({4}, tg::kUInt8).random_(), "random_u8");
    exact(tg::empty({6}, tg::kBool).random_(), "random_bool");
    exact(tg::empty({4}, tg::kInt64).random_(1000), "random_i64_to");
    exact(tg::empty({4}, tg::kInt64).geometric_(0.6), "random_geometric_i64");
    exact(tg::rand({3}, kF64), "random_after");
}

BOOST_AUTO_TEST_CASE(generator_state_is_libtorchs_bytes) {
    tg::Generator g5(5);
    BOOST_TEST(state_digest(g5.get_state()) == libtorch_values("state_fresh"),
               boost::test_tools::per_element());
    tg::randn({3}, g5, kF64);  // keeps a normal value
    const Tensor kept = g5.get_state();
    BOOST_TEST((kept.dtype() == tg::kUInt8 && kept.sizes() == tg::Shape{5056}));
    BOOST_TEST(state_digest(kept) == libtorch_values("state_kept"),
               boost::test_tools::per_element());
    tg::rand({700}, g5);
    BOOST_TEST(state_digest(g5.get_state()) == libtorch_values("state_700"),
               boost::test_tools::per_element());
    tg::Generator g1(1);
    tg::rand({624}, g1);
    BOOST_TEST(state_digest(g1.get_state()) == libtorch_values("state_624"),
               boost::test_tools::per_element());
    // set_state: the kept value and the engine come back; the seed is the state's
    const std::vector<double> after = values_of(tg::randn({5}, g5, kF64));
    tg::Generator other(9);
    other.set_state(kept);
    tg::rand({700}, other);
    BOOST_TEST(values_of(tg::randn({5}, other, kF64)) == after, boost::test_tools::per_element());
    BOOST_TEST(other.current_seed() == 5u);
    tg::Generator fresh(3);
    fresh.set_state(tg::Generator(5).get_state());  // a freshly seeded state round-trips
    BOOST_TEST(state_digest(fresh.get_state()) == libtorch_values("state_fresh"),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(in_place_draws_on_views_go_in_memory_order) {
    tg::manual_seed(2);
    Tensor a = tg::zeros({4, 6});
    a.t().uniform_(-1, 1);  // a[i][j] gets draw 6i + j, not 4j + i
    a.narrow(1, 1, 3).normal_();
    exact(a, "views_2d");
    Tensor b = tg::zeros({2, 3, 4});
    b.permute({2, 0, 1}).normal_();  // not contiguous: one value at a time, not 16
    exact(b, "views_permuted");
    exact(tg::rand({3}, kF64), "views_after");
}

BOOST_AUTO_TEST_CASE(generator_objects_draw_as_at_make_generator) {
    tg::manual_seed(2);
    const std::vector<double> next = values_of(tg::rand({3}, kF64));
    tg::manual_seed(2);
    tg::Generator g(42);
    exact(tg::randn({20}, g), "gen_randn");
    exact(tg::randperm(8, g), "gen_randperm");
    exact(tg::empty({3}, kF64).normal_(0, 1, g), "gen_normal_f64");
    tg::Generator unseeded;  // LibTorch's default_rng_seed_val
    exact(tg::rand({3}, unseeded), "gen_default_seed");
    BOOST_TEST(values_of(tg::rand({3}, kF64)) == next);  // the default generator did not move
}

BOOST_AUTO_TEST_CASE(dropout_zeroes_what_libtorch_zeroes) {
    for (tg::Dtype d : {tg::kFloat32, kF64}) {
        const std::string sfx = d == tg::kFloat32 ? "_f32" : "_f64";
        tg::manual_seed(7);
        const Tensor x = (tg::arange(40, d) * 0.25 - 4.5).reshape({5, 8}).requires_grad_(true);
        const Tensor y = tg::dropout(x, 0.15, true);
        exact(y, "dropout" + sfx);  // 1 / (1 - p) in the input's dtype, -0 where x < 0
        (y * tg::arange(40, d).reshape({5, 8})).sum().backward();
        exact(x.grad(), "dropout_grad" + sfx);  // the mask drawn again from the kept state
        const Tensor x4 = tg::arange(24, d).reshape({2, 3, 2, 2}) - 11.5;
        exact(tg::nn::Dropout2d(tg::nn::DropoutOptions(0.4))(x4), "feature_dropout" + sfx);
        exact(tg::rand({3}, kF64), "dropout_after" + sfx);
    }
}

BOOST_AUTO_TEST_CASE(modules_initialise_as_libtorchs) {
    namespace nn = tg::nn;
    tg::manual_seed(1);
    nn::Linear linear(3, 4);
    exact(linear->weight, "linear_weight");  // kaiming_uniform_(√5), weight before bias
    exact(linear->bias, "linear_bias");
    nn::Conv1d conv1(nn::Conv1dOptions(2, 3, 3));
    exact(conv1->weight, "conv1d_weight");
    exact(conv1->bias, "conv1d_bias");
    nn::Conv2d conv2(nn::Conv2dOptions(2, 4, 2).groups(2));
    exact(conv2->weight, "conv2d_weight");
    exact(conv2->bias, "conv2d_bias");
    nn::ConvTranspose2d convt(nn::ConvTranspose2dOptions(2, 3, 2));
    exact(convt->weight, "convt_weight");
    exact(convt->bias, "convt_bias");
    nn::Embedding emb(nn::EmbeddingOptions(5, 4).padding_idx(1));
    exact(emb->weight, "embedding_weight");       // normal_ of 20 float32: 16 at a time
    nn::LayerNorm ln(nn::LayerNormOptions({4}));  // these draw nothing
    nn::BatchNorm2d bn(3);
    nn::GroupNorm gn(nn::GroupNormOptions(2, 4));
    exact(tg::rand({3}, kF64), "modules_after");
}

BOOST_AUTO_TEST_CASE(attention_and_transformer_layers_initialise_as_libtorchs) {
    namespace nn = tg::nn;
    tg::manual_seed(3);
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));  // out_proj first
    exact(ends(mha->in_proj_weight), "mha_in_proj_weight");
    exact(ends(mha->out_proj->weight), "mha_out_proj_weight");
    nn::MultiheadAttention kv(
        nn::MultiheadAttentionOptions(8, 2).kdim(6).vdim(5).add_bias_kv(true));
    exact(ends(kv->q_proj_weight), "mha_q_proj_weight");
    exact(ends(kv->k_proj_weight), "mha_k_proj_weight");
    exact(ends(kv->v_proj_weight), "mha_v_proj_weight");
    exact(kv->bias_k, "mha_bias_k");
    exact(kv->bias_v, "mha_bias_v");
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.25));
    for (const auto& [name, t] : layer->named_parameters())
        exact(ends(t, 2), "layer_" + name);
    exact(tg::rand({3}, kF64), "init_after");

    // training: the attention weights' dropout, then dropout1, dropout and dropout2
    layer->to(kF64);
    layer->train();
    const Tensor src = (tg::arange(48, kF64) * 0.37).sin().reshape({3, 2, 8});
    tg::manual_seed(4);
    check_close(layer(src), libtorch_values("layer_train_out"), 1e-12,
                1e-12);  // summed in other orders
    exact(tg::rand({3}, kF64), "layer_train_after");

    // MultiheadAttention returns the weights after dropout, as LibTorch's
    tg::manual_seed(5);
    nn::MultiheadAttention mha_train(nn::MultiheadAttentionOptions(4, 2).dropout(0.3));
    mha_train->to(kF64);
    mha_train->train();
    const Tensor q = (tg::arange(24, kF64) * 0.7).cos().reshape({3, 2, 4});
    const auto [out, weights] = mha_train(q, q, q);
    check_close(out, libtorch_values("mha_train_out"), 1e-12, 1e-12);
    check_close(weights, libtorch_values("mha_train_weights"), 1e-12, 1e-12);
    exact(tg::rand({3}, kF64), "mha_train_after");
}

BOOST_AUTO_TEST_CASE(make_data_loader_shuffles_as_libtorchs_random_sampler) {
    namespace data = tg::data;
    for (int64_t workers : {0, 2}) {
        BOOST_TEST_CONTEXT("workers " << workers) {
            tg::manual_seed(1);  // one randperm when the sampler is made, one per epoch
            auto loader =
                data::make_data_loader(Numbers(10).map(data::transforms::Stack<>()),
                                       data::DataLoaderOptions().batch_size(4).workers(workers));
            for (int epoch = 0; epoch < 2; ++epoch) {
                std::vector<double> seen;
                for (auto& batch : *loader)
                    for (double v : values_of(batch.target))
                        seen.push_back(v);
                BOOST_TEST(seen == libtorch_values("loader_epoch_" + std::to_string(epoch)),
                           boost::test_tools::per_element());
            }
            exact(tg::randperm(10), "loader_after");
        }
    }
}

BOOST_AUTO_TEST_CASE(distributed_samplers_are_libtorchs) {
    namespace samplers = tg::data::samplers;
    samplers::DistributedRandomSampler dist(10, 3, 1);
    BOOST_TEST(drain(dist) == libtorch_values("distributed_epoch_0"),
               boost::test_tools::per_element());
    dist.reset();  // the same order until set_epoch
    BOOST_TEST(drain(dist) == libtorch_values("distributed_epoch_0_again"),
               boost::test_tools::per_element());
    dist.set_epoch(1);
    dist.reset();
    BOOST_TEST(drain(dist) == libtorch_values("distributed_epoch_1"),
               boost::test_tools::per_element());
    samplers::DistributedRandomSampler no_duplicates(10, 3, 1, false);
    BOOST_TEST(drain(no_duplicates) == libtorch_values("distributed_no_duplicates"),
               boost::test_tools::per_element());
    samplers::DistributedSequentialSampler sequential(10, 3, 2);
    BOOST_TEST(drain(sequential) == libtorch_values("distributed_sequential"),
               boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(manual_seed_drops_the_kept_normal_value) {
    tg::manual_seed(1);
    const std::vector<double> first = values_of(tg::randn({1}, kF64));
    tg::randn({3}, kF64);  // an odd count: keeps a value
    tg::manual_seed(1);
    BOOST_TEST(values_of(tg::randn({1}, kF64)) == first);
    tg::Generator g(1);
    tg::randn({1}, g, kF64);
    g.set_current_seed(1);
    BOOST_TEST(values_of(tg::randn({1}, g, kF64)) == first);
}

BOOST_AUTO_TEST_CASE(checkpoint_replays_the_kept_normal_value) {
    // The checkpointed function draws one normal: the value kept from the pair drawn before the
    // checkpoint. Its recomputation must use that value again, not draw a new pair.
    auto f = [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0] * tg::randn({1}, kF64)};
    };
    std::vector<double> grads[2];
    for (int with_checkpoint : {0, 1}) {
        tg::manual_seed(5);
        tg::randn({1}, kF64);  // keeps the second value of its pair
        const Tensor x = tg::ones({4}, kF64).requires_grad_(true);
        const Tensor y = with_checkpoint ? tg::checkpoint(f, {x})[0] : f({x})[0];
        tg::randn({5}, kF64);  // draws between forward and backward
        y.sum().backward();
        grads[with_checkpoint] = values_of(x.grad());
    }
    BOOST_TEST(grads[1] == grads[0], boost::test_tools::per_element());
}
