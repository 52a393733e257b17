#pragma once
// Rune-level helpers with Go's semantics: an invalid byte decodes as U+FFFD.

#include <cstdint>
#include <string>
#include <string_view>

namespace fiskai::memory::detail {

// Decodes the rune at s[i] and advances i; invalid or truncated sequences give U+FFFD
// and advance one byte, as Go's range over a string does.
inline char32_t next_rune(std::string_view s, std::size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    auto cont = [&](std::size_t k) { return k < s.size() && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80; };
    char32_t r = 0;
    std::size_t n = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        r = b0 & 0x1F;
        n = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        r = b0 & 0x0F;
        n = 2;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        r = b0 & 0x07;
        n = 3;
    } else {
        ++i;
        return 0xFFFD;
    }
    for (std::size_t k = 1; k <= n; ++k) {
        if (!cont(i + k)) {
            ++i;
            return 0xFFFD;
        }
        r = (r << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    if ((n == 2 && r < 0x800) || (n == 3 && (r < 0x10000 || r > 0x10FFFF)) || (r >= 0xD800 && r <= 0xDFFF)) {
        ++i;
        return 0xFFFD;
    }
    i += n + 1;
    return r;
}

inline void append_rune(std::string& out, char32_t r) {
    if (r < 0x80) {
        out.push_back(static_cast<char>(r));
    } else if (r < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (r >> 6)));
        out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
    } else if (r < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (r >> 12)));
        out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (r >> 18)));
        out.push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
    }
}

// Go's unicode.IsSpace.
inline bool is_space(char32_t r) {
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

// Controls (< 0x20, 0x7f) to spaces, whitespace runs to one space, trimmed (Go's
// strings.Map then strings.Fields joined by " "); the runes kept, counted.
inline std::string collapse_line(std::string_view s, std::size_t max_runes, bool& cut) {
    std::string out;
    out.reserve(s.size());
    std::size_t runes = 0;
    bool pending_space = false;
    cut = false;
    for (std::size_t i = 0; i < s.size();) {
        char32_t r = next_rune(s, i);
        if (r < 0x20 || r == 0x7f) r = ' ';
        if (is_space(r)) {
            pending_space = !out.empty();
            continue;
        }
        const std::size_t needed = pending_space ? 2 : 1;
        if (runes + needed > max_runes) {
            // The space before the cut rune would count too: Go truncates the joined text.
            if (pending_space && runes + 1 == max_runes) out.push_back(' ');
            cut = true;
            break;
        }
        if (pending_space) {
            out.push_back(' ');
            ++runes;
            pending_space = false;
        }
        append_rune(out, r);
        ++runes;
    }
    return out;
}

}  // namespace fiskai::memory::detail
