#pragma once
// Fold: a journal's records turned into the resumable state of its run (Go's Fold, rule
// for rule), free of I/O.

#include <fiskai/llm/types.hpp>
#include <fiskai/runstate/error.hpp>
#include <fiskai/runstate/records.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fiskai::runstate {

// Cumulative statistics, derived from the journal so they never drift from it.
struct counters {
    std::int64_t llm_calls = 0;
    std::int64_t tool_calls = 0;
    std::int64_t remote_tool_calls = 0;
    std::int64_t in_tokens = 0;
    std::int64_t out_tokens = 0;
    std::int64_t cache_read_tokens = 0;
    std::int64_t cache_create_tokens = 0;

    friend bool operator==(const counters&, const counters&) = default;
};

// An assistant turn whose tool calls are not all answered (journaled mid-batch).
struct pending_turn {
    llm::message assistant;
    std::int64_t iteration = 0;
    std::string stop_reason;
    std::vector<llm::tool_result_block> results;  // journal order
    std::set<std::string> answered;               // tool_use ids with a result

    friend bool operator==(const pending_turn&, const pending_turn&) = default;
};

struct run_state {
    int version = 0;
    std::string run_id;
    runstate::fingerprint fingerprint;
    std::string prompt;
    bool interactive = false;
    gocompat::go_time created;

    // The committed conversation; message 0 is the prompt as one user text block.
    std::vector<llm::message> messages;
    runstate::counters counters;
    std::int64_t next_iteration = 0;
    std::optional<pending_turn> pending;  // not in messages
    std::string last_stop_reason;
    std::optional<terminal_record> terminal;  // the last one journaled
    std::uint64_t last_seq = 0;

    // Additions over Go: the usage summed over the assistant records after the last
    // session.user record (all of them when there is none), and the iteration the turn
    // that record opened started at (0 without one).
    llm::usage turn_usage;
    std::int64_t turn_start_iteration = 0;

    // True only when the last terminal reason is `completed`.
    [[nodiscard]] bool completed() const noexcept {
        return terminal.has_value() && terminal->reason == terminal_reason::completed;
    }

    friend bool operator==(const run_state&, const run_state&) = default;
};

// Go's rules: `no records`, `first record is not meta`,
// `unsupported snapshot version: snapshot version X, supported 3`,
// `corrupt record sequence: seq N not increasing after M` (and the other corrupt cases).
[[nodiscard]] result<run_state> fold(const std::vector<record>& records);

}  // namespace fiskai::runstate
