#include <fiskai/config/config.hpp>

#include "decode.hpp"
#include "text.hpp"

#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/name.hpp>
#include <fiskai/gocompat/quote.hpp>
#include <fiskai/gocompat/utf8.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace fiskai::config {
namespace {

constexpr std::string_view identity_rule = gocompat::name_rule;

// Trims, drops empties and de-duplicates in first-seen order; with `strip_dashes`, also
// strips every leading '-' so "--context" and "context" name the same flag.
std::vector<std::string> normalise_list(const std::vector<std::string>& in, bool strip_dashes) {
    std::vector<std::string> out;
    for (const auto& entry : in) {
        std::string_view v = gocompat::trim_space(entry);
        if (strip_dashes) {
            while (!v.empty() && v.front() == '-') v.remove_prefix(1);
        }
        if (v.empty()) continue;
        if (std::find(out.begin(), out.end(), v) == out.end()) out.emplace_back(v);
    }
    return out;
}

confirm_mode prepare_confirm_mode(const std::string& raw) {
    const std::string v = detail::ascii_lower(gocompat::trim_space(raw));
    if (v.empty() || v == "auto") return confirm_mode::auto_;
    if (v == "always") return confirm_mode::always;
    if (v == "never") return confirm_mode::never;
    // The raw value is quoted so stray whitespace or case is visible in the message.
    throw config_error(fmt::format("invalid confirm_over_mcp {}: must be auto, always or never", gocompat::quote(raw)));
}

constexpr std::array<std::string_view, 2> exposable_builtins{"knowledge_search", "knowledge_enumerate"};

std::vector<std::string> prepare_builtins(const std::vector<std::string>& raw, bool knowledge_enabled) {
    std::vector<std::string> out;
    for (const auto& entry : raw) {
        const std::string_view name = gocompat::trim_space(entry);
        if (name.empty()) continue;
        if (std::find(exposable_builtins.begin(), exposable_builtins.end(), name) == exposable_builtins.end()) {
            throw config_error(fmt::format(
                "expose.agent.mcp.builtins: {} cannot be exposed over MCP; the only exposable built-ins are the "
                "read-only knowledge_search and knowledge_enumerate (the memory and human_in_the_loop built-ins are "
                "never exposable because they need operator state or interaction)",
                gocompat::quote(name)));
        }
        if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
    }
    if (!out.empty() && !knowledge_enabled) {
        const std::string listed = fmt::format("{}", fmt::join(out, " and "));
        throw config_error(fmt::format(
            "expose.agent.mcp.builtins lists {} but knowledge is not enabled; add a harness.knowledge block with "
            "'enabled: true' or remove {} from builtins",
            listed, listed));
    }
    return out;
}

// One validator for both servers, parameterised by the block's path for the messages.
server_limits prepare_limits(const detail::raw_limits& raw, std::string_view path) {
    server_limits out;
    if (raw.max_concurrent_tools < 0) {
        throw config_error(
            fmt::format("invalid {}.max_concurrent_tools {}: must not be negative", path, raw.max_concurrent_tools));
    }
    if (raw.max_concurrent_tools > max_concurrent_tools_ceiling) {
        throw config_error(fmt::format("invalid {}.max_concurrent_tools {}: must not exceed {}", path,
                                       raw.max_concurrent_tools, max_concurrent_tools_ceiling));
    }
    out.max_concurrent_tools = static_cast<int>(raw.max_concurrent_tools);
    if (!raw.tool_timeout.empty()) {
        try {
            out.tool_timeout = gocompat::parse_duration(raw.tool_timeout);
        } catch (const gocompat::duration_error& e) {
            throw config_error(
                fmt::format("invalid {}.tool_timeout {}: {}", path, gocompat::quote(raw.tool_timeout), e.what()));
        }
        // Zero stays: it means "use the default", like leaving the key out.
        if (out.tool_timeout < std::chrono::nanoseconds::zero()) {
            throw config_error(fmt::format("invalid {}.tool_timeout {}: must not be negative", path,
                                           gocompat::quote(raw.tool_timeout)));
        }
    }
    return out;
}

void check_not_negative(std::int64_t value, std::string_view name) {
    if (value < 0) throw config_error(fmt::format("invalid llm {} {}: must not be negative", name, value));
}

void prepare_budget(budget_settings& b, const std::string& call_timeout) {
    check_not_negative(b.max_tokens, "max_tokens");
    check_not_negative(b.max_output_tokens, "max_output_tokens");
    check_not_negative(b.max_iterations, "max_iterations");
    if (b.max_tokens == 0) b.max_tokens = default_max_tokens;
    if (b.max_iterations == 0) b.max_iterations = default_max_iterations;
    if (call_timeout.empty()) {
        b.call_timeout = default_call_timeout;
        return;
    }
    try {
        b.call_timeout = gocompat::parse_duration(call_timeout);
    } catch (const gocompat::duration_error& e) {
        throw config_error(fmt::format("invalid llm call_timeout {}: {}", gocompat::quote(call_timeout), e.what()));
    }
    if (b.call_timeout <= std::chrono::nanoseconds::zero() || b.call_timeout > max_call_timeout) {
        throw config_error(fmt::format("invalid llm call_timeout {}: must be more than 0s and at most {}",
                                       gocompat::quote(call_timeout), gocompat::format_duration(max_call_timeout)));
    }
}

void prepare_embeddings_timeout(embeddings_settings& emb, const std::string& raw) {
    if (raw.empty()) {
        emb.timeout = default_embeddings_timeout;
        return;
    }
    // The message path omits "harness.", as the original's does.
    try {
        emb.timeout = gocompat::parse_duration(raw);
    } catch (const gocompat::duration_error& e) {
        throw config_error(fmt::format("invalid knowledge.embeddings.timeout {}: {}", gocompat::quote(raw), e.what()));
    }
    if (emb.timeout <= std::chrono::nanoseconds::zero()) {
        throw config_error(
            fmt::format("invalid knowledge.embeddings.timeout {}: must be positive", gocompat::quote(raw)));
    }
}

// A Go duration under `path`; empty text keeps `fallback`.
std::chrono::nanoseconds prepare_duration(const std::string& raw, std::string_view path,
                                          std::chrono::nanoseconds fallback) {
    if (raw.empty()) return fallback;
    try {
        return gocompat::parse_duration(raw);
    } catch (const gocompat::duration_error& e) {
        throw config_error(fmt::format("invalid {} {}: {}", path, gocompat::quote(raw), e.what()));
    }
}

std::chrono::nanoseconds prepare_non_negative(const std::string& raw, std::string_view path,
                                              std::chrono::nanoseconds fallback) {
    const auto d = prepare_duration(raw, path, fallback);
    if (d < std::chrono::nanoseconds::zero()) {
        throw config_error(fmt::format("invalid {} {}: must not be negative", path, gocompat::quote(raw)));
    }
    return d;
}

std::chrono::nanoseconds prepare_positive(const std::string& raw, std::string_view path,
                                          std::chrono::nanoseconds fallback) {
    const auto d = prepare_duration(raw, path, fallback);
    if (d <= std::chrono::nanoseconds::zero()) {
        throw config_error(fmt::format("invalid {} {}: must be positive", path, gocompat::quote(raw)));
    }
    return d;
}

int prepare_count(std::int64_t value, std::string_view path, int low, int high) {
    if (value < low || value > high) {
        throw config_error(fmt::format("invalid {} {}: must be between {} and {}", path, value, low, high));
    }
    return static_cast<int>(value);
}

// A question timeout below three keepalive intervals is raised to them, with a warning:
// the operator's intent (short questions) is kept as far as the protocol allows.
std::chrono::nanoseconds floor_question_timeout(std::chrono::nanoseconds d, std::string_view path, std::string_view why,
                                                std::vector<std::string>& warnings) {
    if (d >= min_question_timeout) return d;
    warnings.push_back(fmt::format("{} {} is below {}; using {}", path, gocompat::format_duration(d), why,
                                   gocompat::format_duration(min_question_timeout)));
    return min_question_timeout;
}

// Stream, bucket and consumer names become subjects and API paths on the broker; a name
// the broker would refuse is refused here, naming the key, rather than at the first use.
void check_jetstream_name(const std::string& name, std::string_view path) {
    const bool bad = std::any_of(name.begin(), name.end(), [](char ch) {
        return ch == '.' || ch == '*' || ch == '>' || ch == '/' || ch == '\\' ||
               std::isspace(static_cast<unsigned char>(ch)) != 0 || static_cast<unsigned char>(ch) < 0x20;
    });
    if (bad) {
        throw config_error(
            fmt::format("invalid {} {}: a JetStream name must not contain '.', '*', '>', '/', '\\' or whitespace", path,
                        gocompat::quote(name)));
    }
}

void prepare_serve(detail::raw_serve& raw, config& c) {
    serve_settings& s = c.serve;
    s.workers = prepare_count(raw.workers, "expose.agent.workers", 1, max_serve_workers);
    s.drain_timeout = prepare_non_negative(raw.drain_timeout, "expose.agent.drain_timeout", default_drain_timeout);
    s.report_timeout = prepare_positive(raw.report_timeout, "expose.agent.report_timeout", default_report_timeout);
    if (raw.queue) {
        queue_settings q = std::move(raw.queue->settings);
        if (q.stream.empty()) q.stream = default_queue_stream;
        if (q.task_store.empty()) q.task_store = default_queue_task_store;
        if (q.consumer.empty()) q.consumer = c.identity;
        check_jetstream_name(q.stream, "expose.agent.queue.stream");
        check_jetstream_name(q.task_store, "expose.agent.queue.task_store");
        check_jetstream_name(q.consumer, "expose.agent.queue.consumer");
        if (!q.dead_letter.empty()) check_jetstream_name(q.dead_letter, "expose.agent.queue.dead_letter");
        q.ack_wait = prepare_duration(raw.queue->ack_wait, "expose.agent.queue.ack_wait", default_queue_ack_wait);
        if (q.ack_wait < min_queue_ack_wait) {
            throw config_error(fmt::format("invalid expose.agent.queue.ack_wait {}: must be at least {}",
                                           gocompat::quote(raw.queue->ack_wait),
                                           gocompat::format_duration(min_queue_ack_wait)));
        }
        q.max_deliver =
            prepare_count(raw.queue->max_deliver, "expose.agent.queue.max_deliver", 1, max_queue_max_deliver);
        s.queue = std::move(q);
    }
    if (raw.slack) {
        slack_settings sl = std::move(raw.slack->settings);
        const auto trimmed = [](std::string& v, std::string_view fallback) {
            v = std::string(gocompat::trim_space(v));
            if (v.empty()) v = fallback;
        };
        trimmed(sl.app_token_env, default_slack_app_token_env);
        trimmed(sl.bot_token_env, default_slack_bot_token_env);
        trimmed(sl.api_base_url, default_slack_api_base_url);
        sl.channels = normalise_list(sl.channels, false);
        sl.approvers = normalise_list(sl.approvers, false);
        sl.question_timeout =
            floor_question_timeout(prepare_duration(raw.slack->question_timeout, "expose.agent.slack.question_timeout",
                                                    default_slack_question_timeout),
                                   "expose.agent.slack.question_timeout", "the minimum (30s)", c.warnings);
        sl.max_admitted =
            prepare_count(raw.slack->max_admitted, "expose.agent.slack.max_admitted", 1, max_slack_max_admitted);
        s.slack = std::move(sl);
    }
}

constexpr std::size_t max_mcp_server_name = 64;

void prepare_mcp_servers(std::vector<detail::raw_mcp_server>& raw, config& c) {
    for (std::size_t i = 0; i < raw.size(); ++i) {
        mcp_server server = std::move(raw[i].settings);
        const std::string at = fmt::format("mcp_servers[{}]", i);
        // The name becomes the trigger tag mcp:<name> and the default tool prefix.
        if (!gocompat::is_valid_name(server.name, max_mcp_server_name)) {
            throw config_error(fmt::format("{}.name {} is invalid", at, gocompat::quote(server.name)));
        }
        for (const auto& earlier : c.mcp_servers) {
            if (earlier.name == server.name) {
                throw config_error(fmt::format("mcp_servers: duplicate name {}", gocompat::quote(server.name)));
            }
        }
        if (server.command.empty() == server.url.empty()) {
            throw config_error(fmt::format("{} needs exactly one of command or url", at));
        }
        if (!server.alias.empty() && !gocompat::is_valid_name(server.alias)) {
            throw config_error(fmt::format("{}.alias {} is invalid: {} (it prefixes the server's tool names)", at,
                                           gocompat::quote(server.alias), identity_rule));
        }
        // Fail closed: MCP tools carry no tags, so a tag filter could never be honoured.
        for (const auto* f : {&server.include, &server.exclude}) {
            if (!f->tags.empty()) {
                throw config_error(fmt::format(
                    "{}.{}.tags cannot be honoured: MCP tools carry no tags; filter by "
                    "tool name with {}.tools instead",
                    at, f == &server.include ? "include" : "exclude", f == &server.include ? "include" : "exclude"));
            }
        }
        for (const auto& [header, variable] : server.headers_env) {
            if (gocompat::trim_space(variable).empty()) {
                throw config_error(fmt::format("{}.headers_env.{} names no environment variable", at, header));
            }
        }
        server.tool_timeout =
            prepare_positive(raw[i].tool_timeout, at + ".tool_timeout", default_mcp_server_tool_timeout);
        server.startup_timeout =
            prepare_positive(raw[i].startup_timeout, at + ".startup_timeout", default_mcp_server_startup_timeout);
        c.mcp_servers.push_back(std::move(server));
    }
}

// Defaults, normalisation and duration parsing, in the original's order (A.2): the first
// failure wins, so a file with several mistakes reports the same one in both ports.
config prepare(detail::raw_config raw) {
    config c = std::move(raw.cfg);

    if (c.identity.empty()) {
        c.identity = c.application_path.empty() ? std::string(default_identity) : detail::base_name(c.application_path);
    }
    c.harness.confirm_tags = normalise_list(c.harness.confirm_tags, false);
    c.global_flags = normalise_list(c.global_flags, true);

    if (raw.mcp) {
        mcp_settings m = std::move(raw.mcp->settings);
        m.confirm_over_mcp = prepare_confirm_mode(raw.mcp->confirm_over_mcp);
        m.builtins = prepare_builtins(raw.mcp->builtins, c.harness.knowledge.enabled);
        m.limits = prepare_limits(raw.mcp->limits, "expose.agent.mcp");
        if (m.max_connections < 0 || m.max_connections > mcp_settings::max_connections_ceiling) {
            throw config_error(fmt::format(
                "invalid expose.agent.mcp.max_connections {}: must be 0 (the default, {}) "
                "to {}",
                m.max_connections, mcp_settings::default_max_connections, mcp_settings::max_connections_ceiling));
        }
        c.mcp = std::move(m);
    }
    if (raw.a2a) {
        a2a_settings a;
        a.serve_tools = raw.a2a->serve_tools;
        a.limits = prepare_limits(raw.a2a->limits, "expose.agent.a2a");
        if (raw.a2a->prompts) {
            const auto& rp = *raw.a2a->prompts;
            a2a_prompts_settings& p = a.prompts.emplace();
            p.elicitation = rp.elicitation;
            p.question_timeout = floor_question_timeout(
                prepare_duration(rp.question_timeout, "expose.agent.a2a.prompts.question_timeout",
                                 default_a2a_question_timeout),
                "expose.agent.a2a.prompts.question_timeout", "three keepalive intervals (30s)", c.warnings);
            p.accept_window =
                prepare_positive(rp.accept_window, "expose.agent.a2a.prompts.accept_window", default_a2a_accept_window);
        }
        c.a2a = a;
    }
    prepare_serve(raw.serve, c);
    prepare_mcp_servers(raw.mcp_servers, c);
    c.harness.tool_timeout = prepare_non_negative(raw.harness_tool_timeout, "harness.tool_timeout", {});
    c.llm.max_retries = prepare_count(raw.llm_max_retries, "llm.max_retries", 0, max_llm_max_retries);
    prepare_budget(c.llm.budget, raw.call_timeout);
    if (c.harness.knowledge.embeddings && raw.embeddings_timeout) {
        prepare_embeddings_timeout(*c.harness.knowledge.embeddings, *raw.embeddings_timeout);
    }

    if (c.llm.provider.empty()) c.llm.provider = "anthropic";
    // A disabled memory reports no backend and no options, so nothing downstream can act
    // on settings the operator switched off.
    auto& memory = c.harness.memory;
    if (memory.enabled) {
        if (memory.backend.empty()) memory.backend = "file";
    } else {
        memory.backend.clear();
        memory.options_json.clear();
    }
    if (c.harness.sessions.backend.empty()) c.harness.sessions.backend = "file";

    // A tags-only include widens nothing the operator could not already see, so it is a
    // warning rather than an error (an unhonoured exclude is an error, see validate).
    for (const auto& host : c.remote_tools) {
        if (!host.include.tags.empty()) {
            c.warnings.push_back(
                fmt::format("remote agent {} include filter uses tags, which discovery does not carry; the tag "
                            "filter was ignored (filter by tool name instead)",
                            gocompat::quote(host.name)));
        }
    }
    return c;
}

void validate_remote_host(const remote_host& host) {
    if (host.name.empty()) throw config_error("remote_tools host is missing a name");
    if (!gocompat::is_valid_name(host.name)) {
        throw config_error(fmt::format("remote_tools host name {} is invalid: {} (it keys the NATS subjects)",
                                       gocompat::quote(host.name), identity_rule));
    }
    if (!host.alias.empty() && !gocompat::is_valid_name(host.alias)) {
        throw config_error(
            fmt::format("remote_tools host {} has an invalid alias {}: {} (it prefixes imported tool names)",
                        gocompat::quote(host.name), gocompat::quote(host.alias), identity_rule));
    }
    // Fail closed: an exclude that cannot be honoured would import a tool the operator
    // meant to remove.
    if (!host.exclude.tags.empty()) {
        throw config_error(fmt::format(
            "remote_tools host {} has an exclude.tags filter, which cannot be honored: discovery does not carry tags, "
            "so a tool excluded by tag would be imported anyway; exclude by tool name instead",
            gocompat::quote(host.name)));
    }
}

void require_server_basics(const config& c) {
    if (c.application_path.empty()) {
        throw config_error(
            "application_path is required for the a2a server: a2a serves the wrapped application's tools and cannot "
            "serve the built-in tools");
    }
    if (c.nats_context.empty()) throw config_error("nats_context is required for the a2a server");
}

// Go's os.ReadFile error texts ("open <path>: no such file or directory"), which use the
// lower-case errno strings.
std::string os_error(std::string_view op, const std::string& path, int err) {
    std::string message = std::generic_category().message(err);
    if (!message.empty() && message[0] >= 'A' && message[0] <= 'Z')
        message[0] = static_cast<char>(message[0] - 'A' + 'a');
    return fmt::format("{} {}: {}", op, path, message);
}

std::string read_whole_file(const std::string& path) {
    const auto fail = [&](std::string_view op, int err) -> config_error {
        return config_error(fmt::format("reading config {}: {}", gocompat::quote(path), os_error(op, path, err)));
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw fail("open", errno);
    std::string content;
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            throw fail("read", err);
        }
        if (n == 0) break;
        content.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return content;
}

}  // namespace

std::string_view to_string(confirm_mode m) noexcept {
    switch (m) {
        case confirm_mode::always: return "always";
        case confirm_mode::never: return "never";
        case confirm_mode::auto_: break;
    }
    return "auto";
}

std::string config::knowledge_directory() const {
    if (!harness.knowledge.directory.empty()) return harness.knowledge.directory;
    return "knowledge/" + identity;
}

std::string llm_settings::effective_api_key_env() const {
    const std::string_view name = gocompat::trim_space(api_key_env);
    if (!name.empty()) return std::string(name);
    return provider == "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY";
}

std::vector<std::string> config::credential_env_names() const {
    std::vector<std::string> out;
    const auto add = [&out](std::string_view raw) {
        const std::string_view name = gocompat::trim_space(raw);
        if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
    };
    if (harness.knowledge.vector_tier()) add(harness.knowledge.embeddings->api_key_env);
    add(llm.effective_api_key_env());
    // Named even when another provider is configured: a key in the environment is a
    // secret whichever provider the file selects.
    add("OPENAI_API_KEY");
    if (serve.slack) {
        add(serve.slack->app_token_env);
        add(serve.slack->bot_token_env);
    }
    for (const auto& server : mcp_servers) {
        for (const auto& header : server.headers_env) add(header.second);
    }
    return out;
}

namespace {

// fisk-ai-serve (§10), after the shared checks; the first failure is thrown.
void validate_serve(const config& c, const mode_options& options) {
    if (c.llm.model.empty()) throw config_error("llm.model is required");
    if (c.system_prompt.empty()) throw config_error("system_prompt is required for fisk-ai-serve");
    if (!c.a2a_channel_enabled() && !c.queue_channel_enabled() && !c.slack_channel_enabled()) {
        throw config_error(
            "fisk-ai-serve has nothing to serve: add expose.agent.a2a.prompts, expose.agent.queue or "
            "expose.agent.slack to the config");
    }
    if (c.nats_context.empty()) {
        // The embedded broker carries the a2a keys only; the queue and the JetStream stores
        // need the production broker's storage.
        const bool a2a_waived = options.embedded_broker;
        const char* needing = nullptr;
        if (c.a2a_channel_enabled() && !a2a_waived) {
            needing = "expose.agent.a2a.prompts";
        } else if (c.queue_channel_enabled()) {
            needing = "expose.agent.queue";
        } else if (c.a2a_serving_enabled() && !a2a_waived) {
            needing = "expose.agent.a2a.serve_tools";
        } else if (c.harness.sessions.backend == "jetstream") {
            needing = "harness.sessions.backend jetstream";
        } else if (c.harness.memory.enabled && c.harness.memory.backend == "jetstream") {
            needing = "harness.memory.backend jetstream";
        } else if (!c.remote_tools.empty()) {
            needing = "remote_tools";
        }
        if (needing != nullptr) {
            throw config_error(fmt::format("nats_context is required for fisk-ai-serve when {} is set", needing));
        }
    }
    if (c.a2a_serving_enabled() && c.application_path.empty()) {
        throw config_error(
            "application_path is required for the a2a server: a2a serves the wrapped application's tools and cannot "
            "serve the built-in tools");
    }
}

}  // namespace

std::vector<std::string> mode_warnings(const config& c, mode m) {
    std::vector<std::string> out;
    if (m == mode::serve) {
        if (c.queue_channel_enabled() && c.harness.sessions.backend == "file") {
            out.emplace_back(
                "expose.agent.queue with the file session backend: a job redelivered to another host cannot resume "
                "its session; use harness.sessions.backend: jetstream");
        }
        if (c.slack_channel_enabled() && c.harness.sessions.backend == "file") {
            out.emplace_back(
                "expose.agent.slack with the file session backend: only one worker may serve this Slack app");
        }
    }
    if ((m == mode::mcp || m == mode::server) && !c.mcp_servers.empty()) {
        out.emplace_back("mcp_servers has no effect on fisk-ai-mcp and fisk-ai-a2a serve");
    }
    return out;
}

void validate_for_mode(const config& c, mode m, const mode_options& options) {
    // Shared by every mode (A.14 steps 2-4).
    if (!c.global_flags.empty() && c.application_path.empty()) {
        throw config_error(
            "global_flags is set but application_path is not: global flags are the wrapped application's own globals "
            "and have nothing to attach to without an application; remove global_flags or set application_path");
    }
    if (!c.identity.empty() && !gocompat::is_valid_name(c.identity)) {
        throw config_error(fmt::format(
            "identity {} is invalid: {} (it doubles as a NATS queue group); set an explicit identity if the "
            "application binary name contains other characters",
            gocompat::quote(c.identity), identity_rule));
    }
    for (const auto& host : c.remote_tools) validate_remote_host(host);

    switch (m) {
        case mode::lenient: return;
        case mode::server:
            if (!c.a2a_serving_enabled()) {
                throw config_error(
                    "a2a serving is not enabled: add 'expose: {agent: {a2a: {serve_tools: true}}}' to the config");
            }
            require_server_basics(c);
            return;
        case mode::serve: validate_serve(c, options); return;
        case mode::mcp:
            if (!c.mcp) {
                throw config_error(
                    "MCP serving is not enabled: add an 'expose.agent.mcp' block to the config (an empty block 'mcp: "
                    "{}' "
                    "uses the defaults)");
            }
            return;
        case mode::agent:
            if (!c.remote_tools.empty() && c.nats_context.empty()) {
                throw config_error("nats_context is required when remote_tools is set");
            }
            // An agent that is also exposed over MCP may run without a prompt of its own.
            if (!c.mcp) {
                if (c.identity.empty()) throw config_error("identity is required unless exposed over MCP");
                if (c.system_prompt.empty()) throw config_error(std::string(agent_prompt_required));
            }
            if (c.llm.model.empty()) throw config_error("llm.model is required");
            return;
    }
}

config parse(std::string_view yaml_text, mode m, const mode_options& options) {
    config c = prepare(detail::decode(yaml_text));
    validate_for_mode(c, m, options);
    for (auto& w : mode_warnings(c, m)) c.warnings.push_back(std::move(w));
    return c;
}

config load_file(const std::string& path, mode m, const mode_options& options) {
    return parse(read_whole_file(path), m, options);
}

void apply_state_dir(config& c, std::string_view dir) {
    if (dir.empty()) return;
    const std::string& backend = c.harness.sessions.backend;
    if (!backend.empty() && backend != "file") {
        throw config_error(fmt::format(
            "--state-dir applies only to the file session backend, but harness.sessions.backend is {}: remove "
            "--state-dir, or set harness.sessions.backend to \"file\"",
            gocompat::quote(backend)));
    }
    std::string options = "{\"directory\":";
    gocompat::append_json_string(options, dir);
    options += '}';
    c.harness.sessions.backend = "file";
    c.harness.sessions.options_json = std::move(options);
}

}  // namespace fiskai::config
