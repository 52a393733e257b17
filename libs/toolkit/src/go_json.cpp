#include <fiskai/toolkit/go_json.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <cstdint>

namespace fiskai::toolkit {
namespace {

constexpr std::string_view hex = "0123456789abcdef";

void append_u_escape(std::string& out, unsigned code) {
    out += "\\u";
    out += hex[(code >> 12) & 0xF];
    out += hex[(code >> 8) & 0xF];
    out += hex[(code >> 4) & 0xF];
    out += hex[code & 0xF];
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not valid
// (overlong forms, surrogates and code points past U+10FFFF are invalid, as in Go).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i, std::uint32_t& code) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    auto cont = [&](std::size_t k) -> int {
        if (i + k >= s.size()) return -1;
        const auto b = static_cast<unsigned char>(s[i + k]);
        return (b & 0xC0) == 0x80 ? (b & 0x3F) : -1;
    };
    if (b0 < 0x80) {
        code = b0;
        return 1;
    }
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        const int c1 = cont(1);
        if (c1 < 0) return 0;
        code = ((b0 & 0x1Fu) << 6) | static_cast<unsigned>(c1);
        return 2;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        const int c1 = cont(1), c2 = cont(2);
        if (c1 < 0 || c2 < 0) return 0;
        code = ((b0 & 0x0Fu) << 12) | (static_cast<unsigned>(c1) << 6) | static_cast<unsigned>(c2);
        if (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF)) return 0;
        return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        const int c1 = cont(1), c2 = cont(2), c3 = cont(3);
        if (c1 < 0 || c2 < 0 || c3 < 0) return 0;
        code = ((b0 & 0x07u) << 18) | (static_cast<unsigned>(c1) << 12) | (static_cast<unsigned>(c2) << 6) |
               static_cast<unsigned>(c3);
        if (code < 0x10000 || code > 0x10FFFF) return 0;
        return 4;
    }
    return 0;
}

}  // namespace

void append_go_string(std::string& out, std::string_view s) {
    out.reserve(out.size() + s.size() + 2);
    out += '"';
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                // Go 1.22 and later write these two short forms too.
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                case '<':
                case '>':
                case '&': append_u_escape(out, c); break;
                default:
                    if (c < 0x20) {
                        append_u_escape(out, c);
                    } else {
                        out += static_cast<char>(c);
                    }
            }
            ++i;
            continue;
        }
        std::uint32_t code = 0;
        const std::size_t n = utf8_sequence_length(s, i, code);
        if (n == 0) {
            out += "\\ufffd";  // Go writes the replacement as an escape
            ++i;
            continue;
        }
        if (code == 0x2028 || code == 0x2029) {
            append_u_escape(out, code);
        } else {
            out.append(s.substr(i, n));
        }
        i += n;
    }
    out += '"';
}

std::string go_quote(std::string_view s) {
    std::string out;
    append_go_string(out, s);
    return out;
}

void append_go_json(std::string& out, const boost::json::value& v) {
    switch (v.kind()) {
        case boost::json::kind::null: out += "null"; break;
        case boost::json::kind::bool_: out += v.get_bool() ? "true" : "false"; break;
        case boost::json::kind::int64: out += std::to_string(v.get_int64()); break;
        case boost::json::kind::uint64: out += std::to_string(v.get_uint64()); break;
        case boost::json::kind::double_: out += boost::json::serialize(v); break;
        case boost::json::kind::string: append_go_string(out, v.get_string()); break;
        case boost::json::kind::array: {
            out += '[';
            bool first = true;
            for (const auto& e : v.get_array()) {
                if (!first) out += ',';
                first = false;
                append_go_json(out, e);
            }
            out += ']';
            break;
        }
        case boost::json::kind::object: {
            out += '{';
            bool first = true;
            for (const auto& kv : v.get_object()) {
                if (!first) out += ',';
                first = false;
                append_go_string(out, kv.key());
                out += ':';
                append_go_json(out, kv.value());
            }
            out += '}';
            break;
        }
    }
}

const char* json_kind_name(const boost::json::value& v) noexcept {
    switch (v.kind()) {
        case boost::json::kind::null: return "null";
        case boost::json::kind::bool_: return "boolean";
        case boost::json::kind::int64:
        case boost::json::kind::uint64:
        case boost::json::kind::double_: return "number";
        case boost::json::kind::string: return "string";
        case boost::json::kind::array: return "array";
        case boost::json::kind::object: return "object";
    }
    return "value";
}

std::string go_json(const boost::json::value& v) {
    std::string out;
    append_go_json(out, v);
    return out;
}

}  // namespace fiskai::toolkit
