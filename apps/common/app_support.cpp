#include "app_support.hpp"

#include <fiskai/a2a/protocol.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cstdio>

namespace fiskai::app {

namespace {
// Read on every record, so a logger handed out before the flag was parsed follows it.
std::atomic<gocompat::log_format> current_log_format{gocompat::log_format::text};
}  // namespace

gocompat::logger process_logger() { return process_logger(gocompat::log_level::info); }

gocompat::logger process_logger(gocompat::log_level min_level) {
    // Both pass every level: the bound is the caller's, the format the flag's.
    static const gocompat::logger text =
        gocompat::stream_logger({.format = gocompat::log_format::text, .min_level = gocompat::log_level::debug});
    static const gocompat::logger json =
        gocompat::stream_logger({.format = gocompat::log_format::json, .min_level = gocompat::log_level::debug});
    return [min_level](gocompat::log_level level, std::string_view message, gocompat::log_fields fields) {
        if (level < min_level) return;
        const auto& target =
            current_log_format.load(std::memory_order_relaxed) == gocompat::log_format::json ? json : text;
        target.log(level, message, fields);
    };
}

void set_log_format(gocompat::log_format format) { current_log_format.store(format, std::memory_order_relaxed); }

// CLI11 puts the option's name in front of a validator's text, so the text starts at the value.
CLI::Validator task_id_validator() {
    return CLI::Validator(
        [](const std::string& s) -> std::string {
            if (a2a::is_valid_request_id(s)) return {};
            return fmt::format(
                "{} is not a task id: use the id a previous ask printed "
                "(letters, digits, '-' and '_', at most 64)",
                gocompat::quote(s));
        },
        "TASK");
}

CLI::Validator identity_validator(std::string type_name) {
    return CLI::Validator(
        [](const std::string& s) -> std::string {
            if (a2a::is_valid_identity(s)) return {};
            return fmt::format("{} is not an identity: use letters, digits, '-' and '_' (at most 128)",
                               gocompat::quote(s));
        },
        std::move(type_name));
}

void add_log_format_option(CLI::App& app) {
    app.add_option_function<std::string>(
           "--log-format",
           [](const std::string& value) {
               if (const auto format = gocompat::parse_log_format(value)) set_log_format(*format);
           },
           fmt::format("How log lines on stderr are written: {} (default text; json writes one object per line "
                       "with time, level, msg and the record's fields)",
                       gocompat::log_format_choices))
        ->type_name("FORMAT")
        ->check(CLI::Validator(
            [](std::string& value) -> std::string {
                if (gocompat::parse_log_format(value)) return {};
                return fmt::format("invalid log format \"{}\": choose one of {}", value, gocompat::log_format_choices);
            },
            "text|json", "log format"));
    // The flag may follow a subcommand: its unknown options fall through to `app`.
    for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) sub->fallthrough();
}

void log_warning(std::string_view text) { process_logger().warn(text); }
void log_info(std::string_view text) { process_logger().info(text); }

namespace {
toolkit::tool_filter to_filter(const config::filter& f) { return {f.tools, f.tags}; }
}  // namespace

toolkit::application_options application_options_from(const config::config& c) {
    toolkit::application_options o;
    o.application_path = c.application_path;
    o.secret_env_names = c.credential_env_names();
    o.derive.confirm_tags = c.harness.confirm_tags;
    o.derive.global_flags = c.global_flags;
    o.derive.include = to_filter(c.include);
    o.derive.exclude = to_filter(c.exclude);
    o.derive.serve_include = to_filter(c.expose_tools_include);
    o.derive.serve_exclude = to_filter(c.expose_tools_exclude);
    return o;
}

namespace {
mcpserver::confirm_mode to_server_mode(config::confirm_mode m) {
    switch (m) {
        case config::confirm_mode::always: return mcpserver::confirm_mode::always;
        case config::confirm_mode::never: return mcpserver::confirm_mode::never;
        case config::confirm_mode::auto_: break;
    }
    return mcpserver::confirm_mode::automatic;
}
}  // namespace

mcpserver::server_options mcp_server_options(const config::config& c) {
    const auto& mcp = c.mcp.value();
    mcpserver::server_options so;
    so.name = c.identity;
    so.version = std::string(version);
    so.instructions = mcp.instructions;
    so.confirm = to_server_mode(mcp.confirm_over_mcp);
    so.max_concurrent_calls = static_cast<std::size_t>(mcp.limits.effective_concurrency());
    so.call_timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(mcp.limits.effective_timeout());
    so.allowed_origins = mcp.allowed_origins;
    so.log = process_logger();
    return so;
}

a2a::server_options a2a_server_options(const config::config& c) {
    const auto& a2a = c.a2a.value();
    a2a::server_options so;
    so.identity = c.identity;
    so.version = std::string(version);
    so.concurrency = static_cast<std::size_t>(a2a.limits.effective_concurrency());
    so.call_timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(a2a.limits.effective_timeout());
    so.log = process_logger();
    return so;
}

boost::json::object tool_info_json(const toolkit::tool& t) {
    boost::json::object o;
    o["name"] = t.name();
    o["command"] = t.title();
    o["description"] = t.model_description();
    boost::json::array tags;
    for (const auto& tag : t.tags()) tags.emplace_back(tag);
    o["tags"] = std::move(tags);
    o["confirm"] = t.confirm().posture != toolkit::confirm_posture::not_required;
    o["input_schema"] = t.input_schema();
    return o;
}

std::string tools_table(const toolkit::tool_list& tools) {
    std::size_t width = 4;
    for (const auto& t : tools) width = std::max(width, t->name().size());
    std::string out = fmt::format("{:<{}}  {:<7}  {}\n", "TOOL", width, "CONFIRM", "DESCRIPTION / TAGS");
    for (const auto& t : tools) {
        const auto c = t->confirm();
        std::string confirm = c.posture == toolkit::confirm_posture::required ? "yes" : "no";
        out += fmt::format("{:<{}}  {:<7}  {}\n", t->name(), width, confirm, t->description());
        if (!t->tags().empty()) {
            std::string tags;
            for (const auto& tag : t->tags()) tags += (tags.empty() ? "" : ", ") + tag;
            out += fmt::format("{:<{}}  {:<7}  tags: {}{}\n", "", width, "", tags,
                               c.trigger_tag.empty() ? "" : fmt::format(" (confirm: {})", c.trigger_tag));
        }
    }
    return out;
}

}  // namespace fiskai::app
