#pragma once
// JSON text as Go's encoding/json reads and writes it. Internal to the library.
//
// Boost.JSON parses bodies into the tree that validation and the typed decode read; the
// functions here cover what that tree cannot: raw values kept as text (numbers and
// escapes as the peer wrote them), and Go's decoding of invalid UTF-8 and unpaired
// surrogates (each becomes U+FFFD, where Boost.JSON would refuse). Go's encoding of
// strings and values, UTF-8 and quoting live in fiskai::gocompat.
//
// The raw-text scanners assume their input is valid JSON (Boost.JSON accepted it) and are
// iterative, so no nesting depth can exhaust the stack.

#include <boost/json/fwd.hpp>
#include <boost/json/parse_options.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::a2a::detail {

// ---- raw JSON text (valid JSON assumed) ----

[[nodiscard]] std::size_t skip_space(std::string_view s, std::size_t i) noexcept;
// i at the opening quote; returns the index after the closing quote.
[[nodiscard]] std::size_t skip_string(std::string_view s, std::size_t i) noexcept;
// i at the first character of a value; returns the index after it.
[[nodiscard]] std::size_t skip_value(std::string_view s, std::size_t i) noexcept;

// The value with insignificant whitespace removed; everything else kept byte for byte.
[[nodiscard]] std::string compact(std::string_view json);

// Appends compact JSON as Go's json.Compact with escapeHTML does when it re-emits a
// RawMessage: `<` `>` `&` become \u003c \u003e \u0026, U+2028/U+2029 become \u2028/\u2029.
void append_raw(std::string& out, std::string_view compact_json);

// The decoded content of a JSON string token (quotes included), Go semantics.
[[nodiscard]] std::string unquote(std::string_view token);

// Calls f(key, value_text) for each member of the object at s[i] ('{'), in order.
template <class F>
void for_each_member(std::string_view s, F&& f) {
    std::size_t i = skip_space(s, 0);
    if (i >= s.size() || s[i] != '{') return;
    i = skip_space(s, i + 1);
    while (i < s.size() && s[i] == '"') {
        const std::size_t key_end = skip_string(s, i);
        const std::string_view key_token = s.substr(i, key_end - i);
        i = skip_space(s, key_end);
        i = skip_space(s, i + 1);  // ':'
        const std::size_t value_end = skip_value(s, i);
        f(key_token, s.substr(i, value_end - i));
        i = skip_space(s, value_end);
        if (i < s.size() && s[i] == ',') i = skip_space(s, i + 1);
    }
}

// Calls f(element_text) for each element of the array at s[0] ('[').
template <class F>
void for_each_element(std::string_view s, F&& f) {
    std::size_t i = skip_space(s, 0);
    if (i >= s.size() || s[i] != '[') return;
    i = skip_space(s, i + 1);
    while (i < s.size() && s[i] != ']') {
        const std::size_t end = skip_value(s, i);
        f(s.substr(i, end - i));
        i = skip_space(s, end);
        if (i < s.size() && s[i] == ',') i = skip_space(s, i + 1);
    }
}

// Whether a key token (quotes included) decodes to `name`.
[[nodiscard]] bool key_is(std::string_view key_token, std::string_view name);

// The text of the last member named `name` of the object `s` (Go and Boost.JSON both let
// the last duplicate win); nullopt when absent.
[[nodiscard]] std::optional<std::string_view> find_member(std::string_view s, std::string_view name);

// ---- parsing ----

// Go's depth bound (gocompat::go_max_depth), and invalid UTF-8 read as Go reads it.
[[nodiscard]] boost::json::parse_options parse_options() noexcept;

// Boost.JSON refuses `\ud800` and other unpaired surrogate escapes, which Go decodes as
// U+FFFD. This returns the body with each such escape rewritten to `\ufffd` (same
// length, so raw-text offsets stay valid), or nullopt when there is none.
[[nodiscard]] std::optional<std::string> replace_unpaired_surrogates(std::string_view body);

}  // namespace fiskai::a2a::detail
