#include "json_text.hpp"

#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/utf8.hpp>

#include <boost/json/value.hpp>

#include <cstdint>

namespace fiskai::a2a::detail {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

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

}  // namespace

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
        } else if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < s.size() &&
                   static_cast<unsigned char>(s[i + 1]) == 0x80 &&
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
            const auto r = gocompat::decode_rune(s, i);
            if (r.valid) {
                out.append(s.substr(i, r.size));
            } else {
                gocompat::append_utf8(out, 0xFFFD);
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
                        gocompat::append_utf8(out,
                                              static_cast<char32_t>(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)));
                        i += 6;
                        continue;
                    }
                }
                gocompat::append_utf8(
                    out, (is_high_surrogate(u) || is_low_surrogate(u)) ? 0xFFFD : static_cast<char32_t>(u));
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
    boost::json::parse_options o = gocompat::go_parse_options();
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

}  // namespace fiskai::a2a::detail
