#include <fiskai/gocompat/utf8.hpp>

namespace fiskai::gocompat {

namespace {

bool is_continuation(unsigned char c) noexcept { return (c & 0xC0U) == 0x80U; }

}  // namespace

bool is_space(char32_t r) noexcept {
    switch (r) {
        case '\t':
        case '\n':
        case '\v':
        case '\f':
        case '\r':
        case ' ':
        case 0x85:
        case 0xA0:
        case 0x1680:
        case 0x2028:
        case 0x2029:
        case 0x202F:
        case 0x205F:
        case 0x3000: return true;
        default: return r >= 0x2000 && r <= 0x200A;
    }
}

// Go's table-driven decoder restated: the first byte fixes the length and the range the
// second byte may take, which rules out overlong forms, surrogates and values past
// U+10FFFF without decoding first.
decoded_rune decode_rune(std::string_view s, std::size_t i) noexcept {
    if (i >= s.size()) return {rune_error, 0, false};
    constexpr decoded_rune bad{rune_error, 1, false};
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
    if (!is_continuation(b2)) return bad;
    if (size == 3) return {static_cast<char32_t>((b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F)), 3, true};
    const auto b3 = static_cast<unsigned char>(s[i + 3]);
    if (!is_continuation(b3)) return bad;
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
            append_utf8(out, rune_error);
        }
        i += r.size;
    }
    return out;
}

std::string_view trim_space(std::string_view s) noexcept {
    while (!s.empty()) {
        const auto r = decode_rune(s);
        if (!is_space(r.rune) || !r.valid) break;
        s.remove_prefix(r.size);
    }
    while (!s.empty()) {
        // Walk back to the start of the last rune.
        std::size_t start = s.size() - 1;
        while (start > 0 && s.size() - start < 4 && is_continuation(static_cast<unsigned char>(s[start]))) --start;
        const auto r = decode_rune(s, start);
        // Not a well-formed final rune: a lone byte, which is never space.
        if (start + r.size != s.size() || !r.valid || !is_space(r.rune)) break;
        s.remove_suffix(r.size);
    }
    return s;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) noexcept {
    if (max_bytes >= s.size()) return s;
    std::size_t cut = max_bytes;
    while (cut > 0 && is_continuation(static_cast<unsigned char>(s[cut]))) --cut;
    return s.substr(0, cut);
}

}  // namespace fiskai::gocompat
