// fisk-ai-serve [serve] --config FILE [--embedded-broker] [-v]
// fisk-ai-serve check --config FILE [--embedded-broker] [-v]
//
// serve: load the config (mode serve), build the shared resources (§5.7), the channels of
// expose.agent and the services, print the banner, serve until a signal. First
// SIGINT/SIGTERM drains (no new work; runs finish); a second, or drain_timeout spent,
// cancels the runs and the process exits 130 within 10 s. A channel or service fault
// drains and exits 2. check: everything up to the banner, then close and exit 0.

#include "commands.hpp"

#include "app_support.hpp"

#include <fiskai/agent/hitl.hpp>
#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/mcpclient/session.hpp>
#include <fiskai/memory/builtins.hpp>
#include <fiskai/serve/banner.hpp>
#include <fiskai/serve/resources.hpp>
#include <fiskai/serve/serve.hpp>

#include <fiskai/serve/a2a_channel.hpp>
#include <fiskai/serve/a2a_tool_service.hpp>
#include <fiskai/serve/queue_channel.hpp>
#include <fiskai/serve/slack_channel.hpp>

#include <fiskai/a2a/server.hpp>
#include <fiskai/jetstream/context.hpp>

#include <boost/asio/io_context.hpp>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fiskai::serve_app {

namespace asio = boost::asio;

namespace {

struct serve_options {
    std::string config_path;
    bool embedded_broker = false;
    bool verbose = false;
};

void add_common_options(CLI::App& cmd, serve_options& o) {
    cmd.add_option("-c,--config", o.config_path, "The fisk-ai YAML configuration (expose.agent names the channels)");
    cmd.add_flag("--embedded-broker", o.embedded_broker,
                 "Carry the channels on a loopback nats-server child instead of nats_context (stores that need NATS "
                 "still use nats_context)");
    cmd.add_flag("-v,--verbose", o.verbose, "Log at DEBUG");
}

// What the channels of expose.agent look like without opening them (check must not join
// the request queue group: it would take real work). `serve` asks each constructed channel
// instead (its description(), reached by dynamic_cast, §5.8); the a2a line is the same text.
// The queue's line is the bound channel's description() (check binds it); Slack's comes
// from the config, since check does not connect to Slack.
std::vector<std::string> channel_lines(const config::config& cfg, const std::string& queue_line = {}) {
    std::vector<std::string> lines;
    if (cfg.a2a_channel_enabled()) {
        lines.push_back(fmt::format("a2a: requests on choria.fisk-ai.request.{0} (queue group {0}), elicitation {1}",
                                    cfg.identity, cfg.a2a->prompts->elicitation ? "on" : "off"));
    }
    if (cfg.serve.queue && !queue_line.empty()) lines.push_back(queue_line);
    if (cfg.serve.slack) lines.push_back(fmt::format("slack: {}", cfg.serve.slack->api_base_url));
    return lines;
}

// The tools the a2a tool service would serve, without opening it (check must not join the
// tool queue group): a2a::server's selection is free of I/O.
std::size_t a2a_served_tools(const config::config& cfg, const serve::resources& res) {
    asio::io_context unused;
    a2a::server selection(unused.get_executor(), res.runtime()->tools, fiskai::app::a2a_server_options(cfg));
    return selection.exposed().size();
}

std::vector<std::string> service_lines(const config::config& cfg, const serve::resources& res,
                                       std::optional<std::size_t> served_tools = std::nullopt) {
    std::vector<std::string> lines;
    if (cfg.a2a_serving_enabled()) {
        lines.push_back(
            serve::a2a_tools_service_line(cfg.identity, served_tools ? *served_tools : a2a_served_tools(cfg, res)));
    }
    for (const auto& m : res.summary().mcp_servers) lines.push_back(serve::mcp_client_service_line(m));
    return lines;
}

std::string banner(const config::config& cfg, const serve::resources& res,
                   std::optional<std::vector<std::string>> channels = std::nullopt,
                   std::optional<std::size_t> served_tools = std::nullopt) {
    serve::banner_facts f;
    f.version = std::string(fiskai::app::version);
    f.identity = cfg.identity;
    f.provider = cfg.llm.provider;
    f.model = cfg.llm.model;
    f.workers = static_cast<std::size_t>(cfg.serve.workers);
    f.resources = res.summary();
    f.channel_lines = channels ? std::move(*channels) : channel_lines(cfg);
    f.service_lines = service_lines(cfg, res, served_tools);
    return serve::banner_text(f);
}

// The MCP-client watcher (§11.4): its run() fails when a session dies, so the server
// drains and the worker exits 2; stop() never closes a session.
class mcp_watcher final : public serve::service {
public:
    mcp_watcher(asio::any_io_executor ex, std::vector<std::shared_ptr<mcpclient::session>> sessions)
        : timer_(std::move(ex)), sessions_(std::move(sessions)) {
        timer_.expires_at(std::chrono::steady_clock::time_point::max());
    }
    [[nodiscard]] std::string_view name() const override { return "mcp client"; }
    asio::awaitable<void> run() override {
        for (const auto& s : sessions_) {
            s->on_fault([this, name = s->server().name](const std::string& why) {
                if (!failure_) failure_ = fmt::format("mcp server \"{}\" is not running: {}", name, why);
                timer_.cancel();
            });
        }
        while (!stopped_ && !failure_) {
            boost::system::error_code ec;
            co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        if (failure_) throw std::runtime_error(*failure_);
    }
    void stop() override {
        stopped_ = true;
        timer_.cancel();
    }

private:
    asio::steady_timer timer_;
    std::vector<std::shared_ptr<mcpclient::session>> sessions_;
    std::optional<std::string> failure_;
    bool stopped_ = false;
};

config::config load_serve_config(const serve_options& o) {
    auto cfg = config::load_file(o.config_path, config::mode::serve, {.embedded_broker = o.embedded_broker});
    for (const auto& w : cfg.warnings) fiskai::app::log_warning(w);
    return cfg;
}

asio::awaitable<std::shared_ptr<serve::resources>> build(const config::config& cfg, const serve_options& o) {
    serve::resource_options ro;
    ro.config_path = o.config_path;
    ro.application = fiskai::app::application_options_from(cfg);
    ro.log = serve_logger(o.verbose);
    if (o.embedded_broker) {
        conns::broker_options b;
        b.jetstream = false;  // the channels need no JetStream; stores use nats_context
        ro.broker = b;
    }
    co_return co_await serve::build_resources(cfg, std::move(ro));
}

// The tools a run has, by name (tool hints naming others are left out of a prompt).
std::vector<std::string> run_tool_names(const config::config& cfg, const serve::resources& res) {
    std::vector<std::string> names;
    for (const auto& t : res.runtime()->tools) names.push_back(t->name());
    if (cfg.harness.human_in_the_loop_enabled) {
        for (const auto& t : agent::hitl_tools()) names.push_back(t->name());
    }
    if (cfg.harness.memory.enabled) {
        for (const auto& t : memory::memory_tools(nullptr)) names.push_back(t->name());
    }
    return names;
}

// The queue channel (§7) on store_nats, with the JetStream context it needs; members are
// destroyed channel first, then the context, both before the resources close.
struct queue_binding {
    std::unique_ptr<jetstream::context> js;
    std::shared_ptr<serve::queue_channel> channel;
};

// Binds the operator's stream, bucket, consumer (and dead-letter stream); each missing or
// different piece is refused with its `nats …` command (serve::queue_error).
asio::awaitable<std::unique_ptr<queue_binding>> open_queue(const config::config& cfg, const serve::resources& res,
                                                           asio::any_io_executor ex, gocompat::logger log) {
    const auto& q = *cfg.serve.queue;
    auto* nats = res.store_nats();
    if (!nats) throw std::runtime_error("queue: no NATS connection for the queue; set nats_context");
    auto b = std::make_unique<queue_binding>();
    b->js = std::make_unique<jetstream::context>(*nats, res.blocking());
    serve::queue_channel_options qo;
    qo.identity = cfg.identity;
    qo.stream = q.stream;
    qo.task_store = q.task_store;
    qo.consumer = q.consumer.empty() ? cfg.identity : q.consumer;
    qo.ack_wait = q.ack_wait;
    qo.max_deliver = q.max_deliver;
    qo.dead_letter = q.dead_letter;
    qo.context_name = cfg.nats_context;
    qo.tool_names = run_tool_names(cfg, res);
    qo.log = std::move(log);
    b->channel = co_await serve::queue_channel::open(*nats, *b->js, std::move(ex), std::move(qo));
    co_return b;
}

asio::awaitable<int> run_check(serve_options o) {
    if (missing_config(o.config_path)) co_return fiskai::app::exit_code::usage;
    const auto cfg = load_serve_config(o);
    auto res = co_await build(cfg, o);
    std::string queue_line;
    std::exception_ptr failure;
    if (cfg.slack_channel_enabled()) {
        // The tokens and the API URL as serve reads them; check connects to nothing.
        if (auto options = serve::slack_channel_options_from(*cfg.serve.slack, cfg.identity, serve_logger(o.verbose));
            !options) {
            failure = std::make_exception_ptr(std::runtime_error(options.error()));
        }
    }
    if (!failure && cfg.queue_channel_enabled()) {
        try {
            // Bound and released at once: it fetches nothing, so no job is taken.
            const auto ex = co_await asio::this_coro::executor;
            auto q = co_await open_queue(cfg, *res, ex, serve_logger(o.verbose));
            queue_line = q->channel->description();
            q->channel->release();
        } catch (...) {
            failure = std::current_exception();
        }
    }
    if (failure) {
        co_await res->close();
        std::rethrow_exception(failure);
    }
    fmt::print(stderr, "{}", banner(cfg, *res, channel_lines(cfg, queue_line)));
    co_await res->close();
    co_return exit_code::ok;
}

// The channels expose.agent names, on the shared resources. Each is released by the
// server's drain; works hand their outcome back through done().
// `tool_service` set (serve_tools on): the a2a channel's intake is the `request` endpoint of
// its micro service (§6.1, D12).
std::vector<std::shared_ptr<serve::channel>> make_channels(const config::config& cfg, const serve::resources& res,
                                                           const asio::any_io_executor& ex, const gocompat::logger& log,
                                                           const serve::a2a_tool_service* tool_service) {
    std::vector<std::shared_ptr<serve::channel>> out;
    if (cfg.a2a_channel_enabled()) {
        const auto rt = res.runtime();
        serve::a2a_channel_options o;
        o.identity = cfg.identity;
        o.elicitation = cfg.a2a->prompts->elicitation;
        o.question_timeout = cfg.a2a->prompts->question_timeout;
        o.accept_window = cfg.a2a->prompts->accept_window;
        o.tool_names = run_tool_names(cfg, res);
        o.provider = cfg.llm.provider;
        o.log = log;
        if (tool_service) o.request_service = tool_service->micro_service();
        out.push_back(std::make_shared<serve::a2a_channel>(*res.channel_nats(), ex, rt->sessions, std::move(o)));
    }
    // The queue channel is opened by run_serve (its binding awaits).
    if (cfg.slack_channel_enabled()) {
        // Tokens from the environment only (§8.1); the channel connects in start().
        auto options = serve::slack_channel_options_from(*cfg.serve.slack, cfg.identity, log);
        if (!options) throw std::runtime_error(options.error());
        out.push_back(std::make_shared<serve::slack_channel>(ex, res.runtime()->sessions, std::move(*options)));
    }
    return out;
}

asio::awaitable<int> run_serve(fiskai::app::runtime& rt, serve_options o) {
    if (missing_config(o.config_path)) co_return fiskai::app::exit_code::usage;
    const auto cfg = load_serve_config(o);
    auto res = co_await build(cfg, o);
    const auto ex = co_await asio::this_coro::executor;

    serve::server_options so;
    so.workers = static_cast<std::size_t>(cfg.serve.workers);
    so.report_timeout = cfg.serve.report_timeout;
    so.log = serve_logger(o.verbose);
    auto srv = std::make_shared<serve::server>(ex, res->runtime(), so);
    std::exception_ptr failure;

    std::vector<std::shared_ptr<serve::channel>> channels;
    std::shared_ptr<serve::a2a_tool_service> tool_service;
    std::unique_ptr<queue_binding> queue;
    try {
        // The tool service first: it opens the micro service the channel's intake joins.
        if (cfg.a2a_serving_enabled()) {
            tool_service = std::make_shared<serve::a2a_tool_service>(*res->channel_nats(), ex, res->runtime()->tools,
                                                                     fiskai::app::a2a_server_options(cfg));
        }
        channels = make_channels(cfg, *res, ex, so.log, tool_service.get());
        // Slack connects before the banner: auth.test, the socket and its hello (§8.1).
        for (const auto& ch : channels) {
            if (auto* slack = dynamic_cast<serve::slack_channel*>(ch.get())) co_await slack->start();
        }
        if (cfg.queue_channel_enabled()) queue = co_await open_queue(cfg, *res, ex, so.log);
    } catch (...) {
        failure = std::current_exception();
    }
    if (!failure && channels.empty() && !tool_service && !queue) {
        // libs/config refuses such a config (validate_serve): reaching this is a bug.
        failure = std::make_exception_ptr(
            std::runtime_error("bug: no channel was built although the config names one; please report it"));
    }
    if (failure) {
        channels.clear();
        tool_service.reset();
        queue.reset();
        co_await res->close();
        std::rethrow_exception(failure);
    }
    std::vector<std::string> lines;
    for (const auto& ch : channels) {
        srv->add(ch, {.deliveries_repeat = false});
        if (const auto* a2a = dynamic_cast<const serve::a2a_channel*>(ch.get())) lines.push_back(a2a->description());
        if (const auto* slack = dynamic_cast<const serve::slack_channel*>(ch.get())) {
            lines.push_back(slack->description());
        }
    }
    std::optional<std::size_t> served_tools;
    if (tool_service) {
        srv->add(tool_service);
        served_tools = tool_service->tools();
    }
    // Deliveries repeat: a job comes again after a crash or a lost ack (§7.3).
    if (queue) {
        srv->add(queue->channel, {.deliveries_repeat = true});
        lines.push_back(queue->channel->description());
    }
    if (!res->mcp_sessions().empty()) srv->add(std::make_shared<mcp_watcher>(ex, res->mcp_sessions()));

    rt.set_drain_budget(cfg.serve.drain_timeout);
    rt.set_cancel_grace(std::chrono::seconds(10));
    // Weak: the runtime keeps its callbacks past the server's end, and a server kept alive
    // keeps its channels (and their sockets' timers) alive, so the process would not exit.
    rt.on_drain([weak_srv = std::weak_ptr<serve::server>(srv)] {
        fiskai::app::log_info("shutting down: taking no new work, letting running work finish");
        if (auto s = weak_srv.lock()) s->drain();
    });
    rt.on_cancel([weak_srv = std::weak_ptr<serve::server>(srv),
                  weak_tools = std::weak_ptr<serve::a2a_tool_service>(tool_service)] {
        if (auto s = weak_srv.lock()) s->cancel();
        if (auto tools = weak_tools.lock()) tools->cancel();
    });
    // A signal that came while the worker was starting found no hook yet: the server drains
    // before it runs (it starts nothing and returns), and the next signal cancels.
    if (rt.draining()) {
        fiskai::app::log_info("shutting down: a stop came during startup; taking no work");
        srv->drain();
    }

    fmt::print(stderr, "{}", banner(cfg, *res, std::move(lines), served_tools));
    std::fflush(stderr);
    int code = exit_code::ok;
    try {
        co_await srv->run();
    } catch (const serve::fault& f) {
        fiskai::app::process_logger().error(f.what());
        code = exit_code::fault;
    }
    srv.reset();
    tool_service.reset();
    channels.clear();
    queue.reset();
    co_await res->close();
    fmt::print(stderr, "fisk-ai-serve stopped\n");
    co_return code;
}

}  // namespace

bool missing_config(const std::string& config_path) {
    if (!config_path.empty()) return false;
    fmt::print(stderr,
               "--config is required: name the fisk-ai YAML configuration\nRun with --help for more information.\n");
    return true;
}

gocompat::logger serve_logger(bool verbose) {
    return fiskai::app::process_logger(verbose ? gocompat::log_level::debug : gocompat::log_level::info);
}

subcommand add_serve_command(CLI::App& parent, CLI::App& top_level) {
    auto opts = std::make_shared<serve_options>();
    auto* cmd = parent.add_subcommand("serve", "Run the worker (the default subcommand)");
    add_common_options(*cmd, *opts);
    add_common_options(top_level, *opts);
    cmd->footer(
        "The first SIGINT/SIGTERM drains (no new work, running work finishes); a second, or "
        "expose.agent.drain_timeout spent, cancels running work and exits 130.");
    return {cmd, [opts](fiskai::app::runtime& rt) { return run_serve(rt, *opts); }};
}

subcommand add_check_command(CLI::App& parent) {
    auto opts = std::make_shared<serve_options>();
    auto* cmd = parent.add_subcommand(
        "check", "Bind everything the worker needs (stores, remote tools, MCP servers), print the banner and exit");
    add_common_options(*cmd, *opts);
    return {cmd, [opts](fiskai::app::runtime&) { return run_check(*opts); }};
}

}  // namespace fiskai::serve_app
