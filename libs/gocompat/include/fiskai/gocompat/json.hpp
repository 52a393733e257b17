#pragma once
// JSON text as Go's encoding/json writes it, for byte-for-byte parity with the Go
// original on the wire: escapeHTML on (`<`, `>`, `&` as \u003c \u003e \u0026), U+2028 and
// U+2029 escaped, \b and \f in their short forms (Go 1.22+), other controls as \u00XX,
// invalid UTF-8 as \ufffd, floats in Go's format, no whitespace.

#include <boost/json/fwd.hpp>
#include <boost/json/parse_options.hpp>

#include <cstddef>

#include <string>
#include <string_view>

namespace fiskai::gocompat {

// Go's encoding/json refuses nesting deeper than 10000. Boost.JSON's default bound is 32,
// which would refuse what a Go peer (a model's tool input, a journal) accepts and writes.
inline constexpr std::size_t go_max_depth = 10'000;
[[nodiscard]] inline boost::json::parse_options go_parse_options() noexcept {
    boost::json::parse_options o;
    o.max_depth = go_max_depth;
    return o;
}

// Appends `s` as a quoted JSON string (encodeState.string with escapeHTML).
void append_json_string(std::string& out, std::string_view s);
[[nodiscard]] std::string json_string(std::string_view s);

// Go's float64 encoding: the shortest digits that round-trip, 'f' format, or 'e' below
// 1e-6 and from 1e21 with a two-digit negative exponent cleaned (1e-07 -> 1e-7):
// 1.5, 100000, 1e+21, 1e-7, -0. NaN and infinities, which Go refuses to marshal and JSON
// cannot carry, are written as null.
void append_json_float(std::string& out, double d);

// How object keys are ordered: as stored (a struct, or JSON a tool returned), or sorted
// bytewise at every level (Go marshalling a map[string]any).
enum class key_order { stored, sorted };

// A parsed JSON value written compactly with Go's encoding. Integers are exact.
void append_json(std::string& out, const boost::json::value& v, key_order order = key_order::stored);
[[nodiscard]] std::string to_json(const boost::json::value& v, key_order order = key_order::stored);

// The JSON kind of a value as error messages name it: null, boolean, number, string,
// array, object.
[[nodiscard]] const char* json_kind_name(const boost::json::value& v) noexcept;

}  // namespace fiskai::gocompat
