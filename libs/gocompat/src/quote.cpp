#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/utf8.hpp>

namespace fiskai::gocompat {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

// strconv.IsPrint for non-ASCII runes: letters, marks, numbers, punctuation and symbols
// print; controls, format characters (Cf), separators other than the ASCII space,
// surrogates, private use and noncharacters do not. Go's tables also refuse unassigned
// code points; this does not carry the Unicode tables, so an unassigned rune prints
// verbatim where Go would write \u. Every assigned non-printable range is listed.
bool is_print_non_ascii(char32_t r) noexcept {
    if (r <= 0xA0) return false;                 // C1 controls and NO-BREAK SPACE
    if (r == 0xAD) return false;                 // SOFT HYPHEN
    if (r >= 0x600 && r <= 0x605) return false;  // Arabic number signs (Cf)
    if (r == 0x61C || r == 0x6DD || r == 0x70F || r == 0x8E2 || r == 0x180E) return false;
    if (r == 0x1680) return false;                 // OGHAM SPACE MARK
    if (r >= 0x2000 && r <= 0x200F) return false;  // spaces, zero-width, direction marks
    if (r >= 0x2028 && r <= 0x202F) return false;  // separators, embeddings, NNBSP
    if (r >= 0x205F && r <= 0x206F) return false;  // MMSP, invisible operators, isolates
    if (r == 0x3000 || r == 0xFEFF) return false;
    if (r >= 0xD800 && r <= 0xDFFF) return false;  // surrogates (never decoded as valid)
    if (r >= 0xE000 && r <= 0xF8FF) return false;  // private use
    if (r >= 0xFFF9 && r <= 0xFFFB) return false;  // interlinear annotation
    if ((r & 0xFFFEU) == 0xFFFEU) return false;    // noncharacters U+xxFFFE/U+xxFFFF
    if (r >= 0xFDD0 && r <= 0xFDEF) return false;  // noncharacters
    if (r == 0x110BD || r == 0x110CD) return false;
    if (r >= 0x13430 && r <= 0x1343F) return false;  // Egyptian hieroglyph format controls
    if (r >= 0x1BCA0 && r <= 0x1BCA3) return false;
    if (r >= 0x1D173 && r <= 0x1D17A) return false;
    if (r >= 0xE0000 && r <= 0xE007F) return false;  // tags
    if (r >= 0xF0000) return false;                  // supplementary private use planes
    return true;
}

void append_hex_byte(std::string& out, unsigned char b) {
    out += "\\x";
    out += hex_digits[b >> 4U];
    out += hex_digits[b & 0xFU];
}

}  // namespace

std::string quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out.push_back('"');
    for (std::size_t i = 0; i < s.size();) {
        const auto r = decode_rune(s, i);
        if (!r.valid) {
            append_hex_byte(out, static_cast<unsigned char>(s[i]));
            ++i;
            continue;
        }
        const char32_t c = r.rune;
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if ((c >= 0x20 && c < 0x7F) || (c >= 0x80 && is_print_non_ascii(c))) {
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
                        append_hex_byte(out, static_cast<unsigned char>(c));
                    } else {
                        const bool wide = c > 0xFFFF;
                        out.append(wide ? "\\U" : "\\u");
                        for (int shift = wide ? 28 : 12; shift >= 0; shift -= 4) {
                            out.push_back(hex_digits[(c >> static_cast<unsigned>(shift)) & 0xFU]);
                        }
                    }
            }
        }
        i += r.size;
    }
    out.push_back('"');
    return out;
}

std::string quote_bounded(std::string_view s, std::size_t limit) {
    if (s.size() <= limit) return quote(s);
    return quote(utf8_prefix(s, limit)) + "...";
}

}  // namespace fiskai::gocompat
