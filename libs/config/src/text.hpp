#pragma once
// Text helpers that reproduce Go's standard library where config messages depend on it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::config::detail {

// One step of Go's UTF-8 decoding: the rune at the front of `s` and the bytes it used.
// Invalid or truncated sequences, overlong forms and surrogates give (0xFFFD, 1), as
// Go's utf8.DecodeRuneInString does.
struct decoded_rune {
    char32_t rune;
    std::size_t size;
};
[[nodiscard]] decoded_rune decode_rune(std::string_view s) noexcept;

// Go's strconv.Quote (the %q verb): printable runes verbatim, the usual backslash escapes,
// \x for invalid bytes and ASCII controls, \u / \U for other non-printable runes.
[[nodiscard]] std::string go_quote(std::string_view s);

// Go's strings.TrimSpace: strips Unicode white space at both ends.
[[nodiscard]] std::string_view trim_space(std::string_view s) noexcept;

// ASCII lower-casing; the values compared against it are ASCII.
[[nodiscard]] std::string ascii_lower(std::string_view s);

// Go's path/filepath.Base on a slash-separated path: trailing slashes dropped, "" is ".",
// all slashes is "/".
[[nodiscard]] std::string base_name(std::string_view path);

// Appends `s` to `out` as a JSON string literal.
void append_json_string(std::string& out, std::string_view s);

}  // namespace fiskai::config::detail
