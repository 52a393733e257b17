#pragma once
// The subcommands of fisk-ai-serve (serve.md §9.1). Each registers itself on the command
// line and returns what runs it; main() runs the one that was chosen (serve by default).

#include "runtime.hpp"

#include <fiskai/gocompat/log.hpp>

#include <CLI/CLI.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <string>

namespace fiskai::serve_app {

// Exit codes of serve and check (§9.1); run's are its own.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int refused = 1;  // startup refused: config, storage, credentials, tools
inline constexpr int fault = 2;    // a channel or service failed while serving (drained)
}  // namespace exit_code

struct subcommand {
    CLI::App* cli = nullptr;
    std::function<boost::asio::awaitable<int>(fiskai::app::runtime&)> run;
};

// A subcommand without --config: prints the usage error and returns true (the caller exits
// with the usage code, as CLI11 does for its own errors).
[[nodiscard]] bool missing_config(const std::string& config_path);

// The process logger; `verbose` (-v) lets DEBUG records through.
[[nodiscard]] gocompat::logger serve_logger(bool verbose);

// `serve` (also the default when no subcommand is named: its options are then the top
// level's) and `check`.
subcommand add_serve_command(CLI::App& parent, CLI::App& top_level);
subcommand add_check_command(CLI::App& parent);
subcommand add_session_command(CLI::App& parent);
subcommand add_run_command(CLI::App& parent);

}  // namespace fiskai::serve_app
