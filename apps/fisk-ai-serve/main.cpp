// fisk-ai-serve: the served agent (serve.md §9.1). `serve` runs the worker, `check` binds
// everything and prints the banner, `run` hosts the agent for one terminal, `session`
// inspects the configured session store.

#include "commands.hpp"

#include "app_support.hpp"

#include <fmt/format.h>

#include <vector>

int main(int argc, char** argv) {
    namespace sa = fiskai::serve_app;
    CLI::App cli("The served fisk-ai agent: takes work from NATS, a queue or Slack and runs it", "fisk-ai-serve");
    cli.require_subcommand(0, 1);
    cli.footer(
        "Exit codes (serve, check): 0 drained cleanly after a signal or check passed; 1 startup refused "
        "(config, storage, credentials, tools); 2 a channel or service failed while serving; 130 a second "
        "signal.\nWithout a subcommand, fisk-ai-serve serves (the options of `serve` apply).");
    cli.set_version_flag("--version", fmt::format("fisk-ai-serve {}", fiskai::app::version));

    const std::vector<sa::subcommand> commands = {
        sa::add_serve_command(cli, cli),
        sa::add_check_command(cli),
        sa::add_run_command(cli),
        sa::add_session_command(cli),
    };
    fiskai::app::add_log_format_option(cli);
    if (const auto code = fiskai::app::parse_command_line(cli, argc, argv)) return *code;
    fiskai::app::runtime rt;
    for (const auto& c : commands) {
        if (c.cli->parsed()) return rt.run(c.run(rt), "fisk-ai-serve");
    }
    // No subcommand: serve with the top-level options.
    return rt.run(commands.front().run(rt), "fisk-ai-serve");
}
