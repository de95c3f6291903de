// einsum (tapegrad/numeric_ops.hpp), lowered to existing ops as LibTorch lowers it, so it is
// differentiable (to any order) on every backend with no kernel of its own.
//
// Note [Lowering einsum]: each operand's repeated labels become diagonals (index_select of the
// flattened pair of dims); each operand is then permuted and reshaped onto one label order, the
// output's labels first, size 1 where it lacks a label. Operands are folded left to right; a
// label is summed at the first fold after which no operand uses it: summed straight out of the
// side that has it alone, else contracted by one bmm over [batch, left, summed] x [batch,
// summed, right]. The output is the folded tensor summed over the non-output labels.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "autograd/record.hpp"
#include "tapegrad/ops.hpp"

namespace tg {

namespace {
constexpr int kLetters = 52;  // 'A'-'Z' then 'a'-'z' (the implicit output's order)

int letter_id(char c, const std::string& eq) {
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return 26 + (c - 'a');
    throw value_error("einsum: invalid subscript '" + std::string(1, c) + "' in \"" + eq +
                      "\" (letters, ',', '->' and '...' only)");
}

/// The labels of one term: letters as 0..51, the dims an ellipsis covers as kLetters + j,
/// right-aligned over the widest ellipsis (width `ell`), so broadcast ellipsis dims share labels.
struct Term {
    std::vector<int> letters;  // in order; -1 marks where the ellipsis is
    bool has_ellipsis = false;
};

Term parse_term(const std::string& t, const std::string& eq) {
    Term r;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '.') {
            if (r.has_ellipsis || t.compare(i, 3, "...") != 0)
                throw value_error("einsum: a bad ellipsis in \"" + eq + "\"");
            r.has_ellipsis = true;
            r.letters.push_back(-1);
            i += 2;
        } else {
            r.letters.push_back(letter_id(t[i], eq));
        }
    }
    return r;
}

/// The term's labels for a tensor of `ndim` dims whose ellipsis spans ndim - letters dims.
std::vector<int> labels_of(const Term& t, int64_t ndim, int64_t ell, const std::string& eq,
                           const Shape& shape) {
    const int64_t nl = int64_t(t.letters.size()) - (t.has_ellipsis ? 1 : 0);
    const int64_t span = ndim - nl;
    if (span < 0 || (!t.has_ellipsis && span != 0))
        throw shape_error("einsum: \"" + eq + "\" gives " + std::to_string(nl) +
                          " subscripts to an operand of shape " + shape_str(shape));
    std::vector<int> r;
    for (int l : t.letters) {
        if (l >= 0) {
            r.push_back(l);
            continue;
        }
        for (int64_t j = 0; j < span; ++j)
            r.push_back(kLetters + int(ell - span + j));
    }
    return r;
}

/// x's diagonal over dims p < q (equal sizes), kept at p.
Tensor diagonal_of(const Tensor& x, int64_t p, int64_t q, const std::string& eq) {
    const int64_t n = x.size(p);
    if (x.size(q) != n)
        throw shape_error("einsum: \"" + eq + "\" repeats a subscript over dims of sizes " +
                          std::to_string(n) + " and " + std::to_string(x.size(q)) + " in " +
                          shape_str(x.sizes()));
    Tensor m = movedim(x, {p, q}, {x.dim() - 2, x.dim() - 1});
    Shape s = m.sizes();
    s.pop_back();
    s.back() = n * n;
    const Tensor at = arange(n, TensorOptions(kInt64).device(x.device())) * (n + 1);
    return movedim(index_select(m.reshape(s), m.dim() - 2, at), m.dim() - 2, p);
}

/// a·b over aligned tensors (one dim per label), summing the dims where sum_here is set.
Tensor contract(Tensor a, Tensor b, const std::vector<bool>& sum_here, const std::string& eq) {
    const int64_t L = a.dim();
    std::vector<int64_t> batch, lo, ro, sm;
    for (int64_t i = 0; i < L; ++i) {
        if (sum_here[size_t(i)] && b.size(i) == 1 && a.size(i) != 1)
            a = sum(a, {i}, true);
        else if (sum_here[size_t(i)] && a.size(i) == 1 && b.size(i) != 1)
            b = sum(b, {i}, true);
        const int64_t sa = a.size(i), sb = b.size(i);
        if (sa != 1 && sb != 1 && sa != sb)
            throw shape_error("einsum: \"" + eq + "\": a subscript has sizes " +
                              std::to_string(sa) + " and " + std::to_string(sb) + " in operands " +
                              shape_str(a.sizes()) + " and " + shape_str(b.sizes()));
        (sa != 1 && sb != 1 ? (sum_here[size_t(i)] ? sm : batch) : sb != 1 ? ro : lo).push_back(i);
    }
    const auto size_of = [](const Tensor& t, const std::vector<int64_t>& dims) {
        int64_t n = 1;
        for (int64_t d : dims)
            n *= t.size(d);
        return n;
    };
    const auto join = [](std::initializer_list<const std::vector<int64_t>*> parts) {
        std::vector<int64_t> r;
        for (const auto* p : parts)
            r.insert(r.end(), p->begin(), p->end());
        return r;
    };
    const int64_t B = size_of(a, batch), M = size_of(a, lo), K = size_of(a, sm), N = size_of(b, ro);
    const Tensor am = permute(a, join({&batch, &lo, &ro, &sm})).reshape({B, M, K});
    const Tensor bm = permute(b, join({&batch, &lo, &sm, &ro})).reshape({B, K, N});
    const std::vector<int64_t> order = join({&batch, &lo, &ro, &sm});
    Shape s;
    for (int64_t d : order)
        s.push_back(sum_here[size_t(d)] ? 1 : a.size(d) != 1 ? a.size(d) : b.size(d));
    std::vector<int64_t> inverse(order.size());
    for (size_t i = 0; i < order.size(); ++i)
        inverse[size_t(order[i])] = int64_t(i);
    return permute(bmm(am, bm).reshape(s), inverse);
}
}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
    std::string eq;
    for (char c : equation)
        if (c != ' ')
            eq += c;
    if (operands.empty())
        throw value_error("einsum: no operands for \"" + equation + "\"");
    for (const Tensor& t : operands)
        if (!t.defined())
            throw value_error("einsum: undefined operand for \"" + equation + "\"");
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<Term> terms;
    for (size_t start = 0;;) {
        const size_t comma = lhs.find(',', start);
        terms.push_back(parse_term(lhs.substr(start, comma - start), equation));
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    if (terms.size() != operands.size())
        throw value_error("einsum: \"" + equation + "\" has " + std::to_string(terms.size()) +
                          " terms for " + std::to_string(operands.size()) + " operands");
    int64_t ell = 0;
    for (size_t k = 0; k < terms.size(); ++k)
        if (terms[k].has_ellipsis)
            ell = std::max(ell, operands[k].dim() + 1 - int64_t(terms[k].letters.size()));
    std::vector<std::vector<int>> labels;
    std::array<int, kLetters> count{};
    bool any_ellipsis = false;
    for (size_t k = 0; k < terms.size(); ++k) {
        labels.push_back(
            labels_of(terms[k], operands[k].dim(), ell, equation, operands[k].sizes()));
        any_ellipsis = any_ellipsis || terms[k].has_ellipsis;
        for (int l : terms[k].letters)
            if (l >= 0)
                ++count[size_t(l)];
    }
    // the output's labels: given after "->", else the ellipsis then the letters seen once
    std::vector<int> out;
    if (arrow != std::string::npos) {
        const Term t = parse_term(eq.substr(arrow + 2), equation);
        if (any_ellipsis && !t.has_ellipsis && ell > 0)
            throw value_error("einsum: \"" + equation + "\": the output must keep the '...'");
        out = labels_of(t, int64_t(t.letters.size()) - (t.has_ellipsis ? 1 : 0) + ell, ell,
                        equation, Shape());
        for (int l : t.letters)
            if (l >= 0 && (count[size_t(l)] == 0 || std::count(out.begin(), out.end(), l) > 1))
                throw value_error("einsum: \"" + equation +
                                  "\": an output subscript is repeated or not among the inputs");
    } else {
        for (int64_t j = 0; j < ell; ++j)
            out.push_back(kLetters + int(j));
        for (int l = 0; l < kLetters; ++l)
            if (count[size_t(l)] == 1)
                out.push_back(l);
    }
    // one order for every label: the output's, then the others as they first appear
    std::vector<int> order = out;
    std::vector<size_t> last_use(kLetters + size_t(ell), 0);
    for (size_t k = 0; k < labels.size(); ++k)
        for (int l : labels[k]) {
            if (std::find(order.begin(), order.end(), l) == order.end())
                order.push_back(l);
            last_use[size_t(l)] = k;
        }
    const auto pos = [&](int l) {
        return int64_t(std::find(order.begin(), order.end(), l) - order.begin());
    };
    const ComposedName named;
    Tensor acc;
    for (size_t k = 0; k < operands.size(); ++k) {
        Tensor x = operands[k];
        std::vector<int> lab = labels[k];
        for (size_t p = 0; p < lab.size(); ++p)  // repeated labels: diagonals
            for (size_t q = lab.size(); q-- > p + 1;)
                if (lab[q] == lab[p]) {
                    x = diagonal_of(x, int64_t(p), int64_t(q), equation);
                    lab.erase(lab.begin() + long(q));
                }
        std::vector<int64_t> perm(lab.size());
        for (size_t i = 0; i < perm.size(); ++i)
            perm[i] = int64_t(i);
        std::sort(perm.begin(), perm.end(),
                  [&](int64_t i, int64_t j) { return pos(lab[size_t(i)]) < pos(lab[size_t(j)]); });
        Shape aligned(order.size(), 1);
        for (size_t i = 0; i < lab.size(); ++i)
            aligned[size_t(pos(lab[i]))] = x.size(int64_t(i));
        x = permute(x, perm).reshape(aligned);
        if (k == 0) {
            acc = x;
            continue;
        }
        std::vector<bool> sum_here(order.size());
        for (size_t i = out.size(); i < order.size(); ++i)
            sum_here[i] = last_use[size_t(order[i])] <= k;
        acc = contract(acc, x, sum_here, equation);
    }
    std::vector<int64_t> rest;
    for (size_t i = out.size(); i < order.size(); ++i)
        rest.push_back(int64_t(i));
    Tensor y = rest.empty() ? acc : sum(acc, rest);
    return named(y, "einsum", "EinsumBackward0");
}

}  // namespace tg
