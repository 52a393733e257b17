#pragma once
// UTF-8 as Go's unicode/utf8 and strings packages read it. Go repairs rather than
// refuses: every byte that does not start a valid sequence stands for U+FFFD.

#include <cstddef>
#include <string>
#include <string_view>

namespace fiskai::gocompat {

inline constexpr char32_t rune_error = 0xFFFD;

// One step of utf8.DecodeRuneInString at s[i]: the rune and the bytes it used, or
// {U+FFFD, 1, false} for an invalid or truncated sequence, an overlong form, a surrogate
// or a code point past U+10FFFF. At or past the end: {U+FFFD, 0, false}.
struct decoded_rune {
    char32_t rune;
    std::size_t size;
    bool valid;
};
[[nodiscard]] decoded_rune decode_rune(std::string_view s, std::size_t i = 0) noexcept;

// Appends the UTF-8 encoding of a code point (callers pass valid scalar values).
void append_utf8(std::string& out, char32_t rune);

// utf8.ValidString.
[[nodiscard]] bool is_valid_utf8(std::string_view s) noexcept;

// Go's decoding of a string into valid text: every invalid byte becomes U+FFFD
// (strings.ToValidUTF8 would merge runs; encoding/json and range loops do not).
[[nodiscard]] std::string to_valid_utf8(std::string_view s);

// unicode.IsSpace: Latin-1 and Unicode White_Space.
[[nodiscard]] bool is_space(char32_t rune) noexcept;

// strings.TrimSpace: strips Unicode white space at both ends.
[[nodiscard]] std::string_view trim_space(std::string_view s) noexcept;

// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a UTF-8
// sequence: where to cut a bounded text.
[[nodiscard]] std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) noexcept;

}  // namespace fiskai::gocompat
