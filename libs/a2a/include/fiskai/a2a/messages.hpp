#pragma once
// The ten messages. Every message is one flat JSON object: the header's fields first, then
// the payload's. There is no envelope, and nothing in a body but `protocol` says what
// kind of message it is; here that id is a property of the C++ type, never a field, so a
// value cannot claim to be something it is not.

#include <fiskai/a2a/blocks.hpp>
#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a/types.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace fiskai::a2a {

// The framing fields, in wire order after `protocol`. Stamping fills them (stamp.hpp).
struct header {
    std::string id;            // this message's id (a KSUID when minted here)
    std::string request;       // the originating request's id; on a request it equals `id`
    std::string conversation;  // stable across one session; a direct RPC uses the request id
    std::string parent;        // the request that spawned this one (multi-hop); omitted when empty
    std::uint64_t sequence = 0;
    timestamp time;   // advisory, for audit; never for ordering
    identity sender;  // unauthenticated assertion
    std::optional<identity> recipient;
    bool must_understand = false;  // omitted when false

    friend bool operator==(const header&, const header&) = default;
};

// "Describe yourself." Header only.
struct discovery_request : header {
    static constexpr std::string_view protocol = protocols::discovery_request;
    friend bool operator==(const discovery_request&, const discovery_request&) = default;
};

// The agent card, flat next to the header.
struct discovery_reply : header, agent_card {
    static constexpr std::string_view protocol = protocols::discovery_reply;
    friend bool operator==(const discovery_reply&, const discovery_reply&) = default;
};

// "Run tool `name`." Absent input means none; the server then passes `{}`.
struct tool_request : header {
    static constexpr std::string_view protocol = protocols::tool_request;
    std::string name;
    std::optional<raw_json> input;  // an object when present

    friend bool operator==(const tool_request&, const tool_request&) = default;
};

// The result of one tool call, flat next to the header.
struct tool_reply : header, tool_result {
    static constexpr std::string_view protocol = protocols::tool_reply;
    friend bool operator==(const tool_reply&, const tool_reply&) = default;
};

// Task flow (reserved): a task for the agent to run.
struct task_request : header {
    static constexpr std::string_view protocol = protocols::task_request;
    std::string prompt;
    std::string context;
    std::vector<std::string> tool_hints;
    std::optional<a2a::budget> budget;
    std::optional<bool> stream;  // unset or true: the caller wants the event stream

    [[nodiscard]] bool wants_stream() const noexcept { return stream.value_or(true); }
    friend bool operator==(const task_request&, const task_request&) = default;
};

// Task flow (reserved): one block of a task's reply set.
struct task_event : header {
    static constexpr std::string_view protocol = protocols::task_event;
    a2a::block block;

    friend bool operator==(const task_event&, const task_event&) = default;
};

// Task flow (reserved): the task ended. `stop_reason` is always sent.
struct task_result : header {
    static constexpr std::string_view protocol = protocols::task_result;
    std::string stop_reason;  // see stop_reasons; an unknown reason is carried
    std::string text;
    std::optional<a2a::usage> usage;

    friend bool operator==(const task_result&, const task_result&) = default;
};

// Task flow (reserved): the task failed. `error` is always sent, even when empty.
struct task_error : header {
    static constexpr std::string_view protocol = protocols::task_error;
    std::string stop_reason;
    std::string error;
    std::string code;  // machine-readable, free-form

    friend bool operator==(const task_error&, const task_error&) = default;
};

// Task flow (reserved): stop the task named by the `request` header.
struct task_cancel : header {
    static constexpr std::string_view protocol = protocols::task_cancel;
    std::string reason;

    friend bool operator==(const task_cancel&, const task_cancel&) = default;
};

// Task flow (reserved): whether a task was accepted. `accepted` is always sent.
struct task_ack : header {
    static constexpr std::string_view protocol = protocols::task_ack;
    bool accepted = false;
    std::string reason;  // why it was refused

    friend bool operator==(const task_ack&, const task_ack&) = default;
};

// Task flow: a question the worker puts to the caller's human. `kind` is a payload field
// (confirm, select, input, approval), not a discriminator.
struct task_question : header {
    static constexpr std::string_view protocol = protocols::task_question;
    std::string question_id;  // request_id pattern; minted per question
    std::string kind;
    std::string question;              // sanitized; for approval the prompt header
    std::vector<std::string> options;  // select: 1..25
    std::string default_value;         // input: `default` on the wire
    std::string call_id;               // the tool call the question belongs to
    std::string tool;                  // approval: the gated tool
    std::string command;               // approval: the sanitized command line
    std::string tag;                   // approval: the trigger tag
    std::string window;                // Go duration: how long the worker waits

    friend bool operator==(const task_question&, const task_question&) = default;
};

// Task flow: the answer to one question; exactly one answer field is set, and it is
// written whenever it is set, false, 0 and "" included.
struct task_answer : header {
    static constexpr std::string_view protocol = protocols::task_answer;
    std::string question_id;
    std::optional<bool> confirmed;
    std::optional<std::uint64_t> selected;  // index into the question's options
    std::optional<std::string> value;
    std::optional<std::string> decision;  // once, run, deny
    bool declined = false;
    std::string reason;  // with declined

    friend bool operator==(const task_answer&, const task_answer&) = default;
};

// Task flow: the sender is still there; with question_id, that question is still open.
struct task_keepalive : header {
    static constexpr std::string_view protocol = protocols::task_keepalive;
    std::string question_id;

    friend bool operator==(const task_keepalive&, const task_keepalive&) = default;
};

// Any message. The alternatives are in the order of protocols::all.
using message =
    std::variant<discovery_request, discovery_reply, tool_request, tool_reply, task_request, task_event, task_result,
                 task_error, task_cancel, task_ack, task_question, task_answer, task_keepalive>;

template <class T>
inline constexpr bool is_message_v = std::is_base_of_v<header, T>&& requires {
    T::protocol;
};

[[nodiscard]] std::string_view protocol_of(const message& m) noexcept;
[[nodiscard]] header& header_of(message& m) noexcept;
[[nodiscard]] const header& header_of(const message& m) noexcept;

}  // namespace fiskai::a2a
