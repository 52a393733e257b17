#pragma once
// The neutral conversation types every provider maps to and from, and that the session
// journal stores (runstate writes them as Go's neutral message JSON). Nothing here knows
// a wire format.

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace fiskai::llm {

enum class role { user, assistant };

struct text_block {
    std::string text;
    friend bool operator==(const text_block&, const text_block&) = default;
};

// signature: opaque bytes from the provider, echoed back verbatim on the next request.
struct thinking_block {
    std::string text;
    std::string signature;
    friend bool operator==(const thinking_block&, const thinking_block&) = default;
};

struct tool_use_block {
    std::string id;
    std::string name;
    // The arguments as compact raw JSON of an object.
    std::string input;
    // Set when the model sent arguments that are not a JSON object: `input` is then `{}`
    // and this says what was wrong, so the loop can answer the call with that error.
    std::optional<std::string> input_error;
    friend bool operator==(const tool_use_block&, const tool_use_block&) = default;
};

struct tool_result_block {
    std::string tool_use_id;
    std::string content;
    bool is_error = false;
    friend bool operator==(const tool_result_block&, const tool_result_block&) = default;
};

// Any other block a provider returns (server tool use, search results, redacted
// thinking, ...), kept verbatim: `kind` is its `type`, `raw` its compact JSON.
struct provider_block {
    std::string kind;
    std::string raw;
    friend bool operator==(const provider_block&, const provider_block&) = default;
};

using content_block = std::variant<text_block, thinking_block, tool_use_block, tool_result_block, provider_block>;

struct message {
    role who = role::user;
    std::vector<content_block> content;
    friend bool operator==(const message&, const message&) = default;
};

struct tool_def {
    std::string name;
    std::string description;
    boost::json::object input_schema;
    bool defer_loading = false;
};

struct usage {
    std::int64_t in = 0;
    std::int64_t out = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_create = 0;
    friend bool operator==(const usage&, const usage&) = default;
};

struct request {
    std::string model;
    std::vector<std::string> system;
    std::vector<message> messages;
    std::vector<tool_def> tools;
    bool tool_search = false;
    bool thinking = false;
    bool prompt_cache = true;
    bool interactive = false;
    std::int64_t max_output_tokens = 0;
};

struct response {
    std::vector<content_block> content;
    // Passed through verbatim: an unknown stop reason survives.
    std::string stop_reason;
    usage used;
    std::string request_id;
};

struct capabilities {
    std::string provider;
    bool supports_tool_search = false;
};

}  // namespace fiskai::llm
