#include "tapegrad/nn/any_module.hpp"

#include "tapegrad/autograd.hpp"
#include "tapegrad/nn/container.hpp"
#include "tapegrad/nn/embedding.hpp"
#include "tapegrad/nn/linear.hpp"
#include "tapegrad/nn/transformer.hpp"
#include "tapegrad/nn/transformer_coder.hpp"

namespace tg::nn::detail {

namespace {
void copy_items(const OrderedDict<std::string, Tensor>& from,
                const OrderedDict<std::string, Tensor>& to, const Module& where, const char* what) {
    if (from.size() != to.size())
        throw value_error("clone of " + where.name() + ": " + std::to_string(from.size()) + " " +
                          what + " to copy into " + std::to_string(to.size()));
    NoGradGuard guard;
    for (size_t i = 0; i < from.size(); ++i) {
        const auto& f = from[i];
        const auto& t = to[i];
        if (f.key() != t.key() || f.value().sizes() != t.value().sizes())
            throw value_error("clone of " + where.name() + ": " + what + " " + f.key() + " " +
                              shape_str(f.value().sizes()) + " has no counterpart (" + t.key() +
                              " " + shape_str(t.value().sizes()) + ")");
        Tensor dst = t.value();
        if (dst.dtype() != f.value().dtype() || dst.device() != f.value().device())
            throw value_error("clone of " + where.name() + ": " + what + " " + f.key() + " is " +
                              dtype_name(f.value().dtype()) + " on " + f.value().device().str() +
                              ", unlike the module's other parameters");
        dst.copy_(f.value());
        dst.requires_grad_(f.value().requires_grad());
    }
}
}  // namespace

// Note [Cloning draws]: LibTorch's Cloneable::clone() resets a copy of the module (building its
// submodules again, which draws their initialisations) and then clones each child into it
// (ModuleList clones its elements), which draws again, recursively; the values drawn are all
// overwritten by the copied ones, but the default generator advances. To leave it where
// LibTorch leaves it, a clone here builds the module from its options, then builds each child
// (and their children) once more and throws it away. The modules that draw and are rebuilt so:
// Linear, Bilinear, Embedding, EmbeddingBag, MultiheadAttention, the transformer layers and
// stacks and ModuleList; any other child is assumed to draw nothing (true of the activations,
// dropouts and norms; not of convolutions, whose clones therefore draw less than LibTorch's).
namespace {
void draw_as_clone(const Module& m);

template <class Impl>
bool rebuild(const Module& m) {
    const auto* p = dynamic_cast<const Impl*>(&m);
    if (!p)
        return false;
    const auto fresh = std::make_shared<Impl>(p->options);
    draw_as_child_clones(*fresh);
    return true;
}

void draw_as_clone(const Module& m) {
    if (const auto* list = dynamic_cast<const ModuleListImpl*>(&m)) {
        for (const auto& element : *list)
            draw_as_clone(*element);
        return;
    }
    (void)(rebuild<LinearImpl>(m) || rebuild<BilinearImpl>(m) || rebuild<EmbeddingImpl>(m) ||
           rebuild<EmbeddingBagImpl>(m) || rebuild<MultiheadAttentionImpl>(m) ||
           rebuild<TransformerEncoderLayerImpl>(m) || rebuild<TransformerDecoderLayerImpl>(m) ||
           rebuild<TransformerEncoderImpl>(m) || rebuild<TransformerDecoderImpl>(m));
}
}  // namespace

void draw_as_child_clones(const Module& fresh) {
    NoGradGuard guard;
    for (const auto& child : fresh.children())
        draw_as_clone(*child);
}

void copy_state(const Module& from, Module& to) {
    // a clone built from options is float32 on the CPU: first give it the dtype and device of
    // the module it copies (its floating parameters'; to() leaves integer buffers alone)
    for (const auto& p : from.parameters())
        if (is_floating(p.dtype())) {
            to.to(p.device(), p.dtype());
            break;
        }
    copy_items(from.named_parameters(), to.named_parameters(), from, "parameter");
    copy_items(from.named_buffers(), to.named_buffers(), from, "buffer");
}

}  // namespace tg::nn::detail
