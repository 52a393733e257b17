#pragma once
// The value types messages are built from: identities, times, raw JSON and the small
// records (usage, budget, exec result, tool descriptor, agent card).

#include <fiskai/a2a/error.hpp>

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fiskai::a2a {

namespace detail {
struct raw_json_access;
}  // namespace detail

// Who produced or should receive a message. Unauthenticated: used for logging and reply
// stamping, never for authorisation. `instance` is optional and omitted when empty.
struct identity {
    std::string name;
    std::string instance;

    friend bool operator==(const identity&, const identity&) = default;
};

// A point in time as the wire carries it: RFC 3339, nanosecond precision, and the zone
// offset it was written with (Go keeps a parsed offset and writes it back; times this
// library mints are UTC and written with `Z`).
class timestamp {
public:
    // Go's zero time, 0001-01-01T00:00:00Z.
    timestamp() noexcept;
    // A UTC instant, written with `Z`.
    explicit timestamp(std::chrono::sys_time<std::chrono::nanoseconds> utc) noexcept;

    [[nodiscard]] static timestamp now() noexcept;

    // Go's strict RFC 3339 parse: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`,
    // year 0000-9999, the fraction truncated to nanoseconds. Nothing else is accepted.
    [[nodiscard]] static std::optional<timestamp> parse(std::string_view text) noexcept;

    // RFC 3339 with the fraction's trailing zeros trimmed (and the dot dropped when it
    // is zero), `Z` for a zero offset: `2026-05-04T09:15:27.4829Z`.
    [[nodiscard]] std::string to_string() const;

    // Seconds since the Unix epoch of the instant (UTC), and the nanoseconds past it.
    [[nodiscard]] std::chrono::sys_seconds seconds() const noexcept { return seconds_; }
    [[nodiscard]] std::uint32_t nanoseconds() const noexcept { return nanos_; }
    // The offset the time is written with; zero means `Z`.
    [[nodiscard]] std::chrono::minutes offset() const noexcept { return offset_; }

    friend bool operator==(const timestamp&, const timestamp&) = default;

private:
    std::chrono::sys_seconds seconds_;
    std::uint32_t nanos_ = 0;
    std::chrono::minutes offset_{0};
};

// A JSON value carried verbatim: tool input, a tool's input schema, a block this version
// does not know. Held as compact text (insignificant whitespace removed); numbers and
// escapes stay exactly as written, never round-tripped through doubles.
class raw_json {
public:
    // `{}`.
    raw_json();

    // Checks that `text` is one JSON value and compacts it.
    [[nodiscard]] static result<raw_json> parse(std::string_view text);
    // Writes `v` as Go marshals a decoded generic map: object keys sorted at every
    // level, Go's string escaping and number formatting.
    [[nodiscard]] static raw_json from_value(const boost::json::value& v);

    [[nodiscard]] const std::string& text() const noexcept { return text_; }
    [[nodiscard]] bool is_object() const noexcept { return !text_.empty() && text_.front() == '{'; }
    // The value parsed (numbers become int64, uint64 or double).
    [[nodiscard]] boost::json::value to_value() const;

    friend bool operator==(const raw_json&, const raw_json&) = default;

private:
    friend struct detail::raw_json_access;
    explicit raw_json(std::string compact) : text_(std::move(compact)) {}
    std::string text_;
};

// Token counts; zero counts are omitted on the wire, so zero usage is `{}`.
struct usage {
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;

    friend bool operator==(const usage&, const usage&) = default;
};

// Limits a task request may lower; the receiver's own configuration is the ceiling.
struct budget {
    std::int64_t max_tokens = 0;
    std::int64_t max_iterations = 0;
    std::string call_timeout;  // a Go duration, e.g. `60s`

    friend bool operator==(const budget&, const budget&) = default;
};

// What a command run reported. An absent `exit_code` on the wire means 0.
struct exec_result {
    std::string command;  // the command path and arguments, space-joined, no binary path
    std::int64_t exit_code = 0;
    bool truncated = false;

    friend bool operator==(const exec_result&, const exec_result&) = default;
};

// The outcome of one tool call. `is_error` marks a harness failure (unknown tool, could
// not run, timed out): then `output` is the error text and `exec` is absent. A command
// that ran and exited non-zero is not an error; `exec->exit_code` tells it apart.
struct tool_result {
    bool is_error = false;
    std::string output;
    std::optional<exec_result> exec;

    friend bool operator==(const tool_result&, const tool_result&) = default;
};

// One tool an agent serves.
struct tool_descriptor {
    std::string name;
    std::string description;
    std::optional<raw_json> input_schema;

    friend bool operator==(const tool_descriptor&, const tool_descriptor&) = default;
};

// What an agent says about itself in a discovery reply.
struct agent_card {
    std::string name;
    std::string version;
    std::string description;
    std::vector<std::string> protocols;
    std::vector<tool_descriptor> tools;

    friend bool operator==(const agent_card&, const agent_card&) = default;
};

// Why a task run stopped. The wire carries a string; these are the values this version
// knows, and an unknown one is carried rather than refused.
namespace stop_reasons {
inline constexpr std::string_view end_turn = "end_turn";
inline constexpr std::string_view max_tokens = "max_tokens";
inline constexpr std::string_view refusal = "refusal";
inline constexpr std::string_view canceled = "canceled";
inline constexpr std::string_view error = "error";
inline constexpr std::string_view budget_exhausted = "budget_exhausted";
inline constexpr std::string_view suspended = "suspended";
inline constexpr std::string_view max_iterations = "max_iterations";
}  // namespace stop_reasons

[[nodiscard]] bool is_known_stop_reason(std::string_view reason) noexcept;

}  // namespace fiskai::a2a
