// fisk-ai-mcp: serves a fisk application's commands as tools over the Model Context
// Protocol. This file only parses the command line and wires libraries together.

#include "app_support.hpp"
#include "knowledge_support.hpp"
#include "remote_import.hpp"
#include "runtime.hpp"

#include <fiskai/config/config.hpp>
#include <fiskai/mcpserver/listener.hpp>
#include <fiskai/mcpserver/server.hpp>
#include <fiskai/remotetools/remotetools.hpp>
#include <fiskai/toolkit/application.hpp>
#include <fiskai/toolkit/builtins.hpp>
#include <fiskai/toolkit/derive.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <set>

namespace {

using namespace fiskai;

struct info_options {
    std::string config_path;
    bool json = false;
};

boost::asio::awaitable<int> run_info(info_options o) {
    const auto cfg = config::load_file(o.config_path, config::mode::lenient);
    for (const auto& w : cfg.warnings) app::log_warning(w);
    if (cfg.application_path.empty() && (!cfg.include.empty() || !cfg.exclude.empty())) {
        app::log_warning(
            "include/exclude have no effect without application_path; they filter the wrapped "
            "application's tools");
    }
    const auto loaded = co_await toolkit::load_application_tools(app::application_options_from(cfg));
    for (const auto& d : loaded.dropped) app::log_info(fmt::format("left out: {} ({})", d.command, d.reason));

    // What serve_remote_tools would add, imported leniently: info works with a host down.
    app::lenient_import remote;
    if (cfg.mcp && cfg.mcp->serve_remote_tools) {
        remote = co_await app::import_remote_tools_leniently(cfg, loaded.tools);
        if (!remote.connect_error.empty()) {
            app::log_warning(fmt::format("cannot connect to NATS context \"{}\" to discover remote tools: {}",
                                         cfg.nats_context, remote.connect_error));
        }
        if (remote.result) {
            for (const auto& w : remote.result->warnings()) app::log_warning(w);
            if (remote.result->collision_error) app::log_warning(*remote.result->collision_error);
        }
    }

    // The built-ins the config enables, and which of them the allowlist serves over MCP.
    const auto builtin_tools = app::knowledge_tools_for_listing(cfg);
    const std::vector<std::string> no_allowlist;
    const auto& allowlist = cfg.mcp ? cfg.mcp->builtins : no_allowlist;
    auto allowlisted = [&](const toolkit::tool& t) {
        return std::find(allowlist.begin(), allowlist.end(), t.name()) != allowlist.end();
    };
    if (o.json) {
        boost::json::array tools;
        for (const auto& t : loaded.tools) tools.push_back(app::tool_info_json(*t));
        for (const auto& t : builtin_tools) {
            auto j = app::tool_info_json(*t);
            j["builtin"] = true;
            j["served_over_mcp"] = allowlisted(*t);
            tools.push_back(std::move(j));
        }
        if (remote.result) {
            for (auto& j : app::imported_tools_json(*remote.result)) tools.push_back(std::move(j));
        }
        boost::json::object doc;
        doc["tools"] = std::move(tools);
        fmt::print("{}\n", boost::json::serialize(doc));
        co_return app::exit_code::ok;
    }

    fmt::print("Identity: {}\n", cfg.identity);
    if (cfg.application_path.empty()) {
        fmt::print("Application: none (set application_path to serve a fisk application's commands)\n");
    } else {
        fmt::print("Application: {} {} ({})\n", loaded.model.name, loaded.model.version, cfg.application_path);
    }
    fmt::print("\nTools ({}):\n{}", loaded.tools.size(), app::tools_table(loaded.tools));
    if (remote.result) {
        fmt::print("\nRemote tools served ungated (serve_remote_tools) ({}):\n{}", remote.result->tools.size(),
                   app::tools_table(remote.result->tools));
        fmt::print("\nRemote tool hosts\n");
        for (const auto& h : remote.result->hosts) fmt::print("{}\n", app::host_status_line(h, cfg.nats_context));
    }
    if (!builtin_tools.empty()) {
        fmt::print("\nBuilt-in tools ({}):\n", builtin_tools.size());
        for (const auto& t : builtin_tools) {
            fmt::print("  {}  {}\n", t->name(),
                       allowlisted(*t) ? "[served over MCP]"
                                       : "[agent only; add it to expose.agent.mcp.builtins to serve it over MCP]");
        }
    }
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
    co_return app::exit_code::ok;
}

// A listen failure, reported as one line without the "error:" prefix.
struct listen_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string endpoint_text(const boost::asio::ip::tcp::endpoint& ep) {
    const auto a = ep.address();
    return a.is_v6() ? fmt::format("[{}]:{}", a.to_string(), ep.port())
                     : fmt::format("{}:{}", a.to_string(), ep.port());
}

std::string listen_url(const boost::asio::ip::tcp::endpoint& ep, std::string_view path) {
    return fmt::format("http://{}{}", endpoint_text(ep), path);
}

std::string listen_failure_text(const boost::asio::ip::tcp::endpoint& ep, const boost::system::error_code& ec) {
    const auto where = endpoint_text(ep);
    if (ec == boost::asio::error::address_in_use) {
        return fmt::format("cannot listen on {}: the address is already in use; stop the other server or pass --port",
                           where);
    }
    if (ec == boost::asio::error::access_denied) {
        return fmt::format(
            "cannot listen on {}: permission denied; ports below 1024 need privileges, pass --port "
            "with a higher port",
            where);
    }
    if (ec == boost::system::errc::address_not_available) {
        return fmt::format(
            "cannot listen on {}: the address is not one of this host's; pass --address with a local "
            "IP such as 127.0.0.1",
            where);
    }
    return fmt::format("cannot listen on {}: {}; check --address and --port", where, ec.message());
}

struct serve_options {
    std::string config_path;
    std::optional<int> port;  // flag or FISK_AI_MCP_PORT; 0 asks for a free port
    std::string address;      // flag or FISK_AI_MCP_ADDRESS
};

std::string approval_summary(config::confirm_mode m) {
    switch (m) {
        case config::confirm_mode::always:
            return "clients that support elicitation are asked to approve each run, clients that do not are refused "
                   "(confirm_over_mcp=always)";
        case config::confirm_mode::never:
            return "they run ungated with approval delegated to the client (confirm_over_mcp=never)";
        case config::confirm_mode::auto_: break;
    }
    return "clients that support elicitation are asked to approve each run, clients that do not run them ungated "
           "(confirm_over_mcp=auto)";
}

boost::asio::awaitable<int> run_serve(app::runtime& rt, serve_options o) {
    const auto cfg = config::load_file(o.config_path, config::mode::mcp);
    const auto& mcp = *cfg.mcp;
    for (const auto& w : cfg.warnings) app::log_warning(w);
    if (cfg.application_path.empty()) {
        app::log_info("note: no wrapped application configured (application_path unset); serving built-in tools only");
    }
    if (cfg.harness.human_in_the_loop_enabled) {
        app::log_warning(
            "human_in_the_loop has no effect over MCP; built-in human-in-the-loop tools are never "
            "exposed to MCP clients");
    }
    if (cfg.harness.memory.enabled) {
        app::log_warning("memory has no effect over MCP; the built-in memory tools are only available in an agent run");
    }

    const auto loaded = co_await toolkit::load_application_tools(app::application_options_from(cfg));
    for (const auto& d : loaded.dropped) app::log_info(fmt::format("left out: {} ({})", d.command, d.reason));

    // Built-ins this build provides; the operator's allowlist can only narrow them. The
    // knowledge store is opened only when one of its tools is allowlisted, and stays open
    // until serving ends.
    auto knowledge = app::open_mcp_knowledge(rt.context().get_executor(), cfg, mcp.builtins);
    const auto& builtins = knowledge.builtins;
    for (const auto& name : mcp.builtins) {
        if (!builtins.find(name)) {
            throw std::runtime_error(fmt::format(
                "expose.agent.mcp.builtins lists \"{}\", but this build has no built-in of that name; remove it "
                "from builtins",
                name));
        }
    }
    if (knowledge.store) {
        auto tier = co_await knowledge.store->tier_line();
        if (!tier) throw std::runtime_error(tier.error().message);
        app::log_info(fmt::format("knowledge {}", *tier));
        if (!knowledge.store->built()) {
            app::log_info(
                "note: the knowledge index is not built yet; knowledge_search will return index_not_built until you "
                "run: fisk-ai knowledge index");
        }
    }
    const auto served_builtins = builtins.served_on(toolkit::surface::mcp, mcp.builtins);

    // Remote tools: imported strictly (a host that does not answer, or a name collision,
    // stops the start), served after the local commands and ungated: the serving agent's
    // own exposure rules decide what it offers.
    toolkit::tool_list commands = loaded.tools;
    if (!cfg.remote_tools.empty() && !mcp.serve_remote_tools) {
        app::log_info(
            "note: remote_tools are configured but not served over MCP; set "
            "expose.agent.mcp.serve_remote_tools: true to serve them");
    }
    if (!cfg.remote_tools.empty() && mcp.serve_remote_tools) {
        std::set<std::string> taken;
        for (const auto& t : loaded.tools) taken.insert(t->name());
        const auto imported = co_await remotetools::discover_and_import(
            app::connect_peers(cfg, rt.context().get_executor()), app::remote_hosts(cfg), std::move(taken));
        for (const auto& w : imported.warnings()) app::log_warning(w);
        remotetools::require_complete(imported, cfg.nats_context);
        for (const auto& h : imported.hosts) app::log_info(app::host_status_line(h, cfg.nats_context));
        commands.insert(commands.end(), imported.tools.begin(), imported.tools.end());
        app::log_warning(
            fmt::format("serving {} remote tool(s) ungated: the agents serving them decide what they "
                        "expose and run",
                        imported.tools.size()));
    }
    if (commands.empty() && served_builtins.empty()) {
        throw std::runtime_error(
            fmt::format("no tools available after filtering; check include/exclude in \"{}\"", o.config_path));
    }
    mcpserver::check_builtin_collisions(commands, served_builtins);

    const auto so = app::mcp_server_options(cfg);
    mcpserver::server srv(rt.context().get_executor(), so, commands, served_builtins);
    const auto& reg = srv.registered();
    for (const auto& w : reg.warnings) app::log_warning(w);
    if (reg.served.empty()) throw std::runtime_error("no tools available to expose over MCP");
    if (reg.confirm_count > 0) {
        app::log_info(fmt::format("note: {} exposed tool(s) require approval (ai:confirm or confirm_tags): {}",
                                  reg.confirm_count, approval_summary(mcp.confirm_over_mcp)));
    }

    // Flag or environment, then the config, then the loopback default.
    const std::string host = !o.address.empty() ? o.address : (!mcp.address.empty() ? mcp.address : "127.0.0.1");
    const int port = o.port ? *o.port : (mcp.port != 0 ? mcp.port : 8080);
    if (port < 0 || port > 65535) throw std::runtime_error(fmt::format("invalid port {}: must be 0 to 65535", port));
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(host, ec);
    if (ec) {
        throw std::runtime_error(
            fmt::format("invalid listen address \"{}\": give an IP address such as 127.0.0.1, "
                        "::1 or 0.0.0.0",
                        host));
    }
    mcpserver::listener_options lo;
    lo.max_connections = static_cast<std::size_t>(mcp.effective_max_connections());
    const boost::asio::ip::tcp::endpoint wanted{address, static_cast<unsigned short>(port)};
    std::optional<mcpserver::listener> listening;
    try {
        listening.emplace(srv, wanted, lo);
    } catch (const boost::system::system_error& e) {
        throw listen_error(listen_failure_text(wanted, e.code()));
    }
    auto& lst = *listening;
    const auto bound = lst.local_endpoint();
    const auto bound_host = bound.address().to_string();

    // First signal: stop accepting, cancel held-open streams and running calls (their
    // process groups are killed), let responses finish within the grace period. Second
    // signal: close every connection now.
    rt.on_drain([&] {
        app::log_info("shutting down: cancelling running calls and open streams");
        lst.stop();
    });
    rt.on_cancel([&] { lst.cancel(); });

    // The real bound address, never a friendlier name: an operator must see what is exposed.
    std::string banner = fmt::format("Serving {} tools over MCP on {} as {}/{}\n", reg.served.size(),
                                     listen_url(bound, "/mcp"), so.name, so.version);
    for (const auto& name : reg.served) banner += fmt::format("  {}\n", name);
    banner += fmt::format("\nAdd to Claude Code with:\n  {}\n",
                          mcpserver::claude_add_hint(so.name, bound_host, bound.port(), "/mcp"));
    fmt::print(stderr, "{}", banner);
    if (!bound.address().is_loopback()) {
        app::log_warning(fmt::format(
            "listening on {}, which is reachable from other hosts: MCP has no authentication here, so anyone who can "
            "reach this port can run the served tools; bind to 127.0.0.1 (--address) unless that is intended",
            endpoint_text(bound)));
    }

    co_await lst.run();
    app::log_info("MCP server stopped");
    co_return app::exit_code::ok;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App cli{
        "fisk-ai-mcp: serve a fisk application's commands as tools over the Model Context Protocol "
        "(streamable HTTP)."};
    cli.set_version_flag("--version", fmt::format("fisk-ai-mcp {}", app::version));
    cli.require_subcommand(0, 1);
    cli.footer(fmt::format(
        "Without a subcommand, serves the tools over MCP (streamable HTTP) at http://<address>:<port>/mcp.\n"
        "The config must contain an expose.agent.mcp block. Logs go to stderr. The first SIGINT/SIGTERM\n"
        "drains (running calls are cancelled and answer), a second closes every connection at once.\n{}",
        app::exit_codes_help));

    serve_options serve;
    cli.add_option("-c,--config", serve.config_path, "The fisk-ai YAML configuration file");
    cli.add_option("--port", serve.port,
                   "TCP port to listen on; overrides expose.agent.mcp.port (default 8080; 0 picks a free port)")
        ->envname("FISK_AI_MCP_PORT");
    cli.add_option("--address", serve.address,
                   "Host IP to bind to; overrides expose.agent.mcp.address (default 127.0.0.1; use 0.0.0.0 for all "
                   "interfaces)")
        ->envname("FISK_AI_MCP_ADDRESS");

    info_options info;
    auto* info_cmd = cli.add_subcommand(
        "info",
        "List the tools that would be served, with their tags and whether each needs confirmation; why any "
        "command was left out goes to stderr");
    info_cmd->add_option("-c,--config", info.config_path, "The fisk-ai YAML configuration file");
    info_cmd->add_flag(
        "--json", info.json,
        "Print one JSON object: {\"tools\":[{name, command, description, tags, confirm, input_schema}]}");
    knowledge::command_options knowledge_opts;
    auto* knowledge_cmd = app::add_knowledge_command(cli, knowledge_opts);
    app::add_log_format_option(cli);

    if (const auto code = app::parse_command_line(cli, argc, argv)) return *code;

    app::runtime rt;
    if (*knowledge_cmd) {
        // The first signal ends a watch (after its running pass); other actions just finish.
        rt.on_drain([stop = knowledge_opts.stop] { stop->store(true); });
        return rt.run(app::run_knowledge_command(knowledge_opts), "fisk-ai-mcp");
    }
    if (*info_cmd) {
        if (info.config_path.empty()) info.config_path = serve.config_path;
        if (info.config_path.empty()) {
            fmt::print(stderr, "fisk-ai-mcp: info needs --config FILE\n");
            return app::exit_code::usage;
        }
        return rt.run(run_info(info), "fisk-ai-mcp");
    }
    if (serve.config_path.empty()) {
        fmt::print(stderr,
                   "fisk-ai-mcp: --config FILE is required: the fisk-ai configuration with an "
                   "expose.agent.mcp block (see examples/demo/fisk-ai.yaml)\n");
        return app::exit_code::usage;
    }
    // A listen failure is one line of its own, without the "error:" prefix.
    auto serve_reporting_listen_errors = [&]() -> boost::asio::awaitable<int> {
        try {
            co_return co_await run_serve(rt, serve);
        } catch (const listen_error& e) {
            fmt::print(stderr, "fisk-ai-mcp: {}\n", e.what());
        }
        co_return app::exit_code::failure;
    };
    return rt.run(serve_reporting_listen_errors(), "fisk-ai-mcp");
}
