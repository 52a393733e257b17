// a2a-agent: a C++ program of your own that takes part in a fisk-ai agent network.
//
//   a2a-agent --server nats://127.0.0.1:4222 --identity dicer [--ask AGENT PROMPT]
//
// It serves its own function tool (dice_roll) to peers over a2a on NATS under its identity,
// exactly as `fisk-ai-a2a serve` serves a fisk application's commands; peers discover it
// with `fisk-ai-a2a discover dicer` and call it like any other a2a tool. With --ask it also
// sends a task to a served agent (`fisk-ai-serve`), prints every message of the reply set
// on stderr as it streams, one line each, and the final text on stdout, then exits with the
// task's outcome: 0 a result, 1 an error, 2 not started, 4 suspended.
// Without --ask it serves until SIGINT or SIGTERM.

#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a_nats/task_caller.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <exception>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <variant>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace fiskai;

namespace {

constexpr int exit_result = 0;
constexpr int exit_error = 1;
constexpr int exit_not_started = 2;
constexpr int exit_suspended = 4;

struct options {
    std::string server;
    std::string identity;
    std::string ask_agent;  // empty: serve only
    std::string ask_prompt;
};

constexpr std::string_view usage = "usage: a2a-agent --server nats://HOST:PORT --identity NAME [--ask AGENT PROMPT]\n";

// Returns the options, or nullopt after printing what is wrong and how to fix it.
std::optional<options> parse_arguments(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const int left = argc - i - 1;
        if (arg == "--server" && left >= 1) {
            o.server = argv[++i];
        } else if (arg == "--identity" && left >= 1) {
            o.identity = argv[++i];
        } else if (arg == "--ask" && left >= 2) {
            o.ask_agent = argv[++i];
            o.ask_prompt = argv[++i];
        } else {
            fmt::print(stderr, "a2a-agent: unexpected argument \"{}\" (or its value is missing)\n{}", arg, usage);
            return std::nullopt;
        }
    }
    if (o.server.empty() || o.identity.empty()) {
        fmt::print(stderr, "a2a-agent: --server and --identity are required\n{}", usage);
        return std::nullopt;
    }
    return o;
}

// The tool this program offers its peers: a plain C++ function with a JSON schema. The
// schema is checked before the handler runs, so the handler can trust its arguments.
toolkit::tool_ptr make_dice_roll_tool() {
    return toolkit::make_function_tool({
        .name = "dice_roll",
        .description = "Rolls a fair die with the given number of sides (6 unless told) and returns the roll",
        .input_schema = json::parse(R"({"type":"object","properties":{
            "sides":{"type":"integer","minimum":2,"maximum":1000,"description":"How many sides the die has"}}})")
                            .as_object(),
        .exposed = toolkit::exposure{toolkit::surface::a2a},
        .confirm = toolkit::confirm_posture::not_required,
        .handler = [](const json::object& args, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
            const std::int64_t sides = args.contains("sides") ? args.at("sides").to_number<std::int64_t>() : 6;
            static thread_local std::mt19937_64 generator{std::random_device{}()};
            const auto roll = std::uniform_int_distribution<std::int64_t>(1, sides)(generator);
            co_return toolkit::outcome::from_json(json::object{{"sides", sides}, {"roll", roll}});
        },
    });
}

gocompat::logger stderr_logger() {
    return [](gocompat::log_level level, std::string_view message, gocompat::log_fields) {
        fmt::print(stderr, "{}: {}\n", gocompat::to_string(level), message);
    };
}

// Sends one task to `o.ask_agent` and follows its reply set to the end.
asio::awaitable<int> ask_agent(conns::connection& nats, asio::any_io_executor executor, const options& o) {
    a2a_nats::task_caller caller(
        nats, executor, {.agent = o.ask_agent, .self = o.identity, .prompt = o.ask_prompt, .log = stderr_logger()});
    const auto ack = co_await caller.start();
    if (!ack) {
        fmt::print(stderr, "the task did not start: {}\n", ack.error().message);
        co_return exit_not_started;
    }
    fmt::print(stderr, "task {} {}\n", caller.task_id(), ack->accepted ? "accepted" : "refused: " + ack->reason);

    for (;;) {
        const auto arrival = co_await caller.next();
        if (!arrival) {
            fmt::print(stderr, "the task was lost: {}\n", arrival.error().message);
            co_return exit_not_started;
        }
        // One line per message, as it streams. An event carries one block (status, text,
        // tool call, tool result, ...): shown as the JSON it arrived in.
        if (std::holds_alternative<a2a::task_event>(arrival->message)) {
            fmt::print(stderr, "event {}\n", json::serialize(json::parse(arrival->body).at("block")));
        } else if (std::holds_alternative<a2a::task_keepalive>(arrival->message)) {
            fmt::print(stderr, "keepalive\n");
        } else if (const auto* question = std::get_if<a2a::task_question>(&arrival->message)) {
            fmt::print(stderr, "question {}: {} (declined)\n", question->kind, question->question);
            // No human at this end: decline, and the agent carries on without the answer.
            a2a::task_answer answer;
            answer.question_id = question->question_id;
            answer.declined = true;
            answer.reason = "a2a-agent cannot ask a human";
            if (auto sent = caller.answer(std::move(answer)); !sent) {
                fmt::print(stderr, "could not answer question {}: {}\n", question->question_id, sent.error().message);
            }
        } else if (const auto* result = std::get_if<a2a::task_result>(&arrival->message)) {
            fmt::print(stderr, "result {}\n", result->stop_reason);
            fmt::print("{}\n", result->text);
            co_return result->stop_reason == a2a::stop_reasons::suspended ? exit_suspended : exit_result;
        } else if (const auto* error = std::get_if<a2a::task_error>(&arrival->message)) {
            fmt::print(stderr, "error {}: {}\n", error->stop_reason, error->error);
            co_return exit_error;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    const auto parsed = parse_arguments(argc, argv);
    if (!parsed) return exit_not_started;
    const options o = *parsed;

    // One thread runs everything; the library's blocking calls run elsewhere and resume here.
    asio::io_context ioc;
    const auto executor = ioc.get_executor();

    conns::provider nats;
    std::optional<a2a::server> peers;
    try {
        conns::connect_options connect;
        connect.name = conns::connection_name(o.identity);
        connect.executor = executor;
        nats = conns::provider::owning(conns::connection::dial_url(o.server, connect));
        // Throws std::invalid_argument for an identity that cannot name NATS subjects.
        peers.emplace(executor, toolkit::tool_list{make_dice_roll_tool()},
                      a2a::server_options{.identity = o.identity, .version = "0.1.0", .log = stderr_logger()});
    } catch (const std::exception& e) {
        fmt::print(stderr, "a2a-agent: {}\n", e.what());
        return exit_not_started;
    }
    a2a_nats::nats_transport transport(nats, executor);

    // Serve the tool until stopped; serve() subscribes before its first wait, so the line
    // posted after it is printed once peers can reach us.
    asio::co_spawn(executor, peers->serve(transport), [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
    });
    asio::post(executor, [&] { fmt::print(stderr, "serving dice_roll over a2a as {} on {}\n", o.identity, o.server); });

    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
        if (!ec) peers->stop();
    });

    int exit_code = exit_result;
    if (!o.ask_agent.empty()) {
        asio::co_spawn(executor, ask_agent(*nats.nats(), executor, o), [&](std::exception_ptr e, int code) {
            if (e) std::rethrow_exception(e);
            exit_code = code;
            // The task is over: stop serving too, which lets run() return.
            peers->stop();
            signals.cancel();
        });
    }

    try {
        ioc.run();
    } catch (const std::exception& e) {
        // serve() could not listen, or the connection failed for good.
        fmt::print(stderr, "a2a-agent: {}\n", e.what());
        return exit_not_started;
    }
    // Flush anything still being published (the last tool replies) before closing.
    nats.nats()->drain(std::chrono::seconds(5));
    return exit_code;
}
