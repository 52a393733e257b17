#pragma once
// The session journal's records (format version 3), as the Go original writes them: a
// run is an append-only sequence of self-describing records with a strictly increasing
// `seq` from 1. The codec writes Go's encoding/json bytes, so a journal written by either
// implementation folds and resumes in the other without drift. One record is one file
// line (file backend) or one message body (JetStream backend), byte-identical.

#include <fiskai/gocompat/time.hpp>
#include <fiskai/llm/types.hpp>
#include <fiskai/runstate/error.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fiskai::runstate {

// The only version fold accepts (older versions stored Anthropic wire types).
inline constexpr int format_version = 3;

// Protocol ids, carried in every record body.
namespace protocol {
inline constexpr std::string_view meta = "io.choria.fisk-ai.v1.session.meta";
inline constexpr std::string_view assistant = "io.choria.fisk-ai.v1.session.assistant";
inline constexpr std::string_view user = "io.choria.fisk-ai.v1.session.user";
inline constexpr std::string_view tool_result = "io.choria.fisk-ai.v1.session.tool_result";
inline constexpr std::string_view terminal = "io.choria.fisk-ai.v1.session.terminal";
}  // namespace protocol

// The configuration a run was started with, compared on resume. Field order is Go's.
struct fingerprint {
    std::string provider;  // a hard resume gate, excluded from diff()
    std::string model;
    std::string system_hash;    // lowercase hex SHA-256, see fingerprint.hpp
    std::string tools_hash;     // lowercase hex SHA-256, see fingerprint.hpp
    std::string thinking_mode;  // "off" or "summarized"
    std::int64_t max_tokens = 0;
    std::int64_t max_iterations = 0;

    friend bool operator==(const fingerprint&, const fingerprint&) = default;
};

struct meta_record {
    int version = format_version;
    std::string run_id;
    gocompat::go_time created;  // written as time.RFC3339Nano, offset kept
    runstate::fingerprint fingerprint;
    std::string prompt;        // always written, possibly empty
    bool interactive = false;  // omitted when false

    friend bool operator==(const meta_record&, const meta_record&) = default;
};

struct assistant_record {
    std::int64_t iteration = 0;
    llm::message message;     // role assistant
    std::string stop_reason;  // omitted when empty
    std::int64_t in_tokens = 0;
    std::int64_t out_tokens = 0;
    std::int64_t cache_read_tokens = 0;    // omitted when 0
    std::int64_t cache_create_tokens = 0;  // omitted when 0

    friend bool operator==(const assistant_record&, const assistant_record&) = default;
};

// A chat follow-up: only the newly typed block(s), never a merged view.
struct user_record {
    llm::message message;  // role user

    friend bool operator==(const user_record&, const user_record&) = default;
};

struct tool_result_record {
    std::string tool_use_id;
    llm::tool_result_block result;
    bool remote = false;  // omitted when false

    friend bool operator==(const tool_result_record&, const tool_result_record&) = default;
};

enum class terminal_reason { completed, suspended, error, budget, max_iterations };

// "completed", "suspended", "error", "budget", "max_iterations".
[[nodiscard]] std::string_view to_string(terminal_reason r) noexcept;
[[nodiscard]] std::optional<terminal_reason> parse_terminal_reason(std::string_view s) noexcept;

struct terminal_record {
    terminal_reason reason = terminal_reason::completed;
    std::string message;  // omitted when empty; the error text

    friend bool operator==(const terminal_record&, const terminal_record&) = default;
};

using payload = std::variant<meta_record, assistant_record, user_record, tool_result_record, terminal_record>;

struct record {
    std::uint64_t seq = 0;
    runstate::payload payload;

    // The protocol id of the payload's kind.
    [[nodiscard]] std::string_view protocol() const noexcept;

    friend bool operator==(const record&, const record&) = default;
};

// The record's JSON exactly as Go's json.Marshal writes it (no trailing newline).
[[nodiscard]] std::string encode_record(const record& r);

// Parses one stored record and checks it against its draft-07 schema (the ports of Go's
// session.*.json). Anything that is not a valid version-independent record of a known
// protocol is errc::corrupt, the message naming what is wrong. A meta record of another
// version decodes (fold refuses it with unsupported_version).
[[nodiscard]] result<record> decode_record(std::string_view json);

// Run ids: `^[a-zA-Z0-9][a-zA-Z0-9_-]*$`, at most 128 bytes. Every backend checks an id
// before any key or path use. Error: `invalid run id: "<id>" (use letters, digits, '-' or '_')`.
[[nodiscard]] result<void> validate_id(std::string_view id);

// The append contract every backend shares: a seq at or below last_seq is a duplicate
// (skip, crash-retry idempotence); last_seq + 1 is written; beyond that is
// `record seq gap: seq N skips ahead of M`. A backend advances last_seq only once the
// write is durable.
enum class append_action { write, skip };
[[nodiscard]] result<append_action> check_append(std::uint64_t last_seq, std::uint64_t seq);

}  // namespace fiskai::runstate
