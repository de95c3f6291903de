// ctc_loss: the connectionist temporal classification loss, the forward algorithm of LibTorch
// 1.13's CPU kernel in log space written with tensor ops over [N, 2S+1] a time step at a time (so
// it runs on every device), one node whose backward is that kernel's backward algorithm.
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/record.hpp"
#include "ops/once_differentiable.hpp"
#include "runtime/dispatch.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string shape_of(const Tensor& t) {
    return t.defined() ? shape_str(t.sizes()) : "undefined";
}

/// The extended label sequences l' of a batch (blank, l1, blank, l2, ..., blank) and what the
/// recursions need of them, built on the host.
struct Lattice {
    int64_t T = 0, N = 0, C = 0, S = 0;  // S = 2·max target length + 1
    std::vector<int64_t> il, tl;
    Tensor labels;     // int64 [N,S]: l'(s) (blank past 2·tl)
    Tensor skip;       // bool [N,S]: s may be reached from s - 2 (a label unlike l'(s - 2))
    Tensor first;      // bool [N,S]: the states alpha starts in (s = 0, and s = 1 if tl > 0)
    Tensor last;       // bool [N,S]: the states beta starts in (s = 2·tl, and 2·tl - 1 if tl > 0)
    Tensor last_pick;  // int64 [N,2]: the flat indices in [T·N·S] of alpha at t = il - 1, s = 2·tl
                       // and 2·tl - 1 (the first again when tl = 0)
    Tensor end_two;  // bool [N]: tl > 0
};

Lattice lattice(const Tensor& lp, const Tensor& targets, IntArrayRef il, IntArrayRef tl,
                int64_t blank) {
    const char* op = "ctc_loss";
    Lattice L;
    L.T = lp.size(0);
    L.N = lp.size(1);
    L.C = lp.size(2);
    if (int64_t(il.size()) != L.N || int64_t(tl.size()) != L.N)
        throw shape_error(std::string(op) + ": log_probs " + shape_of(lp) + " has batch " +
                          std::to_string(L.N) + ", input_lengths has " + std::to_string(il.size()) +
                          " and target_lengths " + std::to_string(tl.size()) + " entries");
    if (blank < 0 || blank >= L.C)
        throw value_error(std::string(op) + ": blank " + std::to_string(blank) +
                          " is not a class of log_probs " + shape_of(lp));
    int64_t smax = 0, total = 0;
    for (int64_t n = 0; n < L.N; ++n) {
        if (il[size_t(n)] < 1 || il[size_t(n)] > L.T)
            throw value_error(std::string(op) + ": input_lengths[" + std::to_string(n) +
                              "] = " + std::to_string(il[size_t(n)]) + " is not in [1, " +
                              std::to_string(L.T) + "] for log_probs " + shape_of(lp));
        if (tl[size_t(n)] < 0)
            throw value_error(std::string(op) + ": target_lengths[" + std::to_string(n) +
                              "] = " + std::to_string(tl[size_t(n)]) + " is negative");
        smax = std::max(smax, tl[size_t(n)]);
        total += tl[size_t(n)];
    }
    if (is_floating(targets.dtype()) || targets.dtype() == kBool)
        throw dtype_error(std::string(op) + ": targets must be integers, got " +
                          dtype_name(targets.dtype()) + " " + shape_of(targets));
    const std::vector<int64_t> tv = targets.to(kInt64).to(kCPU).contiguous().to_vector<int64_t>();
    const bool padded = targets.dim() == 2;
    if (padded ? (targets.size(0) != L.N || targets.size(1) < smax)
               : (targets.dim() != 1 || targets.numel() < total))
        throw shape_error(std::string(op) + ": targets " + shape_of(targets) +
                          " do not hold the target lengths (" + std::to_string(L.N) +
                          " samples, the longest " + std::to_string(smax) + ", " +
                          std::to_string(total) + " in all)");
    L.il.assign(il.begin(), il.end());
    L.tl.assign(tl.begin(), tl.end());
    L.S = 2 * smax + 1;
    const int64_t N = L.N, S = L.S;
    std::vector<int64_t> lab(size_t(N * S), blank), pick(size_t(N * 2));
    std::vector<uint8_t> skip(size_t(N * S), 0), first(size_t(N * S), 0), last(size_t(N * S), 0),
        two(size_t(N), 0);
    int64_t offset = 0;
    for (int64_t n = 0; n < N; ++n) {
        const int64_t len = tl[size_t(n)];
        const int64_t base = padded ? n * targets.size(1) : offset;
        offset += len;
        for (int64_t k = 0; k < len; ++k) {
            const int64_t y = tv[size_t(base + k)];
            if (y < 0 || y >= L.C)
                throw value_error(std::string(op) + ": target " + std::to_string(y) +
                                  " of sample " + std::to_string(n) + " is not a class of " +
                                  "log_probs " + shape_of(lp));
            lab[size_t(n * S + 2 * k + 1)] = y;
        }
        for (int64_t s = 2; s <= 2 * len; ++s)
            skip[size_t(n * S + s)] = lab[size_t(n * S + s)] != blank &&
                                      lab[size_t(n * S + s)] != lab[size_t(n * S + s - 2)];
        first[size_t(n * S)] = 1;
        last[size_t(n * S + 2 * len)] = 1;
        if (len > 0) {
            first[size_t(n * S + 1)] = 1;
            last[size_t(n * S + 2 * len - 1)] = 1;
            two[size_t(n)] = 1;
        }
        const int64_t row = ((il[size_t(n)] - 1) * N + n) * S;
        pick[size_t(2 * n)] = row + 2 * len;
        pick[size_t(2 * n + 1)] = row + (len > 0 ? 2 * len - 1 : 2 * len);
    }
    const Device d = lp.device();
    auto mask = [&](const std::vector<uint8_t>& v, Shape s) {
        std::vector<int64_t> w(v.begin(), v.end());
        return ne(tensor(w).reshape(s), 0.0).to(d);
    };
    L.labels = tensor(lab).reshape({N, S}).to(d);
    L.skip = mask(skip, {N, S});
    L.first = mask(first, {N, S});
    L.last = mask(last, {N, S});
    L.end_two = mask(two, {N});
    L.last_pick = tensor(pick).reshape({N, 2}).to(d);
    return L;
}

/// x shifted right by k along dim 1, -inf filling in: out[:, s] = x[:, s - k].
Tensor shift_right(const Tensor& x, int64_t k, const Tensor& neg) {
    const int64_t S = x.size(1);
    if (k >= S)
        return neg.expand(x.sizes()).contiguous();
    return cat({neg.expand({x.size(0), k}), narrow(x, 1, 0, S - k)}, 1);
}
/// out[:, s] = x[:, s + k], -inf past the end.
Tensor shift_left(const Tensor& x, int64_t k, const Tensor& neg) {
    const int64_t S = x.size(1);
    if (k >= S)
        return neg.expand(x.sizes()).contiguous();
    return cat({narrow(x, 1, k, S - k), neg.expand({x.size(0), k})}, 1);
}
/// log(e^a + e^b + e^c) as LibTorch's kernel computes it: shifted by the max, 0 when all -inf.
Tensor log_add3(const Tensor& a, const Tensor& b, const Tensor& c) {
    Tensor m = maximum(maximum(a, b), c);
    m = where(eq(m, -kInf), zeros({}, m.options()), m);
    return log(exp(a - m) + exp(b - m) + exp(c - m)) + m;
}

/// The negative log likelihood of each sample [N] (LibTorch's _ctc_loss), and log alpha
/// [T,N,S] for the backward.
std::pair<Tensor, Tensor> forward_alpha(const Tensor& lp, const Lattice& L, const Tensor& lpg) {
    const Tensor neg = full({}, -kInf, lp.options());
    std::vector<Tensor> alphas;
    alphas.reserve(size_t(L.T));
    Tensor a = where(L.first, lpg[0], neg);
    alphas.push_back(a);
    for (int64_t t = 1; t < L.T; ++t) {
        const Tensor a2 = where(L.skip, shift_right(a, 2, neg), neg);
        a = log_add3(a, shift_right(a, 1, neg), a2) + lpg[t];
        alphas.push_back(a);
    }
    const Tensor alpha = stack(alphas, 0);  // [T,N,S]
    const Tensor ends =
        index_select(alpha.reshape({L.T * L.N * L.S}), 0, L.last_pick.reshape({2 * L.N}))
            .reshape({L.N, 2});
    const Tensor l1 = narrow(ends, 1, 0, 1).squeeze(1);
    const Tensor l2 = where(L.end_two, narrow(ends, 1, 1, 1).squeeze(1), neg);
    Tensor m = maximum(l1, l2);
    m = where(eq(m, -kInf), zeros({}, m.options()), m);
    return {-(log(exp(l1 - m) + exp(l2 - m)) + m), alpha};
}

/// LibTorch's backward: beta by the backward recursion from t = il - 1, the occupancy of each
/// class γ[t,n,c] = Σ_{s: l'(s) = c} e^(alpha + beta + nll - lp[l'(s)]), and
/// dlp = (e^lp - γ)·dy for t < il (0 after; 0 for a sample whose loss is infinite under
/// zero_infinity, NaN for every class of one without, as LibTorch's).
Tensor backward_beta(const Tensor& lp, const Lattice& L, const Tensor& lpg, const Tensor& alpha,
                     const Tensor& nll, const Tensor& dy, bool zero_infinity) {
    const int64_t T = L.T, N = L.N, S = L.S;
    const Tensor neg = full({}, -kInf, lp.options());
    const Tensor skip_next = shift_left(L.skip.to(kInt64), 2, zeros({}, kInt64).to(lp.device()));
    const Tensor skip2 = ne(skip_next, 0.0);
    const Tensor labels_t = L.labels.unsqueeze(0).expand({T, N, S}).contiguous();
    std::vector<Tensor> betas(static_cast<size_t>(T));
    Tensor b;
    for (int64_t t = T - 1; t >= 0; --t) {
        std::vector<int64_t> start(static_cast<size_t>(N)), active(static_cast<size_t>(N));
        for (int64_t n = 0; n < N; ++n) {
            start[size_t(n)] = t == L.il[size_t(n)] - 1;
            active[size_t(n)] = t < L.il[size_t(n)] - 1;
        }
        const Tensor st = ne(tensor(start).reshape({N, 1}).to(lp.device()), 0.0);
        const Tensor ac = ne(tensor(active).reshape({N, 1}).to(lp.device()), 0.0);
        Tensor rec = neg.expand({N, S});
        if (b.defined()) {
            const Tensor b3 = where(skip2, shift_left(b, 2, neg), neg);
            rec = log_add3(b, shift_left(b, 1, neg), b3) + lpg[t];
        }
        b = where(st, where(L.last, lpg[t], neg), where(ac, rec, neg));
        betas[size_t(t)] = b;
    }
    const Tensor beta = stack(betas, 0);
    const Tensor nll_b = nll.reshape({1, N, 1});
    const Tensor occ = exp(alpha + beta + nll_b - lpg);
    const Tensor gamma = scatter_add(occ, lp.sizes(), 2, labels_t);
    std::vector<int64_t> live(static_cast<size_t>(T * N));
    for (int64_t t = 0; t < T; ++t)
        for (int64_t n = 0; n < N; ++n)
            live[size_t(t * N + n)] = t < L.il[size_t(n)];
    const Tensor in_time = ne(tensor(live).reshape({T, N, 1}).to(lp.device()), 0.0);
    Tensor g = (exp(lp) - gamma) * dy.reshape({1, N, 1});
    const Tensor inf = eq(nll_b, kInf);
    g = where(inf, full({}, zero_infinity ? 0.0 : std::nan(""), g.options()), g);
    return where(in_time, g, zeros({}, g.options()));
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                IntArrayRef target_lengths, int64_t blank, Reduction r, bool zero_infinity) {
    const char* op = "ctc_loss";
    if (!log_probs.defined() || !targets.defined())
        throw value_error(std::string(op) + ": undefined log_probs or targets");
    runtime::check_floating(op, log_probs);
    if (log_probs.dim() != 2 && log_probs.dim() != 3)
        throw shape_error(std::string(op) + ": log_probs must be [T,N,C] or [T,C], got " +
                          shape_of(log_probs));
    if (targets.device() != log_probs.device())
        throw device_error(std::string(op) + ": log_probs on " + log_probs.device().str() +
                           ", targets on " + targets.device().str());
    const bool batched = log_probs.dim() == 3;
    const Tensor lp = batched ? log_probs : log_probs.unsqueeze(1);
    const Lattice L = lattice(lp, targets, input_lengths, target_lengths, blank);
    Tensor nll, alpha, lpg;
    {
        NoGradGuard g;
        const Tensor lpd = lp.detach();
        lpg = gather(lpd, 2, L.labels.unsqueeze(0).expand({L.T, L.N, L.S}).contiguous());
        std::tie(nll, alpha) = forward_alpha(lpd, L, lpg);
    }
    if (should_record({&lp}))
        record(
            "ctc_loss", {&lp}, nll,
            [sx = save(lp), L, salpha = save_intermediate(alpha), slpg = save_intermediate(lpg),
             snll = save_output(nll), zero_infinity](const Tensor& dy) {
                const Tensor x = sx.get();
                Tensor dx;
                {
                    NoGradGuard g;
                    dx = backward_beta(x.detach(), L, slpg.get(), salpha.get(), snll.get(),
                                       dy.detach(), zero_infinity);
                }
                return Grads{ops_detail::once_differentiable("ctc_loss_backward", dx, {&x, &dy})};
            });
    Tensor res = nll;
    if (zero_infinity)
        res = where(eq(res, kInf), zeros({}, res.options()), res);
    if (r == Reduction::Mean) {
        std::vector<double> lens(L.tl.begin(), L.tl.end());
        for (double& v : lens)
            v = std::max(v, 1.0);
        const Tensor div = tensor(lens, TensorOptions(kFloat64)).to(res.dtype()).to(res.device());
        return mean(res / div);
    }
    if (r == Reduction::Sum)
        return sum(res);
    return batched ? res : res.squeeze(0);
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction r, bool zero_infinity) {
    for (const Tensor* t : {&input_lengths, &target_lengths})
        if (!t->defined() || is_floating(t->dtype()) || t->dtype() == kBool)
            throw dtype_error("ctc_loss: input_lengths and target_lengths must be integers, got " +
                              (t->defined()
                                   ? std::string(dtype_name(t->dtype())) + " " + shape_of(*t)
                                   : std::string("undefined")));
    const std::vector<int64_t> il =
        input_lengths.to(kInt64).to(kCPU).contiguous().reshape({-1}).to_vector<int64_t>();
    const std::vector<int64_t> tl =
        target_lengths.to(kInt64).to(kCPU).contiguous().reshape({-1}).to_vector<int64_t>();
    return ctc_loss(log_probs, targets, il, tl, blank, r, zero_infinity);
}

}  // namespace tg
