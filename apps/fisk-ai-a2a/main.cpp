// fisk-ai-a2a: operator tools for fisk-ai's agent-to-agent protocol.

#include "commands.hpp"
#include "nats_commands.hpp"

#include "app_support.hpp"

#include <fmt/core.h>

#include <exception>
#include <vector>

int main(int argc, char** argv) {
    namespace app = fiskai::a2a::app;
    CLI::App cli("Operator tools for fisk-ai's agent-to-agent (a2a) protocol", "fisk-ai-a2a");
    cli.require_subcommand(1);
    cli.set_version_flag("--version", std::string("fisk-ai-a2a ") + std::string(app::agent_version));

    const std::vector<app::subcommand> commands = {
        app::add_check_command(cli),
        app::add_serve_command(cli),
        app::add_discover_command(cli),
        app::add_info_command(cli),
    };
    fiskai::app::add_log_format_option(cli);

    CLI11_PARSE(cli, argc, argv);
    try {
        for (const auto& c : commands) {
            if (c.cli->parsed()) return c.run();
        }
    } catch (const std::exception& e) {
        fmt::print(stderr, "fisk-ai-a2a: {}\n", e.what());
    }
    return app::exit_failure;
}
