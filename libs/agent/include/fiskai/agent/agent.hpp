#pragma once
// The agent loop: one run of one session (serve.md §3, agent-llm-state.md §1). A run is an
// awaitable on the one io_context; it never throws for an outcome (completed, suspended,
// error, budget, max_iterations) and turns any other exception into a crash result.
// The runtime (provider, stores, tools) is built once and shared by every run; the HITL
// and memory built-ins are made per run.

#include <fiskai/config/config.hpp>
#include <fiskai/llm/types.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::llm {
class provider;
}  // namespace fiskai::llm
namespace fiskai::runstate {
class store;
}  // namespace fiskai::runstate
namespace fiskai::memory {
class store;
}  // namespace fiskai::memory
namespace fiskai::knowledge {
class store;
}  // namespace fiskai::knowledge
namespace fiskai::toolkit {
class prompter;
}  // namespace fiskai::toolkit

namespace fiskai::agent {

struct limits {
    std::int64_t max_tokens = config::default_max_tokens;
    std::int64_t max_iterations = config::default_max_iterations;
    std::int64_t max_output_tokens = 0;  // 0: the provider's built-in cap
    std::chrono::nanoseconds call_timeout = config::default_call_timeout;
    std::chrono::nanoseconds tool_timeout{0};  // 0: none (Go)

    // The operator's limits from a prepared configuration.
    [[nodiscard]] static limits from(const config::config& cfg);
};

// What a runtime's runs offer the model, kept between them (agent.cpp).
class offer_cache;
[[nodiscard]] std::shared_ptr<offer_cache> make_offer_cache();

// Built once per process, immutable, shared by every run.
struct runtime {
    std::shared_ptr<llm::provider> provider;
    std::shared_ptr<runstate::store> sessions;
    std::shared_ptr<memory::store> memory;  // null when harness.memory is off
    // Opened read-only once (knowledge::store::open); null when harness.knowledge is off.
    // Its built-ins and system note are offered to every run.
    std::shared_ptr<knowledge::store> knowledge;
    // Application, remote, MCP-client and custom tools, fixed at start, in definition order.
    toolkit::tool_list tools;
    config::config cfg;
    limits configured;  // fingerprinted (D16): never a work's lowered budget
    // The configuration file's path, named by start errors as Go does (`... in "<path>"`);
    // empty: `in the configuration`.
    std::string config_file;
    // The tool definitions and the fingerprint's hashes of the last run, reused by the next
    // run that offers the same tools and system prompt instead of being copied and hashed again.
    std::shared_ptr<offer_cache> offers = make_offer_cache();
};

enum class session_mode { open_or_create, follow_up };

// Soft stop: the run parks (suspended) at its next loop boundary. Never a cancellation.
class stop_gate {
public:
    void close() noexcept { closed_ = true; }
    [[nodiscard]] bool closed() const noexcept { return closed_; }

private:
    bool closed_ = false;
};

struct run_info {
    std::string session_id;
    std::vector<std::string> tools;  // model-facing names, in definition order
    bool resumed = false;
    bool follow_up = false;
    std::int64_t gated_tools = 0;
};

struct tool_call_trace {
    std::string call_id;
    std::string name;
    std::string display;  // what runs: a command line, or the tool's name
    toolkit::tool_kind kind = toolkit::tool_kind::function;
    std::string input;    // compact JSON arguments
    bool remote = false;  // dispatched to a peer agent (counted in stats::remote_tool_calls)
    std::string agent;    // the peer a remote tool runs on; empty for local tools
};

// What a command ran, for a command tool or a remote tool whose peer ran a command
// (a2a `tool_result.exec`).
struct exec_info {
    std::string command;  // path and arguments, space-joined, no binary path
    std::int64_t exit_code = 0;
    bool truncated = false;
};

struct tool_result_trace {
    std::string call_id;
    std::string name;
    std::string output;
    bool is_error = false;
    bool deferred = false;
    std::chrono::steady_clock::duration took{};
    bool remote = false;
    std::optional<exec_info> exec;  // set when a command ran (locally or on the peer)
};

// Go's warning kinds (`unknown_tool`, `missing_required`, `confirm_no_terminal`,
// `hitl_no_terminal`, `journal_terminal`, `journal_user`, `journal_close`, `resume_paused_turn`,
// `memory_index`, `tool_search_unsupported`, `tool_search_disabled`) plus
// `fingerprint_drift` and `unverified_effect`.
struct warning {
    std::string kind;
    std::string name;
    std::string detail;
    std::int64_t count = 0;
};

// Called on the io_context thread in run order; must not block. Defaults do nothing.
class event_sink {
public:
    virtual ~event_sink() = default;
    virtual void starting(const run_info& /*info*/) {}
    virtual void warn(const warning& /*w*/) {}
    // Phases from the loop: `calling-llm`, `executing-tool`. `iteration` is 1-based.
    virtual void status(std::int64_t /*iteration*/, std::string_view /*phase*/, const llm::usage& /*so_far*/) {}
    virtual void message(const llm::response& /*reply*/, bool /*terminal*/) {}
    virtual void tool_call(const tool_call_trace& /*trace*/) {}
    virtual void tool_result(const tool_result_trace& /*trace*/) {}
    virtual void crashed(std::string_view /*what*/) {}
};

// The sink that drops everything.
[[nodiscard]] event_sink& null_events() noexcept;

struct run_request {
    session_mode mode = session_mode::open_or_create;
    std::string session_id;
    // The opening prompt, or the follow-up text (may be empty). Empty opening prompt:
    // `assist the user` (Go).
    std::string prompt;
    limits effective;                    // configured, lowered by the work's budget
    toolkit::prompter* asker = nullptr;  // null: the default-deny prompter
    stop_gate* stop = nullptr;           // null: never parks
    event_sink* events = nullptr;        // null: null_events()
    std::string tool_work_dir;           // absolute existing directory, or empty
    // Go's `--force`: resume despite configuration drift (never across a provider
    // change). No channel takes it from the wire: a caller is not the operator who
    // changed the configuration; an operator's own entry point may set it.
    bool force = false;
};

// A question tool that answered with a deferral (its human has not answered yet).
struct deferred_call {
    std::string call_id;
    std::string tool;
    std::string question_id;
    std::string kind;  // confirm, select, input
    std::string question;
};

struct stats {
    std::int64_t llm_calls = 0;
    std::int64_t tool_calls = 0;
    std::int64_t remote_tool_calls = 0;
    llm::usage tokens;
};

struct run_result {
    std::string reason;  // completed|suspended|error|budget|max_iterations; "" when crashed
    std::string error;
    bool crashed = false;
    bool replayed = false;  // answered from the journal: no LLM call, no tool
    std::string session_id;
    std::string final_text;
    std::string model_stop_reason;
    stats counters;
    std::vector<deferred_call> deferred;
};

// The texts a run ends with (exact; agent-llm-state.md §1.5, serve.md §3.3).
namespace text {
inline constexpr std::string_view crashed =
    "internal error: fisk-ai crashed (a bug, not a model or tool failure); please report it";
inline constexpr std::string_view interrupted = "interrupted: the worker stopped before the run finished";
inline constexpr std::string_view refused = "model refused to respond";
inline constexpr std::string_view truncated =
    "model reply truncated at the output token limit; the answer is incomplete";
inline constexpr std::string_view default_prompt = "assist the user";
inline constexpr std::string_view resume_reminder =
    "This session was suspended and has now resumed. Tool results earlier in the conversation may be stale; "
    "re-verify current state before taking any state-changing action.";
// The result journaled for a call that was running when the worker stopped and whose
// tool is not read-only: it is never re-run silently.
inline constexpr std::string_view unverified_effect =
    "the worker stopped while this call ran; its effect is unknown: check before repeating it";
}  // namespace text

class agent {
public:
    agent(boost::asio::any_io_executor executor, std::shared_ptr<const runtime> shared);

    // Never throws for an outcome. Terminal cancellation of the awaiting coroutine is the
    // hard stop: the in-flight call or tool is abandoned and the session ends `suspended`
    // with text::interrupted.
    boost::asio::awaitable<run_result> run(run_request request);

private:
    boost::asio::any_io_executor executor_;
    std::shared_ptr<const runtime> shared_;
};

}  // namespace fiskai::agent
