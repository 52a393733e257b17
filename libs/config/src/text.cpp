#include "text.hpp"

namespace fiskai::config::detail {
namespace {

constexpr char32_t rune_error = 0xFFFD;
constexpr char hex_digits[] = "0123456789abcdef";

bool is_continuation(unsigned char c) noexcept { return (c & 0xC0U) == 0x80U; }

// Approximates Go's unicode.IsPrint for non-ASCII runes: letters, marks, numbers,
// punctuation and symbols print; controls, format characters, separators other than the
// ASCII space, private use and noncharacters do not. Unassigned code points are treated
// as printable, which only matters for text no config would contain.
bool is_print_non_ascii(char32_t r) noexcept {
    if (r >= 0x80 && r <= 0xA0) return false;  // C1 controls and NO-BREAK SPACE
    if (r == 0xAD) return false;               // SOFT HYPHEN (Cf)
    if (r == 0x1680) return false;
    if (r >= 0x2000 && r <= 0x200F) return false;  // spaces, zero-width, direction marks
    if (r >= 0x2028 && r <= 0x202F) return false;  // separators, embeddings, NNBSP
    if (r >= 0x205F && r <= 0x206F) return false;
    if (r == 0x3000 || r == 0xFEFF) return false;
    if (r >= 0xE000 && r <= 0xF8FF) return false;  // private use
    if (r >= 0xFFF9 && r <= 0xFFFB) return false;
    if ((r & 0xFFFEU) == 0xFFFEU) return false;  // noncharacters U+xxFFFE/U+xxFFFF
    if (r >= 0xF0000) return false;              // supplementary private use planes
    return true;
}

void append_hex_byte(std::string& out, unsigned char b) {
    out += "\\x";
    out += hex_digits[b >> 4U];
    out += hex_digits[b & 0xFU];
}

bool is_space_rune(char32_t r) noexcept {
    switch (r) {
    case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
    case 0x205F: case 0x3000:
        return true;
    default:
        return r >= 0x2000 && r <= 0x200A;
    }
}

}  // namespace

decoded_rune decode_rune(std::string_view s) noexcept {
    if (s.empty()) return {rune_error, 0};
    const auto b0 = static_cast<unsigned char>(s[0]);
    if (b0 < 0x80) return {b0, 1};
    std::size_t need = 0;
    char32_t r = 0;
    char32_t min = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1; r = b0 & 0x1FU; min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2; r = b0 & 0x0FU; min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3; r = b0 & 0x07U; min = 0x10000;
    } else {
        return {rune_error, 1};
    }
    if (s.size() < need + 1) return {rune_error, 1};
    for (std::size_t i = 1; i <= need; ++i) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (!is_continuation(b)) return {rune_error, 1};
        r = (r << 6U) | (b & 0x3FU);
    }
    if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) return {rune_error, 1};
    return {r, need + 1};
}

std::string go_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    while (!s.empty()) {
        const auto [r, size] = decode_rune(s);
        if (r == rune_error && size == 1) {
            append_hex_byte(out, static_cast<unsigned char>(s[0]));
        } else if (r == '"' || r == '\\') {
            out += '\\';
            out += static_cast<char>(r);
        } else if (r < 0x80 && r >= 0x20 && r != 0x7F) {
            out += static_cast<char>(r);
        } else if (r >= 0x80 && is_print_non_ascii(r)) {
            out.append(s.substr(0, size));
        } else {
            switch (r) {
            case '\a': out += "\\a"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\v': out += "\\v"; break;
            default:
                if (r < 0x20 || r == 0x7F) {
                    append_hex_byte(out, static_cast<unsigned char>(r));
                } else {
                    const bool wide = r > 0xFFFF;
                    out += wide ? "\\U" : "\\u";
                    for (int shift = wide ? 28 : 12; shift >= 0; shift -= 4) {
                        out += hex_digits[(r >> static_cast<unsigned>(shift)) & 0xFU];
                    }
                }
            }
        }
        s.remove_prefix(size);
    }
    out += '"';
    return out;
}

std::string_view trim_space(std::string_view s) noexcept {
    while (!s.empty()) {
        const auto [r, size] = decode_rune(s);
        if (!is_space_rune(r)) break;
        s.remove_prefix(size);
    }
    while (!s.empty()) {
        // Walk back to the start of the last rune.
        std::size_t start = s.size() - 1;
        while (start > 0 && s.size() - start < 4 && is_continuation(static_cast<unsigned char>(s[start]))) {
            --start;
        }
        const auto [r, size] = decode_rune(s.substr(start));
        if (start + size != s.size()) {
            // Not a well-formed final rune: a lone byte, which is never space.
            break;
        }
        if (!is_space_rune(r)) break;
        s.remove_suffix(size);
    }
    return s;
}

std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

std::string base_name(std::string_view path) {
    if (path.empty()) return ".";
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    if (path == "/") return "/";
    if (const auto slash = path.rfind('/'); slash != std::string_view::npos) {
        path.remove_prefix(slash + 1);
    }
    return std::string(path);
}

void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out += hex_digits[c >> 4U];
                out += hex_digits[c & 0xFU];
            } else {
                out += ch;
            }
        }
    }
    out += '"';
}

}  // namespace fiskai::config::detail
