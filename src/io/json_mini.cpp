// A reader and writer for the JSON subset of json_mini.hpp, written for the safetensors header.
#include "io/json_mini.hpp"

namespace tg::io_detail {
namespace {

/// Length of the valid UTF-8 sequence at p (1 to 4), or 0 if it is not one (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8_length(const unsigned char* p, size_t left) {
    const unsigned c = p[0];
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len == 0 || len > left)
        return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t i = 1; i < len; ++i) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

class Parser {
public:
    Parser(const char* text, size_t n, int max_depth) : p_(text), n_(n), max_depth_(max_depth) {}

    JsonValue parse_document() {
        for (size_t i = 0; i < n_;) {
            const size_t len = utf8_length(reinterpret_cast<const unsigned char*>(p_ + i), n_ - i);
            if (len == 0)
                fail(i, "invalid UTF-8");
            i += len;
        }
        skip_ws();
        JsonValue v = value(0);
        skip_ws();
        if (i_ != n_)
            fail(i_, "unexpected text after the value");
        return v;
    }

private:
    [[noreturn]] void fail(size_t at, const std::string& what) const {
        throw JsonError("bad JSON at byte " + std::to_string(at) + ": " + what);
    }
    void skip_ws() {
        while (i_ < n_ && (p_[i_] == ' ' || p_[i_] == '\t' || p_[i_] == '\n' || p_[i_] == '\r'))
            ++i_;
    }
    char peek() const { return i_ < n_ ? p_[i_] : '\0'; }
    void expect(char c) {
        if (i_ >= n_ || p_[i_] != c)
            fail(i_, i_ >= n_ ? std::string("the text ends where '") + c + "' was expected"
                              : std::string("expected '") + c + "'");
        ++i_;
    }

    JsonValue value(int depth) {
        if (depth > max_depth_)
            fail(i_, "nested deeper than " + std::to_string(max_depth_) + " levels");
        JsonValue v;
        const char c = peek();
        if (c == '{') {
            v.kind = JsonValue::Kind::Object;
            ++i_;
            skip_ws();
            if (peek() == '}') {
                ++i_;
                return v;
            }
            for (;;) {
                skip_ws();
                if (peek() != '"')
                    fail(i_, "expected a string key");
                std::string key = string();
                skip_ws();
                expect(':');
                skip_ws();
                v.object.emplace_back(std::move(key), value(depth + 1));
                skip_ws();
                if (peek() == ',') {
                    ++i_;
                    continue;
                }
                expect('}');
                return v;
            }
        }
        if (c == '[') {
            v.kind = JsonValue::Kind::Array;
            ++i_;
            skip_ws();
            if (peek() == ']') {
                ++i_;
                return v;
            }
            for (;;) {
                skip_ws();
                v.array.push_back(value(depth + 1));
                skip_ws();
                if (peek() == ',') {
                    ++i_;
                    continue;
                }
                expect(']');
                return v;
            }
        }
        if (c == '"') {
            v.kind = JsonValue::Kind::String;
            v.string = string();
            return v;
        }
        if (c >= '0' && c <= '9') {
            v.kind = JsonValue::Kind::Integer;
            v.integer = integer();
            return v;
        }
        if (i_ >= n_)
            fail(i_, "the text ends where a value was expected");
        if (c == '-')
            fail(i_, "a negative number (only non-negative integers are expected)");
        fail(i_, std::string("unexpected character '") + c + "' (expected an object, array, " +
                     "string or non-negative integer)");
    }

    uint64_t integer() {
        const size_t start = i_;
        if (p_[i_] == '0' && i_ + 1 < n_ && p_[i_ + 1] >= '0' && p_[i_ + 1] <= '9')
            fail(i_, "a number with a leading zero");
        uint64_t v = 0;
        while (i_ < n_ && p_[i_] >= '0' && p_[i_] <= '9') {
            const uint64_t d = uint64_t(p_[i_] - '0');
            if (v > (UINT64_MAX - d) / 10)
                fail(start, "an integer above 2^64 - 1");
            v = v * 10 + d;
            ++i_;
        }
        if (i_ < n_ && (p_[i_] == '.' || p_[i_] == 'e' || p_[i_] == 'E'))
            fail(start, "a number that is not an integer");
        return v;
    }

    uint32_t hex4() {
        if (n_ - i_ < 4)
            fail(i_, "a \\u escape cut short");
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k, ++i_) {
            const char h = p_[i_];
            const int d = h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : -1;
            if (d < 0)
                fail(i_, "a \\u escape with a non-hex digit");
            v = v * 16 + uint32_t(d);
        }
        return v;
    }

    std::string string() {
        const size_t start = i_;
        ++i_;  // the opening quote
        std::string out;
        for (;;) {
            if (i_ >= n_)
                fail(start, "a string without its closing quote");
            const char c = p_[i_++];
            if (c == '"')
                return out;
            if (static_cast<unsigned char>(c) < 0x20)
                fail(i_ - 1, "a control character in a string (it must be escaped)");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= n_)
                fail(start, "a string without its closing quote");
            const char e = p_[i_++];
            switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'u': {
                    uint32_t cp = hex4();
                    if (cp >= 0xDC00 && cp <= 0xDFFF)
                        fail(i_ - 6, "a lone low surrogate \\u escape");
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (n_ - i_ < 2 || p_[i_] != '\\' || p_[i_ + 1] != 'u')
                            fail(i_ - 6, "a high surrogate \\u escape without its low half");
                        i_ += 2;
                        const uint32_t lo = hex4();
                        if (lo < 0xDC00 || lo > 0xDFFF)
                            fail(i_ - 6, "a high surrogate \\u escape without its low half");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    fail(i_ - 1, std::string("an unknown escape \\") + e);
            }
        }
    }

    const char* p_;
    size_t n_, i_ = 0;
    int max_depth_;
};

}  // namespace

const char* json_kind_name(JsonValue::Kind k) {
    switch (k) {
        case JsonValue::Kind::Object:
            return "an object";
        case JsonValue::Kind::Array:
            return "an array";
        case JsonValue::Kind::String:
            return "a string";
        case JsonValue::Kind::Integer:
            return "an integer";
    }
    return "a value";
}

JsonValue json_parse(const char* text, size_t n, int max_depth) {
    return Parser(text, n, max_depth).parse_document();
}

std::string json_quote(const std::string& s) {
    static const char* kHex = "0123456789abcdef";
    std::string out = "\"";
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                if (u < 0x20) {
                    out += "\\u00";
                    out += kHex[u >> 4];
                    out += kHex[u & 0xF];
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

}  // namespace tg::io_detail
