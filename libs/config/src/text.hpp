#pragma once
// Text helpers for config messages; Go's own (quoting, UTF-8, durations) are in gocompat.

#include <string>
#include <string_view>

namespace fiskai::config::detail {

// ASCII lower-casing; the values compared against it are ASCII.
[[nodiscard]] std::string ascii_lower(std::string_view s);

// Go's path/filepath.Base on a slash-separated path: trailing slashes dropped, "" is ".",
// all slashes is "/".
[[nodiscard]] std::string base_name(std::string_view path);

}  // namespace fiskai::config::detail
