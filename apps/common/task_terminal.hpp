#pragma once
// The terminal front end of a task (serve.md §9.1 `run`, §9.2 `ask`): starts the task with
// a task_caller, renders its reply set (events on stderr, one line per tool call and per
// result, status lines terse; the final text on stdout; or with --json every message on
// stdout as received), answers questions, turns the first interrupt into a cancel, and
// maps the end to the exit code of §9.1.

#include "runtime.hpp"

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

namespace fiskai::a2a_nats {
class task_caller;
}  // namespace fiskai::a2a_nats

namespace fiskai::app {

// The exit codes of a task run at the terminal (`fisk-ai-a2a ask`, `fisk-ai-serve run`).
namespace task_exit {
inline constexpr int result = 0;       // a result, any stop reason but suspended
inline constexpr int error = 1;        // a terminal error
inline constexpr int not_started = 2;  // could not start, or the transport failed
inline constexpr int refused = 3;      // a negative ack (its terminal error follows)
inline constexpr int suspended = 4;    // a suspended result: continue it with --continue
inline constexpr int idle = 5;         // the idle limit passed without a terminal
inline constexpr int interrupted = exit_code::interrupted;
}  // namespace task_exit

inline constexpr const char* task_exit_codes_help =
    "Exit codes: 0 result; 1 the task ended in error; 2 could not start or transport failure (or a wrong "
    "command line); 3 refused by the agent; 4 suspended (continue it with --continue); 5 no message within the "
    "idle limit; 130 a second interrupt.";

// How questions are answered.
enum class question_mode {
    ask,      // the terminal prompter when stdin is a TTY, else decline
    decline,  // always `declined`, reason `the caller cannot ask a human`
    defer,    // stay silent: the worker gives up after its window; the question is listed
};

struct task_terminal_options {
    // What the continue hint starts with: `fisk-ai-a2a ask <agent>`.
    std::string continue_command;
    bool json = false;
    question_mode questions = question_mode::ask;
    // Where answers are read from when it is a TTY (tests use a pseudo-terminal).
    int input_fd = 0;
};

inline constexpr const char* cannot_ask_reason = "the caller cannot ask a human";
inline constexpr const char* cancel_reason = "interrupted at the terminal";

// Reading lines off a descriptor on a thread of its own, which another thread stops through
// a second descriptor (a signal may not reach that thread): the question reader here and
// `run --chat`'s prompt.
enum class read_outcome {
    data,     // something was appended
    end,      // end of input, or a read error
    stopped,  // `stop_fd` became readable (or the wait itself failed)
};
// Waits until `fd` or `stop_fd` is readable; then appends what one read(2) of `fd` returns
// to `pending`.
[[nodiscard]] read_outcome read_more(int fd, int stop_fd, std::string& pending);
// The first whole line of `pending`, without its line end (nor a '\r' before it), taken out
// of it; nullopt while `pending` holds no line end.
[[nodiscard]] std::optional<std::string> take_line(std::string& pending);

// Starts the task and follows it to its end; returns the task_exit code. The first drain
// of `rt` (first Ctrl-C) sends cancel; its cancel stage (second Ctrl-C) ends with 130.
boost::asio::awaitable<int> run_task_at_terminal(a2a_nats::task_caller& caller, runtime& rt,
                                                 task_terminal_options options);

}  // namespace fiskai::app
