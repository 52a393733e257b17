// fisk-ai-a2a ask AGENT [PROMPT...] (serve.md §9.2)
//
// Sends a task to a served agent over the task flow and follows it at the terminal:
// events on stderr, the final text on stdout (or every message as JSON), questions
// answered at a TTY, the first Ctrl-C a cancel. Exit codes as `fisk-ai-serve run`.

#include "app_support.hpp"
#include "nats_commands.hpp"
#include "task_terminal.hpp"
#include "terminal_text.hpp"

#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a_nats/task_caller.hpp>
#include <fiskai/gocompat/duration.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/asio/this_coro.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace fiskai::a2a::app {

namespace asio = boost::asio;
namespace task_exit = fiskai::app::task_exit;

namespace {

struct ask_options {
    std::string agent;
    std::vector<std::string> prompt;
    std::string context;
    std::string identity = "fisk-ai-cli";
    std::string continue_task;
    std::string context_file;
    std::vector<std::string> hints;
    std::int64_t max_tokens = 0;
    std::int64_t max_iterations = 0;
    std::string call_timeout;
    bool no_stream = false;
    bool json = false;
    std::string idle_timeout = "2m";
    std::string accept_timeout = "60s";
    std::string idle_floor = "30s";
    bool decline_questions = false;
    bool defer_questions = false;
};

// A Go duration flag above zero, checked when the command line is parsed. CLI11 puts the
// option's name in front of a validator's text, so the texts start at the value.
CLI::Validator go_duration() {
    return CLI::Validator(
        [](const std::string& text) -> std::string {
            try {
                if (gocompat::parse_duration(text).count() > 0) return {};
            } catch (const gocompat::duration_error& e) {
                return fmt::format("{}: {}; pass a Go duration such as 90s, 2m or 1h30m", gocompat::quote(text),
                                   e.what());
            }
            return fmt::format("{} must be more than zero; pass a Go duration such as 90s, 2m or 1h30m",
                               gocompat::quote(text));
        },
        "DURATION");
}

// A count the caller may only lower (tokens, iterations): a whole number above zero. CLI11's
// PositiveNumber would print its range as 0 to the largest double, digit by digit.
CLI::Validator positive_count(std::string example) {
    return CLI::Validator(
        [example](const std::string& text) -> std::string {
            std::int64_t v = 0;
            const auto* end = text.data() + text.size();
            const auto [at, ec] = std::from_chars(text.data(), end, v);
            if (ec == std::errc() && at == end && v > 0) return {};
            return fmt::format("{} is not a whole number from 1 to {}; pass for example {}", gocompat::quote(text),
                               std::numeric_limits<std::int64_t>::max(), example);
        },
        "N");
}

std::chrono::steady_clock::duration as_steady(const std::string& text) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(gocompat::parse_duration(text));
}

asio::awaitable<int> run_ask(std::shared_ptr<ask_options> o, std::string prompt, fiskai::app::runtime& rt) {
    auto ex = co_await asio::this_coro::executor;

    a2a_nats::task_caller_options c;
    c.agent = o->agent;
    c.self = o->identity;
    c.prompt = std::move(prompt);
    c.tool_hints = o->hints;
    c.continue_task = o->continue_task;
    if (o->max_tokens > 0 || o->max_iterations > 0 || !o->call_timeout.empty()) {
        c.budget = a2a::budget{o->max_tokens, o->max_iterations, o->call_timeout};
    }
    if (o->no_stream) c.stream = false;
    c.idle_timeout = as_steady(o->idle_timeout);
    c.idle_floor = as_steady(o->idle_floor);
    if (c.idle_timeout < c.idle_floor) {
        stderr_logger().warn(fmt::format(
            "--idle-timeout {} is below the {} floor (the agent keeps a task alive "
            "every 10s); using {}",
            o->idle_timeout, gocompat::format_duration(c.idle_floor), gocompat::format_duration(c.idle_floor)));
    }
    c.accept_timeout = as_steady(o->accept_timeout);
    c.log = stderr_logger();
    if (!o->context_file.empty()) {
        std::error_code ec;
        if (std::filesystem::is_directory(o->context_file, ec)) {
            // An ifstream opens a directory and reads nothing: the context would go empty.
            fmt::print(stderr, "cannot read --context-file {}: it is a directory; pass a file\n",
                       gocompat::quote(o->context_file));
            co_return task_exit::not_started;
        }
        std::ifstream in(o->context_file, std::ios::binary);
        if (!in) {
            fmt::print(stderr, "cannot read --context-file {}: {}; pass a readable file\n",
                       gocompat::quote(o->context_file), std::strerror(errno));
            co_return task_exit::not_started;
        }
        c.context.assign(std::istreambuf_iterator<char>(in), {});
    }

    std::optional<conns::provider> nats;
    try {
        nats.emplace(conns::provider::dial(o->context, o->identity, connection_options(o->identity, ex)));
    } catch (const std::exception& e) {
        fmt::print(stderr, "{}\n", e.what());
        co_return task_exit::not_started;
    }
    a2a_nats::task_caller caller(*nats->nats(), ex, std::move(c));

    fiskai::app::task_terminal_options t;
    // The session is the worker's, the sender's and the task's: the hint names the same
    // broker and the same sender, or following it would start another conversation.
    t.continue_command = fmt::format("fisk-ai-a2a ask {}", o->agent);
    if (!o->context.empty()) t.continue_command += " --context " + fiskai::app::shell_word(o->context);
    if (o->identity != ask_options{}.identity) t.continue_command += " --identity " + o->identity;
    t.json = o->json;
    t.questions = o->defer_questions     ? fiskai::app::question_mode::defer
                  : o->decline_questions ? fiskai::app::question_mode::decline
                                         : fiskai::app::question_mode::ask;
    const int code = co_await fiskai::app::run_task_at_terminal(caller, rt, std::move(t));
    caller.close();
    co_return code;
}

}  // namespace

subcommand add_ask_command(CLI::App& parent) {
    auto o = std::make_shared<ask_options>();
    auto* cmd = parent.add_subcommand("ask", "Send a task to a served agent and follow it to its end");
    cmd->footer(fiskai::app::task_exit_codes_help);
    cmd->add_option("agent", o->agent, "The agent's identity (letters, digits, '-' and '_')")
        ->required()
        ->check(fiskai::app::identity_validator("AGENT"));
    cmd->add_option("prompt", o->prompt, "The prompt (else read from stdin when it is not a terminal)");
    cmd->add_option(
        "--context", o->context,
        "NATS context to connect with (default: the NATS CLI's selected context, else nats://127.0.0.1:4222)");
    cmd->add_option("--identity", o->identity, "Who the task comes from (the request's sender)")
        ->capture_default_str()
        ->check(fiskai::app::identity_validator("NAME"));
    cmd->add_option("--continue", o->continue_task, "Continue the task with this id instead of starting one")
        ->check(fiskai::app::task_id_validator());
    cmd->add_option("--context-file", o->context_file, "A file whose text goes with the prompt as its context");
    cmd->add_option("--hint", o->hints, "A tool the agent should consider (repeatable)");
    cmd->add_option("--max-tokens", o->max_tokens, "Lower the agent's token budget for this task")
        ->check(positive_count("--max-tokens 4000"));
    cmd->add_option("--max-iterations", o->max_iterations, "Lower the agent's iteration limit for this task")
        ->check(positive_count("--max-iterations 5"));
    cmd->add_option("--call-timeout", o->call_timeout, "Lower the agent's LLM call timeout (a Go duration)")
        ->check(go_duration());
    cmd->add_flag("--no-stream", o->no_stream, "Ask for no events: only questions and the final message");
    cmd->add_flag("--json", o->json, "Print every message of the reply set on stdout, one JSON object a line");
    cmd->add_option("--idle-timeout", o->idle_timeout,
                    "Give up when the agent sends nothing this long (a Go duration, at least 30s)")
        ->capture_default_str()
        ->check(go_duration());
    cmd->add_option("--accept-timeout", o->accept_timeout,
                    "Give up when no worker takes the task this long (a Go duration)")
        ->capture_default_str()
        ->check(go_duration());
    // For tests that wait out the idle limit (a killed worker): below three keepalive
    // intervals a healthy agent busy in a long call looks idle, so it stays out of --help.
    cmd->add_option("--idle-floor", o->idle_floor,
                    "Lower the 30s floor of --idle-timeout (tests only: a busy agent sends keepalives every 10s)")
        ->group("")
        ->check(go_duration());
    auto* decline = cmd->add_flag("--decline-questions", o->decline_questions,
                                  "Decline every question the agent asks (the default without a terminal)");
    auto* defer = cmd->add_flag("--defer-questions", o->defer_questions,
                                "Leave questions unanswered; they are listed so the task can be continued");
    decline->excludes(defer);
    defer->excludes(decline);

    return {cmd, [o, cmd](fiskai::app::runtime& rt) -> asio::awaitable<int> {
                std::string prompt;
                for (const auto& p : o->prompt) prompt += (prompt.empty() ? "" : " ") + p;
                if (prompt.empty()) {
                    if (::isatty(0) == 1) {
                        fmt::print(stderr, "ask: no prompt; pass it after the agent or on stdin\n{}", cmd->help());
                        co_return fiskai::app::exit_code::usage;
                    }
                    std::ostringstream ss;
                    ss << std::cin.rdbuf();
                    prompt = ss.str();
                    while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == '\r')) prompt.pop_back();
                    if (prompt.empty()) {
                        fmt::print(stderr, "ask: no prompt: stdin was empty; pass it after the agent or on stdin\n");
                        co_return fiskai::app::exit_code::usage;
                    }
                }
                co_return co_await run_ask(o, std::move(prompt), rt);
            }};
}

}  // namespace fiskai::a2a::app
