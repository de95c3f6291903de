/// The fused CPU kernels of batch_norm, group_norm, layer_norm, rms_norm and dropout (Note
/// [Fused normalisation kernels] in src/backend/cpu/norm_kernels.cpp) against the composed
/// versions: the forward against the formula written with tapegrad's ops, the gradients without
/// create_graph (the fused backward) against those with create_graph (the composed backward,
/// recorded), float64 to 1e-12 and float32 to 1e-6; the same bits at 1 and 2 threads; dropout's
/// mask kept as bits equal to the mask bernoulli_ draws.
#define BOOST_TEST_MODULE test_norm_fused
#include <boost/test/unit_test.hpp>
#include <functional>
#include <vector>

#include "tapegrad/tapegrad.hpp"
#include "test_util.hpp"

using tg::Tensor;
using tgtest::check_close;
using tgtest::wave;

namespace {

double tol(tg::Dtype d) {
    return d == tg::kFloat64 ? 1e-12 : 1e-6;
}

/// The output and the gradients of {x, w, b} for f(x, w, b) weighted by dy, without and with
/// create_graph.
struct Run {
    Tensor y;
    std::vector<Tensor> fused, composed;
};
Run run(const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& f,
        const Tensor& x0, const Tensor& w0, const Tensor& b0) {
    Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(),
           b = b0.clone().requires_grad_();
    Run r;
    r.y = f(x, w, b);
    const Tensor dy = wave(r.y.sizes(), 0.7, 0.3).to(x0.dtype());
    r.fused = tg::autograd::grad({r.y}, {x, w, b}, {dy}, true);
    r.composed = tg::autograd::grad({r.y}, {x, w, b}, {dy}, false, true);
    return r;
}

/// Checks the fused gradients against the composed ones, and the output against `ref`.
void check_run(const Run& r, const Tensor& ref, tg::Dtype d) {
    check_close(r.y, ref, tol(d), tol(d));
    for (size_t i = 0; i < 3; ++i)
        BOOST_TEST_CONTEXT("input " << i) {
            check_close(r.fused[i], r.composed[i].detach(), tol(d), tol(d));
        }
}

/// x normalised over `dims` (biased variance), in tapegrad's ops.
Tensor normalised(const Tensor& x, const std::vector<int64_t>& dims, double eps) {
    const Tensor xc = x - tg::mean(x, dims, true);
    return xc * tg::rsqrt(tg::mean(xc * xc, dims, true) + eps);
}

/// Runs the check at 1 and 2 threads and requires the same bits from both.
void at_thread_counts(const std::function<std::vector<Tensor>()>& f) {
    const int before = tg::get_num_threads();
    tg::set_num_threads(1);
    const std::vector<Tensor> one = f();
    tg::set_num_threads(2);
    const std::vector<Tensor> two = f();
    tg::set_num_threads(before);
    for (size_t i = 0; i < one.size(); ++i)
        BOOST_TEST(one[i].equal(two[i]));
}

const tg::Dtype kDtypes[] = {tg::kFloat64, tg::kFloat32};

}  // namespace

BOOST_AUTO_TEST_CASE(batch_norm_training_matches_the_composed_path) {
    for (tg::Dtype d : kDtypes)
        BOOST_TEST_CONTEXT(tg::dtype_name(d)) {
            at_thread_counts([&] {
                const Tensor x = wave({8, 16, 24, 24}, 2.0, 0.1).to(d) + 3.0;  // 73728 values
                const Tensor w = wave({16}, 1.0, 0.2).to(d), b = wave({16}, 1.0, 0.9).to(d);
                Tensor rm = tg::zeros({16}, d), rv = tg::ones({16}, d);
                const Run r = run(
                    [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
                        return tg::batch_norm(xx, ww, bb, rm, rv, true, 0.1, 1e-5, false);
                    },
                    x, w, b);
                const Tensor ref = normalised(x, {0, 2, 3}, 1e-5) * w.reshape({1, 16, 1, 1}) +
                                   b.reshape({1, 16, 1, 1});
                check_run(r, ref, d);
                // the running statistics: one update from this batch (unbiased variance)
                check_close(rm, tg::mean(x, {0, 2, 3}) * 0.1, tol(d), tol(d));
                check_close(rv, tg::var(x, {0, 2, 3}) * 0.1 + 0.9, tol(d), tol(d));
                return std::vector<Tensor>{r.y, r.fused[0], r.fused[1], r.fused[2], rm, rv};
            });
        }
}

BOOST_AUTO_TEST_CASE(batch_norm_eval_and_group_norm_match_the_composed_path) {
    for (tg::Dtype d : kDtypes)
        BOOST_TEST_CONTEXT(tg::dtype_name(d)) {
            const Tensor x = wave({6, 12, 20, 15}, 2.0, 0.4).to(d) - 1.0;
            const Tensor w = wave({12}, 1.0, 0.2).to(d), b = wave({12}, 1.0, 0.9).to(d);
            const Tensor rm = wave({12}, 0.5, 0.3).to(d), rv = wave({12}, 0.5, 0.6).to(d) + 1.0;
            const Run e = run(
                [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
                    return tg::batch_norm(xx, ww, bb, rm, rv, false, 0.1, 1e-5, false);
                },
                x, w, b);
            const tg::Shape c{1, 12, 1, 1};
            check_run(
                e,
                (x - rm.reshape(c)) * tg::rsqrt(rv.reshape(c) + 1e-5) * w.reshape(c) + b.reshape(c),
                d);
            const Run g =
                run([&](const Tensor& xx, const Tensor& ww,
                        const Tensor& bb) { return tg::group_norm(xx, 3, ww, bb, 1e-5, false); },
                    x, w, b);
            const Tensor ref =
                normalised(x.reshape({6, 3, 4 * 20 * 15}), {2}, 1e-5).reshape(x.sizes()) *
                    w.reshape(c) +
                b.reshape(c);
            check_run(g, ref, d);
        }
}

BOOST_AUTO_TEST_CASE(layer_norm_and_rms_norm_match_the_composed_path) {
    for (tg::Dtype d : kDtypes)
        BOOST_TEST_CONTEXT(tg::dtype_name(d)) {
            at_thread_counts([&] {
                const Tensor x = wave({300, 257}, 2.0, 0.1).to(d) + 0.5;  // 77100 values
                const Tensor w = wave({257}, 1.0, 0.2).to(d), b = wave({257}, 1.0, 0.9).to(d);
                const Run l = run(
                    [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
                        return tg::layer_norm(xx, {257}, ww, bb, 1e-5, false);
                    },
                    x, w, b);
                check_run(l, normalised(x, {1}, 1e-5) * w + b, d);
                const Run r =
                    run([&](const Tensor& xx, const Tensor& ww,
                            const Tensor& bb) { return tg::rms_norm(xx, {257}, ww, 1e-6) + bb; },
                        x, w, b);
                check_run(r, x * tg::rsqrt(tg::mean(x * x, {1}, true) + 1e-6) * w + b, d);
                return std::vector<Tensor>{l.y, l.fused[0], l.fused[1], l.fused[2],
                                           r.y, r.fused[0], r.fused[1]};
            });
        }
}

BOOST_AUTO_TEST_CASE(dropout_mask_bits_are_bernoulli_draws_at_any_thread_count) {
    for (tg::Dtype d : kDtypes)
        BOOST_TEST_CONTEXT(tg::dtype_name(d)) {
            at_thread_counts([&] {
                const Tensor x0 = wave({257, 301}, 2.0, 0.1).to(d);
                Tensor x = x0.clone().requires_grad_();
                tg::manual_seed(7);
                const Tensor y = tg::dropout(x, 0.3, true);
                // LibTorch's mask: bernoulli_(1 - p) in x's dtype, times 1 / (1 - p) in it
                tg::manual_seed(7);
                Tensor draws = tg::empty_like(x0);
                draws.bernoulli_(0.7);
                const Tensor ref_mask =
                    draws * tg::full({1}, d == tg::kFloat32 ? double(1.0f / float(0.7)) : 1 / 0.7,
                                     tg::TensorOptions().dtype(d));
                BOOST_TEST(y.equal(x0 * ref_mask));
                const Tensor dy = wave(x0.sizes(), 0.7, 0.3).to(d);
                const Tensor dx = tg::autograd::grad({y}, {x}, {dy}, true)[0];
                BOOST_TEST(dx.equal(dy * ref_mask));
                const Tensor dxc = tg::autograd::grad({y}, {x}, {dy}, false, true)[0];
                BOOST_TEST(dxc.equal(dx));
                return std::vector<Tensor>{y, dx};
            });
        }
}
