// multinomial (tapegrad/factories.hpp): LibTorch 1.13's CPU multinomial, draw for draw.
//
// Note [multinomial's two draws]: LibTorch 1.13 samples one way without replacement and another
// with replacement (even for one sample):
//   - the first is the Gumbel-max trick in its exponential form: q = exponential_(1) of a tensor
//     like probs (LibTorch's empty_like: probs' strides when probs is dense, so the draws go in
//     its memory order, else index order), then the top num_samples of probs / q along the last
//     dim as LibTorch's topk selects them (argmax for one sample), p / q computed in probs'
//     dtype. Values are drawn and selected on the host for every device.
//   - the second searches each row's cumulative sums (summed and normalised in probs' dtype,
//     the last set to 1) for one 53-bit uniform per sample, row after row
//     (detail::multinomial_replacement).
// Every probability is checked before anything is drawn; LibTorch's second way checks a row
// just before drawing for it, so after a bad row it has drawn for the rows above it.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/distributions.hpp"
#include "core/random.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/random_fill.hpp"
#include "tapegrad/autograd.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {

/// Whether t's elements fill its memory without gaps or overlaps (so LibTorch's empty_like
/// keeps its strides).
bool dense(const Tensor& t) {
    std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims of size > 1
    for (size_t d = 0; d < t.sizes().size(); ++d)
        if (t.sizes()[d] > 1)
            dims.emplace_back(t.strides()[d], t.sizes()[d]);
    std::sort(dims.begin(), dims.end());
    int64_t expected = 1;
    for (const auto& [stride, size] : dims) {
        if (stride != expected)
            return false;
        expected *= size;
    }
    return true;
}

void check_probs(const Tensor& probs, int64_t num_samples, bool replacement) {
    const std::string where = "multinomial: probs " + shape_str(probs.sizes());
    if (probs.dim() < 1 || probs.dim() > 2)
        throw shape_error(where + ": need 1-D or 2-D probabilities");
    if (!is_floating(probs.dtype()) || is_reduced_floating(probs.dtype()))
        throw dtype_error(where + " " + dtype_name(probs.dtype()) +
                          ": need float32 or float64 probabilities");
    if (num_samples <= 0)
        throw value_error(where + ": num_samples " + std::to_string(num_samples) +
                          " must be positive");
    const int64_t cats = probs.sizes().back();
    if (!replacement && num_samples > cats)
        throw value_error(where + ": cannot draw " + std::to_string(num_samples) + " of " +
                          std::to_string(cats) + " categories without replacement");
    if (cats > (int64_t(1) << 24))
        throw value_error(where + ": more than 2^24 categories");
}

/// value_error for a negative, NaN or infinite weight or a row of zeros (w: rows × cats).
void check_weights(const std::vector<double>& w, int64_t rows, int64_t cats, const Shape& s) {
    for (int64_t r = 0; r < rows; ++r) {
        bool positive = false;
        for (int64_t j = 0; j < cats; ++j) {
            const double v = w[size_t(r * cats + j)];
            if (!(v >= 0) || std::isinf(v))
                throw value_error("multinomial: probs " + shape_str(s) + ": weight " +
                                  runtime::scalar_str(v) + " at [" +
                                  (s.size() == 2 ? std::to_string(r) + ", " : std::string()) +
                                  std::to_string(j) + "] is negative, infinite or NaN");
            positive = positive || v > 0;
        }
        if (!positive)
            throw value_error("multinomial: probs " + shape_str(s) + ": row " + std::to_string(r) +
                              " has no positive weight");
    }
}

/// The indices of the k largest of v[0..n) in LibTorch 1.13's CPU topk order (the first for
/// k = 1, as argmax): its (value, index) pairs selected with std::partial_sort when 64·k <= n,
/// else std::nth_element and std::sort of the first k - 1, comparing values only, so that
/// equal values (the zero-weight categories when k exceeds the positive ones) come in the
/// order the standard library leaves them, as in LibTorch built with the same library.
void top(const double* v, int64_t n, int64_t k, int64_t* out) {
    if (k == 1) {
        out[0] = std::max_element(v, v + n) - v;
        return;
    }
    std::vector<std::pair<double, int64_t>> queue(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
        queue[size_t(j)] = {v[j], j};
    const auto greater = [](const std::pair<double, int64_t>& a,
                            const std::pair<double, int64_t>& b) { return a.first > b.first; };
    if (k * 64 <= n) {
        std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), greater);
    } else {
        std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), greater);
        std::sort(queue.begin(), queue.begin() + k - 1, greater);
    }
    for (int64_t j = 0; j < k; ++j)
        out[j] = queue[size_t(j)].second;
}

Tensor draw(const Tensor& probs, int64_t num_samples, bool replacement, const Generator* g) {
    if (!probs.defined())
        throw value_error("multinomial: undefined probabilities");
    check_probs(probs, num_samples, replacement);
    NoGradGuard no_grad;
    const Tensor p = probs.detach();
    const int64_t cats = p.sizes().back(), rows = p.dim() == 2 ? p.sizes()[0] : 1;
    const Shape out_shape = p.dim() == 2 ? Shape{rows, num_samples} : Shape{num_samples};
    if (rows == 0)
        return empty(out_shape, TensorOptions(kInt64).device(p.device()));
    const std::vector<double> w = p.to(kFloat64).contiguous().to_vector<double>();
    check_weights(w, rows, cats, p.sizes());
    const Dtype d = p.dtype();
    std::vector<int64_t> out(size_t(rows * num_samples));
    if (!replacement) {
        Tensor q = runtime::empty(p.sizes(), d, Device(kCPU), "multinomial");
        runtime::fill_random(
            q, g,
            [d](void* dst, int64_t n, bool, detail::Engine& e) {
                detail::exponential(dst, d, n, 1, e);
            },
            "multinomial", dense(p) ? &p : nullptr);
        std::vector<double> v = q.to_vector<double>();
        for (size_t k = 0; k < v.size(); ++k)  // p / q in p's dtype
            v[k] = d == kFloat32 ? double(float(w[k]) / float(v[k])) : w[k] / v[k];
        for (int64_t r = 0; r < rows; ++r)
            top(v.data() + r * cats, cats, num_samples, out.data() + r * num_samples);
        return tensor(out).reshape(out_shape).to(p.device());
    }
    {
        detail::Draw drawing(g);
        if (d == kFloat32) {
            const std::vector<float> wf(w.begin(), w.end());
            detail::multinomial_replacement(out.data(), wf.data(), d, rows, cats, num_samples,
                                            drawing.engine());
        } else {
            detail::multinomial_replacement(out.data(), w.data(), d, rows, cats, num_samples,
                                            drawing.engine());
        }
    }
    return tensor(out).reshape(out_shape).to(p.device());
}

}  // namespace

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
    return draw(probs, num_samples, replacement, nullptr);
}
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, const Generator& g) {
    return draw(probs, num_samples, replacement, &g);
}

namespace detail {

Tensor TensorMethods::multinomial(int64_t num_samples, bool replacement) const {
    return tg::multinomial(self(), num_samples, replacement);
}
Tensor TensorMethods::multinomial(int64_t num_samples, bool replacement, const Generator& g) const {
    return tg::multinomial(self(), num_samples, replacement, g);
}

}  // namespace detail

}  // namespace tg
