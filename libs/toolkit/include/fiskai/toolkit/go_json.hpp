#pragma once
// JSON text as Go's encoding/json writes it, for byte-for-byte parity with the original
// on the wire: `<`, `>` and `&` as \u003c \u003e \u0026, U+2028 and U+2029 escaped,
// invalid UTF-8 replaced by U+FFFD, no whitespace.

#include <boost/json/fwd.hpp>

#include <string>
#include <string_view>

namespace fiskai::toolkit {

// Appends `s` as a quoted JSON string.
void append_go_string(std::string& out, std::string_view s);
[[nodiscard]] std::string go_quote(std::string_view s);

// Serialises a parsed JSON value compactly with Go's string escaping. Object keys keep
// their order; numbers are written from their parsed form (integers exactly).
void append_go_json(std::string& out, const boost::json::value& v);
[[nodiscard]] std::string go_json(const boost::json::value& v);

// The JSON kind of a value as error messages name it: null, boolean, number, string,
// array, object.
[[nodiscard]] const char* json_kind_name(const boost::json::value& v) noexcept;

}  // namespace fiskai::toolkit
