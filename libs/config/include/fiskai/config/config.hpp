#pragma once
// The fisk-ai YAML configuration file: strict decoding, defaults and normalisation, and the
// validation each command applies. One file drives every command; `mode` says which
// command is loading it. All types are plain data: the YAML library stays in the sources.

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fiskai::config {

// Which command is loading the file. The checks shared by every mode always run (A.14
// steps 2-4); the mode adds its own requirements.
enum class mode {
    agent,   // `run`: needs llm.model, and a prompt unless expose.agent.mcp is present
    mcp,     // `fisk-ai-mcp`: needs the expose.agent.mcp block
    server,  // `fisk-ai-a2a serve`: needs a2a.serve_tools, application_path, nats_context
    serve,   // `fisk-ai-serve`: needs llm.model, system_prompt and at least one channel
    // `info` and `discover`: only the shared checks. The Go original used mcp mode here, but
    // mcp mode now insists on the expose.agent.mcp block, which info must not require.
    lenient,
};

// Every failure to read, decode, prepare or validate a configuration.
class config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Mode agent's text for a config without system_prompt (the Go original's words), named so
// that a command which also takes a prompt of its own can say which prompt is missing.
inline constexpr std::string_view agent_prompt_required = "prompt is required unless exposed over MCP";

// Tool selection: `tools` are unanchored RE2 patterns over the tool name, `tags` are exact
// tag strings ("" matches a tool with no tags). A filter with both lists empty is ignored.
struct filter {
    std::vector<std::string> tools;
    std::vector<std::string> tags;

    [[nodiscard]] bool empty() const noexcept { return tools.empty() && tags.empty(); }
};

// How a confirm-gated tool is approved over MCP.
enum class confirm_mode {
    auto_,   // elicit from clients that can, run ungated (with a warning) for the rest
    always,  // refuse a client that cannot elicit
    never,   // leave approval to the client's own UI
};

// "auto", "always" or "never".
[[nodiscard]] std::string_view to_string(confirm_mode m) noexcept;

inline constexpr int default_max_concurrent_tools = 2;
inline constexpr int max_concurrent_tools_ceiling = 1024;
inline constexpr std::chrono::nanoseconds default_tool_timeout = std::chrono::seconds{30};

// Concurrency and per-call time bounds for a server. Zero means "unset" in both fields, so
// the server default applies.
struct server_limits {
    int max_concurrent_tools = 0;
    std::chrono::nanoseconds tool_timeout{0};

    [[nodiscard]] int effective_concurrency() const noexcept {
        return max_concurrent_tools > 0 ? max_concurrent_tools : default_max_concurrent_tools;
    }
    [[nodiscard]] std::chrono::nanoseconds effective_timeout() const noexcept {
        return tool_timeout > std::chrono::nanoseconds::zero() ? tool_timeout : default_tool_timeout;
    }
};

// expose.agent.mcp. Port 0 and an empty address mean "unset": the command then applies
// its flag/env value or the defaults 8080 and 127.0.0.1.
struct mcp_settings {
    int port = 0;
    std::string address;
    std::string instructions;
    confirm_mode confirm_over_mcp = confirm_mode::auto_;
    // Normalised: trimmed, de-duplicated, each one of the exposable built-ins.
    std::vector<std::string> builtins;
    server_limits limits;
    bool serve_remote_tools = false;
    // Origin header values accepted in addition to the loopback ones.
    std::vector<std::string> allowed_origins;
    // Concurrent HTTP connections the listener keeps; 0 means the default.
    int max_connections = 0;

    [[nodiscard]] int effective_max_connections() const noexcept {
        return max_connections > 0 ? max_connections : default_max_connections;
    }
    static constexpr int default_max_connections = 256;
    static constexpr int max_connections_ceiling = 65536;
};

inline constexpr std::chrono::nanoseconds default_a2a_question_timeout = std::chrono::minutes{5};
inline constexpr std::chrono::nanoseconds default_a2a_accept_window = std::chrono::seconds{60};
// Three keepalive intervals: a shorter question timeout would close a question before a
// caller that is alive could prove it.
inline constexpr std::chrono::nanoseconds min_question_timeout = std::chrono::seconds{30};

// expose.agent.a2a.prompts: its presence enables the a2a channel (task requests).
struct a2a_prompts_settings {
    bool elicitation = false;  // supplies a prompter: questions travel over a2a
    std::chrono::nanoseconds question_timeout = default_a2a_question_timeout;  // floored at 30s
    // A request whose header time is older than this is refused as expired.
    std::chrono::nanoseconds accept_window = default_a2a_accept_window;
};

// expose.agent.a2a. serve_tools enables tool serving; the limits tune it; prompts enables
// the served agent's a2a channel.
struct a2a_settings {
    bool serve_tools = false;
    server_limits limits;
    std::optional<a2a_prompts_settings> prompts;
};

inline constexpr std::string_view default_queue_stream = "FISK_WORK";
inline constexpr std::string_view default_queue_task_store = "FISK_TASKS";
inline constexpr std::chrono::nanoseconds default_queue_ack_wait = std::chrono::seconds{30};
inline constexpr std::chrono::nanoseconds min_queue_ack_wait = std::chrono::seconds{3};
inline constexpr int default_queue_max_deliver = 5;
inline constexpr int max_queue_max_deliver = 100;

// expose.agent.queue: its presence enables the queue channel. Names only: the operator
// creates the stream, the bucket and the consumer; ack_wait and max_deliver are the values
// the worker expects to find on the consumer.
struct queue_settings {
    std::string stream{default_queue_stream};
    std::string task_store{default_queue_task_store};
    std::string consumer;  // defaults to the identity
    std::chrono::nanoseconds ack_wait = default_queue_ack_wait;
    int max_deliver = default_queue_max_deliver;
    // The operator's dead-letter stream for jobs past max deliveries or that are not tasks;
    // empty: none (allowed; the worker says so once at startup).
    std::string dead_letter;
};

inline constexpr std::string_view default_slack_app_token_env = "SLACK_APP_TOKEN";
inline constexpr std::string_view default_slack_bot_token_env = "SLACK_BOT_TOKEN";
inline constexpr std::string_view default_slack_api_base_url = "https://slack.com/api";
inline constexpr std::chrono::nanoseconds default_slack_question_timeout = std::chrono::minutes{10};
inline constexpr int default_slack_max_admitted = 64;
inline constexpr int max_slack_max_admitted = 1024;

// expose.agent.slack: its presence enables the Slack channel.
struct slack_settings {
    std::string app_token_env{default_slack_app_token_env};  // NAMES of environment variables
    std::string bot_token_env{default_slack_bot_token_env};
    std::string api_base_url{default_slack_api_base_url};  // the URL policy is applied at startup
    std::vector<std::string> channels;                     // channel ids; empty: any the bot is in
    std::vector<std::string> approvers;                    // user ids
    std::chrono::nanoseconds question_timeout = default_slack_question_timeout;  // floored at 30s
    int max_admitted = default_slack_max_admitted;
};

inline constexpr int default_serve_workers = 2;
inline constexpr int max_serve_workers = 256;
inline constexpr std::chrono::nanoseconds default_drain_timeout = std::chrono::minutes{10};
inline constexpr std::chrono::nanoseconds default_report_timeout = std::chrono::seconds{30};

// The served agent's keys directly under expose.agent, and its queue and Slack channels
// (the a2a channel is expose.agent.a2a.prompts).
struct serve_settings {
    int workers = default_serve_workers;                             // runs at once across all channels
    std::string work_dir;                                            // empty: the worker's cwd
    std::chrono::nanoseconds drain_timeout = default_drain_timeout;  // 0: wait forever
    std::chrono::nanoseconds report_timeout = default_report_timeout;
    std::optional<queue_settings> queue;
    std::optional<slack_settings> slack;
};

inline constexpr std::chrono::nanoseconds default_mcp_server_tool_timeout = std::chrono::seconds{60};
inline constexpr std::chrono::nanoseconds default_mcp_server_startup_timeout = std::chrono::seconds{30};

// One entry of mcp_servers: an MCP server whose tools a served run may call. Exactly one of
// command (stdio) and url (streamable HTTP) is set.
struct mcp_server {
    std::string name;
    std::string command;
    std::vector<std::string> args;
    std::string work_dir;
    std::vector<std::pair<std::string, std::string>> env;  // in file order, names unique
    std::vector<std::string> env_passthrough;
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers_env;  // header -> env var NAME
    std::string alias;
    filter include;  // tools only: MCP tools carry no tags
    filter exclude;
    bool confirm = true;  // every tool gated with trigger tag mcp:<name>
    std::chrono::nanoseconds tool_timeout = default_mcp_server_tool_timeout;
    std::chrono::nanoseconds startup_timeout = default_mcp_server_startup_timeout;

    [[nodiscard]] const std::string& effective_alias() const noexcept { return alias.empty() ? name : alias; }
};

// One entry of remote_tools: a peer agent whose tools are imported.
struct remote_host {
    std::string name;   // the peer's identity; keys the NATS subjects
    std::string alias;  // prefix used only when an imported name clashes
    filter include;     // include.tags is ignored (discovery carries no tags): a warning
    filter exclude;     // exclude.tags is rejected: an exclude that cannot be honoured

    [[nodiscard]] const std::string& effective_alias() const noexcept { return alias.empty() ? name : alias; }
};

// One entry of remote_agents: parsed and kept, used by nothing yet.
struct remote_agent {
    std::string name;
    std::string alias;
};

struct memory_settings {
    bool enabled = false;
    // "file" or "jetstream" (checked by the backend, not here); empty while disabled.
    std::string backend;
    bool no_index = false;
    // The options block as compact JSON, empty when absent or while memory is disabled.
    // Each backend decodes it strictly when the store is built.
    std::string options_json;

    [[nodiscard]] bool index_enabled() const noexcept { return enabled && !no_index; }
};

struct session_settings {
    std::string backend = "file";  // sessions cannot be disabled
    std::string options_json;      // compact JSON, empty when absent
};

inline constexpr std::chrono::nanoseconds default_embeddings_timeout = std::chrono::seconds{30};

struct embeddings_settings {
    std::string base_url;
    std::string model;
    std::string api_key_env;  // the NAME of an environment variable holding a bearer token
    std::chrono::nanoseconds timeout = default_embeddings_timeout;
    std::string query_prefix;
    std::string document_prefix;  // may contain {title}
};

inline constexpr int default_knowledge_top_k = 5;
inline constexpr int knowledge_top_k_ceiling = 20;
inline constexpr int default_knowledge_max_injected_tokens = 6000;

struct knowledge_settings {
    bool enabled = false;
    std::vector<std::string> paths;
    std::string directory;  // empty means knowledge/<identity>
    // Kept as written; the store applies the defaults and the ceiling (effective_*).
    int top_k = default_knowledge_top_k;
    int max_injected_tokens = default_knowledge_max_injected_tokens;
    // Present (even empty) turns on the vector tier when knowledge is enabled.
    std::optional<embeddings_settings> embeddings;

    [[nodiscard]] bool vector_tier() const noexcept { return enabled && embeddings.has_value(); }
    [[nodiscard]] int effective_top_k() const noexcept {
        if (top_k <= 0) return default_knowledge_top_k;
        return top_k > knowledge_top_k_ceiling ? knowledge_top_k_ceiling : top_k;
    }
    [[nodiscard]] int effective_max_injected_tokens() const noexcept {
        return max_injected_tokens > 0 ? max_injected_tokens : default_knowledge_max_injected_tokens;
    }
};

struct harness_settings {
    bool human_in_the_loop_enabled = false;
    // Normalised: trimmed, empties dropped, de-duplicated in first-seen order. Additive to
    // the always-on ai:confirm tag.
    std::vector<std::string> confirm_tags;
    // Per tool call in a served run; 0 means none (as Go). Never lowered by a work's budget.
    std::chrono::nanoseconds tool_timeout{0};
    bool no_tui = false;
    bool no_bell = false;
    memory_settings memory;
    session_settings sessions;
    knowledge_settings knowledge;
};

inline constexpr std::int64_t default_max_tokens = 200000;
inline constexpr std::int64_t default_max_iterations = 50;
inline constexpr std::chrono::nanoseconds default_call_timeout = std::chrono::seconds{120};
inline constexpr std::chrono::nanoseconds max_call_timeout = std::chrono::hours{24};

struct budget_settings {
    std::int64_t max_tokens = default_max_tokens;
    std::int64_t max_output_tokens = 0;  // 0: the provider's built-in default
    std::int64_t max_iterations = default_max_iterations;
    // Also the a2a client request timeout. More than zero and at most max_call_timeout
    // (the original took any value; zero or less timed every call out at once).
    std::chrono::nanoseconds call_timeout = default_call_timeout;
};

inline constexpr int default_llm_max_retries = 2;
inline constexpr int max_llm_max_retries = 10;

struct llm_settings {
    std::string model;
    std::string provider = "anthropic";  // "anthropic" or "openai"; checked at run start, not here
    std::string base_url;                // empty: the provider's; ANTHROPIC_/OPENAI_BASE_URL win
    std::string api_key_env;             // empty: ANTHROPIC_API_KEY or OPENAI_API_KEY by provider
    int max_retries = default_llm_max_retries;
    bool insecure_http = false;  // allows http to a non-loopback base_url
    budget_settings budget;
    bool thinking_enabled = false;
    bool no_prompt_cache = false;
    bool no_tool_search = false;

    [[nodiscard]] bool prompt_cache_enabled() const noexcept { return !no_prompt_cache; }
    [[nodiscard]] bool tool_search_allowed() const noexcept { return !no_tool_search; }
    // api_key_env, else the provider's conventional variable.
    [[nodiscard]] std::string effective_api_key_env() const;
};

inline constexpr std::string_view default_identity = "fisk-ai";

struct config {
    // Defaults to the base name of application_path, else "fisk-ai".
    std::string identity;
    std::string application_path;
    std::string nats_context;
    std::string system_prompt;
    filter include;
    filter exclude;
    // Normalised: trimmed, leading dashes stripped, empties dropped, de-duplicated.
    std::vector<std::string> global_flags;
    std::vector<remote_agent> remote_agents;
    std::vector<remote_host> remote_tools;

    // Presence of expose.agent.mcp is the opt-in for MCP serving.
    std::optional<mcp_settings> mcp;
    // Present when expose.agent.a2a was written; serving also needs serve_tools.
    std::optional<a2a_settings> a2a;
    // expose.agent.tools: narrows what MCP and a2a serve; it can only remove tools.
    filter expose_tools_include;
    filter expose_tools_exclude;

    // expose.agent.workers, work_dir, drain_timeout, report_timeout, queue, slack.
    serve_settings serve;
    // Top-level mcp_servers: outbound MCP servers for a served run.
    std::vector<mcp_server> mcp_servers;

    harness_settings harness;
    llm_settings llm;

    // Non-fatal notes found while preparing, without a "warning: " prefix, e.g. a remote
    // host whose include.tags will be ignored.
    std::vector<std::string> warnings;

    [[nodiscard]] bool mcp_enabled() const noexcept { return mcp.has_value(); }
    [[nodiscard]] bool a2a_serving_enabled() const noexcept { return a2a && a2a->serve_tools; }
    [[nodiscard]] bool a2a_channel_enabled() const noexcept { return a2a && a2a->prompts; }
    [[nodiscard]] bool queue_channel_enabled() const noexcept { return serve.queue.has_value(); }
    [[nodiscard]] bool slack_channel_enabled() const noexcept { return serve.slack.has_value(); }
    // harness.knowledge.directory, or knowledge/<identity>.
    [[nodiscard]] std::string knowledge_directory() const;
    // Names of environment variables holding secrets, to strip from the wrapped
    // application's and MCP servers' environments: the embeddings api_key_env while the
    // vector tier is on, the LLM key (llm.api_key_env or its provider default) and
    // OPENAI_API_KEY, the Slack token names while Slack is on, and every
    // mcp_servers[].headers_env variable. Trimmed, empties dropped, de-duplicated.
    [[nodiscard]] std::vector<std::string> credential_env_names() const;
};

// What the command line changes about the per-mode checks.
struct mode_options {
    // fisk-ai-serve --embedded-broker: the a2a keys then need no nats_context.
    bool embedded_broker = false;
};

// Decodes, prepares (defaults, normalisation, durations) and validates for `m`.
// Decoding failures read `parsing config: <detail>`; the rest carry their own texts.
[[nodiscard]] config parse(std::string_view yaml_text, mode m, const mode_options& options = {});

// Reads the whole file and parses it. A read failure reads `reading config "<path>": ...`.
[[nodiscard]] config load_file(const std::string& path, mode m, const mode_options& options = {});

// The per-mode checks (A.14) on a prepared config; the first failure is thrown.
void validate_for_mode(const config& c, mode m, const mode_options& options = {});

// The warnings that depend on the command (e.g. the queue with the file session backend
// under serve), without a "warning: " prefix. parse appends them to config::warnings.
[[nodiscard]] std::vector<std::string> mode_warnings(const config& c, mode m);

// Folds the `run --state-dir` flag in: empty is a no-op; otherwise the session backend must
// be file, and its options become {"directory":"<dir>"}. Throws config_error, leaving `c`
// untouched, when the backend is not file.
void apply_state_dir(config& c, std::string_view dir);

}  // namespace fiskai::config
