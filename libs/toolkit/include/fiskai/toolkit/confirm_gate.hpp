#pragma once
// The confirm gate: a tool that needs approval runs only when a human says so.

#include <fiskai/toolkit/outcome.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include <boost/asio/awaitable.hpp>

#include <set>
#include <string>

namespace fiskai::toolkit {

class tool;

struct gate_decision {
    bool allowed = false;
    std::string reason;    // why it was denied or aborted; empty when allowed
    bool aborted = false;  // nobody answered: the call stays pending and is asked again on resume
};

// One gate per run. "Allow for the run" remembers the tool name (not the arguments) for
// the rest of the run; nothing is persisted. Not safe for concurrent use: one per run.
class confirm_gate {
public:
    // In order: no gate; the tool allowed for the run; nobody to ask (deny); the run already
    // cancelled (deny); then by the operator's reply: answered once/run (run), deny,
    // declined or unavailable (deny with the reason), cancelled (deny), silent (abort).
    boost::asio::awaitable<gate_decision> check(const tool& t, std::string command_line, std::string call_id,
                                                prompter& asker);

    [[nodiscard]] bool allowed_for_run(const std::string& tool_name) const { return allow_list_.contains(tool_name); }

private:
    std::set<std::string> allow_list_;
};

// The result a model sees when a gated call is denied. It is deliberately not an error
// result, so the model treats it as authoritative: {"allowed":false,"reason":"..."}.
[[nodiscard]] outcome denial_outcome(std::string reason);

// Reason texts, shared by every surface.
inline constexpr std::string_view reason_no_operator =
    "no interactive terminal is attached, so no operator could be asked";
inline constexpr std::string_view reason_declined =
    "the operator declined to permit this command; this decision is final, do not retry";

}  // namespace fiskai::toolkit
