// gradcheck / gradgradcheck: backward against central finite differences, in float64.
#include <cmath>
#include <random>
#include <sstream>

#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

/// Storage offset (in elements) of the k-th element of t in row-major order.
int64_t offset_of(const Tensor& t, int64_t k) {
    int64_t off = t.storage_offset();
    for (int64_t d = t.dim() - 1; d >= 0; --d) {
        off += (k % t.size(d)) * t.stride(d);
        k /= t.size(d);
    }
    return off;
}

/// A step of 0 or NaN divides by nothing, and a negative or NaN tolerance passes nothing: the
/// message would blame the function instead of the arguments.
void check_args(const char* who, const Fn& fn, double eps, double atol, double rtol) {
    if (!fn)
        throw value_error(std::string(who) + ": empty function");
    auto require = [&](bool ok, const char* name, double v, const char* domain) {
        if (ok)
            return;
        std::ostringstream m;
        m << who << ": " << name << " " << v << " must be " << domain;
        throw value_error(m.str());
    };
    require(std::isfinite(eps) && eps > 0, "eps", eps, "finite and > 0");
    require(atol >= 0, "atol", atol, ">= 0");
    require(rtol >= 0, "rtol", rtol, ">= 0");
}

std::vector<double> eval_flat(const Fn& fn, const std::vector<Tensor>& inputs) {
    // Grad mode stays on: fn may itself differentiate (a gradient penalty calls autograd::grad).
    return fn(inputs).to_vector<double>();
}
}  // namespace

bool gradcheck(const Fn& fn, const std::vector<Tensor>& inputs, double eps, double atol,
               double rtol) {
    check_args("gradcheck", fn, eps, atol, rtol);
    for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].requires_grad() &&
            (inputs[i].dtype() != kFloat64 || !inputs[i].device().is_cpu()))
            throw dtype_error("gradcheck: input " + std::to_string(i) +
                              " must be a float64 CPU tensor, got " +
                              dtype_name(inputs[i].dtype()) + " on " + inputs[i].device().str());
    const Tensor out = fn(inputs);
    const int64_t n_out = out.numel();
    std::vector<size_t> diff;  // inputs that require grad
    for (size_t i = 0; i < inputs.size(); ++i)
        if (inputs[i].requires_grad())
            diff.push_back(i);
    if (diff.empty())
        throw autograd_error("gradcheck: no input requires grad");
    // An output that does not require grad is constant in the inputs (e.g. the gradient of a
    // linear function, under gradgradcheck): its analytical Jacobian is zero.
    const bool constant = !out.requires_grad();

    // analytical Jacobian, one backward per output element: jac[i][j][k] = d out_j / d x_ik
    std::vector<std::vector<std::vector<double>>> jac(
        diff.size(), std::vector<std::vector<double>>(size_t(n_out)));
    std::vector<Tensor> req;
    for (size_t i : diff)
        req.push_back(inputs[i]);
    for (int64_t j = 0; j < n_out; ++j) {
        if (constant) {
            for (size_t a = 0; a < diff.size(); ++a)
                jac[a][size_t(j)].assign(size_t(req[a].numel()), 0.0);
            continue;
        }
        std::vector<double> onehot(size_t(n_out), 0.0);
        onehot[size_t(j)] = 1.0;
        const Tensor v = tensor(onehot, out.options()).reshape(out.sizes());
        const auto g = autograd::grad({out}, req, {v}, true, false, true);
        for (size_t a = 0; a < diff.size(); ++a)
            jac[a][size_t(j)] = g[a].defined() ? g[a].to_vector<double>()
                                               : std::vector<double>(size_t(req[a].numel()), 0.0);
    }
    // numerical Jacobian, central differences, perturbing each input element in place
    for (size_t a = 0; a < diff.size(); ++a) {
        const Tensor& x = inputs[diff[a]];
        double* base = static_cast<double*>(x.impl()->storage->data);
        for (int64_t k = 0; k < x.numel(); ++k) {
            double& e = base[offset_of(x, k)];
            const double orig = e;
            e = orig + eps;
            const auto fp = eval_flat(fn, inputs);
            e = orig - eps;
            const auto fm = eval_flat(fn, inputs);
            e = orig;
            for (int64_t j = 0; j < n_out; ++j) {
                const double num = (fp[size_t(j)] - fm[size_t(j)]) / (2 * eps);
                const double ana = jac[a][size_t(j)][size_t(k)];
                if (!(std::abs(ana - num) <= atol + rtol * std::abs(num))) {
                    std::ostringstream m;
                    m.precision(10);
                    m << "gradcheck: Jacobian mismatch for output element " << j << " of "
                      << shape_str(out.sizes()) << " with respect to element " << k << " of input "
                      << diff[a] << " " << shape_str(x.sizes()) << ": analytical " << ana
                      << ", numerical " << num << " (atol " << atol << ", rtol " << rtol << ")";
                    if (out.grad_fn())
                        m << "; output produced by '" << out.grad_fn()->name() << "'";
                    throw autograd_error(m.str());
                }
            }
        }
    }
    return true;
}

bool gradgradcheck(const Fn& fn, const std::vector<Tensor>& inputs, double eps, double atol,
                   double rtol) {
    check_args("gradgradcheck", fn, eps, atol, rtol);
    const Tensor out0 = fn(inputs);
    std::mt19937_64 gen(1234);
    std::normal_distribution<double> nd;
    std::vector<double> vv(size_t(out0.numel()));
    for (auto& x : vv)
        x = nd(gen);
    const Tensor v = tensor(vv, out0.options()).reshape(out0.sizes());
    const Fn first = [&](const std::vector<Tensor>& xs) {
        AutoGradMode on(
            true);  // gradcheck evaluates under NoGradGuard; the first gradient needs a graph
        std::vector<Tensor> req;
        for (const Tensor& x : xs)
            if (x.requires_grad())
                req.push_back(x);
        const auto g = autograd::grad({fn(xs)}, req, {v}, true, true, true);
        std::vector<Tensor> flat;
        for (size_t i = 0; i < g.size(); ++i)
            flat.push_back((g[i].defined() ? g[i] : zeros_like(req[i])).reshape({-1}));
        return cat(flat, 0);
    };
    return gradcheck(first, inputs, eps, atol, rtol);
}

}  // namespace tg
