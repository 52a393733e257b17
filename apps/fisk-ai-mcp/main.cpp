// fisk-ai-mcp: serves a fisk application's commands as tools over the Model Context
// Protocol. This file only parses the command line and wires libraries together.

#include "app_support.hpp"

#include <fiskai/config/config.hpp>
#include <fiskai/toolkit/application.hpp>
#include <fiskai/toolkit/derive.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>

namespace {

using namespace fiskai;

struct info_options {
    std::string config_path;
    bool json = false;
};

int run_info(const info_options& o) {
    const auto cfg = config::load_file(o.config_path, config::mode::lenient);
    for (const auto& w : cfg.warnings) app::log_warning(w);
    if (cfg.application_path.empty() && (!cfg.include.empty() || !cfg.exclude.empty())) {
        app::log_warning("include/exclude have no effect without application_path; they filter the wrapped "
                         "application's tools");
    }
    const auto loaded = app::load_tools_blocking(cfg);
    for (const auto& d : loaded.dropped) app::log_info(fmt::format("left out: {} ({})", d.command, d.reason));

    if (o.json) {
        boost::json::array tools;
        for (const auto& t : loaded.tools) tools.push_back(app::tool_info_json(*t));
        boost::json::object doc;
        doc["tools"] = std::move(tools);
        fmt::print("{}\n", boost::json::serialize(doc));
        return 0;
    }

    fmt::print("Identity: {}\n", cfg.identity);
    if (cfg.application_path.empty()) {
        fmt::print("Application: none (set application_path to serve a fisk application's commands)\n");
    } else {
        fmt::print("Application: {} {} ({})\n", loaded.model.name, loaded.model.version, cfg.application_path);
    }
    fmt::print("\nTools ({}):\n{}", loaded.tools.size(), app::tools_table(loaded.tools));
    const auto globals = toolkit::exposable_global_flags(loaded.model);
    if (!globals.empty()) {
        fmt::print("\nExposable application global flags (add names under global_flags to expose to the model)\n");
        for (const auto& g : globals) {
            const bool listed =
                std::find(cfg.global_flags.begin(), cfg.global_flags.end(), g.name) != cfg.global_flags.end();
            fmt::print("  --{}  {}{}\n", g.name, g.help,
                       g.required ? " [exposed, required]" : (listed ? " [exposed]" : ""));
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli{"fisk-ai-mcp: serve a fisk application's commands as tools over the Model Context Protocol "
                 "(streamable HTTP)."};
    cli.set_version_flag("--version", "fisk-ai-mcp 0.1.0");
    cli.require_subcommand(1);

    info_options info;
    auto* info_cmd = cli.add_subcommand(
        "info", "List the tools that would be served, with their tags and whether each needs confirmation; why any "
                "command was left out goes to stderr");
    info_cmd->add_option("-c,--config", info.config_path, "The fisk-ai YAML configuration file")->required();
    info_cmd->add_flag("--json", info.json,
                       "Print one JSON object: {\"tools\":[{name, command, description, tags, confirm, input_schema}]}");

    try {
        cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return cli.exit(e);
    }

    try {
        if (*info_cmd) return run_info(info);
    } catch (const std::exception& e) {
        fmt::print(stderr, "fisk-ai-mcp: error: {}\n", e.what());
        return 1;
    }
    return 0;
}
