/// grad_fn()->name() gives PyTorch's node names (issue 16): for each op, the name LibTorch 1.13
/// gives the node of the same call (printed by a LibTorch build of this same list of calls).
/// A composed op reports its own name on the node it returns (mean: MeanBackward0, not mul's).
/// Not listed: kl_div, which LibTorch 1.13 composes itself (its node is the reduction's).
#define BOOST_TEST_MODULE test_grad_fn_names
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tapegrad/indexing.hpp"
#include "tapegrad/tapegrad.hpp"

namespace F = tg::nn::functional;
using namespace tg::indexing;

BOOST_AUTO_TEST_CASE(every_op_reports_libtorchs_node_name) {
    const bool show = std::getenv("TG_SHOW_NAMES") != nullptr;
    auto check = [&](const char* call, const tg::Tensor& r, const char* expected) {
        const std::string got = r.grad_fn() ? r.grad_fn()->name() : "-";
        if (show)
            std::cout << call << " " << got << " (LibTorch: " << expected << ")\n";
        BOOST_TEST_CONTEXT(call) {
            BOOST_TEST(got == expected);
        }
    };
#define N(label, expr, expected) check(label, (expr), expected)
    auto o = tg::TensorOptions().dtype(tg::kFloat64);
    auto x = tg::rand({3, 4}, o).requires_grad_(true), y = tg::rand({3, 4}, o).requires_grad_(true);
    auto w = tg::rand({4, 5}, o).requires_grad_(true);
    auto img = tg::rand({1, 2, 5, 5}, o).requires_grad_(true);
    auto k = tg::rand({3, 2, 3, 3}, o).requires_grad_(true);
    N("add", x + y, "AddBackward0");
    N("add_scalar", x + 2.0, "AddBackward1");
    N("sub", x - y, "SubBackward0");
    N("sub_scalar", x - 2.0, "SubBackward1");
    N("rsub", 2.0 - x, "SubBackward0");
    N("mul", x * y, "MulBackward0");
    N("mul_scalar", x * 2.0, "MulBackward1");
    N("div", x / y, "DivBackward0");
    N("div_scalar", x / 2.0, "DivBackward1");
    N("rdiv", 2.0 / x, "DivBackward0");
    N("neg", -x, "NegBackward0");
    N("exp", x.exp(), "ExpBackward0");
    N("log", x.log(), "LogBackward0");
    N("sqrt", x.sqrt(), "SqrtBackward0");
    N("rsqrt", x.rsqrt(), "RsqrtBackward0");
    N("pow_scalar", x.pow(2), "PowBackward0");
    N("pow", tg::pow(x, y), "PowBackward1");
    N("abs", x.abs(), "AbsBackward0");
    N("tanh", x.tanh(), "TanhBackward0");
    N("sigmoid", x.sigmoid(), "SigmoidBackward0");
    N("relu", x.relu(), "ReluBackward0");
    N("gelu", F::gelu(x), "GeluBackward0");
    N("leaky_relu", F::leaky_relu(x), "LeakyReluBackward0");
    N("softplus", F::softplus(x), "SoftplusBackward0");
    N("clamp", tg::clamp(x, 0.2, 0.8), "ClampBackward1");
    N("square", x.square(), "PowBackward0");
    N("sin", x.sin(), "SinBackward0");
    N("cos", x.cos(), "CosBackward0");
    N("log1p", x.log1p(), "Log1PBackward0");
    N("expm1", x.expm1(), "Expm1Backward0");
    N("sum", x.sum(), "SumBackward0");
    N("sum_dim", x.sum(1), "SumBackward1");
    N("mean", x.mean(), "MeanBackward0");
    N("mean_dim", x.mean(1), "MeanBackward1");
    N("max", x.max(), "MaxBackward1");
    N("max_dim", std::get<0>(tg::max(x, 1)), "MaxBackward0");
    N("min_dim", std::get<0>(x.min(0)), "MinBackward0");
    N("amax", x.amax({1}), "AmaxBackward0");
    N("min", x.min(), "MinBackward1");
    N("var", tg::var(x), "VarBackward0");
    N("logsumexp", x.logsumexp(1), "LogsumexpBackward0");
    N("norm", x.norm(), "NormBackward0");
    N("norm_dim", x.norm(2, {1}), "NormBackward1");
    N("mm", x.mm(w), "MmBackward0");
    N("matmul", x.matmul(w), "MmBackward0");
    N("bmm", x.unsqueeze(0).bmm(w.unsqueeze(0)), "BmmBackward0");
    N("addmm", tg::addmm(tg::ones({5}, o), x, w), "AddmmBackward0");
    N("linear", F::linear(x, w.t()), "MmBackward0");
    N("linear_bias", F::linear(x, w.t(), tg::ones({5}, o).requires_grad_(true)), "AddmmBackward0");
    N("reshape", x.reshape({12}), "ReshapeAliasBackward0");
    N("view", x.view({12}), "ViewBackward0");
    N("t", x.t(), "TBackward0");
    N("transpose", x.transpose(0, 1), "TransposeBackward0");
    N("permute", x.permute({1, 0}), "PermuteBackward0");
    N("unsqueeze", x.unsqueeze(0), "UnsqueezeBackward0");
    N("squeeze", x.unsqueeze(0).squeeze(0), "SqueezeBackward1");
    N("expand", x.unsqueeze(0).expand({2, 3, 4}), "ExpandBackward0");
    N("flatten", x.flatten(), "ReshapeAliasBackward0");
    N("cat", tg::cat({x, y}), "CatBackward0");
    N("stack", tg::stack({x, y}), "StackBackward0");
    N("narrow", x.narrow(0, 1, 2), "SliceBackward0");
    N("select", x.select(0, 1), "SelectBackward0");
    N("index_int", x[1], "SelectBackward0");
    N("slice_step", x.slice(1, 0, 4, 2), "SliceBackward0");
    N("index_select", tg::index_select(x, 0, tg::tensor(std::vector<int64_t>{0, 2})),
      "IndexSelectBackward0");
    N("gather", tg::gather(x, 1, tg::zeros({3, 2}, tg::kLong)), "GatherBackward0");
    N("index_mask", x.index({x > 0.5}), "IndexBackward0");
    N("clone", x.clone(), "CloneBackward0");
    N("contiguous", x.t().contiguous(), "CloneBackward0");
    N("to_dtype", x.to(tg::kFloat32), "ToCopyBackward0");
    N("where", tg::where(x > 0.5, x, y), "WhereBackward0");
    N("masked_fill", x.masked_fill(x > 0.5, 0.0), "MaskedFillBackward0");
    N("triu", x.triu(), "TriuBackward0");
    N("cumsum", x.cumsum(1), "CumsumBackward0");
    N("sort", std::get<0>(x.sort(1)), "SortBackward0");
    N("topk", std::get<0>(x.topk(2)), "TopkBackward0");
    N("masked_select", x.masked_select(x > 0.5), "MaskedSelectBackward0");
    N("softmax", tg::softmax(x, 1), "SoftmaxBackward0");
    N("log_softmax", tg::log_softmax(x, 1), "LogSoftmaxBackward0");
    N("dropout", F::dropout(x, F::DropoutFuncOptions().p(0.5).training(true)), "MulBackward0");
    N("mse_loss", F::mse_loss(x, y), "MseLossBackward0");
    N("cross_entropy", F::cross_entropy(x, tg::tensor(std::vector<int64_t>{0, 1, 2})),
      "NllLossBackward0");
    N("nll_loss", F::nll_loss(tg::log_softmax(x, 1), tg::tensor(std::vector<int64_t>{0, 1, 2})),
      "NllLossBackward0");
    N("bce", F::binary_cross_entropy(x.sigmoid(), y.detach()), "BinaryCrossEntropyBackward0");
    N("bce_logits", F::binary_cross_entropy_with_logits(x, y.detach()),
      "BinaryCrossEntropyWithLogitsBackward0");
    N("smooth_l1", F::smooth_l1_loss(x, y), "SmoothL1LossBackward0");
    N("huber", F::huber_loss(x, y), "HuberLossBackward0");
    N("layer_norm", F::layer_norm(x, F::LayerNormFuncOptions({4})), "NativeLayerNormBackward0");
    N("conv2d", F::conv2d(img, k), "ConvolutionBackward0");
    N("max_pool2d", F::max_pool2d(img, F::MaxPool2dFuncOptions(2)),
      "MaxPool2DWithIndicesBackward0");
    N("avg_pool2d", F::avg_pool2d(img, F::AvgPool2dFuncOptions(2)), "AvgPool2DBackward0");
    N("adaptive_avg_pool2d", tg::adaptive_avg_pool2d(img, {2, 2}), "AdaptiveAvgPool2DBackward0");
    N("batch_norm",
      tg::batch_norm(img, {}, {}, tg::zeros({2}, o), tg::ones({2}, o), true, 0.1, 1e-5, false),
      "NativeBatchNormBackward0");
    N("group_norm", tg::group_norm(img, 1), "NativeGroupNormBackward0");
    N("embedding", F::embedding(tg::tensor(std::vector<int64_t>{0, 2}), w), "EmbeddingBackward0");
    N("maximum", tg::maximum(x, y), "MaximumBackward0");
    N("minimum", tg::minimum(x, y), "MinimumBackward0");
    N("sign", x.sign(), "SignBackward0");
    N("floor", x.floor(), "FloorBackward0");
    N("index_add", tg::index_add(x.narrow(0, 0, 1), {3, 4}, 0, tg::tensor(std::vector<int64_t>{0})),
      "IndexAddBackward0");
    N("scatter_add", tg::scatter_add(x, {3, 4}, 1, tg::zeros({3, 4}, tg::kLong)),
      "ScatterAddBackward0");
    N("index_put",
      x.clone().index_put_({tg::tensor(std::vector<int64_t>{0})}, tg::scalar_tensor(1.0, o)),
      "IndexPutBackward0");
    N("copy_", tg::zeros({3, 4}, o).copy_(x), "torch::autograd::CopyBackwards");
    N("tril", x.tril(), "TrilBackward0");
    N("type_as", x.type_as(tg::ones({1}, tg::kFloat32)), "ToCopyBackward0");
    N("expand_as", x.narrow(0, 0, 1).expand_as(y), "ExpandBackward0");
    N("to_device_noop", x.to(tg::kCPU), "-");
    N("mul_ (inplace)", x.clone().mul_(2.0), "MulBackward1");
    N("add_ (inplace)", x.clone().add_(y), "AddBackward0");
#undef N
}
