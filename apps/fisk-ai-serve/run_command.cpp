// fisk-ai-serve run --config FILE [PROMPT...] [--continue TASK] [--chat] [--no-stream] [--json] [-v]
//
// Hosts the agent for one terminal (serve.md §9.1): the config's expose is replaced with
// {agent: {workers: 1, a2a: {prompts: {elicitation: true}}}}, a loopback nats-server child
// with a random token carries the a2a channel only (stores and remote tools keep
// nats_context), and this process then calls the agent over a2a exactly as a remote caller
// would, as `fisk-ai-terminal`: events on stderr, the final text on stdout, questions at the
// terminal. First Ctrl-C sends cancel; the second cancels the hosted server and exits 130.

#include "commands.hpp"

#include "app_support.hpp"

#include <fiskai/config/config.hpp>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "task_terminal.hpp"
#include "terminal_text.hpp"

#include <fiskai/a2a_nats/task_caller.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/jetstream/offload.hpp>
#include <fiskai/serve/a2a_channel.hpp>
#include <fiskai/serve/resources.hpp>
#include <fiskai/serve/serve.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <iostream>
#include <iterator>
#include <list>
#include <random>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>

#include <sys/eventfd.h>
#include <unistd.h>

namespace fiskai::serve_app {

namespace asio = boost::asio;

namespace {

struct run_options {
    std::string config_path;
    std::vector<std::string> prompt;
    std::string continue_task;
    bool chat = false;
    bool no_stream = false;
    bool json = false;
    bool verbose = false;
};

// run's exit code for "could not start or transport failure".
constexpr int run_could_not_start = 2;
constexpr std::string_view nats_server_path = "/usr/sbin/nats-server";
constexpr std::string_view terminal_identity = "fisk-ai-terminal";

// The hosted config (§9.1): `expose` replaced by {agent: {workers: 1, a2a: {prompts:
// {elicitation: true}}}}: only the a2a channel, one worker, questions over a2a; no tool
// serving, no MCP serving, no queue, no Slack, and the agent's other settings (work_dir,
// the timeouts) at their defaults, whatever a worker's config says.
config::config hosted_config(config::config cfg) {
    cfg.mcp.reset();
    config::a2a_settings a2a;
    a2a.prompts = config::a2a_prompts_settings{};
    a2a.prompts->elicitation = true;
    cfg.a2a = a2a;
    cfg.serve = config::serve_settings{};
    cfg.serve.workers = 1;
    return cfg;
}

// 128 random bits as hex: the local broker's token, never on a command line.
std::string random_token() {
    std::random_device rd;
    std::string out;
    for (int i = 0; i < 4; ++i) out += fmt::format("{:08x}", rd());
    return out;
}

// --chat's prompts after the first: stdin read a line at a time on a thread of its own
// (read(2), not std::cin, so nothing waits in a stdio buffer where poll cannot see it); the
// rest of what was read waits for the next prompt. A write to `stop` ends the wait.
struct chat_input {
    std::string pending;
    bool eof = false;
    int stop = ::eventfd(0, EFD_CLOEXEC);

    chat_input() {
        if (stop < 0) throw std::runtime_error(fmt::format("cannot create an eventfd: {}", std::strerror(errno)));
    }
    ~chat_input() { ::close(stop); }
    chat_input(const chat_input&) = delete;
    chat_input& operator=(const chat_input&) = delete;

    // The next line without its line end (a last one without any, as getline gives it);
    // nullopt at the end of input or once stopped.
    std::optional<std::string> next_line() {
        for (;;) {
            if (auto line = fiskai::app::take_line(pending)) return line;
            if (eof) {
                if (pending.empty()) return std::nullopt;
                return std::exchange(pending, {});
            }
            switch (fiskai::app::read_more(STDIN_FILENO, stop, pending)) {
                case fiskai::app::read_outcome::stopped: return std::nullopt;
                case fiskai::app::read_outcome::end: eof = true; break;
                case fiskai::app::read_outcome::data: break;
            }
        }
    }
};

std::string read_all_stdin() {
    std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
}

asio::awaitable<int> host_and_call(fiskai::app::runtime& rt, run_options o, std::string prompt) {
    const auto ex = co_await asio::this_coro::executor;
    // The terminal shows the task's events; the hosted worker's own records (a task
    // accepted, a run started) only with -v, its warnings and errors always.
    const auto log =
        o.verbose ? serve_logger(true)
                  : gocompat::logger([full = serve_logger(false)](gocompat::log_level level, std::string_view message,
                                                                  gocompat::log_fields fields) {
                        if (level >= gocompat::log_level::warn) full.log(level, message, fields);
                    });
    if (::access(std::string(nats_server_path).c_str(), X_OK) != 0) {
        fmt::print(stderr,
                   "fisk-ai-serve: error: fisk-ai-serve run hosts the agent behind a local nats-server, which was not "
                   "found at {}; install it (apt-get install nats-server)\n",
                   nats_server_path);
        co_return run_could_not_start;
    }
    config::config cfg;
    try {
        cfg = hosted_config(config::load_file(o.config_path, config::mode::agent));
    } catch (const config::config_error& e) {
        // The prompt on the command line is the task's; the one missing is the agent's own.
        const bool system_prompt_missing = e.what() == config::agent_prompt_required;
        fmt::print(stderr, "fisk-ai-serve: error: {}{}\n", e.what(),
                   system_prompt_missing ? fmt::format(": set system_prompt in {} (the prompt given to run is the "
                                                       "task, not the agent's system prompt)",
                                                       o.config_path)
                                         : "");
        co_return run_could_not_start;
    } catch (const std::exception& e) {
        fmt::print(stderr, "fisk-ai-serve: error: {}\n", e.what());
        co_return run_could_not_start;
    }
    for (const auto& w : cfg.warnings) fiskai::app::log_warning(w);

    serve::resource_options ro;
    ro.config_path = o.config_path;
    ro.application = fiskai::app::application_options_from(cfg);
    ro.log = log;
    ro.channel_needs_nats = true;
    conns::broker_options broker;
    broker.executable = std::string(nats_server_path);
    broker.jetstream = false;
    broker.token = random_token();
    ro.broker = broker;
    std::shared_ptr<serve::resources> res;
    try {
        res = co_await serve::build_resources(cfg, std::move(ro));
    } catch (const std::exception& e) {
        fmt::print(stderr, "fisk-ai-serve: error: {}\n", e.what());
        co_return run_could_not_start;
    }

    serve::server_options so;
    so.workers = 1;
    so.report_timeout = cfg.serve.report_timeout;
    so.log = log;
    auto srv = std::make_shared<serve::server>(ex, res->runtime(), so);
    serve::a2a_channel_options ao;
    ao.identity = cfg.identity;
    ao.elicitation = true;
    ao.question_timeout = cfg.a2a->prompts->question_timeout;
    ao.accept_window = cfg.a2a->prompts->accept_window;
    for (const auto& t : res->runtime()->tools) ao.tool_names.push_back(t->name());
    ao.provider = cfg.llm.provider;
    ao.log = log;
    srv->add(std::make_shared<serve::a2a_channel>(*res->channel_nats(), ex, res->runtime()->sessions, std::move(ao)),
             {.deliveries_repeat = false});

    // The hosted server runs beside the caller; the second Ctrl-C cancels it.
    bool server_done = false;
    std::exception_ptr server_failure;
    asio::steady_timer server_ended(ex, std::chrono::steady_clock::time_point::max());
    asio::co_spawn(ex, srv->run(), [&](std::exception_ptr e) {
        server_done = true;
        server_failure = e;
        server_ended.cancel();
    });
    rt.set_cancel_grace(std::chrono::seconds(10));
    rt.on_cancel([srv] { srv->cancel(); });

    // The caller dials the same broker as a remote caller would, under its own name.
    conns::nats_context local;
    local.name = "embedded";
    local.url = res->broker()->url();
    local.token = broker.token;
    conns::connect_options co;
    co.name = conns::connection_name(terminal_identity);
    co.executor = ex;
    co.log = log;
    co.shared_delivery = true;
    auto caller_nats = conns::connection::dial(local, co);

    // Callers stay alive until the end: the runtime's signal hooks hold them.
    std::list<a2a_nats::task_caller> callers;
    std::string task = o.continue_task;
    int code = fiskai::app::task_exit::result;
    // A Ctrl-C while the agent was starting found no task to cancel: none is sent.
    if (rt.draining()) {
        fmt::print(stderr, "interrupted before the task was sent\n");
        code = fiskai::app::task_exit::interrupted;
    }
    // At the `> ` prompt a Ctrl-C ends the chat: the hook wakes the reading thread through
    // `stop` (a signal may not reach that thread, and an io_context that still waits for it
    // would never return). The hook outlives this coroutine: it writes only while a read is
    // under way.
    chat_input input;
    const auto reading = std::make_shared<bool>(false);
    if (o.chat) {
        rt.on_drain([reading, stop = input.stop] {
            if (!*reading) return;
            const std::uint64_t one = 1;
            [[maybe_unused]] const auto n = ::write(stop, &one, sizeof one);
        });
    }
    while (!rt.draining()) {
        a2a_nats::task_caller_options c;
        c.agent = cfg.identity;
        c.self = std::string(terminal_identity);
        c.prompt = std::move(prompt);
        c.continue_task = task;
        if (o.no_stream) c.stream = false;
        c.log = log;
        auto& caller = callers.emplace_back(*caller_nats, ex, std::move(c));
        fiskai::app::task_terminal_options t;
        t.continue_command = fmt::format("fisk-ai-serve run --config {}", fiskai::app::shell_word(o.config_path));
        t.json = o.json;
        code = co_await fiskai::app::run_task_at_terminal(caller, rt, std::move(t));
        if (task.empty()) task = caller.task_id();
        caller.close();
        if (!o.chat || rt.draining() || code == fiskai::app::task_exit::not_started) break;
        // The next prompt, read off the io thread so a Ctrl-C is still handled.
        fmt::print(stderr, "> ");
        std::fflush(stderr);
        *reading = true;
        auto next = co_await jetstream::offload_to_thread([&input] { return input.next_line(); });
        *reading = false;
        if (rt.draining()) fmt::print(stderr, "\n");  // the prompt's line, ended by the Ctrl-C
        if (!next || next->empty()) break;
        prompt = std::move(*next);
    }

    srv->drain();
    while (!server_done) {
        boost::system::error_code ec;
        co_await server_ended.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    caller_nats->close();
    co_await res->close();
    if (server_failure) {
        try {
            std::rethrow_exception(server_failure);
        } catch (const std::exception& e) {
            fmt::print(stderr, "fisk-ai-serve: error: {}\n", e.what());
        }
        if (code == fiskai::app::task_exit::result) code = run_could_not_start;
    }
    co_return code;
}

asio::awaitable<int> run_run(fiskai::app::runtime& rt, run_options o) {
    if (missing_config(o.config_path)) co_return fiskai::app::exit_code::usage;
    std::string prompt;
    for (const auto& p : o.prompt) prompt += (prompt.empty() ? "" : " ") + p;
    if (prompt.empty()) {
        if (::isatty(0) == 1) {
            fmt::print(stderr, "run: no prompt; pass it after the options or on stdin\n");
            co_return fiskai::app::exit_code::usage;
        }
        prompt = read_all_stdin();
        if (prompt.empty()) {
            fmt::print(stderr, "run: no prompt: stdin was empty; pass it after the options or on stdin\n");
            co_return fiskai::app::exit_code::usage;
        }
    }
    co_return co_await host_and_call(rt, std::move(o), std::move(prompt));
}

}  // namespace

subcommand add_run_command(CLI::App& parent) {
    auto o = std::make_shared<run_options>();
    auto* cmd = parent.add_subcommand("run", "Host the agent on a private local broker and run one task from here");
    cmd->add_option("-c,--config", o->config_path, "The fisk-ai YAML configuration (mode agent; expose is replaced)");
    cmd->add_option("prompt", o->prompt, "The prompt (else stdin when it is not a terminal)");
    cmd->add_option("--continue", o->continue_task, "Continue task TASK (its session) with this prompt")
        ->check(fiskai::app::task_id_validator());
    cmd->add_flag("--chat", o->chat, "After each answer read the next prompt and continue (empty line or EOF ends)");
    cmd->add_flag("--no-stream", o->no_stream, "Print only the final answer, no progress events");
    cmd->add_flag("--json", o->json, "Print every reply message on stdout, one JSON object per line");
    cmd->add_flag("-v,--verbose", o->verbose, "Log at DEBUG");
    cmd->footer(
        "Exit codes: 0 result; 1 terminal error; 2 could not start or transport failure; 3 refused; 4 suspended "
        "(resume with --continue); 5 idle limit passed; 130 a second Ctrl-C.");
    return {cmd, [o](fiskai::app::runtime& rt) { return run_run(rt, *o); }};
}

}  // namespace fiskai::serve_app
