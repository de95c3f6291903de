// OpenCL C text of the conversions between dtypes: the copy kernels of every program (the direct
// pairs: Note [Direct conversions] in backend/convert.hpp), with the
// rules of Note [Conversions] (backend/convert.hpp) spelled in OpenCL C, so that a device
// converts to the bits the CPU does (the float16 rounding is tapegrad/half.hpp's, integer
// operations only).
#include <string>

#include "backend/convert.hpp"
#include "backend/opencl/source.hpp"

namespace tg::backend {

namespace {

const char* kHelpers = R"CL(
float tg_h2f(ushort h) {
    uint sign = (uint)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu) return as_float(sign | 0x7F800000u | (m << 13));
    if (e == 0u) return as_float(sign | as_uint((float)m * 5.9604644775390625e-08f));
    return as_float(sign | ((e + 112u) << 23) | (m << 13));
}
ushort tg_f2h(float f) {
    uint u = as_uint(f), a = u & 0x7FFFFFFFu;
    ushort sign = (ushort)((u >> 16) & 0x8000u);
    if (a > 0x7F800000u) return sign | 0x7E00;
    if (a >= 0x477FF000u) return sign | 0x7C00;
    if (a >= 0x38800000u) return sign | (ushort)((a - 0x38000000u + 0xFFFu + ((a >> 13) & 1u)) >> 13);
    uint e = a >> 23;
    if (e < 102u) return sign;
    uint m = (a & 0x7FFFFFu) | 0x800000u, shift = 126u - e;
    uint q = m >> shift, rest = m & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
    return sign | (ushort)(q + ((rest > mid || (rest == mid && (q & 1u))) ? 1u : 0u));
}
float tg_b2f(ushort b) { return as_float((uint)b << 16); }
ushort tg_f2b(float f) {
    uint u = as_uint(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
    return (ushort)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
long tg_f2l(float x) { return (x >= -0x1p63f && x < 0x1p63f) ? (long)x : LONG_MIN; }
int tg_f2i(float x) { return (x >= -0x1p31f && x < 0x1p31f) ? (int)x : INT_MIN; }
)CL";

const char* kHelpers64 = R"CL(
long tg_d2l(double x) { return (x >= -0x1p63 && x < 0x1p63) ? (long)x : LONG_MIN; }
int tg_d2i(double x) { return (x > -2147483649.0 && x < 2147483648.0) ? (int)x : INT_MIN; }
)CL";

bool reduced(Dtype d) {
    return d == Dtype::Float16 || d == Dtype::BFloat16;
}

/// The conversion of `x`, an element of dtype `from`, to dtype `to`, as an OpenCL C expression.
std::string conv(Dtype to, Dtype from, const std::string& x) {
    if (to == from)
        return x;
    if (reduced(from))  // through float
        return conv(to, Dtype::Float32, (from == Dtype::Float16 ? "tg_h2f(" : "tg_b2f(") + x + ")");
    const std::string T = opencl_type(to);
    if (to == Dtype::Bool)
        return "((" + x + ") != 0 ? (uchar)1 : (uchar)0)";
    if (reduced(to))
        return std::string(to == Dtype::Float16 ? "tg_f2h" : "tg_f2b") + "((float)(" + x + "))";
    if (is_floating(to) || !is_floating(from))
        return "((" + T + ")(" + x + "))";  // a float, or an integer that wraps
    const bool wide = to == Dtype::Int64 || to == Dtype::UInt8;  // through int64, else int32
    const std::string f =
        from == Dtype::Float64 ? (wide ? "tg_d2l" : "tg_d2i") : (wide ? "tg_f2l" : "tg_f2i");
    return "((" + T + ")" + f + "(" + x + "))";
}

}  // namespace

const char* opencl_type(Dtype d) {
    switch (d) {
        case Dtype::Float32:
            return "float";
        case Dtype::Float64:
            return "double";
        case Dtype::Int64:
            return "long";
        case Dtype::Int32:
            return "int";
        case Dtype::Int16:
            return "short";
        case Dtype::Int8:
            return "char";
        case Dtype::Float16:
        case Dtype::BFloat16:
            return "ushort";
        default:  // bool, uint8
            return "uchar";
    }
}

const char* opencl_tag(Dtype d) {
    switch (d) {
        case Dtype::Float32:
            return "f32";
        case Dtype::Float64:
            return "f64";
        case Dtype::Int64:
            return "i64";
        case Dtype::Int32:
            return "i32";
        case Dtype::Int16:
            return "i16";
        case Dtype::Int8:
            return "i8";
        case Dtype::UInt8:
            return "u8";
        case Dtype::Float16:
            return "f16";
        case Dtype::BFloat16:
            return "bf16";
        default:
            return "b8";
    }
}

std::string opencl_conversion_source(Dtype to, bool fp64) {
    std::string s = kHelpers;
    if (fp64)
        s += kHelpers64;
    for (int i = 0; i < kNumDtypes; ++i) {
        const Dtype from = Dtype(i);  // Note [Direct conversions] in backend/convert.hpp
        if ((from == Dtype::Float64 && !fp64) || !converts_directly(to, from))
            continue;
        const std::string tag = opencl_tag(from), S = opencl_type(from);
        s += "__kernel void copy_" + tag + "_c(__global T* o, long oo, __global const " + S +
             "* a, long ao, long n) {\n    TG_GID o[oo + i] = " + conv(to, from, "a[ao + i]") +
             ";\n}\n";
        s += "__kernel void copy_" + tag + "_s(__global T* o, long oo, __global const " + S +
             "* a, long ao, long n, Geo2 g) {\n    TG_GID long off[2] = {oo, ao}; "
             "TG_OFFSETS(g, i, 2, off);\n    o[off[0]] = " +
             conv(to, from, "a[off[1]]") + ";\n}\n";
    }
    // where moves elements (Note [Byte moves]); the condition is bool
    s += R"CL(__kernel void where_b8(__global T* o, long oo, __global const uchar* c, long co,
                       __global const T* a, long ao, __global const T* b, long bo, long n, Geo4 g) {
    TG_GID long off[4] = {oo, co, ao, bo}; TG_OFFSETS(g, i, 4, off);
    o[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
}
)CL";
    return s;
}

}  // namespace tg::backend
