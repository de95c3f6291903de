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
        default:
            return "bool";
    }
}

}  // namespace tg
