#pragma once
// The training program the Fashion-MNIST examples share: arguments, data, the epoch loop with a
// progress bar, evaluation, the per-epoch CSV and the saved model. Each example supplies its
// network and defaults (fashion_mnist_mlp.cpp, fashion_mnist_cnn.cpp).
//
// Trains with Adam and cross-entropy on the 60,000 training images, shows a one-line progress
// bar per epoch, evaluates on the 10,000 test images after every epoch, writes one CSV row per
// epoch (epoch,train_loss,train_acc,test_loss,test_acc,seconds; `seconds` is that epoch's wall
// time, training and evaluation), saves the model with tg::save and prints the final test
// accuracy. Exits with status 1 if it is below --min-accuracy, 2 on bad arguments or an
// unavailable device, 3 on a file error.
//
// The data are read from --data, else $TG_FASHION_MNIST, else /usr/share/datasets/fashion-mnist
// (Debian package dataset-fashion-mnist).
//
// --distributed trains data-parallel under mpirun (docs/distributed.md): every rank takes its
// share of each epoch (DistributedSampler) in batches of --batch-size, so a step sees
// ranks x batch-size images; nn::DistributedDataParallel averages the gradients; rank 0 prints,
// writes the CSV and saves the model.
//
//     mpirun -np 2 ./build/examples/fashion_mnist_mlp --distributed --epochs 15
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "device_arg.hpp"
#include "tapegrad/data.hpp"
#include "tapegrad/io.hpp"
#include "tapegrad/nn.hpp"
#include "tapegrad/optim.hpp"
#include "tapegrad/tapegrad.hpp"

namespace example {

/// What an example supplies: its name (the program, CSV and model file names), its network
/// (built after tg::manual_seed) and its default epochs and learning rate.
struct Example {
    std::string name;
    std::function<tg::nn::Sequential()> network;
    int epochs = 15;
    double lr = 1e-3;
};

struct Args {
    int epochs = 15;
    int64_t batch_size = 128;
    double lr = 1e-3;
    bool cosine = true;
    std::string data;  // empty: tg::data::default_root()
    std::string csv;
    std::string out;
    std::string device = "cpu";
    uint64_t seed = 0;
    double min_accuracy = 0;
    bool distributed = false;
};

/// 0.001 as "0.001", not std::to_string's "0.001000".
inline std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

inline std::string usage(const Example& e) {
    return "usage: " + e.name + " [options]\n" + "  --epochs N          training epochs (" +
           std::to_string(e.epochs) + ")\n" +
           "  --batch-size B      mini-batch size (128)\n"
           "  --lr X              Adam learning rate (" +
           number(e.lr) + ")\n" +
           "  --schedule S        cosine (anneal lr to 0 over the epochs) or constant (cosine)\n"
           "  --data DIR          Fashion-MNIST directory ($TG_FASHION_MNIST, else\n"
           "                      /usr/share/datasets/fashion-mnist)\n"
           "  --csv FILE          per-epoch metrics (" +
           e.name + ".csv)\n" + "  --out FILE          saved model (" + e.name + ".tgsv)\n" +
           "  --device D          cpu, opencl[:i] or cuda[:i] (cpu)\n"
           "  --seed S            seed of the initialisation and of the shuffling (0)\n"
           "  --min-accuracy A    exit with status 1 if the final test accuracy is below A (0)\n"
           "  --distributed       data-parallel over the ranks of mpirun (batch size per rank)\n";
}

inline Args parse_args(int argc, char** argv, const Example& e) {
    Args a;
    a.epochs = e.epochs;
    a.lr = e.lr;
    a.csv = e.name + ".csv";
    a.out = e.name + ".tgsv";
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        if (k == "-h" || k == "--help") {
            std::cout << usage(e);
            std::exit(0);
        }
        if (k == "--distributed") {
            a.distributed = true;
            continue;
        }
        if (i + 1 >= argc)
            throw std::invalid_argument("option " + k + " needs a value");
        std::string v = argv[++i];
        if (k == "--epochs")
            a.epochs = std::stoi(v);
        else if (k == "--batch-size")
            a.batch_size = std::stoll(v);
        else if (k == "--lr")
            a.lr = std::stod(v);
        else if (k == "--schedule" && (v == "cosine" || v == "constant"))
            a.cosine = v == "cosine";
        else if (k == "--data")
            a.data = v;
        else if (k == "--csv")
            a.csv = v;
        else if (k == "--out")
            a.out = v;
        else if (k == "--device")
            a.device = v;
        else if (k == "--seed")
            a.seed = std::stoull(v);
        else if (k == "--min-accuracy")
            a.min_accuracy = std::stod(v);
        else
            throw std::invalid_argument("unknown option or value: " + k + " " + v);
    }
    if (a.epochs < 1 || a.batch_size < 1 || !(a.lr > 0))
        throw std::invalid_argument("--epochs, --batch-size and --lr must be positive");
    return a;
}

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Loss and accuracy of `model` over a whole split, in batches, without recording.
inline std::pair<double, double> evaluate(tg::nn::Sequential& model, const tg::Tensor& images,
                                          const tg::Tensor& labels) {
    tg::NoGradGuard no_grad;
    model->eval();
    tg::data::DataLoader loader(images, labels,
                                tg::data::DataLoaderOptions().batch_size(1000).shuffle(false));
    double loss_sum = 0;
    int64_t correct = 0;
    for (auto& batch : loader) {
        tg::Tensor logits = model(batch.data);
        loss_sum += tg::cross_entropy(logits, batch.target, tg::Reduction::Sum).item<double>();
        correct += tg::eq(logits.argmax(1), batch.target).sum().item<int64_t>();
    }
    model->train();
    const double n = double(images.size(0));
    return {loss_sum / n, double(correct) / n};
}

/// One line, rewritten in place with \r: epoch, a bar, batch i/n, loss, accuracy, images/s.
/// Kept under 80 columns, since \r cannot rewrite a line the terminal has wrapped.
inline void print_progress(int epoch, int epochs, int64_t i, int64_t n, double loss, double acc,
                           double ips) {
    const int width = 16;
    int filled = int(double(width) * double(i) / double(n));
    std::string bar(size_t(filled), '=');
    if (filled < width)
        bar += '>' + std::string(size_t(width - filled - 1), ' ');
    std::printf("\repoch %2d/%d [%s] %3lld/%lld loss %.4f acc %6.2f%% %6.0f img/s", epoch, epochs,
                bar.c_str(), static_cast<long long>(i), static_cast<long long>(n), loss, 100 * acc,
                ips);
    std::fflush(stdout);
}

inline int run(const Args& args, const Example& e) {
    if (args.distributed)
        tg::distributed::init();
    const int rank = args.distributed ? tg::distributed::rank() : 0;
    const int world = args.distributed ? tg::distributed::world_size() : 1;
    const bool lead = rank == 0;  // prints, writes the CSV, saves the model
    const tg::Device device = parse_device(args.device);
    if (!tg::is_available(device)) {
        throw tg::backend_unavailable("device " + device.str() +
                                      " is not available in this build of tapegrad");
    }
    auto t_load = Clock::now();
    tg::data::FashionMNIST train(true, args.data), test(false, args.data);
    tg::Tensor train_x = train.images().to(device), train_y = train.labels().to(device);
    tg::Tensor test_x = test.images().to(device), test_y = test.labels().to(device);
    if (lead)
        std::printf("Fashion-MNIST from %s: %lld training, %lld test images (%.2f s)%s\n",
                    train.root().c_str(), static_cast<long long>(train.size()),
                    static_cast<long long>(test.size()), seconds_since(t_load),
                    world > 1 ? (", " + std::to_string(world) + " ranks").c_str() : "");

    tg::manual_seed(args.seed);
    tg::nn::Sequential model = e.network();
    model->to(device);
    std::unique_ptr<tg::nn::DistributedDataParallel> ddp;
    if (args.distributed)  // every rank starts from rank 0's weights
        ddp = std::make_unique<tg::nn::DistributedDataParallel>(model);
    tg::optim::Adam optimizer(model->parameters(), tg::optim::AdamOptions(args.lr));
    tg::optim::CosineAnnealingLR schedule(optimizer, args.epochs);
    const auto options =
        tg::data::DataLoaderOptions().batch_size(args.batch_size).shuffle(true).seed(args.seed);
    tg::data::DataLoader loader =
        args.distributed ? tg::data::DataLoader(train_x, train_y,
                                                tg::data::DistributedSampler(
                                                    train.size(), {world, rank}, true, args.seed),
                                                options)
                         : tg::data::DataLoader(train_x, train_y, options);

    std::ofstream csv;
    if (lead) {
        csv.open(args.csv);
        if (!csv)
            throw tg::io_error("cannot write " + args.csv);
        csv << "epoch,train_loss,train_acc,test_loss,test_acc,seconds\n";
    }

    const bool tty = lead && ::isatty(::fileno(stdout));
    const int64_t n_batches = loader.size();
    auto t_start = Clock::now();
    double test_acc = 0;
    for (int epoch = 1; epoch <= args.epochs; ++epoch) {
        if (args.cosine)  // the k-th step() sets epoch k's lr (LibTorch's convention)
            schedule.step();
        auto t_epoch = Clock::now(), t_print = t_epoch;
        double loss_sum = 0;
        int64_t correct = 0, seen = 0, i = 0;
        for (auto& batch : loader) {
            tg::Tensor logits = ddp ? (*ddp)(batch.data) : model(batch.data);
            tg::Tensor loss = tg::cross_entropy(logits, batch.target);
            optimizer.zero_grad();
            loss.backward();
            optimizer.step();

            const int64_t b = batch.data.size(0);
            loss_sum += loss.item<double>() * double(b);
            correct += tg::eq(logits.detach().argmax(1), batch.target).sum().item<int64_t>();
            seen += b;
            ++i;
            if (tty && (seconds_since(t_print) > 0.1 || i == n_batches)) {
                t_print = Clock::now();
                print_progress(epoch, args.epochs, i, n_batches, loss_sum / double(seen),
                               double(correct) / double(seen),
                               double(seen) / seconds_since(t_epoch));
            }
        }
        if (args.distributed) {  // the epoch's loss and accuracy over every rank's share
            tg::Tensor sums = tg::tensor({loss_sum, double(correct), double(seen)}, tg::kFloat64);
            tg::distributed::all_reduce(sums);
            auto v = sums.to_vector<double>();
            loss_sum = v[0];
            correct = int64_t(v[1]);
            seen = int64_t(v[2]);
        }
        const double train_secs = seconds_since(t_epoch);
        const double train_loss = loss_sum / double(seen),
                     train_acc = double(correct) / double(seen);
        auto [test_loss, acc] = evaluate(model, test_x, test_y);
        test_acc = acc;
        const double secs = seconds_since(t_epoch);
        if (!lead)
            continue;
        // The epoch's summary replaces its progress bar.
        std::printf(
            "%sepoch %2d/%d loss %.4f acc %5.2f%% | test loss %.4f acc %5.2f%% "
            "| %4.1f s %5.0f img/s\n",
            tty ? "\r" : "", epoch, args.epochs, train_loss, 100 * train_acc, test_loss,
            100 * test_acc, secs, double(seen) / train_secs);
        csv << epoch << ',' << train_loss << ',' << train_acc << ',' << test_loss << ',' << test_acc
            << ',' << secs << '\n';
        csv.flush();
    }
    const double total = seconds_since(t_start);
    if (lead)
        tg::save(model, args.out);
    if (args.distributed)
        tg::distributed::barrier();  // the model file exists before any rank goes on
    if (!lead)
        return test_acc < args.min_accuracy ? 1 : 0;
    std::printf(
        "final test accuracy %.2f%% after %d epochs in %.1f s (%.1f s/epoch); model saved to %s, "
        "metrics to %s\n",
        100 * test_acc, args.epochs, total, total / args.epochs, args.out.c_str(),
        args.csv.c_str());
    if (test_acc < args.min_accuracy) {
        std::fprintf(stderr, "error: test accuracy %.4f is below --min-accuracy %.4f\n", test_acc,
                     args.min_accuracy);
        return 1;
    }
    return 0;
}

/// The example's main: runs it and maps errors to exit statuses.
inline int main(int argc, char** argv, const Example& e) {
    try {
        return run(parse_args(argc, argv, e), e);
    } catch (const std::invalid_argument& err) {
        std::fprintf(stderr, "error: %s\n%s", err.what(), usage(e).c_str());
        return 2;
    } catch (const tg::backend_unavailable& err) {
        std::fprintf(stderr, "error: %s\n", err.what());
        return 2;
    } catch (const tg::io_error& err) {
        std::fprintf(stderr, "error: %s\n", err.what());
        return 3;
    } catch (const std::exception& err) {
        std::fprintf(stderr, "error: %s\n", err.what());
        return 4;
    }
}

}  // namespace example
