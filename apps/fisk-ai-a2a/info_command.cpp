// fisk-ai-a2a info --config F [--json]
//
// What this agent serves over a2a (the engine's own selection: confirm-gated, unnamed and
// undescribed tools dropped, with the reason on stderr), what it imports, and each remote
// host's status, found by discovering it. Importing remote tools arrives with
// libs/remotetools; until then no tool is imported and each host is only discovered.

#include "nats_commands.hpp"

#include "app_support.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/config/config.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <memory>
#include <optional>

namespace fiskai::a2a::app {

namespace asio = boost::asio;

namespace {

struct info_options {
    std::string config_path;
    bool json = false;
};

struct host_status {
    std::string name;
    std::string alias;
    bool reachable = false;
    std::string version;
    std::size_t advertised = 0;
    std::chrono::steady_clock::duration rtt{};
    std::string error;
};

// Discovers every configured host over one connection; failures are statuses, not errors.
std::vector<host_status> discover_hosts(const config::config& cfg) {
    std::vector<host_status> out;
    for (const auto& h : cfg.remote_tools) out.push_back({h.name, h.effective_alias()});
    if (out.empty()) return out;

    asio::io_context ioc;
    std::optional<conns::provider> nats;
    try {
        nats.emplace(conns::provider::dial(cfg.nats_context, cfg.identity, connection_options(cfg.identity, ioc.get_executor())));
    } catch (const std::exception& e) {
        for (auto& h : out) h.error = e.what();
        return out;
    }
    a2a_nats::nats_transport transport(*nats, ioc.get_executor());
    client c(transport, {cfg.identity});
    auto timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(cfg.llm.budget.call_timeout);
    if (timeout <= std::chrono::steady_clock::duration::zero()) timeout = std::chrono::seconds(30);

    auto all = [&]() -> asio::awaitable<void> {
        for (auto& h : out) {
            const auto started = std::chrono::steady_clock::now();
            auto card = co_await c.discover(h.name, timeout);
            h.rtt = std::chrono::steady_clock::now() - started;
            if (!card) {
                h.error = card.error().message;
                continue;
            }
            h.reachable = true;
            h.version = card->version;
            h.advertised = card->tools.size();
        }
    };
    auto f = asio::co_spawn(ioc, all(), asio::use_future);
    ioc.run();
    f.get();
    return out;
}

int run_info(const info_options& o) {
    const auto cfg = config::load_file(o.config_path, config::mode::lenient);
    for (const auto& w : cfg.warnings) fiskai::app::log_warning(w);
    const auto loaded = fiskai::app::load_tools_blocking(cfg);
    for (const auto& d : loaded.dropped) fiskai::app::log_info(fmt::format("left out: {} ({})", d.command, d.reason));

    // The engine's own selection, with its reasons for what it drops.
    asio::io_context selection;
    server_options so;
    so.identity = cfg.identity;
    so.version = std::string(agent_version);
    so.log = stderr_logger();
    const server srv(selection.get_executor(), loaded.tools, so);
    const auto hosts = discover_hosts(cfg);

    if (o.json) {
        boost::json::array tools;
        for (const auto& t : srv.exposed()) {
            auto j = fiskai::app::tool_info_json(*t);
            j["remote"] = false;
            tools.push_back(std::move(j));
        }
        boost::json::array hs;
        for (const auto& h : hosts) {
            boost::json::object j;
            j["name"] = h.name;
            j["alias"] = h.alias;
            j["status"] = h.reachable ? "reachable" : "unavailable";
            if (h.reachable) {
                j["version"] = h.version;
                j["advertised"] = h.advertised;
                j["imported"] = 0;
            } else {
                j["error"] = h.error;
            }
            j["rtt_ms"] = std::chrono::duration_cast<std::chrono::milliseconds>(h.rtt).count();
            hs.push_back(std::move(j));
        }
        boost::json::object doc;
        doc["tools"] = std::move(tools);
        doc["hosts"] = std::move(hs);
        fmt::print("{}\n", boost::json::serialize(doc));
        return exit_ok;
    }

    fmt::print("Identity: {}\n", cfg.identity);
    fmt::print("Serving over a2a: {}\n", cfg.a2a_serving_enabled() ? "enabled (expose.agent.a2a.serve_tools)"
                                                                   : "disabled (set expose.agent.a2a.serve_tools: true)");
    fmt::print("  Discovery: {}\n  Tools: {}\n", subject(route::discovery, cfg.identity), subject(route::tool, cfg.identity));
    fmt::print("\nTools served ({}):\n{}", srv.exposed().size(), fiskai::app::tools_table(srv.exposed()));
    if (!hosts.empty()) {
        const std::string ctx = cfg.nats_context.empty() ? "(default)" : cfg.nats_context;
        fmt::print("\nRemote tool hosts\n");
        for (const auto& h : hosts) {
            if (h.reachable) {
                fmt::print("  {} ({}): reachable in {}, advertised {} tool(s), imported 0 as \"{}\"\n", h.name, h.version,
                           go_duration_ms(h.rtt), h.advertised, h.alias);
            } else {
                fmt::print("  {}: UNAVAILABLE via context \"{}\" after {}: {}\n", h.name, ctx, go_duration_ms(h.rtt), h.error);
            }
        }
    }
    return exit_ok;
}

}  // namespace

subcommand add_info_command(CLI::App& parent) {
    auto opts = std::make_shared<info_options>();
    auto* cmd = parent.add_subcommand("info", "Show the tools this agent serves over a2a and each remote host's status");
    cmd->add_option("-c,--config", opts->config_path, "The fisk-ai YAML configuration file")->required();
    cmd->add_flag("--json", opts->json,
                  "Print one JSON object: {\"tools\":[{name, command, description, tags, confirm, input_schema, remote}], "
                  "\"hosts\":[{name, alias, status, ...}]}");
    return {cmd, [opts] { return run_info(*opts); }};
}

}  // namespace fiskai::a2a::app
