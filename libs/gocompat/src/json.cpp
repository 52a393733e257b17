#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/utf8.hpp>

#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <vector>

namespace fiskai::gocompat {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// ASCII bytes Go's encoder writes unescaped with escapeHTML on (its htmlSafeSet).
constexpr std::array<bool, 128> make_html_safe() {
    std::array<bool, 128> t{};
    for (int c = 0x20; c < 0x80; ++c) t[static_cast<std::size_t>(c)] = true;
    for (char c : {'"', '\\', '<', '>', '&'}) t[static_cast<unsigned char>(c)] = false;
    return t;
}
constexpr auto html_safe = make_html_safe();

void append_value(std::string& out, const boost::json::value& v, key_order order);

void append_array(std::string& out, const boost::json::array& a, key_order order) {
    out.push_back('[');
    bool first = true;
    for (const auto& e : a) {
        if (!first) out.push_back(',');
        first = false;
        append_value(out, e, order);
    }
    out.push_back(']');
}

void append_object(std::string& out, const boost::json::object& o, key_order order) {
    std::vector<const boost::json::key_value_pair*> members;
    members.reserve(o.size());
    for (const auto& kv : o) members.push_back(&kv);
    if (order == key_order::sorted) {
        std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) { return a->key() < b->key(); });
    }
    out.push_back('{');
    bool first = true;
    for (const auto* kv : members) {
        if (!first) out.push_back(',');
        first = false;
        append_json_string(out, std::string_view(kv->key().data(), kv->key().size()));
        out.push_back(':');
        append_value(out, kv->value(), order);
    }
    out.push_back('}');
}

// Recursion depth follows the value's nesting; values reaching here were parsed by
// Boost.JSON, whose parser bounds depth (max_depth, 32 by default, 10000 where raised).
void append_value(std::string& out, const boost::json::value& v, key_order order) {
    switch (v.kind()) {
        case boost::json::kind::null: out.append("null"); break;
        case boost::json::kind::bool_: out.append(v.get_bool() ? "true" : "false"); break;
        case boost::json::kind::int64: out.append(std::to_string(v.get_int64())); break;
        case boost::json::kind::uint64: out.append(std::to_string(v.get_uint64())); break;
        case boost::json::kind::double_: append_json_float(out, v.get_double()); break;
        case boost::json::kind::string: {
            const auto& s = v.get_string();
            append_json_string(out, std::string_view(s.data(), s.size()));
            break;
        }
        case boost::json::kind::array: append_array(out, v.get_array(), order); break;
        case boost::json::kind::object: append_object(out, v.get_object(), order); break;
    }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
    out.reserve(out.size() + s.size() + 2);
    out.push_back('"');
    std::size_t start = 0;  // first byte not yet copied
    std::size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            if (html_safe[b]) {
                ++i;
                continue;
            }
            out.append(s.substr(start, i - start));
            switch (b) {
                case '\\':
                case '"':
                    out.push_back('\\');
                    out.push_back(static_cast<char>(b));
                    break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    out.append("\\u00");
                    out.push_back(hex_digits[b >> 4]);
                    out.push_back(hex_digits[b & 0xF]);
            }
            start = ++i;
            continue;
        }
        const auto r = decode_rune(s, i);
        if (!r.valid) {
            out.append(s.substr(start, i - start));
            out.append("\\ufffd");  // Go writes the replacement as an escape
            start = ++i;
            continue;
        }
        if (r.rune == 0x2028 || r.rune == 0x2029) {
            out.append(s.substr(start, i - start));
            out.append(r.rune == 0x2028 ? "\\u2028" : "\\u2029");
            i += r.size;
            start = i;
            continue;
        }
        i += r.size;
    }
    out.append(s.substr(start));
    out.push_back('"');
}

std::string json_string(std::string_view s) {
    std::string out;
    append_json_string(out, s);
    return out;
}

void append_json_float(std::string& out, double d) {
    if (!std::isfinite(d)) {
        out.append("null");
        return;
    }
    const double a = std::fabs(d);
    const bool exponent = a != 0 && (a < 1e-6 || a >= 1e21);
    // to_chars without a precision gives the shortest round-trip digits, as strconv's -1.
    std::array<char, 64> buf{};
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), d,
                                 exponent ? std::chars_format::scientific : std::chars_format::fixed);
    auto n = static_cast<std::size_t>(r.ptr - buf.data());
    if (exponent && n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
        buf[n - 2] = buf[n - 1];  // e-07 -> e-7, as Go cleans it
        --n;
    }
    out.append(buf.data(), n);
}

void append_json(std::string& out, const boost::json::value& v, key_order order) { append_value(out, v, order); }

std::string to_json(const boost::json::value& v, key_order order) {
    std::string out;
    append_value(out, v, order);
    return out;
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

}  // namespace fiskai::gocompat
