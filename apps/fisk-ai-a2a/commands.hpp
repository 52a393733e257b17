#pragma once
// The subcommands of fisk-ai-a2a. Each registers itself on the command line and returns
// what runs it; main() runs the one that was chosen. Later subcommands (serve, discover,
// info) join the same way.

#include <CLI/CLI.hpp>

#include <functional>

namespace fiskai::a2a::app {

// Exit codes shared by every subcommand.
inline constexpr int exit_ok = 0;
inline constexpr int exit_refused = 1;  // the input was read and refused
inline constexpr int exit_failure = 2;  // the command could not do its work

struct subcommand {
    CLI::App* cli = nullptr;
    std::function<int()> run;
};

// `check [--encode]`: one captured message on stdin.
subcommand add_check_command(CLI::App& parent);

}  // namespace fiskai::a2a::app
