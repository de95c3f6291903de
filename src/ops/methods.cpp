// The method spellings of ops.hpp functions, as LibTorch has them (x.sum(1), x.masked_fill(m, 0),
// x += y): each calls the function of the same name.
#include "tapegrad/ops.hpp"

namespace tg {

Tensor Tensor::reshape(Shape s) const {
    return tg::reshape(*this, std::move(s));
}
Tensor Tensor::view(Shape s) const {
    return tg::view(*this, std::move(s));
}
Tensor Tensor::flatten(int64_t s, int64_t e) const {
    return tg::flatten(*this, s, e);
}
Tensor Tensor::unsqueeze(int64_t d) const {
    return tg::unsqueeze(*this, d);
}
Tensor Tensor::expand(Shape s) const {
    return tg::expand(*this, s);
}
Tensor Tensor::t() const {
    return tg::t(*this);
}
Tensor Tensor::transpose(int64_t a, int64_t b) const {
    return tg::transpose(*this, a, b);
}
Tensor Tensor::permute(std::vector<int64_t> d) const {
    return tg::permute(*this, d);
}
Tensor Tensor::narrow(int64_t d, int64_t s, int64_t l) const {
    return tg::narrow(*this, d, s, l);
}
Tensor Tensor::sum() const {
    return tg::sum(*this);
}
Tensor Tensor::sum(std::vector<int64_t> d, bool k) const {
    return tg::sum(*this, d, k);
}
Tensor Tensor::mean() const {
    return tg::mean(*this);
}
Tensor Tensor::mean(std::vector<int64_t> d, bool k) const {
    return tg::mean(*this, d, k);
}
Tensor Tensor::max() const {
    return tg::max(*this);
}
Tensor Tensor::min() const {
    return tg::min(*this);
}
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool k) const {
    return tg::max(*this, d, k);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool k) const {
    return tg::min(*this, d, k);
}
Tensor Tensor::max(const Tensor& o) const {
    return tg::max(*this, o);
}
Tensor Tensor::min(const Tensor& o) const {
    return tg::min(*this, o);
}
Tensor Tensor::amax(std::vector<int64_t> d, bool k) const {
    return tg::amax(*this, d, k);
}
Tensor Tensor::amin(std::vector<int64_t> d, bool k) const {
    return tg::amin(*this, d, k);
}
Tensor Tensor::argmax(std::optional<int64_t> d, bool k) const {
    return tg::argmax(*this, d, k);
}
Tensor Tensor::argmin(std::optional<int64_t> d, bool k) const {
    return tg::argmin(*this, d, k);
}
Tensor Tensor::matmul(const Tensor& o) const {
    return tg::matmul(*this, o);
}
Tensor Tensor::pow(Scalar e) const {
    return tg::pow(*this, e);
}
Tensor Tensor::sqrt() const {
    return tg::sqrt(*this);
}
Tensor Tensor::exp() const {
    return tg::exp(*this);
}
Tensor Tensor::log() const {
    return tg::log(*this);
}
Tensor Tensor::abs() const {
    return tg::abs(*this);
}
Tensor Tensor::tanh() const {
    return tg::tanh(*this);
}
Tensor Tensor::sigmoid() const {
    return tg::sigmoid(*this);
}
Tensor Tensor::relu() const {
    return tg::relu(*this);
}
Tensor Tensor::eq(const Tensor& o) const {
    return tg::eq(*this, o);
}
Tensor Tensor::ne(const Tensor& o) const {
    return tg::ne(*this, o);
}
Tensor Tensor::gt(const Tensor& o) const {
    return tg::gt(*this, o);
}
Tensor Tensor::lt(const Tensor& o) const {
    return tg::lt(*this, o);
}
Tensor Tensor::ge(const Tensor& o) const {
    return tg::ge(*this, o);
}
Tensor Tensor::le(const Tensor& o) const {
    return tg::le(*this, o);
}
Tensor Tensor::eq(Scalar s) const {
    return tg::eq(*this, s);
}
Tensor Tensor::ne(Scalar s) const {
    return tg::ne(*this, s);
}
Tensor Tensor::gt(Scalar s) const {
    return tg::gt(*this, s);
}
Tensor Tensor::lt(Scalar s) const {
    return tg::lt(*this, s);
}
Tensor Tensor::ge(Scalar s) const {
    return tg::ge(*this, s);
}
Tensor Tensor::le(Scalar s) const {
    return tg::le(*this, s);
}
Tensor Tensor::logical_not() const {
    return tg::logical_not(*this);
}
Tensor Tensor::logical_and(const Tensor& o) const {
    return tg::logical_and(*this, o);
}
Tensor Tensor::logical_or(const Tensor& o) const {
    return tg::logical_or(*this, o);
}
Tensor Tensor::logical_xor(const Tensor& o) const {
    return tg::logical_xor(*this, o);
}
Tensor Tensor::any() const {
    return tg::any(*this);
}
Tensor Tensor::any(int64_t dim, bool keepdim) const {
    return tg::any(*this, dim, keepdim);
}
Tensor Tensor::all() const {
    return tg::all(*this);
}
Tensor Tensor::all(int64_t dim, bool keepdim) const {
    return tg::all(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending) const {
    return tg::sort(*this, dim, descending);
}
Tensor Tensor::argsort(int64_t dim, bool descending) const {
    return tg::argsort(*this, dim, descending);
}
Tensor Tensor::argsort(int dim, bool descending) const {
    return tg::argsort(*this, int64_t(dim), descending);
}
Tensor Tensor::argsort(bool stable, int64_t dim, bool descending) const {
    return tg::argsort(*this, stable, dim, descending);
}
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
    return tg::topk(*this, k, dim, largest, sorted);
}
Tensor Tensor::nonzero() const {
    return tg::nonzero(*this);
}
Tensor Tensor::masked_select(const Tensor& mask) const {
    return tg::masked_select(*this, mask);
}

Tensor Tensor::logsumexp(std::vector<int64_t> d, bool k) const {
    return tg::logsumexp(*this, d, k);
}
Tensor Tensor::norm(Scalar p) const {
    return tg::norm(*this, p);
}
Tensor Tensor::norm(Scalar p, std::vector<int64_t> d, bool k) const {
    return tg::norm(*this, p, d, k);
}
Tensor Tensor::mm(const Tensor& o) const {
    return tg::mm(*this, o);
}
Tensor Tensor::bmm(const Tensor& o) const {
    return tg::bmm(*this, o);
}
Tensor Tensor::square() const {
    return tg::square(*this);
}
Tensor Tensor::rsqrt() const {
    return tg::rsqrt(*this);
}
Tensor Tensor::sin() const {
    return tg::sin(*this);
}
Tensor Tensor::cos() const {
    return tg::cos(*this);
}
Tensor Tensor::log1p() const {
    return tg::log1p(*this);
}
Tensor Tensor::expm1() const {
    return tg::expm1(*this);
}
Tensor Tensor::floor() const {
    return tg::floor(*this);
}
Tensor Tensor::ceil() const {
    return tg::ceil(*this);
}
Tensor Tensor::round() const {
    return tg::round(*this);
}
Tensor Tensor::sign() const {
    return tg::sign(*this);
}
Tensor Tensor::expand_as(const Tensor& o) const {
    return tg::expand_as(*this, o);
}
Tensor Tensor::view_as(const Tensor& o) const {
    return tg::view_as(*this, o);
}
Tensor Tensor::reshape_as(const Tensor& o) const {
    return tg::reshape_as(*this, o);
}
Tensor Tensor::type_as(const Tensor& o) const {
    return tg::type_as(*this, o);
}
Tensor Tensor::masked_fill(const Tensor& mask, Scalar v) const {
    return tg::masked_fill(*this, mask, v);
}
Tensor Tensor::triu(int64_t diagonal) const {
    return tg::triu(*this, diagonal);
}
Tensor Tensor::tril(int64_t diagonal) const {
    return tg::tril(*this, diagonal);
}

// ---- compound assignment: the in-place ops (recorded and version-checked like add_)
Tensor& operator+=(Tensor& a, const Tensor& b) {
    return a.add_(b);
}
Tensor& operator+=(Tensor& a, Scalar s) {
    return a.add_(s);
}
Tensor& operator-=(Tensor& a, const Tensor& b) {
    return a.sub_(b);
}
Tensor& operator-=(Tensor& a, Scalar s) {
    return a.add_(-s);
}
Tensor& operator*=(Tensor& a, const Tensor& b) {
    return a.mul_(b);
}
Tensor& operator*=(Tensor& a, Scalar s) {
    return a.mul_(s);
}
Tensor& operator/=(Tensor& a, const Tensor& b) {
    return a.div_(b);
}
Tensor& operator/=(Tensor& a, Scalar s) {
    return a.div_(s);
}

Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi) const {
    return tg::clamp(*this, lo, hi);
}
Tensor Tensor::clamp_min(Scalar lo) const {
    return tg::clamp_min(*this, lo);
}
Tensor Tensor::clamp_max(Scalar hi) const {
    return tg::clamp_max(*this, hi);
}
Tensor Tensor::var(int dim) const {
    return tg::var(*this, dim);
}
Tensor Tensor::var(bool unbiased) const {
    return tg::var(*this, unbiased);
}
Tensor Tensor::var(std::vector<int64_t> dims, bool unbiased, bool keepdim) const {
    return tg::var(*this, dims, unbiased, keepdim);
}
Tensor Tensor::var(std::initializer_list<int64_t> dims, bool unbiased, bool keepdim) const {
    return tg::var(*this, std::vector<int64_t>(dims), unbiased, keepdim);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
    return tg::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
    return tg::gather(*this, dim, index);
}
Tensor Tensor::pow(const Tensor& e) const {
    return tg::pow(*this, e);
}
Tensor Tensor::remainder(const Tensor& b) const {
    return tg::remainder(*this, b);
}
Tensor Tensor::remainder(Scalar b) const {
    return tg::remainder(*this, b);
}
Tensor Tensor::fmod(const Tensor& b) const {
    return tg::fmod(*this, b);
}
Tensor Tensor::fmod(Scalar b) const {
    return tg::fmod(*this, b);
}

}  // namespace tg
