#pragma once
// The protobuf wire format, writing side only: what export_model needs to write an ONNX
// ModelProto.
//
// Note [Writing ONNX without protobuf]
// ONNX files are protobuf messages (onnx.proto, proto2). The library writes the wire format
// itself instead of depending on libprotobuf and libonnx: the subset export emits is small
// (about 40 fields of 10 messages, every one a varint, a 32-bit float or a length-delimited
// string or sub-message), the writer is a page, and one less package keeps the library's
// dependencies what they were (the shared library and check-package included). Fields are
// written in field-number order of the calls, repeated scalars unpacked (proto2's default;
// readers take both forms). The field numbers are onnx.proto's; src/onnx/model.cpp names each.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tg::onnx::detail {

class ProtoWriter {
public:
    /// A varint field (wire type 0): int32/int64/enum/bool. Negative values are written as
    /// 10-byte two's complement varints, as protobuf writes int64.
    void varint(int field, int64_t v) {
        tag(field, 0);
        raw_varint(uint64_t(v));
    }
    /// A float field (wire type 5), little-endian.
    void float32(int field, float v) {
        tag(field, 5);
        uint32_t u = 0;
        std::memcpy(&u, &v, 4);
        for (int i = 0; i < 4; ++i)
            buf_.push_back(char((u >> (8 * i)) & 0xff));
    }
    /// A length-delimited field (wire type 2): string, bytes or an embedded message.
    void bytes(int field, std::string_view b) {
        tag(field, 2);
        raw_varint(b.size());
        buf_.append(b.data(), b.size());
    }
    void message(int field, const ProtoWriter& m) { bytes(field, m.buf_); }
    const std::string& data() const { return buf_; }

private:
    void tag(int field, int wire) { raw_varint((uint64_t(field) << 3) | uint64_t(wire)); }
    void raw_varint(uint64_t v) {
        while (v >= 0x80) {
            buf_.push_back(char((v & 0x7f) | 0x80));
            v >>= 7;
        }
        buf_.push_back(char(v));
    }
    std::string buf_;
};

}  // namespace tg::onnx::detail
