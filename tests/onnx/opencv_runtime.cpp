// The exported models in a real runtime: OpenCV's DNN module (Debian's libopencv-dnn-dev)
// reads each file tg::onnx::export_model writes and must give tapegrad's eval-mode outputs to
// 1e-5. Built only where CMake finds OpenCV's dnn (tests/CMakeLists.txt).
#define BOOST_TEST_MODULE onnx_opencv
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <opencv2/dnn.hpp>

#include "onnx/models.hpp"
#include "onnx/traced_models.hpp"
#include "tapegrad/onnx.hpp"

namespace fs = std::filesystem;
using tg::Tensor;
using namespace onnxtest;

namespace {

cv::Mat to_mat(const Tensor& t) {
    const Tensor c = t.contiguous();
    std::vector<int> sizes(c.sizes().begin(), c.sizes().end());
    const int type = c.dtype() == tg::kInt64 ? CV_32S : CV_32F;
    cv::Mat m(int(sizes.size()), sizes.data(), type);
    if (c.dtype() == tg::kInt64) {  // OpenCV's importer reads int indices as int32
        const int64_t* p = c.data_ptr<int64_t>();
        for (int64_t i = 0; i < c.numel(); ++i)
            m.ptr<int32_t>()[i] = int32_t(p[i]);
    } else {
        std::memcpy(m.data, c.data_ptr<float>(), size_t(c.numel()) * sizeof(float));
    }
    return m;
}

/// Exports m for `example`, runs the file in OpenCV on `x` and compares with m(x) in eval mode.
void same_in_opencv(const std::string& name, tg::nn::Module& m, const Tensor& example,
                    const Tensor& x, const tg::onnx::ExportOptions& o = {}, double tol = 1e-5) {
    fs::create_directories(TG_ONNX_OUT_DIR);
    const std::string path = (fs::path(TG_ONNX_OUT_DIR) / ("opencv_" + name + ".onnx")).string();
    tg::onnx::export_model(m.shared_from_this(), example, path, o);
    cv::dnn::Net net = cv::dnn::readNetFromONNX(path);
    net.setInput(to_mat(x));
    cv::Mat got = net.forward();
    m.eval();
    Tensor want;
    {
        tg::NoGradGuard no_grad;
        want = m(x).contiguous();
    }
    BOOST_TEST_CONTEXT(name) {
        BOOST_REQUIRE_EQUAL(size_t(got.total()), size_t(want.numel()));
        const float* w = want.data_ptr<float>();
        double worst = 0;
        for (size_t i = 0; i < got.total(); ++i)
            worst = std::max(worst, double(std::abs(got.ptr<float>()[i] - w[i])));
        BOOST_TEST_MESSAGE(name << ": largest difference " << worst);
        BOOST_TEST(worst <= tol);
    }
}

}  // namespace

BOOST_AUTO_TEST_CASE(fashion_cnn_in_opencv) {
    tg::manual_seed(11);
    auto m = fashion_cnn();
    warm_up(*m, [] { return tg::randn({8, 1, 28, 28}); });
    const Tensor x = tg::rand({3, 1, 28, 28});
    same_in_opencv("cnn", *m, x, x);
}

BOOST_AUTO_TEST_CASE(fashion_cnn_with_dynamic_batch_in_opencv) {
    tg::manual_seed(12);
    auto m = fashion_cnn();
    warm_up(*m, [] { return tg::randn({8, 1, 28, 28}); });
    tg::onnx::ExportOptions o;
    o.dynamic_batch = true;
    same_in_opencv("cnn_dynamic", *m, tg::rand({1, 1, 28, 28}), tg::rand({5, 1, 28, 28}), o);
}

BOOST_AUTO_TEST_CASE(mlp_in_opencv) {
    tg::manual_seed(13);
    auto m = mlp();
    const Tensor x = tg::randn({4, 784});
    same_in_opencv("mlp", *m, x, x);
}

BOOST_AUTO_TEST_CASE(activations_in_opencv) {
    tg::manual_seed(14);
    auto m = activations(/*with_clip=*/false);  // OpenCV 4.6 reads only opset 6's Clip
    const Tensor x = tg::randn({3, 6});
    same_in_opencv("activations", *m, x, x);
}

BOOST_AUTO_TEST_CASE(conv_variants_in_opencv) {
    tg::manual_seed(15);
    auto m = conv_variants();
    warm_up(*m, [] { return tg::randn({4, 3, 16, 16}); });
    const Tensor x = tg::randn({2, 3, 16, 16});
    same_in_opencv("conv_variants", *m, x, x);
}

BOOST_AUTO_TEST_CASE(upsampling_in_opencv) {
    tg::manual_seed(18);
    auto m = upsampling_model();
    const Tensor x = tg::randn({2, 3, 6, 6});
    same_in_opencv("upsampling", *m, x, x);
}

BOOST_AUTO_TEST_CASE(conv1d_in_opencv) {
    tg::manual_seed(16);
    auto m = conv1d_model();
    warm_up(*m, [] { return tg::randn({4, 2, 16}); });
    const Tensor x = tg::randn({2, 2, 16});
    same_in_opencv("conv1d", *m, x, x);
}

BOOST_AUTO_TEST_CASE(linear_on_3d_input_in_opencv) {
    // MatMul + Add; OpenCV 4.6 runs neither LayerNorm form (docs/onnx.md)
    tg::manual_seed(17);
    auto m = sequence_model();
    const Tensor x = tg::randn({2, 5, 8});
    same_in_opencv("sequence", *m, x, x);
}

BOOST_AUTO_TEST_CASE(traced_functional_forward_in_opencv) {
    tg::manual_seed(19);
    auto m = std::make_shared<FunctionalMlpImpl>();
    same_in_opencv("traced_mlp", *m, tg::randn({3, 6}), tg::randn({3, 6}));
    tg::onnx::ExportOptions o;
    o.dynamic_batch = true;
    same_in_opencv("traced_mlp_dynamic", *m, tg::randn({3, 6}), tg::randn({5, 6}), o);
}
