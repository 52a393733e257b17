#pragma once
// The a2a channel's protocol decisions, free of I/O (serve.md §6.3, §6.4, §6.7, Amendments
// 2, 9, 11, 17): what a task request becomes (a work or a refusal), which terminal an
// outcome is, which event blocks a run event is, and how a question is resolved. The
// channel (a2a_channel.hpp) only moves bytes and timers around these functions.

#include <fiskai/a2a/blocks.hpp>
#include <fiskai/a2a/messages.hpp>
#include <fiskai/agent/agent.hpp>
#include <fiskai/llm/types.hpp>
#include <fiskai/serve/serve.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace fiskai::serve::a2a_rules {

// Refusal codes (§6.4 terminal mapping, Amendments 9 and 11).
namespace code {
inline constexpr std::string_view shutting_down = "shutting_down";
inline constexpr std::string_view invalid_budget = "invalid_budget";
inline constexpr std::string_view session_busy = "session_busy";
inline constexpr std::string_view transport = "transport";
inline constexpr std::string_view expired = "expired";
inline constexpr std::string_view duplicate_task = "duplicate_task";
inline constexpr std::string_view unknown_task = "unknown_task";
}  // namespace code

// The texts (exact).
namespace text {
inline constexpr std::string_view shutting_down = "the agent is shutting down and takes no new tasks; send it again";
inline constexpr std::string_view interrupted =
    "the worker stopped before the task finished; continue the task to resume it";
inline constexpr std::string_view encode_failed = "internal error: the reply could not be encoded";
}  // namespace text

// A request refused after it parsed: a negative ack (reason) and a terminal error (code).
struct refusal {
    std::string code;
    std::string reason;
    friend bool operator==(const refusal&, const refusal&) = default;
};

// A request that cannot be answered as a task (a hostile id, a bad sender): a 400 service
// error, no ack and no reply set, like a body that does not parse.
struct malformed {
    std::string text;
};

// What a request becomes before the store is asked whether its session exists.
struct admitted {
    std::string task;           // the `request` header: names the task (and its session)
    std::string id;             // the request's own id: keys its cancel/elicit subjects (Amendment 10)
    std::string sender;         // the caller's name
    bool continuation = false;  // request != id (D7)
    std::string session_id;     // a2a_session_id(identity, sender, task)
    std::string prompt;         // text + context block + tool hints (§6.3)
    serve::budget limits;
    bool stream = true;
};

struct admit_options {
    std::string_view identity;
    // Unset: no window (a queue job may wait in its stream for as long as the operator keeps it).
    std::optional<std::chrono::nanoseconds> accept_window{std::chrono::seconds(60)};
    std::chrono::system_clock::time_point now;
    std::span<const std::string> tool_names;  // the tools a run has, for tool hints
};

// §6.3 after the validator: ids and sender as subject tokens, the budget, the age
// (Amendment 9), the prompt.
// Whether a request's reply subject can be answered: a subject one may publish to (tokens
// of printable characters, none empty, no wildcard `*` or `>`). A request whose reply is a
// wildcard would send its reply set to everyone listening on what it matches; it is
// dropped unanswered.
[[nodiscard]] bool answerable(std::string_view reply_subject) noexcept;

[[nodiscard]] std::variant<admitted, refusal, malformed> admit(const a2a::task_request& request,
                                                               const admit_options& options);

// Amendment 11: a new task whose session exists is a duplicate; a continuation whose
// session does not exist is unknown; a session taken or running here is busy.
[[nodiscard]] std::optional<refusal> follow_up_rule(const admitted& a, bool session_exists, bool session_busy);

// `prompt` + `\n\n<context>\n<context>\n</context>` when there is context + `\n\nThe caller
// suggests these tools: a, b.` for the hints that name existing tools.
[[nodiscard]] std::string compose_prompt(std::string_view prompt, std::string_view context,
                                         std::span<const std::string> hints, std::span<const std::string> tool_names);

// The one terminal for an outcome (§6.4 terminal mapping; its header is left empty).
[[nodiscard]] a2a::message terminal_for(const outcome& o);
// A refusal's terminal: error{stop_reason: error, code, error: reason}.
[[nodiscard]] a2a::task_error refusal_terminal(const refusal& r);
// Amendment 17: what is sent when the terminal itself cannot be encoded or validated.
[[nodiscard]] a2a::task_error crashed_terminal();

// Event blocks (§6.4).
[[nodiscard]] a2a::usage to_wire_usage(const llm::usage& u) noexcept;
[[nodiscard]] a2a::status_block status_event(std::int64_t iteration, std::string_view phase, const llm::usage& u);
// thinking, text (non-empty) and tool_call per assistant block, in order; provider blocks
// are not emitted.
[[nodiscard]] std::vector<a2a::block> response_events(const llm::response& reply, std::string_view provider);
[[nodiscard]] a2a::tool_result_block tool_result_event(const agent::tool_result_trace& trace);

// One open question's slot. resolve() is the only writer of its state, open → delivered |
// given_up, so an answer and a give-up can never both win.
class question_slot {
public:
    enum class state { open, delivered, given_up };
    enum class verdict { answer, give_up };
    enum class effect {
        delivered,  // the answer is the question's reply
        given_up,   // the question closed unanswered
        late,       // an answer for a question already given up (the first one)
        ignored,    // anything later
    };
    effect resolve(verdict v) noexcept;
    [[nodiscard]] state current() const noexcept { return state_; }

private:
    state state_ = state::open;
    bool late_taken_ = false;
};

// What a question asks, as far as checking an answer needs.
struct question_shape {
    std::string kind;  // confirm, select, input, approval
    std::size_t options = 0;
};

// Why an answer does not fit the question (the WARN `ignoring answer for question <Q>:
// <why>`), or nullopt when it fits.
[[nodiscard]] std::optional<std::string> answer_mismatch(const question_shape& q, const a2a::task_answer& a);

// A fitting answer as the prompter's reply.
[[nodiscard]] toolkit::question_reply question_reply_from(const a2a::task_answer& a);
[[nodiscard]] toolkit::approval_reply approval_reply_from(const a2a::task_answer& a);

// §6.7 rule 6: late approval answers, kept per (session, call id) for the continuation's
// re-ask; in memory, each for `ttl`, at most `capacity` (the one closest to expiry goes).
class held_approvals {
public:
    explicit held_approvals(std::size_t capacity = 1024, std::chrono::hours ttl = std::chrono::hours(24))
        : capacity_(capacity), ttl_(ttl) {}
    void hold(const std::string& session, const std::string& call_id, toolkit::approval choice,
              std::chrono::steady_clock::time_point now);
    // The held answer, removed; nullopt when none (or expired).
    [[nodiscard]] std::optional<toolkit::approval> take(const std::string& session, const std::string& call_id,
                                                        std::chrono::steady_clock::time_point now);
    [[nodiscard]] std::size_t size() const noexcept { return held_.size(); }

private:
    struct entry {
        toolkit::approval choice = toolkit::approval::deny;
        std::chrono::steady_clock::time_point expires;
    };
    void prune(std::chrono::steady_clock::time_point now);
    std::size_t capacity_;
    std::chrono::hours ttl_;
    std::map<std::pair<std::string, std::string>, entry> held_;
};

// The window a question waits: question_timeout, floored at `floor` (30 s outside tests).
[[nodiscard]] std::chrono::nanoseconds question_window(std::chrono::nanoseconds question_timeout,
                                                       std::chrono::nanoseconds floor = std::chrono::seconds(30));

// Control characters become spaces; at most `max_runes` runes are kept.
[[nodiscard]] std::string sanitize(std::string_view s, std::size_t max_runes);

// The question for an approval and for a toolkit question.
[[nodiscard]] a2a::task_question approval_question(const toolkit::approval_request& r, std::string question_id,
                                                   std::chrono::nanoseconds window);
[[nodiscard]] a2a::task_question tool_question(const toolkit::question& q, std::string question_id,
                                               std::chrono::nanoseconds window);

}  // namespace fiskai::serve::a2a_rules
