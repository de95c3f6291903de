#pragma once
// The models the ONNX tests export (tests/test_onnx_export.cpp, tests/onnx/opencv_runtime.cpp):
// each with trained-looking state (BatchNorm's running statistics moved off 0 and 1 by a few
// training-mode forwards) and left in training mode, as export_model must not care.
#include <functional>
#include <string>
#include <vector>

#include "tapegrad/tapegrad.hpp"

namespace onnxtest {

namespace nn = tg::nn;

/// examples/fashion_mnist_cnn.cpp's network.
inline nn::Sequential fashion_cnn() {
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32),
                          nn::ReLU(), nn::MaxPool2d(2),
                          nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::BatchNorm2d(64),
                          nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Dropout(0.25),
                          nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
}

inline nn::Sequential mlp() {
    return nn::Sequential(nn::Linear(784, 64), nn::ReLU(), nn::Dropout(0.5), nn::Linear(64, 32),
                          nn::Tanh(), nn::Linear(32, 10), nn::LogSoftmax(1));
}

/// Every activation with an emitter, one after another; with_clip: ReLU6 and Hardtanh too (ONNX's
/// Clip, whose opset-13 form OpenCV 4.6 cannot read).
inline nn::Sequential activations(bool with_clip = true) {
    nn::Sequential m(nn::Linear(6, 6), nn::GELU(), nn::Linear(6, 6),
                     nn::GELU(nn::GELUOptions().approximate("tanh")), nn::SiLU(),
                     nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                     nn::ELU(nn::ELUOptions().alpha(0.7)), nn::SELU(),
                     nn::CELU(nn::CELUOptions().alpha(1.3)), nn::Sigmoid(), nn::Linear(6, 6),
                     nn::Mish(), nn::Tanhshrink(), nn::Softsign());
    if (with_clip) {
        m->push_back(nn::ReLU6());
        m->push_back(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.5)));
    }
    m->push_back(nn::Softplus());
    m->push_back(nn::Softmax(1));
    return m;
}

/// Convolutions and pooling with the options export maps: stride, dilation, groups, "same",
/// average and adaptive pooling, and a nested Sequential as the head.
inline nn::Sequential conv_variants() {
    return nn::Sequential(
        nn::Conv2d(nn::Conv2dOptions(3, 8, 3).stride(2).padding(1)), nn::BatchNorm2d(8),
        nn::LeakyReLU(),
        nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(tg::kSame).dilation(2).groups(4)),
        nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(1).padding(1).count_include_pad(false)),
        nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)), nn::AdaptiveAvgPool2d(1),
        nn::Sequential(nn::Flatten(), nn::Linear(8, 4)));
}

/// Upsampling: Conv2d, PReLU per channel, ConvTranspose2d with stride and output_padding, PReLU
/// with one slope, a grouped ConvTranspose2d.
inline nn::Sequential upsampling_model() {
    return nn::Sequential(
        nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)),
        nn::PReLU(nn::PReLUOptions().num_parameters(8).init(0.1)),
        nn::ConvTranspose2d(
            nn::ConvTranspose2dOptions(8, 4, 3).stride(2).padding(1).output_padding(1)),
        nn::PReLU(), nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 4, 2).stride(2).groups(2)));
}

/// A 1-D model: Conv1d, BatchNorm1d, AvgPool1d, AdaptiveAvgPool1d to a divisor, Flatten.
inline nn::Sequential conv1d_model() {
    return nn::Sequential(nn::Conv1d(nn::Conv1dOptions(2, 4, 3).padding(1)), nn::BatchNorm1d(4),
                          nn::ELU(), nn::AvgPool1d(2), nn::AdaptiveAvgPool1d(4), nn::Flatten(),
                          nn::Linear(16, 3));
}

/// Embedding -> LayerNorm -> Linear on [N, T, E] (MatMul + Add) -> GELU -> Linear.
inline nn::Sequential embedding_model() {
    return nn::Sequential(nn::Embedding(20, 8), nn::LayerNorm(nn::LayerNormOptions({8})),
                          nn::Linear(8, 16), nn::GELU(), nn::Linear(16, 5));
}

/// Linear on [N, T, E] (MatMul + Add) -> GELU -> Linear: what OpenCV 4.6 runs of
/// embedding_model (it has no Gather of runtime indices and runs neither form of LayerNorm).
inline nn::Sequential sequence_model() {
    return nn::Sequential(nn::Linear(8, 16), nn::GELU(), nn::Linear(16, 5));
}

/// Linear, then two TransformerEncoderLayers on [N, T, 16] (4 heads): examples/char_gpt.cpp's
/// block (pre-norm, GELU, batch first) with pre_norm, else PyTorch's default layer (post-norm,
/// ReLU, [T, N, E]).
inline nn::Sequential transformer_model(bool pre_norm) {
    auto layer = [&] {
        return nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(16, 4)
                                               .dim_feedforward(32)
                                               .activation(pre_norm ? tg::kGELU : tg::kReLU)
                                               .norm_first(pre_norm)
                                               .batch_first(pre_norm));
    };
    return nn::Sequential(nn::Linear(16, 16), layer(), layer());
}

/// A few training-mode forwards so BatchNorm's running statistics are not 0 and 1.
inline void warm_up(nn::Module& m, const std::function<tg::Tensor()>& input) {
    tg::NoGradGuard no_grad;
    m.train();
    for (int i = 0; i < 3; ++i)
        m(input());
}

}  // namespace onnxtest
