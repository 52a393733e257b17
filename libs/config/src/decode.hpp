#pragma once
// Strict YAML decoding into the config structure, before `prepare`. Values that prepare
// parses or checks (durations, confirm mode, builtins, counts) are kept raw here so that
// prepare can fail in the documented order with the documented texts.

#include <fiskai/config/config.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::config::detail {

struct raw_limits {
    std::int64_t max_concurrent_tools = 0;
    std::string tool_timeout;
};

struct raw_mcp {
    mcp_settings settings;  // limits, confirm mode and builtins filled by prepare
    std::string confirm_over_mcp;
    std::vector<std::string> builtins;
    raw_limits limits;
};

struct raw_a2a {
    bool serve_tools = false;
    raw_limits limits;
};

struct raw_config {
    config cfg;  // everything that needs no preparation
    std::optional<raw_mcp> mcp;
    std::optional<raw_a2a> a2a;
    std::string call_timeout;
    std::optional<std::string> embeddings_timeout;  // set when the embeddings block exists
};

// Throws config_error("parsing config: ...") on malformed YAML, unknown or duplicate keys,
// and values of the wrong type. An empty document decodes to the defaults.
[[nodiscard]] raw_config decode(std::string_view yaml_text);

}  // namespace fiskai::config::detail
