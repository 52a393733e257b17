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
        c.a2a = a;
    }
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

std::vector<std::string> config::credential_env_names() const {
    std::vector<std::string> out;
    if (!harness.knowledge.vector_tier()) return out;
    const std::string_view name = gocompat::trim_space(harness.knowledge.embeddings->api_key_env);
    if (!name.empty()) out.emplace_back(name);
    return out;
}

void validate_for_mode(const config& c, mode m) {
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
        case mode::serve: require_server_basics(c); return;
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
                if (c.system_prompt.empty()) throw config_error("prompt is required unless exposed over MCP");
            }
            if (c.llm.model.empty()) throw config_error("llm.model is required");
            return;
    }
}

config parse(std::string_view yaml_text, mode m) {
    config c = prepare(detail::decode(yaml_text));
    validate_for_mode(c, m);
    return c;
}

config load_file(const std::string& path, mode m) { return parse(read_whole_file(path), m); }

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
