#include "json_text.hpp"

#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

namespace fiskai::a2a::detail {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// ASCII bytes Go's encoder writes unescaped with escapeHTML on (its htmlSafeSet).
constexpr std::array<bool, 128> make_html_safe() {
    std::array<bool, 128> t{};
    for (int c = 0x20; c < 0x80; ++c) t[static_cast<std::size_t>(c)] = true;
    for (char c : {'"', '\\', '<', '>', '&'}) t[static_cast<unsigned char>(c)] = false;
    return t;
}
constexpr auto html_safe = make_html_safe();

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The four hex digits at s[i..i+4) as a code unit, or -1.
long hex4(std::string_view s, std::size_t i) noexcept {
    if (i + 4 > s.size()) return -1;
    long v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
        const int h = hex_value(s[i + k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

constexpr bool is_high_surrogate(long u) noexcept { return u >= 0xD800 && u < 0xDC00; }
constexpr bool is_low_surrogate(long u) noexcept { return u >= 0xDC00 && u < 0xE000; }

// An approximation of Go's strconv.IsPrint for non-ASCII runes: the C1 controls, the
// non-ASCII spaces, the format characters and private use are not printable.
bool is_print(char32_t r) noexcept {
    if (r < 0x80) return r >= 0x20 && r < 0x7F;
    if (r < 0xA1) return false;
    if (r == 0xAD || r == 0x1680 || r == 0x202F || r == 0x205F || r == 0x3000 || r == 0xFEFF) return false;
    if (r >= 0x2000 && r <= 0x200F) return false;
    if (r >= 0x2028 && r <= 0x202E) return false;
    if (r >= 0x2060 && r <= 0x206F) return false;
    if (r >= 0xE000 && r <= 0xF8FF) return false;
    if (r >= 0xFFF9 && r <= 0xFFFB) return false;
    if (r >= 0xF0000) return false;
    return true;
}

}  // namespace

decoded_rune decode_rune(std::string_view s, std::size_t i) noexcept {
    constexpr decoded_rune bad{0xFFFD, 1, false};
    const std::size_t n = s.size() - i;
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return {b0, 1, true};
    std::size_t size = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (b0 < 0xC2) return bad;
    if (b0 < 0xE0) {
        size = 2;
    } else if (b0 < 0xF0) {
        size = 3;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 < 0xF5) {
        size = 4;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        return bad;
    }
    if (n < size) return bad;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b1 < lo || b1 > hi) return bad;
    if (size == 2) return {static_cast<char32_t>((b0 & 0x1F) << 6 | (b1 & 0x3F)), 2, true};
    const auto b2 = static_cast<unsigned char>(s[i + 2]);
    if (b2 < 0x80 || b2 > 0xBF) return bad;
    if (size == 3) return {static_cast<char32_t>((b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F)), 3, true};
    const auto b3 = static_cast<unsigned char>(s[i + 3]);
    if (b3 < 0x80 || b3 > 0xBF) return bad;
    return {static_cast<char32_t>((b0 & 0x07) << 18 | (b1 & 0x3F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F)), 4, true};
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

bool is_valid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            ++i;
            continue;
        }
        const auto r = decode_rune(s, i);
        if (!r.valid) return false;
        i += r.size;
    }
    return true;
}

std::string to_valid_utf8(std::string_view s) {
    if (is_valid_utf8(s)) return std::string(s);
    std::string out;
    out.reserve(s.size() + 16);
    for (std::size_t i = 0; i < s.size();) {
        const auto r = decode_rune(s, i);
        if (r.valid) {
            out.append(s.substr(i, r.size));
        } else {
            out.append("\xEF\xBF\xBD");
        }
        i += r.size;
    }
    return out;
}

void append_quoted(std::string& out, std::string_view s) {
    out.push_back('"');
    std::size_t start = 0;
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
            out.append("\\ufffd");
            start = ++i;
            continue;
        }
        if (r.value == 0x2028 || r.value == 0x2029) {
            out.append(s.substr(start, i - start));
            out.append(r.value == 0x2028 ? "\\u2028" : "\\u2029");
            i += r.size;
            start = i;
            continue;
        }
        i += r.size;
    }
    out.append(s.substr(start));
    out.push_back('"');
}

std::string quoted(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    append_quoted(out, s);
    return out;
}

std::string go_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out.push_back('"');
    for (std::size_t i = 0; i < s.size();) {
        const auto r = decode_rune(s, i);
        if (!r.valid) {
            const auto b = static_cast<unsigned char>(s[i]);
            out.append("\\x");
            out.push_back(hex_digits[b >> 4]);
            out.push_back(hex_digits[b & 0xF]);
            ++i;
            continue;
        }
        const char32_t c = r.value;
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (is_print(c)) {
            out.append(s.substr(i, r.size));
        } else {
            switch (c) {
            case '\a': out.append("\\a"); break;
            case '\b': out.append("\\b"); break;
            case '\f': out.append("\\f"); break;
            case '\n': out.append("\\n"); break;
            case '\r': out.append("\\r"); break;
            case '\t': out.append("\\t"); break;
            case '\v': out.append("\\v"); break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    out.append("\\x");
                    out.push_back(hex_digits[c >> 4]);
                    out.push_back(hex_digits[c & 0xF]);
                } else {
                    const int digits = c < 0x10000 ? 4 : 8;
                    out.append(c < 0x10000 ? "\\u" : "\\U");
                    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out.push_back(hex_digits[(c >> shift) & 0xF]);
                }
            }
        }
        i += r.size;
    }
    out.push_back('"');
    return out;
}

std::string go_quote_bounded(std::string_view s, std::size_t limit) {
    if (s.size() <= limit) return go_quote(s);
    std::size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    return go_quote(s.substr(0, cut)) + "...";
}

std::size_t skip_space(std::string_view s, std::size_t i) noexcept {
    while (i < s.size() && is_space(s[i])) ++i;
    return i;
}

std::size_t skip_string(std::string_view s, std::size_t i) noexcept {
    ++i;  // the opening quote
    while (i < s.size()) {
        const char c = s[i];
        if (c == '"') return i + 1;
        i += c == '\\' ? 2 : 1;  // a backslash and the character it escapes
    }
    return s.size();
}

std::size_t skip_value(std::string_view s, std::size_t i) noexcept {
    if (i >= s.size()) return i;
    const char c = s[i];
    if (c == '"') return skip_string(s, i);
    if (c != '{' && c != '[') {
        while (i < s.size() && !is_space(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
        return i;
    }
    std::size_t depth = 0;
    while (i < s.size()) {
        const char d = s[i];
        if (d == '"') {
            i = skip_string(s, i);
            continue;
        }
        if (d == '{' || d == '[') {
            ++depth;
        } else if (d == '}' || d == ']') {
            if (--depth == 0) return i + 1;
        }
        ++i;
    }
    return i;
}

std::string compact(std::string_view json) {
    std::string out;
    out.reserve(json.size());
    std::size_t i = 0;
    while (i < json.size()) {
        const char c = json[i];
        if (c == '"') {
            const std::size_t end = skip_string(json, i);
            out.append(json.substr(i, end - i));
            i = end;
        } else {
            if (!is_space(c)) out.push_back(c);
            ++i;
        }
    }
    return out;
}

void append_raw(std::string& out, std::string_view s) {
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '<' || c == '>' || c == '&') {
            out.append(s.substr(start, i - start));
            out.append("\\u00");
            out.push_back(hex_digits[static_cast<unsigned char>(c) >> 4]);
            out.push_back(hex_digits[static_cast<unsigned char>(c) & 0xF]);
            start = i + 1;
        } else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) & ~1U) == 0xA8) {
            out.append(s.substr(start, i - start));
            out.append((static_cast<unsigned char>(s[i + 2]) & 1U) != 0 ? "\\u2029" : "\\u2028");
            i += 2;
            start = i + 1;
        }
    }
    out.append(s.substr(start));
}

std::string unquote(std::string_view token) {
    std::string_view s = token;
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (c != '\\') {
            if (static_cast<unsigned char>(c) < 0x80) {
                out.push_back(c);
                ++i;
                continue;
            }
            const auto r = decode_rune(s, i);
            if (r.valid) {
                out.append(s.substr(i, r.size));
            } else {
                append_utf8(out, 0xFFFD);
            }
            i += r.size;
            continue;
        }
        if (i + 1 >= s.size()) break;
        const char e = s[i + 1];
        switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
            const long u = hex4(s, i + 2);
            if (u < 0) return out;  // not valid JSON; never reached for parsed input
            i += 6;
            if (is_high_surrogate(u) && i + 6 <= s.size() && s[i] == '\\' && s[i + 1] == 'u') {
                const long lo = hex4(s, i + 2);
                if (is_low_surrogate(lo)) {
                    append_utf8(out, static_cast<char32_t>(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)));
                    i += 6;
                    continue;
                }
            }
            append_utf8(out, (is_high_surrogate(u) || is_low_surrogate(u)) ? 0xFFFD : static_cast<char32_t>(u));
            continue;
        }
        default: break;
        }
        i += 2;
    }
    return out;
}

bool key_is(std::string_view key_token, std::string_view name) {
    if (key_token.size() == name.size() + 2 && key_token.substr(1, name.size()) == name) return true;
    if (key_token.find('\\') == std::string_view::npos) return false;
    return unquote(key_token) == name;
}

std::optional<std::string_view> find_member(std::string_view s, std::string_view name) {
    std::optional<std::string_view> found;
    for_each_member(s, [&](std::string_view key, std::string_view value) {
        if (key_is(key, name)) found = value;
    });
    return found;
}

boost::json::parse_options parse_options() noexcept {
    boost::json::parse_options o;
    o.max_depth = max_depth;
    o.allow_invalid_utf8 = true;  // Go accepts it and decodes each bad byte as U+FFFD
    return o;
}

namespace {

// Walks the string literals of a JSON text and hands every backslash escape inside them
// to `on_escape(out, i)` (i at the backslash), which may rewrite it in place and returns
// how many characters it spans. Returns whether anything was rewritten.
template <class OnEscape>
bool rewrite_escapes(std::string& out, OnEscape on_escape) {
    bool changed = false;
    std::size_t i = 0;
    while (i < out.size()) {
        if (out[i] != '"') {
            ++i;
            continue;
        }
        ++i;  // inside a string
        while (i < out.size() && out[i] != '"') {
            if (out[i] != '\\') {
                ++i;
                continue;
            }
            i += on_escape(out, i, changed);
        }
        ++i;  // the closing quote
    }
    return changed;
}

}  // namespace

std::optional<std::string> replace_unpaired_surrogates(std::string_view body) {
    // Cheap test first: no `\ud` / `\uD` anywhere means no surrogate escape at all.
    bool any = false;
    for (std::size_t p = body.find("\\u"); p != std::string_view::npos; p = body.find("\\u", p + 2)) {
        if (p + 2 < body.size() && (body[p + 2] == 'd' || body[p + 2] == 'D')) {
            any = true;
            break;
        }
    }
    if (!any) return std::nullopt;

    std::string out(body);
    const bool changed = rewrite_escapes(out, [](std::string& text, std::size_t i, bool& changed_any) -> std::size_t {
        if (i + 1 >= text.size() || text[i + 1] != 'u') return 2;
        const long u = hex4(text, i + 2);
        if (is_high_surrogate(u) && i + 12 <= text.size() && text[i + 6] == '\\' && text[i + 7] == 'u' &&
            is_low_surrogate(hex4(text, i + 8))) {
            return 12;  // a valid pair
        }
        if (is_high_surrogate(u) || is_low_surrogate(u)) {
            text.replace(i + 2, 4, "fffd");
            changed_any = true;
        }
        return 6;
    });
    if (!changed) return std::nullopt;
    return out;
}

std::optional<std::string> replace_nul_escapes(std::string_view body) {
    if (body.find("\\u0000") == std::string_view::npos) return std::nullopt;
    std::string out(body);
    const bool changed = rewrite_escapes(out, [](std::string& text, std::size_t i, bool& changed_any) -> std::size_t {
        if (i + 5 < text.size() && text.compare(i + 1, 5, "u0000") == 0) {
            text.replace(i + 4, 2, "7f");
            changed_any = true;
            return 6;
        }
        return 2;
    });
    if (!changed) return std::nullopt;
    return out;
}

void append_go_float(std::string& out, double d) {
    if (!std::isfinite(d)) {
        out.append("null");  // Go refuses to marshal these; JSON cannot carry them
        return;
    }
    const double a = std::fabs(d);
    const bool exponent = a != 0 && (a < 1e-6 || a >= 1e21);
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, d, exponent ? std::chars_format::scientific : std::chars_format::fixed);
    std::size_t n = static_cast<std::size_t>(r.ptr - buf);
    if (exponent && n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
        buf[n - 2] = buf[n - 1];  // e-07 → e-7, as Go cleans it
        --n;
    }
    out.append(buf, n);
}

namespace {

void append_value(std::string& out, const boost::json::value& v, bool sort_keys) {
    switch (v.kind()) {
    case boost::json::kind::null: out.append("null"); break;
    case boost::json::kind::bool_: out.append(v.get_bool() ? "true" : "false"); break;
    case boost::json::kind::int64: out.append(std::to_string(v.get_int64())); break;
    case boost::json::kind::uint64: out.append(std::to_string(v.get_uint64())); break;
    case boost::json::kind::double_: append_go_float(out, v.get_double()); break;
    case boost::json::kind::string: {
        const auto& s = v.get_string();
        append_quoted(out, std::string_view(s.data(), s.size()));
        break;
    }
    case boost::json::kind::array: {
        out.push_back('[');
        bool first = true;
        for (const auto& e : v.get_array()) {
            if (!first) out.push_back(',');
            first = false;
            append_value(out, e, sort_keys);
        }
        out.push_back(']');
        break;
    }
    case boost::json::kind::object: {
        const auto& o = v.get_object();
        std::vector<const boost::json::key_value_pair*> members;
        members.reserve(o.size());
        for (const auto& kv : o) members.push_back(&kv);
        if (sort_keys) {
            std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) { return a->key() < b->key(); });
        }
        out.push_back('{');
        bool first = true;
        for (const auto* kv : members) {
            if (!first) out.push_back(',');
            first = false;
            append_quoted(out, std::string_view(kv->key().data(), kv->key().size()));
            out.push_back(':');
            append_value(out, kv->value(), sort_keys);
        }
        out.push_back('}');
        break;
    }
    }
}

}  // namespace

void append_go_value(std::string& out, const boost::json::value& v) { append_value(out, v, true); }
void append_ordered_value(std::string& out, const boost::json::value& v) { append_value(out, v, false); }

}  // namespace fiskai::a2a::detail
