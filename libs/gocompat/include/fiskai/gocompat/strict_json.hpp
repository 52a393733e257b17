#pragma once
// Go's json.Decoder with DisallowUnknownFields decoding into a struct: the strict reading
// of a backend's options object.

#include <boost/json/fwd.hpp>
#include <boost/system/result.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace fiskai::gocompat {

// Reads `text` as a JSON object whose keys are all in `allowed`. Empty (or all white space)
// text and `null` give an empty object. On failure, the reason as one line, for the caller
// to prefix with what was being read: the parser's message, `want a JSON object, got a
// <kind>`, or `json: unknown field "<key>" (known: <allowed, comma-separated>)`.
[[nodiscard]] boost::system::result<boost::json::object, std::string> decode_strict_object(
    std::string_view text, const std::vector<std::string_view>& allowed);

}  // namespace fiskai::gocompat
