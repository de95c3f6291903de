#include "tapegrad/dtype.hpp"

namespace tg {

const char* dtype_name(Dtype d) {
    switch (d) {
        case Dtype::Float32:
            return "float32";
        case Dtype::Float64:
            return "float64";
        case Dtype::Int64:
            return "int64";
        case Dtype::Bool:
            return "bool";
        case Dtype::UInt8:
            return "uint8";
        case Dtype::Int8:
            return "int8";
        case Dtype::Int16:
            return "int16";
        case Dtype::Int32:
            return "int32";
        case Dtype::Float16:
            return "float16";
        case Dtype::BFloat16:
            return "bfloat16";
    }
    return "unknown dtype";
}

const char* dtype_torch_name(Dtype d) {
    switch (d) {
        case Dtype::Float32:
            return "Float";
        case Dtype::Float64:
            return "Double";
        case Dtype::Int64:
            return "Long";
        case Dtype::Bool:
            return "Bool";
        case Dtype::UInt8:
            return "Byte";
        case Dtype::Int8:
            return "Char";
        case Dtype::Int16:
            return "Short";
        case Dtype::Int32:
            return "Int";
        case Dtype::Float16:
            return "Half";
        case Dtype::BFloat16:
            return "BFloat16";
    }
    return "Unknown";
}

}  // namespace tg
