#pragma once
// Libraries log through a sink the application supplies; they never choose an output.

#include <functional>
#include <string_view>

namespace fiskai::a2a {

enum class log_level { debug, info, warn, error };

// One line: a message and its `key=value` attributes, already formatted
// (`Skipping tool: not a valid a2a tool name tool=a.b`). An empty logger drops everything.
using logger = std::function<void(log_level, std::string_view)>;

[[nodiscard]] std::string_view to_string(log_level l) noexcept;

}  // namespace fiskai::a2a
