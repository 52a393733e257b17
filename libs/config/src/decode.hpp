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

struct raw_a2a_prompts {
    bool elicitation = false;
    std::string question_timeout;
    std::string accept_window;
};

struct raw_a2a {
    bool serve_tools = false;
    raw_limits limits;
    std::optional<raw_a2a_prompts> prompts;
};

// Counts are read as int64 with their defaults in place, so an explicit 0 or an
// out-of-range value is refused by prepare with the key's own text.
struct raw_queue {
    queue_settings settings;  // names; ack_wait and max_deliver filled by prepare
    std::string ack_wait;
    std::int64_t max_deliver = default_queue_max_deliver;
};

struct raw_slack {
    slack_settings settings;  // question_timeout and max_admitted filled by prepare
    std::string question_timeout;
    std::int64_t max_admitted = default_slack_max_admitted;
};

struct raw_serve {
    std::int64_t workers = default_serve_workers;
    std::string drain_timeout;
    std::string report_timeout;
    std::optional<raw_queue> queue;
    std::optional<raw_slack> slack;
};

struct raw_mcp_server {
    mcp_server settings;  // timeouts filled by prepare
    std::string tool_timeout;
    std::string startup_timeout;
};

struct raw_config {
    config cfg;  // everything that needs no preparation
    std::optional<raw_mcp> mcp;
    std::optional<raw_a2a> a2a;
    raw_serve serve;
    std::vector<raw_mcp_server> mcp_servers;
    std::string harness_tool_timeout;
    std::int64_t llm_max_retries = default_llm_max_retries;
    std::string call_timeout;
    std::optional<std::string> embeddings_timeout;  // set when the embeddings block exists
};

// Throws config_error("parsing config: ...") on malformed YAML, unknown or duplicate keys,
// and values of the wrong type. An empty document decodes to the defaults.
[[nodiscard]] raw_config decode(std::string_view yaml_text);

}  // namespace fiskai::config::detail
