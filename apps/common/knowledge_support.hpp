#pragma once
// The knowledge base as the executables offer it: the `knowledge` subcommand (the same
// code in fisk-ai-mcp and fisk-ai-serve) and the knowledge built-ins served over MCP.

#include <fiskai/config/config.hpp>
#include <fiskai/knowledge/command.hpp>
#include <fiskai/knowledge/store.hpp>
#include <fiskai/toolkit/builtins.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <CLI/CLI.hpp>

#include <memory>

namespace fiskai::app {

// Adds `knowledge index|show|doctor|watch|search|sources` to `app`, filling `options`.
// Returns the `knowledge` subcommand (test `*cmd` after parsing).
CLI::App* add_knowledge_command(CLI::App& app, knowledge::command_options& options);

// Runs the parsed subcommand. `rt_stop` is set by the caller's signal handling to end a watch.
boost::asio::awaitable<int> run_knowledge_command(knowledge::command_options options);

// The knowledge built-ins an MCP server offers. When any is allowlisted the store is
// opened read-only (relative to the cwd) and the tier line and notes are logged; failure
// throws `cannot expose knowledge_search over MCP: <err>`. When knowledge is enabled but
// nothing is allowlisted, Go's note is logged and nothing is opened.
struct mcp_knowledge {
    toolkit::builtin_registry builtins;
    std::shared_ptr<knowledge::store> store;  // null when not opened
};
[[nodiscard]] mcp_knowledge open_mcp_knowledge(boost::asio::any_io_executor io, const config::config& cfg,
                                               const std::vector<std::string>& allowlist);

// The knowledge built-ins, unbound, for listing (`info`): none when knowledge is disabled.
[[nodiscard]] toolkit::tool_list knowledge_tools_for_listing(const config::config& cfg);

}  // namespace fiskai::app
