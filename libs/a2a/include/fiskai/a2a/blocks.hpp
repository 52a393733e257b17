#pragma once
// The content blocks a task event carries. The wire discriminator `type` is synthesised
// from the C++ type on encode, so the two can never disagree.

#include <fiskai/a2a/error.hpp>
#include <fiskai/a2a/types.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace fiskai::a2a {

// Model reasoning. `signature` is opaque and provider-defined: carried for display and
// audit, never replayed into a model across the agent boundary.
struct thinking_block {
    static constexpr std::string_view type = "thinking";
    std::string text;
    std::string signature;
    std::string provider;

    friend bool operator==(const thinking_block&, const thinking_block&) = default;
};

struct text_block {
    static constexpr std::string_view type = "text";
    std::string text;

    friend bool operator==(const text_block&, const text_block&) = default;
};

struct tool_call_block {
    static constexpr std::string_view type = "tool_call";
    std::string id;
    std::string name;
    std::optional<raw_json> input;

    friend bool operator==(const tool_call_block&, const tool_call_block&) = default;
};

// Answers the tool_call whose id is `call_id`.
struct tool_result_block {
    static constexpr std::string_view type = "tool_result";
    std::string call_id;
    bool is_error = false;
    std::string output;
    std::optional<exec_result> exec;

    friend bool operator==(const tool_result_block&, const tool_result_block&) = default;
};

// A sub-task delegated to another agent; `task` is the sub-task's request id.
struct agent_call_block {
    static constexpr std::string_view type = "agent_call";
    std::string id;
    std::string name;
    std::string task;

    friend bool operator==(const agent_call_block&, const agent_call_block&) = default;
};

struct status_block {
    static constexpr std::string_view type = "status";
    std::int64_t iteration = 0;  // 1-based; 0 is omitted
    std::string phase;           // e.g. `calling-llm`, `executing-tool`
    std::optional<a2a::usage> usage;

    friend bool operator==(const status_block&, const status_block&) = default;
};

// A block of a kind this version does not know, kept as the peer sent it (compacted) and
// sent on unchanged.
class unknown_block {
public:
    // `raw` must be a JSON object whose `type` is a string naming no known kind.
    [[nodiscard]] static result<unknown_block> from_raw(raw_json raw);

    [[nodiscard]] const std::string& type() const noexcept { return type_; }
    [[nodiscard]] const raw_json& raw() const noexcept { return raw_; }

    friend bool operator==(const unknown_block&, const unknown_block&) = default;

private:
    unknown_block(std::string type, raw_json raw) : type_(std::move(type)), raw_(std::move(raw)) {}
    std::string type_;
    raw_json raw_;
};

// A content block. `std::monostate` is the empty block: it refuses to encode.
using block = std::variant<std::monostate, thinking_block, text_block, tool_call_block, tool_result_block,
                           agent_call_block, status_block, unknown_block>;

// The wire `type` of a block; empty for the empty block.
[[nodiscard]] std::string_view block_type(const block& b) noexcept;

// Whether `type` names one of the six kinds above.
[[nodiscard]] bool is_known_block_type(std::string_view type) noexcept;

}  // namespace fiskai::a2a
