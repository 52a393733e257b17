#pragma once
// The caller's side of the task flow over NATS (serve.md §6.3-6.9): start a task (new or a
// continuation), wait for its ack, then hand over its reply set in order, and send the
// caller's cancel, answer and keepalive messages.
//
// Every outgoing message is stamped, encoded and run through the arrival pipeline the
// worker runs before it is published, so a message the worker could not answer is refused
// here. Every arrival goes through the same pipeline plus a `request` match; repeats are
// dropped, gaps are warned about and let through (core NATS cannot redeliver).
//
// Threading: everything runs on the executor given, which must not run handlers
// concurrently. nats.c's subscription callback only copies and posts to it. The connection
// must outlive the caller.

#include <fiskai/a2a/messages.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/gocompat/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fiskai::a2a_nats {

// Why a task could not be started or followed; the exit code a terminal front end uses
// depends on it.
enum class task_failure {
    invalid_outgoing,  // a message built here failed the pipeline (`invalid outgoing request: …`)
    unavailable,       // no responders, or no ack within the accept timeout
    transport,         // subscribing or publishing failed
    idle,              // the idle limit passed without a message
    closed,            // close() was called while waiting
};

struct task_problem {
    task_failure kind = task_failure::transport;
    std::string message;
    friend bool operator==(const task_problem&, const task_problem&) = default;
};

// Shows the message (test assertions, logs).
std::ostream& operator<<(std::ostream& os, const task_problem& p);

[[noreturn]] void throw_exception_from_error(const task_problem& p, const boost::source_location& loc);

template <class T>
using task_result = boost::system::result<T, task_problem>;

struct task_caller_options {
    std::string agent;  // the worker's identity: `choria.fisk-ai.request.<agent>`
    std::string self;   // this caller's identity (the request's sender)

    // The task. continue_task empty: a new task (`id` = `request`); else a continuation of
    // that task with a fresh `id`.
    std::string prompt;
    std::string context;
    std::vector<std::string> tool_hints;
    std::optional<a2a::budget> budget;
    std::optional<bool> stream;
    std::string continue_task;

    // How long to wait for the ack; a worker whose slots are all busy has not read it yet.
    std::chrono::steady_clock::duration accept_timeout = std::chrono::seconds(60);
    // How long the reply set may stay silent, restarted by every arrival; raised to
    // idle_floor when below it (the worker keeps a task alive every 10 s).
    std::chrono::steady_clock::duration idle_timeout = std::chrono::minutes(2);
    std::chrono::steady_clock::duration idle_floor = std::chrono::seconds(30);
    // How often keepalives carry an open question's id while a human answers it.
    std::chrono::steady_clock::duration keepalive_interval = std::chrono::seconds(10);

    // Warnings (gaps, dropped arrivals) and debug records; an empty logger drops them.
    gocompat::logger log;
};

// One message of the reply set, as decoded and as received.
struct task_arrival {
    a2a::message message;
    std::string body;  // the bytes as they arrived
    // The question this arrival closes (the first later message that is not a keepalive
    // with its id): the front end withdraws its prompt. Empty when none.
    std::string closed_question;

    [[nodiscard]] bool is_terminal() const noexcept;
};

namespace detail {
struct task_caller_state;
}  // namespace detail

class task_caller {
public:
    task_caller(conns::connection& nats, boost::asio::any_io_executor executor, task_caller_options options);
    ~task_caller();
    task_caller(const task_caller&) = delete;
    task_caller& operator=(const task_caller&) = delete;

    // The idle limit in force (the option, floored).
    [[nodiscard]] std::chrono::steady_clock::duration idle_timeout() const noexcept;

    // Builds and checks the request, subscribes the inbox, publishes, and waits for the ack
    // (accepted or not). A negative ack is a value: its terminal error follows via next().
    boost::asio::awaitable<task_result<a2a::task_ack>> start();

    // The next message of the reply set after the ack. After a terminal (result or error)
    // the set is over; calling again fails with `closed`.
    boost::asio::awaitable<task_result<task_arrival>> next();

    // The request as sent (valid after start() has built it).
    [[nodiscard]] const a2a::task_request& request() const noexcept;
    // The task id (`request` header): the one to continue with --continue.
    [[nodiscard]] const std::string& task_id() const noexcept;

    // The caller's messages to the worker, to `choria.fisk-ai.cancel|elicit.<agent>.<id>`,
    // numbered from 1. A cancel before the ack is held and sent by start() once the task is
    // accepted: the worker listens for it only from then on.
    task_result<void> cancel(std::string reason);
    // Sends the answer (header filled here) and stops the question's keepalives.
    task_result<void> answer(a2a::task_answer answer);
    task_result<void> keepalive(std::string question_id = {});

    // A human is answering question `question_id`: keepalives carrying it go out every
    // keepalive_interval until answer() or the question closes.
    void hold_question(std::string question_id);
    // The question still open (asked, not closed by a later message), or empty.
    [[nodiscard]] const std::string& open_question() const noexcept;

    // Ends any wait in next()/start() with `closed` and unsubscribes.
    void close();

private:
    std::shared_ptr<detail::task_caller_state> state_;
};

}  // namespace fiskai::a2a_nats
