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
#include <vector>

namespace fiskai::config {

// Which command is loading the file. The checks shared by every mode always run (A.14
// steps 2-4); the mode adds its own requirements.
enum class mode {
    agent,   // `run`: needs llm.model, and a prompt unless expose.agent.mcp is present
    mcp,     // `fisk-ai-mcp`: needs the expose.agent.mcp block
    server,  // `fisk-ai-a2a serve`: needs a2a.serve_tools, application_path, nats_context
    serve,   // `fisk-ai-serve`: validated like server for now, but requires nothing of a2a
    // `info` and `discover`: only the shared checks. The Go original used mcp mode here, but
    // mcp mode now insists on the expose.agent.mcp block, which info must not require.
    lenient,
};

// Every failure to read, decode, prepare or validate a configuration.
class config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

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

// expose.agent.a2a. Only serve_tools enables serving; the limits tune it.
struct a2a_settings {
    bool serve_tools = false;
    server_limits limits;
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
    bool no_tui = false;
    bool no_bell = false;
    memory_settings memory;
    session_settings sessions;
    knowledge_settings knowledge;
};

inline constexpr std::int64_t default_max_tokens = 200000;
inline constexpr std::int64_t default_max_iterations = 50;
inline constexpr std::chrono::nanoseconds default_call_timeout = std::chrono::seconds{120};

struct budget_settings {
    std::int64_t max_tokens = default_max_tokens;
    std::int64_t max_output_tokens = 0;  // 0: the provider's built-in default
    std::int64_t max_iterations = default_max_iterations;
    // Also the a2a client request timeout. Not sign-checked, as in the original.
    std::chrono::nanoseconds call_timeout = default_call_timeout;
};

struct llm_settings {
    std::string model;
    std::string provider = "anthropic";  // unknown values fail at run start, not here
    budget_settings budget;
    bool thinking_enabled = false;
    bool no_prompt_cache = false;
    bool no_tool_search = false;

    [[nodiscard]] bool prompt_cache_enabled() const noexcept { return !no_prompt_cache; }
    [[nodiscard]] bool tool_search_allowed() const noexcept { return !no_tool_search; }
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

    harness_settings harness;
    llm_settings llm;

    // Non-fatal notes found while preparing, without a "warning: " prefix, e.g. a remote
    // host whose include.tags will be ignored.
    std::vector<std::string> warnings;

    [[nodiscard]] bool mcp_enabled() const noexcept { return mcp.has_value(); }
    [[nodiscard]] bool a2a_serving_enabled() const noexcept { return a2a && a2a->serve_tools; }
    // harness.knowledge.directory, or knowledge/<identity>.
    [[nodiscard]] std::string knowledge_directory() const;
    // Names of environment variables holding secrets, to strip from the wrapped
    // application's environment: today only the embeddings api_key_env, while the vector
    // tier is on. Trimmed, empties dropped, de-duplicated.
    [[nodiscard]] std::vector<std::string> credential_env_names() const;
};

// Decodes, prepares (defaults, normalisation, durations) and validates for `m`.
// Decoding failures read `parsing config: <detail>`; the rest carry their own texts.
[[nodiscard]] config parse(std::string_view yaml_text, mode m);

// Reads the whole file and parses it. A read failure reads `reading config "<path>": ...`.
[[nodiscard]] config load_file(const std::string& path, mode m);

// The per-mode checks (A.14) on a prepared config; the first failure is thrown.
void validate_for_mode(const config& c, mode m);

// Folds the `run --state-dir` flag in: empty is a no-op; otherwise the session backend must
// be file, and its options become {"directory":"<dir>"}. Throws config_error, leaving `c`
// untouched, when the backend is not file.
void apply_state_dir(config& c, std::string_view dir);

}  // namespace fiskai::config
