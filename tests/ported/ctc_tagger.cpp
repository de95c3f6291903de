// A LibTorch program of the kind users write with the activations, losses and normalisation
// layers of issue 30: a 1-D convolutional tagger over [N, 6, T] feature sequences (Conv1d,
// InstanceNorm1d with affine parameters, RReLU drawing its slopes in training, PReLU per channel,
// LocalResponseNorm, Mish, GLU) trained with CTCLoss on 3-label targets plus a
// TripletMarginLoss on pooled embeddings and a SmoothL1 penalty, by Adam, in float32. Written
// for LibTorch; tapegrad builds it after scripts/port-from-libtorch.sh alone. Prints each
// step's losses, then the evaluation loss and a KLDivLoss(kBatchMean) between two predictions.
#include <torch/torch.h>

#include <cstdio>

namespace F = torch::nn::functional;

struct TaggerImpl : torch::nn::Module {
    TaggerImpl() {
        using namespace torch::nn;
        conv = register_module("conv", Conv1d(Conv1dOptions(6, 16, 3).padding(1)));
        norm = register_module("norm", InstanceNorm1d(InstanceNorm1dOptions(16).affine(true)));
        act = register_module("act", RReLU(RReLUOptions().lower(0.05).upper(0.25)));
        prelu = register_module("prelu", PReLU(PReLUOptions().num_parameters(8)));
        lrn = register_module("lrn", LocalResponseNorm(LocalResponseNormOptions(3).alpha(0.1)));
        head = register_module("head", Linear(8, 5));
    }
    /// x [N, 6, T] -> (log-probabilities [T, N, 5], embedding [N, 8])
    std::pair<torch::Tensor, torch::Tensor> forward(torch::Tensor x) {
        x = act(norm(conv(x)));
        x = F::glu(x, F::GLUFuncOptions(1));  // [N, 8, T]
        x = F::mish(lrn(prelu(x)));
        auto emb = x.mean(2);
        auto logp = torch::log_softmax(head(x.transpose(1, 2)), 2).transpose(0, 1);
        return {logp, emb};
    }
    torch::nn::Conv1d conv{nullptr};
    torch::nn::InstanceNorm1d norm{nullptr};
    torch::nn::RReLU act{nullptr};
    torch::nn::PReLU prelu{nullptr};
    torch::nn::LocalResponseNorm lrn{nullptr};
    torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Tagger);

int main() {
    torch::manual_seed(7);
    Tagger model;
    torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(0.01));
    const int64_t N = 6, T = 12;
    auto x = torch::randn({N, 6, T});
    auto targets = torch::randint(1, 5, {N, 3});
    auto input_lengths = torch::full({N}, T, torch::kLong);
    auto target_lengths = torch::tensor({3, 2, 3, 1, 3, 2}, torch::kLong);
    torch::nn::CTCLoss ctc(torch::nn::CTCLossOptions().blank(0).zero_infinity(true));
    torch::nn::TripletMarginLoss triplet(torch::nn::TripletMarginLossOptions().margin(0.5));
    torch::nn::SmoothL1Loss smooth;
    for (int step = 0; step < 20; ++step) {
        opt.zero_grad();
        auto out = model->forward(x);
        auto logp = out.first;
        auto emb = out.second;
        auto l_ctc = ctc(logp, targets, input_lengths, target_lengths);
        auto l_trip = triplet(emb.narrow(0, 0, 2), emb.narrow(0, 2, 2), emb.narrow(0, 4, 2));
        auto l_reg = smooth(emb, torch::zeros_like(emb));
        auto loss = l_ctc + 0.5 * l_trip + 0.1 * l_reg;
        loss.backward();
        opt.step();
        std::printf("step %d loss %.9g ctc %.9g triplet %.9g\n", step, loss.item<double>(),
                    l_ctc.item<double>(), l_trip.item<double>());
    }
    model->eval();
    torch::NoGradGuard no_grad;
    auto eval = model->forward(x).first;
    std::printf("eval ctc %.9g\n",
                ctc(eval, targets, input_lengths, target_lengths).item<double>());
    model->train();
    auto sampled = model->forward(x).first;  // RReLU draws again
    torch::nn::KLDivLoss kl(torch::nn::KLDivLossOptions(torch::kBatchMean).log_target(true));
    std::printf("kl %.9g\n", kl(sampled, eval).item<double>());
    return 0;
}
