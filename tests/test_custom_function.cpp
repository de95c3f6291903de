/// Custom autograd functions (tapegrad/custom_function.hpp), written as LibTorch writes them:
/// gradchecked and double-backward-checked in float64, checkpointed (both forms), with
/// non-tensor and tensor_list arguments, several outputs, non-differentiable outputs, inputs
/// returned unchanged or modified in place, hooks, anomaly mode, version checks, bad backwards,
/// and on the OpenCL device when there is one.
#define BOOST_TEST_MODULE test_custom_function
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tapegrad/checkpoint.hpp"
#include "tapegrad/custom_function.hpp"
#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tg::autograd::AutogradContext;
using tg::autograd::Function;
using tg::autograd::tensor_list;
using tgtest::check_close;
using tgtest::make_input;

namespace {

/// y = x * c (c a double in saved_data); dx = dy * c.
struct MulConst : Function<MulConst> {
    static tg::Tensor forward(AutogradContext* ctx, tg::Tensor x, double c) {
        ctx->saved_data["c"] = c;
        return x * c;
    }
    static tensor_list backward(AutogradContext* ctx, tensor_list dy) {
        return {dy[0] * ctx->saved_data["c"].toDouble(), tg::Tensor()};
    }
};

/// y = x³ + a·x (a tensor): saves x and a; backward written with tg ops, so it is twice
/// differentiable.
struct CubicPlus : Function<CubicPlus> {
    static tg::Tensor forward(AutogradContext* ctx, tg::Tensor x, tg::Tensor a) {
        ctx->save_for_backward({x, a});
        return x * x * x + a * x;
    }
    static tensor_list backward(AutogradContext* ctx, tensor_list dy) {
        const tensor_list s = ctx->get_saved_variables();
        const tg::Tensor &x = s[0], &a = s[1];
        tg::Tensor dx, da;
        if (ctx->needs_input_grad(0))
            dx = dy[0] * (x * x * 3.0 + a);
        if (ctx->needs_input_grad(1))
            da = dy[0] * x;
        return {dx, da};
    }
};

/// Two outputs and an index output: y1 = exp(x) (saved as an output), y2 = sum of a list of
/// tensors times k, idx = argmax (non-differentiable).
struct Several : Function<Several> {
    static tensor_list forward(AutogradContext* ctx, tg::Tensor x, tensor_list parts, int64_t k) {
        tg::Tensor y1 = tg::exp(x);
        tg::Tensor y2 = parts[0] * double(k);
        for (size_t i = 1; i < parts.size(); ++i)
            y2 = y2 + parts[i] * double(k);
        tg::Tensor idx = tg::argmax(x);
        ctx->mark_non_differentiable({idx});
        ctx->save_for_backward({y1});
        ctx->saved_data["k"] = k;
        ctx->saved_data["n"] = int64_t(parts.size());
        return {y1, y2, idx};
    }
    static tensor_list backward(AutogradContext* ctx, tensor_list dy) {
        const tg::Tensor y1 = ctx->get_saved_variables()[0];
        const double k = double(ctx->saved_data["k"].toInt());
        tensor_list r = {dy[0] * y1};
        for (int64_t i = 0; i < ctx->saved_data["n"].toInt(); ++i)
            r.push_back(dy[1] * k);
        r.push_back(tg::Tensor());  // k
        return r;
    }
};

/// Doubles a (non-leaf) input in place and returns it (mark_dirty).
struct DoubleInPlace : Function<DoubleInPlace> {
    static tg::Tensor forward(AutogradContext* ctx, tg::Tensor x) {
        x.mul_(2.0);
        ctx->mark_dirty({x});
        return x;
    }
    static tensor_list backward(AutogradContext*, tensor_list dy) { return {dy[0] * 2.0}; }
};

/// Returns its input unchanged (identity), with a gradient of 1.
struct Identity : Function<Identity> {
    static tg::Tensor forward(AutogradContext*, tg::Tensor x) { return x; }
    static tensor_list backward(AutogradContext*, tensor_list dy) { return {dy[0]}; }
};

/// Backwards that are wrong in the ways a user gets them wrong.
struct TooFew : Function<TooFew> {
    static tg::Tensor forward(AutogradContext*, tg::Tensor x, tg::Tensor y) { return x + y; }
    static tensor_list backward(AutogradContext*, tensor_list dy) { return {dy[0]}; }
};
struct WrongShape : Function<WrongShape> {
    static tg::Tensor forward(AutogradContext*, tg::Tensor x) { return x.sum(); }
    static tensor_list backward(AutogradContext*, tensor_list dy) {
        return {tg::zeros({7}, dy[0].options())};
    }
};
struct GradForDouble : Function<GradForDouble> {
    static tg::Tensor forward(AutogradContext*, tg::Tensor x, double) { return x * 1.0; }
    static tensor_list backward(AutogradContext*, tensor_list dy) { return {dy[0], dy[0]}; }
};
struct NanGrad : Function<NanGrad> {
    static tg::Tensor forward(AutogradContext*, tg::Tensor x) { return x * 1.0; }
    static tensor_list backward(AutogradContext*, tensor_list dy) {
        return {dy[0] * std::numeric_limits<double>::quiet_NaN()};
    }
};
/// LibTorch's autograd tutorial: forward's bias defaults to undefined, backward always returns
/// three gradients, the third undefined when the bias was: LibTorch drops extra undefined ones.
struct LinearWithBias : Function<LinearWithBias> {
    static tg::Tensor forward(AutogradContext* ctx, tg::Tensor x, tg::Tensor w,
                              tg::Tensor b = tg::Tensor()) {
        ctx->save_for_backward({x, w, b});
        tg::Tensor y = x.mm(w.t());
        return b.defined() ? y + b : y;
    }
    static tensor_list backward(AutogradContext* ctx, tensor_list dy) {
        auto saved = ctx->get_saved_variables();
        tg::Tensor db = saved[2].defined() ? dy[0].sum(0) : tg::Tensor();
        return {dy[0].mm(saved[1]), dy[0].t().mm(saved[0]), db};
    }
};
/// An extra gradient that is defined is still an error.
struct ExtraDefined : Function<ExtraDefined> {
    static tg::Tensor forward(AutogradContext*, tg::Tensor x) { return x * 2.0; }
    static tensor_list backward(AutogradContext*, tensor_list dy) { return {dy[0] * 2.0, dy[0]}; }
};
/// A gradient with a broadcast shape ([1,3] for a [1,3] input given [2,3]): summed down.
struct BroadcastGrad : Function<BroadcastGrad> {
    static tg::Tensor forward(AutogradContext*, tg::Tensor x) { return x.sum(); }
    static tensor_list backward(AutogradContext*, tensor_list dy) {
        return {tg::ones({2, 3}, dy[0].options()) * dy[0]};
    }
};

}  // namespace

BOOST_AUTO_TEST_CASE(gradcheck_and_double_backward) {
    const tg::Tensor x = make_input({3, 4}, 1), a = make_input({3, 4}, 2);
    auto f = [](const std::vector<tg::Tensor>& v) {
        return CubicPlus::apply(MulConst::apply(v[0], 1.5), v[1]);
    };
    BOOST_TEST(tg::gradcheck(f, {x, a}));
    BOOST_TEST(tg::gradgradcheck(f, {x, a}));
    // the same numbers as the composed ops
    tg::Tensor y = f({x, a});
    const tg::Tensor xs = x * 1.5;
    check_close(y, xs * xs * xs + a * xs);
    BOOST_TEST(std::string(y.grad_fn()->name()).find("CubicPlus") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(several_outputs_lists_and_plain_arguments) {
    const tg::Tensor x = make_input({5}, 3), p = make_input({5}, 4), q = make_input({5}, 5);
    auto f = [](const std::vector<tg::Tensor>& v) {
        const tensor_list o = Several::apply(v[0], tensor_list{v[1], v[2]}, int64_t(3));
        BOOST_TEST(!o[2].requires_grad());  // marked non-differentiable
        BOOST_TEST((o[2].dtype() == tg::kInt64));
        return o[0] * 2.0 + o[1] * o[1];
    };
    BOOST_TEST(tg::gradcheck(f, {x, p, q}));
    BOOST_TEST(tg::gradgradcheck(f, {x, p, q}));
    // only one output used: the other's gradient arrives as zeros (materialized)
    tg::Tensor xx = make_input({5}, 3);
    Several::apply(xx, tensor_list{p.detach()}, int64_t(2))[0].sum().backward();
    check_close(xx.grad(), tgtest::values_of(tg::exp(xx)));
}

BOOST_AUTO_TEST_CASE(inputs_returned_or_modified_in_place) {
    tg::Tensor w = make_input({4}, 6);
    // returned unchanged: an alias gets the history, the input keeps its own
    tg::Tensor y = Identity::apply(w);
    BOOST_TEST(w.is_leaf());
    BOOST_TEST(!y.is_leaf());
    (y * 3.0).sum().backward();
    check_close(w.grad(), {3, 3, 3, 3});
    // modified in place (mark_dirty): the input takes the node as its history
    tg::Tensor v = make_input({4}, 7);
    tg::Tensor h = v * 1.0;
    tg::Tensor r = DoubleInPlace::apply(h);
    BOOST_TEST(h.grad_fn().get() == r.grad_fn().get());
    check_close(r, tgtest::values_of(v * 2.0));
    (h * h).sum().backward();  // d/dv (2v)² = 8v
    check_close(v.grad(), tgtest::values_of(v * 8.0));
    // a leaf that requires grad cannot be modified in place
    tg::Tensor leaf = make_input({4}, 8);
    BOOST_CHECK_THROW(DoubleInPlace::apply(leaf), tg::error);
}

BOOST_AUTO_TEST_CASE(checkpointed_like_any_op) {
    const tg::Tensor x0 = make_input({6, 5}, 9), a0 = make_input({6, 5}, 10);
    auto body = [](const std::vector<tg::Tensor>& v) {
        return tg::tanh(CubicPlus::apply(tg::sin(v[0]), v[1]));
    };
    tg::Tensor x = x0.detach().requires_grad_(true), a = a0.detach().requires_grad_(true);
    body({x, a}).sum().backward();
    for (bool reentrant : {true, false}) {
        BOOST_TEST_CONTEXT("use_reentrant " << reentrant) {
            tg::Tensor xc = x0.detach().requires_grad_(true), ac = a0.detach().requires_grad_(true);
            tg::checkpoint(body, {xc, ac}, reentrant).sum().backward();
            check_close(xc.grad(), x.grad(), 1e-12, 1e-12);
            check_close(ac.grad(), a.grad(), 1e-12, 1e-12);
        }
    }
}

BOOST_AUTO_TEST_CASE(hooks_anomaly_and_version_checks) {
    tg::Tensor x = make_input({3}, 11), a = make_input({3}, 12);
    tg::Tensor y = CubicPlus::apply(x, a);
    y.register_hook([](const tg::Tensor& g) { return g * 10.0; });
    y.sum().backward();
    check_close(x.grad(), tgtest::values_of((x * x * 3.0 + a) * 10.0));

    {
        tg::autograd::AnomalyMode on;
        tg::Tensor z = make_input({3}, 13);
        BOOST_CHECK_THROW(NanGrad::apply(z).sum().backward(), tg::error);
    }
    // a saved input modified in place before backward
    tg::Tensor u = make_input({3}, 14), b = make_input({3}, 15);
    tg::Tensor m = u * 1.0;
    tg::Tensor out = CubicPlus::apply(m, b);
    {
        tg::NoGradGuard g;
        m.add_(1.0);
    }
    BOOST_CHECK_THROW(out.sum().backward(), tg::autograd_error);
}

BOOST_AUTO_TEST_CASE(bad_backwards_are_typed_errors) {
    tg::Tensor x = make_input({2, 3}, 16), y = make_input({2, 3}, 17);
    BOOST_CHECK_THROW(TooFew::apply(x, y).sum().backward(), tg::autograd_error);
    BOOST_CHECK_THROW(WrongShape::apply(x).backward(), tg::autograd_error);
    BOOST_CHECK_THROW(GradForDouble::apply(x, 2.0).sum().backward(), tg::autograd_error);
    BOOST_CHECK_THROW(ExtraDefined::apply(x).sum().backward(), tg::autograd_error);
    // extra undefined gradients are dropped, as LibTorch does (its autograd tutorial's
    // LinearFunction applied without a bias)
    tg::Tensor w = make_input({4, 3}, 19);
    LinearWithBias::apply(x, w).sum().backward();
    check_close(w.grad(), tg::ones({4, 2}, x.options()).mm(x.detach()));
    tg::Tensor b = make_input({1, 3}, 18);
    BroadcastGrad::apply(b).backward();
    check_close(b.grad(), {2, 2, 2});
    // saved_data of the wrong type
    tg::autograd::IValue v(2.5);
    BOOST_CHECK_THROW(v.toTensor(), tg::value_error);
    BOOST_TEST(tg::autograd::IValue(int64_t(3)).toDouble() == 3.0);
}

BOOST_AUTO_TEST_CASE(no_recording_without_grad) {
    const tg::Tensor x = tgtest::make_const({3}, 19), a = tgtest::make_const({3}, 20);
    BOOST_TEST(!CubicPlus::apply(x, a).requires_grad());
    tg::Tensor w = make_input({3}, 21);
    tg::NoGradGuard g;
    BOOST_TEST(!CubicPlus::apply(w, a).requires_grad());
}

BOOST_AUTO_TEST_CASE(runs_on_the_opencl_device) {
    const tg::Device cl = tg::Device::opencl(0);
    if (!tg::is_available(cl)) {
        BOOST_TEST_MESSAGE("no OpenCL device");
        return;
    }
    for (tg::Dtype dt : {tg::kFloat32, tg::kFloat64}) {
        tg::Tensor x = tgtest::make_const({4, 3}, 22).to(dt),
                   a = tgtest::make_const({4, 3}, 23).to(dt);
        tg::Tensor xc = x.to(cl).requires_grad_(true), ac = a.to(cl).requires_grad_(true);
        x.requires_grad_(true);
        a.requires_grad_(true);
        CubicPlus::apply(x, a).sum().backward();
        tg::Tensor yc = CubicPlus::apply(xc, ac);
        BOOST_TEST((yc.device() == cl));
        yc.sum().backward();
        const double tol = dt == tg::kFloat32 ? 1e-5 : 1e-12;
        check_close(xc.grad().to(tg::kCPU), x.grad(), tol, tol);
        check_close(ac.grad().to(tg::kCPU), a.grad(), tol, tol);
    }
}
