// Fashion-MNIST with a small convolutional network:
//
//     conv 3x3 32 - batch norm - ReLU - max pool 2      [32,14,14]
//     conv 3x3 64 - batch norm - ReLU - max pool 2      [64,7,7]
//     flatten - dropout 0.25 - linear 3136->128 - ReLU - linear 128->10
//
//     OPENBLAS_CORETYPE=SkylakeX ./build/examples/fashion_mnist_cnn --epochs 8
//     scripts/plot.sh fashion_mnist_cnn.csv
//
// (scripts/run.sh --cnn builds and runs it.) The training program (options, progress, CSV, exit
// statuses) is fashion_mnist_train.hpp's; evaluation runs the network in eval mode, so batch norm
// uses its running statistics and dropout is off.
#include "fashion_mnist_train.hpp"

int main(int argc, char** argv) {
    namespace nn = tg::nn;
    example::Example e;
    e.name = "fashion_mnist_cnn";
    e.epochs = 8;
    e.network = [] {
        return nn::Sequential(
            nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::BatchNorm2d(32), nn::ReLU(),
            nn::MaxPool2d(2), nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
            nn::BatchNorm2d(64), nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Dropout(0.25),
            nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Linear(128, 10));
    };
    return example::main(argc, argv, e);
}
