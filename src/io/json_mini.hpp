#pragma once
// The JSON subset the safetensors header uses (objects, arrays, strings with every escape,
// non-negative integers), read into a small tree and written back; no other values (no numbers
// with signs, fractions or exponents, no true/false/null). Errors throw JsonError with the byte
// offset of the problem.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tg::io_detail {

struct JsonError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct JsonValue {
    enum class Kind { Object, Array, String, Integer };
    Kind kind = Kind::Object;
    std::string string;                                     // Kind::String
    uint64_t integer = 0;                                   // Kind::Integer
    std::vector<std::pair<std::string, JsonValue>> object;  // Kind::Object, in file order
    std::vector<JsonValue> array;                           // Kind::Array
};

/// What a kind is called in messages ("an object", "a string", ...).
const char* json_kind_name(JsonValue::Kind k);

/// Parses text[0, n) as one value, optionally surrounded by whitespace. The text must be valid
/// UTF-8; nesting is limited to max_depth levels (a hostile header cannot exhaust the stack).
/// Keys of an object are kept in order, duplicates included (the caller decides).
JsonValue json_parse(const char* text, size_t n, int max_depth = 16);

/// s as a JSON string literal: quotes, and escapes for '"', '\\' and control characters
/// (\n, \t, ... and \u00XX), everything else (UTF-8 included) as it is, as serde_json writes it.
std::string json_quote(const std::string& s);

}  // namespace tg::io_detail
