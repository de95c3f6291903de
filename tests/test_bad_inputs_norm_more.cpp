/// Bad-input catalogue (tests/bad_inputs.hpp): instance_norm, local_response_norm and
/// cross_map_lrn2d (tapegrad/norm_ops.hpp), BatchNorm3d, the InstanceNorms, LocalResponseNorm
/// and CrossMapLRN2d. The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_norm_more
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"
#include "tapegrad/nn.hpp"

using tgtest::check_table;
namespace nn = tg::nn;
namespace F = tg::nn::functional;

namespace {
struct Fixtures {
    tg::Tensor x3 = tg::zeros({2, 3, 4});     // float32 [N,C,L]
    tg::Tensor x4 = tg::zeros({2, 3, 2, 2});  // float32 [N,C,H,W]
    tg::Tensor u;
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(normalisation, Fixtures) {
    check_table(
        "More normalisation",
        {
            TG_BAD(tg::instance_norm(tg::zeros({3}), {}, {}, {}, {}, true, 0.1, 1e-5), shape_error,
                   "instance_norm", "[3]"),
            TG_BAD(tg::instance_norm(x3, tg::ones({4}), {}, {}, {}, true, 0.1, 1e-5), shape_error,
                   "instance_norm", "[2,3,4]", "[4]"),
            TG_BAD(tg::instance_norm(x3, {}, {}, {}, {}, false, 0.1, 1e-5), value_error,
                   "instance_norm", "use_input_stats", "running_mean"),
            TG_BAD(tg::instance_norm(tg::zeros({2, 3}), {}, {}, {}, {}, true, 0.1, 1e-5),
                   shape_error, "instance_norm", "[2,3]", "1 value"),
            TG_BAD(tg::instance_norm(x3, tg::ones({3}, tg::kFloat64), {}, {}, {}, true, 0.1, 1e-5),
                   dtype_error, "batch_norm"),
            TG_BAD(tg::local_response_norm(tg::zeros({2, 3}), 2), shape_error,
                   "local_response_norm", "[2,3]", "3 or more"),
            TG_BAD(tg::local_response_norm(x3, 0), value_error, "local_response_norm", "size 0"),
            TG_BAD(tg::cross_map_lrn2d(x3, 3), shape_error, "CrossMapLRN2d", "[2,3,4]", "4-D"),
            TG_BAD(tg::cross_map_lrn2d(x4, 0), value_error, "CrossMapLRN2d", "size 0"),
            TG_BAD(nn::BatchNorm3d(3)(x4), shape_error, "BatchNorm3d", "5-D", "[2,3,2,2]"),
            TG_BAD(nn::BatchNorm3d(2)(tg::zeros({2, 3, 1, 2, 2})), shape_error, "BatchNorm3d",
                   "3 channels"),
            TG_BAD(nn::InstanceNorm1d(3)(x4), shape_error, "InstanceNorm1d", "2D or 3D",
                   "[2,3,2,2]"),
            TG_BAD(nn::InstanceNorm2d(3)(x3.select(0, 0)), shape_error, "InstanceNorm2d",
                   "3D or 4D", "[3,4]"),
            TG_BAD(nn::InstanceNorm3d(3)(x3), shape_error, "InstanceNorm3d", "4D or 5D", "[2,3,4]"),
            TG_BAD(nn::InstanceNorm2d(nn::InstanceNorm2dOptions(4).affine(true))(x4), shape_error,
                   "InstanceNorm2d(4)", "3 channels"),
            TG_BAD(nn::InstanceNorm1d(0), shape_error, "InstanceNorm1d(0)", "num_features"),
            TG_BAD(nn::InstanceNorm1d(nn::InstanceNorm1dOptions(3).momentum(2)), value_error,
                   "InstanceNorm1d", "momentum"),
            TG_BAD(nn::InstanceNorm1d(3)(u), shape_error, "InstanceNorm1d", "undefined"),
            TG_BAD(nn::LocalResponseNorm(0), value_error, "LocalResponseNorm(0)", "size"),
            TG_BAD(nn::LocalResponseNorm(2)(tg::zeros({2, 3})), shape_error, "local_response_norm",
                   "[2,3]"),
            TG_BAD(nn::CrossMapLRN2d(-1), value_error, "CrossMapLRN2d(-1)", "size"),
            TG_BAD(F::instance_norm(x3, F::InstanceNormFuncOptions().use_input_stats(false)),
                   value_error, "instance_norm", "running_mean"),
        });
}
