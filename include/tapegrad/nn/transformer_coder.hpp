#pragma once
/// TransformerEncoder and TransformerDecoder (stacks of copies of a layer, with an optional final
/// norm) and nn::Transformer (an encoder and a decoder), as LibTorch's:
///     tg::nn::Transformer model(tg::nn::TransformerOptions(512, 8, 6, 6).dropout(0.1));
///     auto mask = tg::nn::TransformerImpl::generate_square_subsequent_mask(T);
///     tg::Tensor out = model->forward(src, tgt, {}, mask);  // src [S, N, 512], tgt [T, N, 512]
#include <cstdint>
#include <ostream>

#include "tapegrad/arg.hpp"
#include "tapegrad/nn/any_module.hpp"
#include "tapegrad/nn/container.hpp"
#include "tapegrad/nn/transformer.hpp"
#pragma GCC visibility push(default)

namespace tg::nn {

/// LibTorch's TransformerEncoderOptions: the layer to copy num_layers times and a final norm
/// (an AnyModule, empty for none). Built from layer options, it builds the layer at once (its
/// weights drawn then, as LibTorch draws them).
struct TransformerEncoderOptions {
    TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
        : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
    TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options,
                              int64_t num_layers)
        : encoder_layer_(encoder_layer_options), num_layers_(num_layers) {}
    TG_ARG(TransformerEncoderLayer, encoder_layer) = nullptr;
    TG_ARG(int64_t, num_layers);
    TG_ARG(AnyModule, norm);
};

class TransformerEncoderImpl : public Module {
public:
    using Options = TransformerEncoderOptions;
    /// layers: num_layers deep copies of the options' layer (equal initial weights; each copy
    /// draws an initialisation it then overwrites, as LibTorch's clones do); norm: a copy of the
    /// options' norm, if any. value_error for a negative num_layers or a null layer.
    explicit TransformerEncoderImpl(TransformerEncoderOptions options);
    TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
        : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}
    /// src through every layer (with the masks), then the norm. value_error with neither layers
    /// nor norm (LibTorch returns an undefined tensor there).
    Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                   const Tensor& src_key_padding_mask = {});
    Tensor forward(const Tensor& src) override { return forward(src, {}, {}); }
    /// Each layer's reset_parameters, and a fresh copy of the options' norm.
    void reset_parameters();
    TransformerEncoderOptions options;  // public, as LibTorch's
    /// "TransformerEncoderImpl" and its children, as LibTorch prints it.
    void pretty_print(std::ostream& os) const override;

    ModuleList layers{nullptr};
    AnyModule norm;
};
TG_MODULE(TransformerEncoder);

/// LibTorch's TransformerDecoderOptions, as TransformerEncoderOptions.
struct TransformerDecoderOptions {
    TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
        : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
    TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options,
                              int64_t num_layers)
        : decoder_layer_(decoder_layer_options), num_layers_(num_layers) {}
    TG_ARG(TransformerDecoderLayer, decoder_layer) = nullptr;
    TG_ARG(int64_t, num_layers);
    TG_ARG(AnyModule, norm);
};

class TransformerDecoderImpl : public Module {
public:
    using Options = TransformerDecoderOptions;
    /// As TransformerEncoderImpl's.
    explicit TransformerDecoderImpl(TransformerDecoderOptions options);
    TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
        : TransformerDecoderImpl(TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}
    /// tgt through every layer (each attending to memory, with the masks), then the norm.
    Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                   const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                   const Tensor& memory_key_padding_mask = {});
    using Module::forward;
    void reset_parameters();
    TransformerDecoderOptions options;  // public, as LibTorch's
    /// "TransformerDecoderImpl" and its children.
    void pretty_print(std::ostream& os) const override;

    ModuleList layers{nullptr};
    AnyModule norm;
};
TG_MODULE(TransformerDecoder);

/// LibTorch's TransformerOptions (d_model 512, nhead 8, 6 encoder and 6 decoder layers,
/// dim_feedforward 2048, dropout 0.1, activation kReLU, custom_encoder / custom_decoder) and
/// PyTorch's layer_norm_eps, batch_first and norm_first, passed to the layers.
struct TransformerOptions {
    TransformerOptions() = default;
    TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
    TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers,
                       int64_t num_decoder_layers)
        : d_model_(d_model),
          nhead_(nhead),
          num_encoder_layers_(num_encoder_layers),
          num_decoder_layers_(num_decoder_layers) {}
    TG_ARG(int64_t, d_model) = 512;
    TG_ARG(int64_t, nhead) = 8;
    TG_ARG(int64_t, num_encoder_layers) = 6;
    TG_ARG(int64_t, num_decoder_layers) = 6;
    TG_ARG(int64_t, dim_feedforward) = 2048;
    TG_ARG(double, dropout) = 0.1;
    TG_ARG(TransformerActivation, activation) = kReLU;
    /// An encoder to use (a copy of it) instead of the TransformerEncoder built from the options;
    /// its forward must take (src, src_mask, src_key_padding_mask).
    TG_ARG(AnyModule, custom_encoder);
    /// A decoder to use instead; its forward must take (tgt, memory, tgt_mask, memory_mask,
    /// tgt_key_padding_mask, memory_key_padding_mask).
    TG_ARG(AnyModule, custom_decoder);
    TG_ARG(double, layer_norm_eps) = 1e-5;
    TG_ARG(bool, batch_first) = false;
    TG_ARG(bool, norm_first) = false;
};

class TransformerImpl : public Module {
public:
    using Options = TransformerOptions;
    /// encoder: TransformerEncoder(layer options, num_encoder_layers) with a final LayerNorm,
    /// decoder likewise (or copies of the custom ones), then every parameter of more than one
    /// dim re-drawn by xavier_uniform_: LibTorch's construction, draw for draw.
    explicit TransformerImpl(TransformerOptions options);
    /// decoder(tgt, encoder(src, src_mask, src_key_padding_mask), tgt_mask, memory_mask,
    /// tgt_key_padding_mask, memory_key_padding_mask): src [S, N, E] and tgt [T, N, E] ([N, S, E]
    /// and [N, T, E] with batch_first) -> [T, N, E]. shape_error unless both are 3-D with the
    /// same batch and E = d_model.
    Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {},
                   const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                   const Tensor& src_key_padding_mask = {}, const Tensor& tgt_key_padding_mask = {},
                   const Tensor& memory_key_padding_mask = {});
    using Module::forward;
    /// xavier_uniform_ of every parameter with more than one dim, in parameters() order.
    void reset_parameters();
    /// A float32 [sz, sz] mask, 0 on and below the diagonal and -inf above it (LibTorch's):
    /// position i may attend to positions <= i. value_error for a negative sz.
    static Tensor generate_square_subsequent_mask(int64_t sz);
    TransformerOptions options;  // public, as LibTorch's
    /// "TransformerImpl" and its children.
    void pretty_print(std::ostream& os) const override;

    AnyModule encoder;
    AnyModule decoder;
};
TG_MODULE(Transformer);

}  // namespace tg::nn

#pragma GCC visibility pop
