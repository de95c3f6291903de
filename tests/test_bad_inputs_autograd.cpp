/// Bad-input catalogue (tests/bad_inputs.hpp): backward, autograd::grad, hooks, set_grad, modes,
/// gradcheck and checkpoint. The same tables are in docs/errors.md.
#define BOOST_TEST_MODULE test_bad_inputs_autograd
#include <cmath>
#include <cstdint>
#include <vector>

#include "bad_inputs.hpp"

using tgtest::check_table;

namespace {
using Fn = std::function<tg::Tensor(const std::vector<tg::Tensor>&)>;
using tg::autograd::AnomalyMode;

// x and other require grad (float64 [3]), c does not; u is undefined.
struct Fixtures {
    tg::Tensor x = tg::zeros({3}, tg::TensorOptions(tg::kFloat64).requires_grad(true));
    tg::Tensor other = tg::zeros({3}, tg::TensorOptions(tg::kFloat64).requires_grad(true));
    tg::Tensor c = tg::zeros({3}, tg::kFloat64);
    tg::Tensor u;
    Fn sum = [](const std::vector<tg::Tensor>& v) { return v[0].sum(); };

    tg::Tensor loss() const { return (x * x).sum(); }
    void backward_twice() const {
        tg::Tensor s = loss();
        s.backward();
        s.backward();
    }
    void modified_saved_tensor() const {
        tg::Tensor y = x * 2.0;
        tg::Tensor z = y * y;  // saves y
        {
            tg::NoGradGuard g;
            y.add_(1.0);
        }
        z.sum().backward();
    }
    void loss_without_graph() const {
        tg::NoGradGuard g;
        loss().backward();
    }
    void leaf_hook(tg::Tensor r) const {  // on a leaf of its own: hooks stay registered
        tg::Tensor v = tg::zeros({3}, tg::TensorOptions(tg::kFloat64).requires_grad(true));
        v.register_hook([r](const tg::Tensor&) { return r; });
        (v * v).sum().backward();
    }
    void non_leaf_hook(tg::Tensor r) const {
        tg::Tensor y = x * 2.0;
        y.register_hook([r](const tg::Tensor&) { return r; });
        y.sum().backward();
    }
    void anomaly_forward() const {
        AnomalyMode on;
        tg::log(x - 1.0);
    }
    void anomaly_backward() const {
        AnomalyMode on;
        tg::sqrt(x).sum().backward();  // d√x/dx at 0 is inf
    }
};
}  // namespace

BOOST_FIXTURE_TEST_CASE(backward_and_grad, Fixtures) {
    check_table(
        "backward and autograd::grad",
        {
            TG_BAD((x * 2.0).backward(), autograd_error, "backward", "scalar", "[3]"),
            TG_BAD(c.sum().backward(), autograd_error, "backward", "does not require grad"),
            TG_BAD_AS("{ tg::NoGradGuard g; (x * x).sum().backward(); }", loss_without_graph(),
                      autograd_error, "backward", "does not require grad"),
            TG_BAD((x * 2.0).backward(tg::ones({4}, tg::kFloat64)), autograd_error, "backward",
                   "[4]", "[3]"),
            TG_BAD((x * 2.0).backward(tg::ones({3})), autograd_error, "backward", "float32",
                   "float64"),
            TG_BAD(tg::autograd::backward({loss()}, {tg::ones({}), tg::ones({})}), autograd_error,
                   "2 gradients for 1 outputs"),
            TG_BAD_AS("s.backward(); s.backward();", backward_twice(), autograd_error,
                      "second time", "retain_graph"),
            TG_BAD_AS("y = x * 2.0; z = y * y; y.add_(1.0) under NoGradGuard; z.sum().backward()",
                      modified_saved_tensor(), autograd_error, "modified"),
            TG_BAD(u.backward(), value_error, "undefined"),
            TG_BAD(tg::autograd::grad({loss()}, {c}), autograd_error, "autograd::grad",
                   "does not require grad", "[3]"),
            TG_BAD(tg::autograd::grad({(other * other).sum()}, {x}), autograd_error,
                   "autograd::grad", "not reachable", "allow_unused"),
            TG_BAD(tg::autograd::grad({loss()}, {x}, {tg::ones({}), tg::ones({})}), autograd_error,
                   "autograd::grad", "2 gradients for 1 outputs"),
            TG_BAD(tg::autograd::grad({loss()}, {u}), value_error, "undefined"),
            TG_BAD(tg::autograd::saved_report(u), value_error, "saved_report", "undefined"),
            TG_BAD_AS("tg::log(x - 1.0) in an AnomalyMode scope", anomaly_forward(), autograd_error,
                      "anomaly", "forward of 'log'"),
            TG_BAD_AS("tg::sqrt(x).sum().backward() in an AnomalyMode scope (x = 0)",
                      anomaly_backward(), autograd_error, "anomaly", "backward of 'sqrt'"),
        });
}

// Note [Checked gradients] (src/autograd/engine.hpp): hooks and set_grad are checked as
// backward's own results are; retain_grad() wants a tensor that requires grad, as LibTorch's.
BOOST_FIXTURE_TEST_CASE(hooks_and_set_grad, Fixtures) {
    check_table(
        "Hooks and set_grad",
        {
            TG_BAD(c.register_hook([](const tg::Tensor& g) { return g; }), autograd_error,
                   "register_hook", "does not require grad"),
            TG_BAD(x.register_hook(nullptr), value_error, "register_hook", "empty"),
            TG_BAD_AS("a hook on a leaf [3] returning tg::ones({1}, tg::kFloat64)",
                      leaf_hook(tg::ones({1}, tg::kFloat64)), autograd_error, "hook 0", "leaf [3]",
                      "got [1]", "expected [3]"),
            TG_BAD_AS("a hook on a float64 leaf [3] returning tg::ones({3}) (float32)",
                      leaf_hook(tg::ones({3})), autograd_error, "hook", "leaf [3]", "float32"),
            TG_BAD_AS("a hook on x * 2.0 returning tg::ones({5}, tg::kFloat64)",
                      non_leaf_hook(tg::ones({5}, tg::kFloat64)), autograd_error,
                      "hook 0 of the tensor [3]", "'mul'", "got [5]"),
            TG_BAD(x.set_grad(tg::ones({1}, tg::kFloat64)), autograd_error, "set_grad", "[3]",
                   "got [1]"),
            TG_BAD(x.set_grad(tg::ones({3})), autograd_error, "set_grad", "float32", "float64"),
            TG_BAD(x.set_grad(tg::ones({1}, tg::kFloat64).expand({3})), autograd_error, "set_grad",
                   "expand"),
            TG_BAD(u.set_grad(x), value_error, "undefined"),
            TG_BAD(c.retain_grad(), autograd_error, "retain_grad", "[3]", "does not require grad"),
            TG_BAD(u.retain_grad(), value_error, "undefined"),
        });
}

BOOST_FIXTURE_TEST_CASE(gradcheck_and_checkpoint, Fixtures) {
    const double nan = std::nan("");
    check_table(
        "gradcheck and checkpoint",
        {
            TG_BAD(tg::gradcheck(sum, {tg::ones({2}, tg::TensorOptions().requires_grad(true))}),
                   dtype_error, "gradcheck", "float64", "float32"),
            TG_BAD(tg::gradcheck(sum, {c}), autograd_error, "gradcheck", "no input requires grad"),
            TG_BAD(tg::gradcheck(sum, {x}, 0.0), value_error, "gradcheck", "eps"),
            TG_BAD(tg::gradcheck(sum, {x}, nan), value_error, "gradcheck", "eps"),
            TG_BAD(tg::gradcheck(sum, {x}, 1e-6, -1.0), value_error, "gradcheck", "atol"),
            TG_BAD(tg::gradcheck(sum, {x}, 1e-6, 1e-5, nan), value_error, "gradcheck", "rtol"),
            TG_BAD(tg::gradcheck(nullptr, {x}), value_error, "gradcheck", "empty function"),
            TG_BAD(tg::gradgradcheck(sum, {x}, -1.0), value_error, "gradgradcheck", "eps"),
            TG_BAD(tg::checkpoint(tg::CheckpointFn(), {x}), value_error, "checkpoint",
                   "empty function"),
            TG_BAD(tg::checkpoint(Fn(), {x}), value_error, "checkpoint", "empty function"),
            TG_BAD(tg::checkpoint([](const std::vector<tg::Tensor>& v) { return v[0].exp().sum(); },
                                  {x * 1.0}, false)
                       .backward({}, false, true),
                   autograd_error, "use_reentrant=false", "create_graph"),
        });
}
