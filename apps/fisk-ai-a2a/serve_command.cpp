// fisk-ai-a2a serve --config F [--embedded-broker]
//
// Serves the wrapped fisk application's commands to peer agents over a2a on NATS. The
// config must opt in (expose.agent.a2a.serve_tools: true) and name application_path and
// nats_context; --embedded-broker replaces nats_context with a loopback nats-server child
// for trying it on one machine. First SIGINT/SIGTERM: stop taking requests, let running
// calls finish (each is bounded by the call timeout), drain the connection, exit 0. A
// second signal cancels the running calls (killing their process groups), which still
// answer, then the process exits 130.

#include "nats_commands.hpp"

#include "app_support.hpp"

#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/config/config.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/toolkit/application.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>

namespace fiskai::a2a::app {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

struct serve_options {
    std::string config_path;
    bool embedded_broker = false;
};

// Server mode checks, with the exact texts; with the embedded broker nats_context is the
// one requirement waived.
config::config load_server_config(const serve_options& o) {
    auto cfg = config::load_file(o.config_path, o.embedded_broker ? config::mode::lenient : config::mode::server);
    if (o.embedded_broker) {
        auto checked = cfg;
        if (checked.nats_context.empty()) checked.nats_context = "embedded";
        config::validate_for_mode(checked, config::mode::server);
        // parse added the lenient mode's warnings only; the server's come here.
        for (auto& w : config::mode_warnings(checked, config::mode::server)) cfg.warnings.push_back(std::move(w));
    }
    return cfg;
}

asio::awaitable<int> run_serve(fiskai::app::runtime& rt, serve_options o) {
    const auto cfg = load_server_config(o);
    for (const auto& w : cfg.warnings) fiskai::app::log_warning(w);
    const auto loaded = co_await toolkit::load_application_tools(fiskai::app::application_options_from(cfg));
    for (const auto& d : loaded.dropped) fiskai::app::log_info(fmt::format("left out: {} ({})", d.command, d.reason));
    if (loaded.tools.empty()) {
        throw std::runtime_error(
            fmt::format("no tools available after filtering; check include/exclude in \"{}\"", o.config_path));
    }

    // The broker first and the connection next, so both outlive everything that uses them.
    std::unique_ptr<conns::embedded_broker> broker;
    if (o.embedded_broker) {
        if (!cfg.nats_context.empty()) {
            fiskai::app::log_info(
                fmt::format("note: --embedded-broker given; nats_context \"{}\" is not used", cfg.nats_context));
        }
        broker = std::make_unique<conns::embedded_broker>();
        fiskai::app::log_info(
            fmt::format("Started an embedded NATS server (nats-server pid {}, JetStream in {}) at {}\n"
                        "Local peers can reach it with: nats context add fisk-ai-local --server {}",
                        broker->pid(), broker->store_dir(), broker->url(), broker->url()));
    }
    const auto ex = rt.context().get_executor();
    conns::provider nats =
        broker
            ? conns::provider::owning(conns::connection::dial_url(broker->url(), connection_options(cfg.identity, ex)))
            : conns::provider::dial(cfg.nats_context, cfg.identity, connection_options(cfg.identity, ex));

    a2a_nats::nats_transport transport(nats, ex, {.log = stderr_logger()});
    const auto so = fiskai::app::a2a_server_options(cfg);
    server srv(ex, loaded.tools, so);
    if (srv.exposed().empty()) {
        throw std::runtime_error("no tools available to serve over a2a; all were filtered or confirmation-gated");
    }

    // First signal: no new requests; running calls finish within their call timeout (the
    // budget is that plus a margin). Second signal, or the budget spent: running calls are
    // cancelled (their process groups killed) and still answered, then the process exits
    // 130.
    rt.set_drain_budget(so.call_timeout + std::chrono::seconds(5));
    rt.on_drain([&] {
        fiskai::app::log_info("shutting down: taking no new requests, letting running calls finish");
        srv.stop();
    });
    rt.on_cancel([&] { srv.cancel(); });

    // serve() subscribes both endpoints before it first waits; the banner follows it.
    const std::string where =
        broker ? fmt::format("the embedded NATS server at {}", broker->url())
               : fmt::format("NATS context {}", cfg.nats_context.empty() ? "(default)" : cfg.nats_context);
    const auto announce = [&]() -> asio::awaitable<void> {
        co_await asio::post(ex, asio::use_awaitable);  // serve() has run up to its first wait
        std::string banner = fmt::format("Serving {} tools over a2a as {}/{} on {}\n", srv.exposed().size(),
                                         cfg.identity, so.version, where);
        banner += fmt::format("  Discovery: {}\n  Tools: {}\nExposed:\n", subject(route::discovery, cfg.identity),
                              subject(route::tool, cfg.identity));
        for (const auto& t : srv.exposed()) banner += fmt::format("  {}\n", t->name());
        fmt::print(stderr, "{}", banner);
    };
    std::exception_ptr failure;
    try {
        co_await (srv.serve(transport) && announce());
    } catch (...) {
        failure = std::current_exception();
    }

    // Everything answered: drain what was published, then close.
    if (nats.nats() && !nats.nats()->drain(std::chrono::seconds(5))) {
        fiskai::app::log_warning("the NATS connection did not drain within 5s");
    }
    nats.close();
    if (broker) {
        const bool graceful = broker->stop();
        fiskai::app::log_info(graceful ? "stopped the embedded NATS server"
                                       : "stopped the embedded NATS server (it had to be killed)");
    }
    fmt::print(stderr, "\na2a server stopped\n");
    if (failure) std::rethrow_exception(failure);
    if (!rt.draining()) throw std::runtime_error("the NATS connection closed for good (reconnect attempts exhausted)");
    co_return exit_ok;
}

}  // namespace

subcommand add_serve_command(CLI::App& parent) {
    auto opts = std::make_shared<serve_options>();
    auto* cmd =
        parent.add_subcommand("serve", "Serve the wrapped fisk application's commands to peer agents over a2a on NATS");
    cmd->add_option("-c,--config", opts->config_path,
                    "The fisk-ai YAML configuration; needs expose.agent.a2a.serve_tools: true, application_path and "
                    "nats_context")
        ->required();
    cmd->add_flag(
        "--embedded-broker", opts->embedded_broker,
        "Start a loopback nats-server (JetStream in a temporary directory) instead of using nats_context, and "
        "print its URL for local peers");
    cmd->footer(
        "Discovery subject: choria.fisk-ai.discovery.<identity>; tool subject: choria.fisk-ai.tool.<identity>; "
        "queue group: <identity>.\nThe first SIGINT/SIGTERM stops intake and lets running calls finish; a second "
        "cancels them (killing their process groups) and exits 130.");
    return {cmd, [opts](fiskai::app::runtime& rt) { return run_serve(rt, *opts); }};
}

}  // namespace fiskai::a2a::app
