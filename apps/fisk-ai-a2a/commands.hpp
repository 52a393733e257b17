#pragma once
// The subcommands of fisk-ai-a2a. Each registers itself on the command line and returns
// what runs it; main() runs the one that was chosen. Later subcommands (serve, discover,
// info) join the same way.

#include "runtime.hpp"

#include <CLI/CLI.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>

namespace fiskai::a2a::app {

// The exit codes of every fisk-ai executable (apps/common/runtime.hpp).
inline constexpr int exit_ok = fiskai::app::exit_code::ok;
inline constexpr int exit_refused = fiskai::app::exit_code::failure;  // the input was read and refused
inline constexpr int exit_failure = fiskai::app::exit_code::failure;  // the command could not do its work

// A chosen subcommand runs as the process's one coroutine, on the runtime's io_context.
struct subcommand {
    CLI::App* cli = nullptr;
    std::function<boost::asio::awaitable<int>(fiskai::app::runtime&)> run;
};

// `check [--encode]`: one captured message on stdin.
subcommand add_check_command(CLI::App& parent);

}  // namespace fiskai::a2a::app
