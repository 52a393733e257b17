#include "terminal_text.hpp"

#include <fiskai/gocompat/utf8.hpp>

#include <algorithm>
#include <cctype>
#include <vector>

namespace fiskai::app {

std::string terminal_safe(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n' || c == '\t') {
            out.push_back(static_cast<char>(c));
        } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            // CRLF: the line feed alone.
        } else if (c < 0x20) {
            out.push_back('^');
            out.push_back(static_cast<char>(c + 0x40));
        } else if (c == 0x7f) {
            out += "^?";
        } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.push_back(static_cast<char>(c));
        }
    }
    return out;
}

std::string one_line(std::string_view text, std::size_t max_runes) {
    std::string folded;
    folded.reserve(std::min(text.size(), max_runes * 4 + 4));
    bool pending_space = false;
    for (std::size_t i = 0; i < text.size();) {
        const auto r = gocompat::decode_rune(text, i);
        const auto bytes = text.substr(i, r.size);
        i += r.size;
        if (gocompat::is_space(r.rune)) {
            pending_space = !folded.empty();
            continue;
        }
        if (pending_space) folded += ' ';
        pending_space = false;
        folded.append(bytes);
        // Enough is kept to decide the cut; a peer's megabyte stops here.
        if (folded.size() > max_runes * 4 + 8) break;
    }
    const std::string shown = terminal_safe(folded);
    // Where each rune of what is shown starts, up to one past the bound.
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < shown.size() && starts.size() <= max_runes; ++i) {
        if ((static_cast<unsigned char>(shown[i]) & 0xC0) != 0x80) starts.push_back(i);
    }
    if (starts.size() <= max_runes) return shown;
    if (max_runes <= 3) return std::string("...").substr(0, max_runes);
    return shown.substr(0, starts[max_runes - 3]) + "...";
}

std::string shell_word(std::string_view word) {
    const auto plain = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               std::string_view("-_./:=@%+,").find(c) != std::string_view::npos;
    };
    if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return std::string(word);
    std::string out = "'";
    for (const char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

}  // namespace fiskai::app
