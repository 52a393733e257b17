// fisk-ai-a2a: operator tools for fisk-ai's agent-to-agent protocol.

#include "commands.hpp"
#include "nats_commands.hpp"

#include "app_support.hpp"

#include <fmt/format.h>

#include <exception>
#include <vector>

int main(int argc, char** argv) {
    namespace app = fiskai::a2a::app;
    CLI::App cli("Operator tools for fisk-ai's agent-to-agent (a2a) protocol", "fisk-ai-a2a");
    cli.require_subcommand(1);
    cli.footer(fiskai::app::exit_codes_help);
    cli.set_version_flag("--version", fmt::format("fisk-ai-a2a {}", fiskai::app::version));

    const std::vector<app::subcommand> commands = {
        app::add_check_command(cli),  app::add_serve_command(cli),        app::add_discover_command(cli),
        app::add_info_command(cli),   app::add_ask_command(cli),          app::add_enqueue_command(cli),
        app::add_answer_command(cli), app::add_dead_letters_command(cli),
    };
    fiskai::app::add_log_format_option(cli);
    if (const auto code = fiskai::app::parse_command_line(cli, argc, argv)) return *code;
    fiskai::app::runtime rt;
    for (const auto& c : commands) {
        if (c.cli->parsed()) return rt.run(c.run(rt), "fisk-ai-a2a");
    }
    return fiskai::app::exit_code::usage;
}
