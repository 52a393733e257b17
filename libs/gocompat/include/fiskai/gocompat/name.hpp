#pragma once
// The one name rule fisk-ai applies to every identity, tool name, NATS queue group and
// a2a request id: ^[a-zA-Z0-9_-]+$ (what the Go original checks with that pattern).

#include <cstddef>
#include <limits>
#include <string_view>

namespace fiskai::gocompat {

// Non-empty, at most `max_length` bytes, only ASCII letters, digits, `_` and `-`.
[[nodiscard]] bool is_valid_name(std::string_view name,
                                 std::size_t max_length = std::numeric_limits<std::size_t>::max()) noexcept;

// How an error text states the rule, for messages that tell the user the fix.
inline constexpr std::string_view name_rule = "it must contain only letters, digits, '-' or '_'";

}  // namespace fiskai::gocompat
