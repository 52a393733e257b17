// fisk-ai-a2a info --config F [--json]
//
// What this agent serves over a2a (the engine's own selection: confirm-gated, unnamed and
// undescribed tools dropped, with the reason on stderr), what it imports, and each remote
// host's status. Import is lenient here: a host that does not answer is shown as such and
// the local tools are still listed.

#include "nats_commands.hpp"

#include "app_support.hpp"
#include "remote_import.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/config/config.hpp>
#include <fiskai/toolkit/application.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <set>

namespace fiskai::a2a::app {

namespace asio = boost::asio;

namespace {

struct info_options {
    std::string config_path;
    bool json = false;
};

asio::awaitable<int> run_info(info_options o) {
    const auto cfg = config::load_file(o.config_path, config::mode::lenient);
    for (const auto& w : cfg.warnings) fiskai::app::log_warning(w);
    const auto loaded = co_await toolkit::load_application_tools(fiskai::app::application_options_from(cfg));
    for (const auto& d : loaded.dropped) fiskai::app::log_info(fmt::format("left out: {} ({})", d.command, d.reason));

    // The engine's own selection, with its reasons for what it drops.
    server_options so;
    so.identity = cfg.identity;
    so.version = std::string(fiskai::app::version);
    so.log = stderr_logger();
    const server srv(co_await asio::this_coro::executor, loaded.tools, so);
    const auto imported = co_await fiskai::app::import_remote_tools_leniently(cfg, srv.exposed());
    if (!imported.connect_error.empty()) {
        fiskai::app::log_warning(fmt::format("cannot connect to NATS context \"{}\" to discover remote tools: {}",
                                             cfg.nats_context, imported.connect_error));
    }
    if (imported.result) {
        for (const auto& w : imported.result->warnings()) fiskai::app::log_warning(w);
        if (imported.result->collision_error) fiskai::app::log_warning(*imported.result->collision_error);
    }

    if (o.json) {
        boost::json::array tools;
        for (const auto& t : srv.exposed()) {
            auto j = fiskai::app::tool_info_json(*t);
            j["remote"] = false;
            tools.push_back(std::move(j));
        }
        boost::json::array hs;
        if (imported.result) {
            for (auto& j : fiskai::app::imported_tools_json(*imported.result)) tools.push_back(std::move(j));
            for (const auto& h : imported.result->hosts) {
                boost::json::object j;
                j["name"] = h.name;
                j["alias"] = h.alias;
                j["status"] = h.error ? "unavailable" : "reachable";
                if (h.error) {
                    j["error"] = *h.error;
                } else {
                    j["version"] = h.version;
                    j["advertised"] = h.advertised;
                    j["imported"] = h.imported.size();
                    boost::json::array skipped;
                    for (const auto& k : h.skipped) skipped.emplace_back(k);
                    j["skipped"] = std::move(skipped);
                }
                j["rtt_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(h.rtt).count();
                hs.push_back(std::move(j));
            }
        } else {
            for (const auto& h : cfg.remote_tools) {
                hs.push_back(boost::json::object{{"name", h.name},
                                                 {"alias", h.effective_alias()},
                                                 {"status", "unavailable"},
                                                 {"error", imported.connect_error}});
            }
        }
        boost::json::object doc;
        doc["tools"] = std::move(tools);
        doc["hosts"] = std::move(hs);
        fmt::print("{}\n", boost::json::serialize(doc));
        co_return exit_ok;
    }

    fmt::print("Identity: {}\n", cfg.identity);
    fmt::print("Serving over a2a: {}\n", cfg.a2a_serving_enabled()
                                             ? "enabled (expose.agent.a2a.serve_tools)"
                                             : "disabled (set expose.agent.a2a.serve_tools: true)");
    fmt::print("  Discovery: {}\n  Tools: {}\n", subject(route::discovery, cfg.identity),
               subject(route::tool, cfg.identity));
    fmt::print("\nTools served ({}):\n{}", srv.exposed().size(), fiskai::app::tools_table(srv.exposed()));
    if (imported.result) {
        fmt::print("\nTools imported ({}):\n{}", imported.result->tools.size(),
                   fiskai::app::tools_table(imported.result->tools));
        fmt::print("\nRemote tool hosts\n");
        for (const auto& h : imported.result->hosts)
            fmt::print("{}\n", fiskai::app::host_status_line(h, cfg.nats_context));
    } else if (!cfg.remote_tools.empty()) {
        fmt::print("\nRemote tool hosts\n");
        for (const auto& h : cfg.remote_tools) fmt::print("  {}: UNAVAILABLE: {}\n", h.name, imported.connect_error);
    }
    co_return exit_ok;
}

}  // namespace

subcommand add_info_command(CLI::App& parent) {
    auto opts = std::make_shared<info_options>();
    auto* cmd = parent.add_subcommand(
        "info", "Show the tools this agent serves over a2a, the tools it imports, and each remote host's status");
    cmd->add_option("-c,--config", opts->config_path, "The fisk-ai YAML configuration file")->required();
    cmd->add_flag(
        "--json", opts->json,
        "Print one JSON object: {\"tools\":[{name, command, description, tags, confirm, input_schema, remote, "
        "host}], \"hosts\":[{name, alias, status, version, advertised, imported, skipped, error, rtt_ms}]}");
    return {cmd, [opts](fiskai::app::runtime&) { return run_info(*opts); }};
}

}  // namespace fiskai::a2a::app
