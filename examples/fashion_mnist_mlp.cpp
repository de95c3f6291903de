// Fashion-MNIST with a multi-layer perceptron, 784-256-128-10 (ReLU): the README's main example.
//
//     OPENBLAS_CORETYPE=SkylakeX ./build/examples/fashion_mnist_mlp --epochs 15
//     scripts/plot.sh fashion_mnist_mlp.csv
//
// The training program (options, progress, CSV, exit statuses) is fashion_mnist_train.hpp's.
#include "fashion_mnist_train.hpp"

int main(int argc, char** argv) {
    example::Example e;
    e.name = "fashion_mnist_mlp";
    e.network = [] {
        return tg::nn::Sequential(tg::nn::Flatten(), tg::nn::Linear(784, 256), tg::nn::ReLU(),
                                  tg::nn::Linear(256, 128), tg::nn::ReLU(),
                                  tg::nn::Linear(128, 10));
    };
    return example::main(argc, argv, e);
}
