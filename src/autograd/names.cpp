// PyTorch's node names (Note [Node names] in record.hpp): the table for nodes named after their
// op, checked against LibTorch 1.13 by tests/test_grad_fn_names.cpp.
#include <cctype>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tapegrad/autograd.hpp"

namespace tg {

namespace {

const std::unordered_map<std::string, const char*>& table() {
    static const std::unordered_map<std::string, const char*> t = {
        {"add", "AddBackward0"},
        {"sub", "SubBackward0"},
        {"rsub", "SubBackward0"},
        {"mul", "MulBackward0"},
        {"div", "DivBackward0"},
        {"rdiv", "DivBackward0"},
        {"pow", "PowBackward0"},
        {"clamp", "ClampBackward1"},
        {"log1p", "Log1PBackward0"},
        {"sum", "SumBackward1"},
        {"max", "MaxBackward0"},
        {"min", "MinBackward0"},
        {"norm", "NormBackward1"},
        {"mm", "MmBackward0"},
        {"reshape", "ReshapeAliasBackward0"},
        {"narrow", "SliceBackward0"},
        {"to_dtype", "ToCopyBackward0"},
        {"to_device", "ToCopyBackward0"},
        {"dropout", "MulBackward0"},  // LibTorch 1.13 composes dropout as x * mask
        {"feature_dropout", "MulBackward0"},
        {"cross_entropy", "NllLossBackward0"},
        {"layer_norm", "NativeLayerNormBackward0"},
        {"batch_norm", "NativeBatchNormBackward0"},
        {"group_norm", "NativeGroupNormBackward0"},
        {"conv2d", "ConvolutionBackward0"},
        {"conv_transpose2d", "ConvolutionBackward0"},
        {"conv2d_input", "ConvolutionBackwardBackward0"},
        {"conv2d_weight", "ConvolutionBackwardBackward0"},
        {"max_pool2d", "MaxPool2DWithIndicesBackward0"},
        {"avg_pool2d", "AvgPool2DBackward0"},
        {"unfold", "Im2ColBackward0"},
        {"fold", "Col2ImBackward0"},
        {"checkpoint", "CheckpointFunctionBackward"},
        {"scaled_dot_product_attention", "ScaledDotProductAttentionBackward0"},
    };
    return t;
}

/// "leaky_relu" -> "LeakyReluBackward0", interned.
const char* generated(const char* op) {
    static std::mutex mu;
    static std::unordered_set<std::string> names;
    std::string s;
    bool up = true;
    for (const char* p = op; *p; ++p) {
        if (*p == '_') {
            up = true;
            continue;
        }
        s += up ? char(std::toupper(static_cast<unsigned char>(*p))) : *p;
        up = false;
    }
    s += "Backward0";
    std::lock_guard<std::mutex> lock(mu);
    return names.insert(s).first->c_str();
}

}  // namespace

const char* Node::name() const {
    if (torch_name_)
        return torch_name_;
    for (const char* p = name_; *p;
         ++p)  // already a class name (AccumulateGrad, a custom Function)
        if (!std::islower(static_cast<unsigned char>(*p)) &&
            !std::isdigit(static_cast<unsigned char>(*p)) && *p != '_')
            return name_;
    if (!*name_)
        return name_;
    const auto& t = table();
    const auto it = t.find(name_);
    return it != t.end() ? it->second : generated(name_);
}

}  // namespace tg
