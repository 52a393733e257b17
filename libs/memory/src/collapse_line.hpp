#pragma once
// The one-line form of a memory's description and of a built-in's shown text, with Go's
// rune semantics (gocompat/utf8.hpp): an invalid byte reads as U+FFFD.

#include <fiskai/gocompat/utf8.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace fiskai::memory::detail {

// Controls (< 0x20, 0x7f) to spaces, whitespace runs to one space, trimmed (Go's
// strings.Map then strings.Fields joined by " "); the runes kept, counted.
inline std::string collapse_line(std::string_view s, std::size_t max_runes, bool& cut) {
    std::string out;
    out.reserve(s.size());
    std::size_t runes = 0;
    bool pending_space = false;
    cut = false;
    for (std::size_t i = 0; i < s.size();) {
        const auto decoded = gocompat::decode_rune(s, i);
        i += decoded.size;
        char32_t r = decoded.rune;
        if (r < 0x20 || r == 0x7f) r = ' ';
        if (gocompat::is_space(r)) {
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
        gocompat::append_utf8(out, r);
        ++runes;
    }
    return out;
}

}  // namespace fiskai::memory::detail
