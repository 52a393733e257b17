// fisk-ai-a2a serve --config F [--embedded-broker]
//
// Serves the wrapped fisk application's commands to peer agents over a2a on NATS. The
// config must opt in (expose.agent.a2a.serve_tools: true) and name application_path and
// nats_context; --embedded-broker replaces nats_context with a loopback nats-server child
// for trying it on one machine. First SIGINT/SIGTERM: stop taking requests, let running
// calls finish (each is bounded by the call timeout), drain the connection, exit 0. A
// second signal exits at once.

#include "nats_commands.hpp"

#include "app_support.hpp"

#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/config/config.hpp>
#include <fiskai/conns/embedded_broker.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>

namespace fiskai::a2a::app {

namespace asio = boost::asio;

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
    }
    return cfg;
}

int run_serve(const serve_options& o) {
    const auto cfg = load_server_config(o);
    for (const auto& w : cfg.warnings) fiskai::app::log_warning(w);
    const auto loaded = fiskai::app::load_tools_blocking(cfg);
    for (const auto& d : loaded.dropped) fiskai::app::log_info(fmt::format("left out: {} ({})", d.command, d.reason));
    if (loaded.tools.empty()) {
        throw std::runtime_error(fmt::format("no tools available after filtering; check include/exclude in \"{}\"", o.config_path));
    }

    // The broker first and the connection next, so both outlive everything that uses them.
    std::unique_ptr<conns::embedded_broker> broker;
    if (o.embedded_broker) {
        if (!cfg.nats_context.empty()) {
            fiskai::app::log_info(fmt::format("note: --embedded-broker given; nats_context \"{}\" is not used", cfg.nats_context));
        }
        broker = std::make_unique<conns::embedded_broker>();
        fiskai::app::log_info(fmt::format(
            "Started an embedded NATS server (nats-server pid {}, JetStream in {}) at {}\n"
            "Local peers can reach it with: nats context add fisk-ai-local --server {}",
            broker->pid(), broker->store_dir(), broker->url(), broker->url()));
    }
    asio::io_context ioc;
    conns::provider nats = broker ? conns::provider::owning(conns::connection::dial_url(
                                        broker->url(), connection_options(cfg.identity, ioc.get_executor())))
                                  : conns::provider::dial(cfg.nats_context, cfg.identity,
                                                          connection_options(cfg.identity, ioc.get_executor()));

    a2a_nats::nats_transport transport(nats, ioc.get_executor(), {.log = stderr_logger()});
    server_options so;
    so.identity = cfg.identity;
    so.version = std::string(agent_version);
    so.concurrency = static_cast<std::size_t>(cfg.a2a->limits.effective_concurrency());
    so.call_timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(cfg.a2a->limits.effective_timeout());
    so.log = stderr_logger();
    server srv(ioc.get_executor(), loaded.tools, so);
    if (srv.exposed().empty()) {
        throw std::runtime_error("no tools available to serve over a2a; all were filtered or confirmation-gated");
    }

    bool finished = false;
    std::exception_ptr failure;
    asio::co_spawn(ioc, srv.serve(transport), [&](std::exception_ptr e) {
        finished = true;
        failure = e;
    });
    // Both endpoints are subscribed before the banner says so.
    ioc.poll();

    const std::string where = broker ? fmt::format("the embedded NATS server at {}", broker->url())
                                     : fmt::format("NATS context {}", cfg.nats_context.empty() ? "(default)" : cfg.nats_context);
    std::string banner = fmt::format("Serving {} tools over a2a as {}/{} on {}\n", srv.exposed().size(), cfg.identity,
                                     so.version, where);
    banner += fmt::format("  Discovery: {}\n  Tools: {}\nExposed:\n", subject(route::discovery, cfg.identity),
                          subject(route::tool, cfg.identity));
    for (const auto& t : srv.exposed()) banner += fmt::format("  {}\n", t->name());
    fmt::print(stderr, "{}", banner);
    std::fflush(stderr);

    // First signal: no new requests; running calls finish within their call timeout (the
    // budget below is that plus a margin). Second signal, or the budget spent: exit now.
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    asio::steady_timer budget(ioc);
    bool stopping = false;
    const auto exit_now = [&](int code) {
        if (broker) broker->kill_now();
        std::_Exit(code);
    };
    std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec, int) {
        if (ec) return;
        if (stopping) {
            fiskai::app::log_info("second signal: exiting now");
            exit_now(130);
        }
        stopping = true;
        fiskai::app::log_info("shutting down: taking no new requests, letting running calls finish");
        srv.stop();
        budget.expires_after(so.call_timeout + std::chrono::seconds(5));
        budget.async_wait([&](const boost::system::error_code& timer_ec) {
            if (timer_ec) return;
            fiskai::app::log_warning("running calls did not finish within the shutdown budget; exiting now");
            exit_now(1);
        });
        signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);

    while (!finished && !ioc.stopped()) {
        ioc.run_one();
    }
    signals.cancel();
    budget.cancel();
    ioc.poll();

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
    if (!stopping) throw std::runtime_error("the NATS connection closed for good (reconnect attempts exhausted)");
    return exit_ok;
}

}  // namespace

subcommand add_serve_command(CLI::App& parent) {
    auto opts = std::make_shared<serve_options>();
    auto* cmd = parent.add_subcommand("serve", "Serve the wrapped fisk application's commands to peer agents over a2a on NATS");
    cmd->add_option("-c,--config", opts->config_path,
                    "The fisk-ai YAML configuration; needs expose.agent.a2a.serve_tools: true, application_path and "
                    "nats_context")
        ->required();
    cmd->add_flag("--embedded-broker", opts->embedded_broker,
                  "Start a loopback nats-server (JetStream in a temporary directory) instead of using nats_context, and "
                  "print its URL for local peers");
    cmd->footer("Discovery subject: choria.fisk-ai.discovery.<identity>; tool subject: choria.fisk-ai.tool.<identity>; "
                "queue group: <identity>.\nThe first SIGINT/SIGTERM stops intake and lets running calls finish; a second "
                "exits at once.");
    return {cmd, [opts] { return run_serve(*opts); }};
}

}  // namespace fiskai::a2a::app
