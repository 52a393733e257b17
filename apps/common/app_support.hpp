#pragma once
// What every fisk-ai executable does the same way: read the config, turn it into the
// libraries' options, load the wrapped application's tools, and log to stderr.

#include <fiskai/a2a/server.hpp>
#include <fiskai/config/config.hpp>
#include <fiskai/mcpserver/server.hpp>
#include <fiskai/gocompat/log.hpp>
#include <fiskai/toolkit/application.hpp>

#include <boost/json/object.hpp>

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

namespace fiskai::app {

// The process's logger: one line per record on stderr, debug dropped, text (`warning: `
// and `error: ` prefixes, info plain) until --log-format json selects JSON lines. Every
// library the app wires gets this one.
[[nodiscard]] gocompat::logger process_logger();
// The same, letting records from `min_level` up through (-v: debug).
[[nodiscard]] gocompat::logger process_logger(gocompat::log_level min_level);
void set_log_format(gocompat::log_format format);

// `--log-format text|json` on `app`, accepted before or after any of its subcommands
// (call it after adding them). A bad value is refused naming it and the choices.
void add_log_format_option(CLI::App& app);

// A `--continue TASK` value: a task id as the a2a protocol has them, or a usage error
// naming the value and where a good one comes from (checked before anything starts).
[[nodiscard]] CLI::Validator task_id_validator();

// An agent's identity on the command line (`NAME` in --help): the a2a protocol's pattern, or a
// usage error naming the value, checked before anything connects.
[[nodiscard]] CLI::Validator identity_validator(std::string type_name);

void log_warning(std::string_view text);
void log_info(std::string_view text);

// The toolkit options a config implies (filters, global flags, confirm tags, secrets).
[[nodiscard]] toolkit::application_options application_options_from(const config::config& c);

// The version every fisk-ai executable reports (--version, serverInfo, agent cards).
inline constexpr std::string_view version = "0.1.0";

// The config's expose.agent.mcp block as MCP server options (logging to the process logger).
[[nodiscard]] mcpserver::server_options mcp_server_options(const config::config& c);

// The config's expose.agent.a2a block as a2a engine options (logging to the process logger).
[[nodiscard]] a2a::server_options a2a_server_options(const config::config& c);

// One tool as `info --json` shows it.
[[nodiscard]] boost::json::object tool_info_json(const toolkit::tool& t);

// The `info` text block for a list of tools.
[[nodiscard]] std::string tools_table(const toolkit::tool_list& tools);

}  // namespace fiskai::app
