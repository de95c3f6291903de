// TransformerEncoder, TransformerDecoder and Transformer, as LibTorch 1.13's (its
// torch/csrc/api/src/nn/modules/transformer.cpp): the stacks hold deep copies of one layer, and
// Transformer builds its encoder and decoder, then re-draws every matrix with xavier_uniform_.
#include "tapegrad/nn/transformer_coder.hpp"

#include <limits>
#include <string>

#include "tapegrad/error.hpp"
#include "tapegrad/nn/init.hpp"
#include "tapegrad/nn/layer_norm.hpp"
#include "tapegrad/ops.hpp"

namespace tg::nn {

namespace {

/// layers: num copies of layer, registered as "layers"; norm: a copy of the options' norm.
template <class Layer>
ModuleList copies(Module& owner, const char* who, const Layer& layer, int64_t num) {
    if (num < 0)
        throw value_error(std::string(who) + ": num_layers " + std::to_string(num) +
                          " must be >= 0");
    if (layer.is_empty())
        throw value_error(std::string(who) + ": the layer to copy is empty (nullptr)");
    ModuleList list;
    for (int64_t i = 0; i < num; ++i)
        list->push_back(clone_module(*layer));
    return ModuleList(owner.register_module("layers", list));
}

AnyModule copied_norm(Module& owner, const AnyModule& norm) {
    if (norm.is_empty())
        return {};
    AnyModule copy = norm.clone();
    owner.register_module("norm", copy.ptr());
    return copy;
}

}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions opts)
    : Module("TransformerEncoder"), options(std::move(opts)) {
    layers = copies(*this, "TransformerEncoder", options.encoder_layer(), options.num_layers());
    norm = copied_norm(*this, options.norm());
}

void TransformerEncoderImpl::reset_parameters() {
    for (size_t i = 0; i < layers->size(); ++i)
        layers->at<TransformerEncoderLayerImpl>(i).reset_parameters();
    if (!options.norm().is_empty()) {  // a fresh copy, as LibTorch (which cannot reset it)
        NoGradGuard guard;
        detail::copy_state(*options.norm().ptr(), *norm.ptr());
    }
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask,
                                       const Tensor& src_key_padding_mask) {
    if (layers->is_empty() && norm.is_empty())
        throw value_error(label() +
                          ": no layers and no norm (LibTorch returns an undefined "
                          "tensor)");
    Tensor out = src;
    for (size_t i = 0; i < layers->size(); ++i)
        out =
            layers->at<TransformerEncoderLayerImpl>(i).forward(out, src_mask, src_key_padding_mask);
    return norm.is_empty() ? out : norm.forward(out);
}

void TransformerEncoderImpl::pretty_print(std::ostream& os) const {
    os << "TransformerEncoderImpl";
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions opts)
    : Module("TransformerDecoder"), options(std::move(opts)) {
    layers = copies(*this, "TransformerDecoder", options.decoder_layer(), options.num_layers());
    norm = copied_norm(*this, options.norm());
}

void TransformerDecoderImpl::reset_parameters() {
    for (size_t i = 0; i < layers->size(); ++i)
        layers->at<TransformerDecoderLayerImpl>(i).reset_parameters();
    if (!options.norm().is_empty()) {
        NoGradGuard guard;
        detail::copy_state(*options.norm().ptr(), *norm.ptr());
    }
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
    if (layers->is_empty() && norm.is_empty())
        throw value_error(label() +
                          ": no layers and no norm (LibTorch returns an undefined "
                          "tensor)");
    Tensor out = tgt;
    for (size_t i = 0; i < layers->size(); ++i)
        out = layers->at<TransformerDecoderLayerImpl>(i).forward(
            out, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
    return norm.is_empty() ? out : norm.forward(out);
}

void TransformerDecoderImpl::pretty_print(std::ostream& os) const {
    os << "TransformerDecoderImpl";
}

TransformerImpl::TransformerImpl(TransformerOptions opts)
    : Module("Transformer"), options(std::move(opts)) {
    const int64_t d = options.d_model();
    if (options.custom_encoder().is_empty()) {
        const LayerNorm final_norm(LayerNormOptions({d}).eps(options.layer_norm_eps()));
        encoder = AnyModule(TransformerEncoder(
            TransformerEncoderOptions(TransformerEncoderLayerOptions(d, options.nhead())
                                          .dim_feedforward(options.dim_feedforward())
                                          .dropout(options.dropout())
                                          .activation(options.activation())
                                          .layer_norm_eps(options.layer_norm_eps())
                                          .batch_first(options.batch_first())
                                          .norm_first(options.norm_first()),
                                      options.num_encoder_layers())
                .norm(AnyModule(final_norm))));
    } else {
        encoder = options.custom_encoder().clone();
    }
    register_module("encoder", encoder.ptr());
    if (options.custom_decoder().is_empty()) {
        const LayerNorm final_norm(LayerNormOptions({d}).eps(options.layer_norm_eps()));
        decoder = AnyModule(TransformerDecoder(
            TransformerDecoderOptions(TransformerDecoderLayerOptions(d, options.nhead())
                                          .dim_feedforward(options.dim_feedforward())
                                          .dropout(options.dropout())
                                          .activation(options.activation())
                                          .layer_norm_eps(options.layer_norm_eps())
                                          .batch_first(options.batch_first())
                                          .norm_first(options.norm_first()),
                                      options.num_decoder_layers())
                .norm(AnyModule(final_norm))));
    } else {
        decoder = options.custom_decoder().clone();
    }
    register_module("decoder", decoder.ptr());
    reset_parameters();
}

void TransformerImpl::reset_parameters() {
    for (Tensor& p : parameters())
        if (p.dim() > 1)
            init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) {
    if (!src.defined() || !tgt.defined() || src.dim() != 3 || tgt.dim() != 3)
        throw shape_error(label() + ": src and tgt must be 3-D, got " +
                          (src.defined() ? shape_str(src.sizes()) : "undefined") + " and " +
                          (tgt.defined() ? shape_str(tgt.sizes()) : "undefined"));
    const int64_t b = options.batch_first() ? 0 : 1;
    if (src.size(b) != tgt.size(b))
        throw shape_error(label() + ": src " + shape_str(src.sizes()) + " and tgt " +
                          shape_str(tgt.sizes()) + " must have the same batch size (dim " +
                          std::to_string(b) + ")");
    if (src.size(2) != options.d_model() || tgt.size(2) != options.d_model())
        throw shape_error(
            label() + ": src " + shape_str(src.sizes()) + " and tgt " + shape_str(tgt.sizes()) +
            " must have d_model = " + std::to_string(options.d_model()) + " features (dim 2)");
    const Tensor memory = encoder.forward(src, src_mask, src_key_padding_mask);
    return decoder.forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                           memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz) {
    if (sz < 0)
        throw value_error("Transformer::generate_square_subsequent_mask: size " +
                          std::to_string(sz) + " must be >= 0");
    return triu(full({sz, sz}, -std::numeric_limits<double>::infinity()), 1);
}

void TransformerImpl::pretty_print(std::ostream& os) const {
    os << "TransformerImpl";
}

}  // namespace tg::nn
