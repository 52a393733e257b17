#pragma once
// The serving engine: which tools an agent serves, its agent card, and the handling of
// discovery and tool requests, with a bound on concurrent calls and a per-call timeout.
// It runs no command itself (the tools do) and touches no network (the transport does).
//
// Intake, per request, on the transport's one intake per route:
//   admit()   size cap, JSON, schema, the route's protocol; discovery is answered from the
//             precomputed card; an unknown tool is answered in-band at once; a known one is
//             admitted as a call.
//   acquire() a concurrency slot, taken on the intake before the call's worker starts, so
//             while all slots are busy the next request is not even read.
//   execute() the call, in its worker, within the timeout; the reply is stamped and
//             encoded, sent, and only then is the slot released.
// serve() runs exactly that loop over a transport; a binding that owns its own intake can
// call the three steps itself.

#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/transport.hpp>

#include <fiskai/gocompat/log.hpp>

#include <fiskai/toolkit/slots.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <variant>

namespace fiskai::a2a {

struct server_options {
    // The served identity: the card's name, the replies' sender, the NATS subjects' last
    // token. Must be a valid identity.
    std::string identity;
    // The card's version; `dev` when empty.
    std::string version;
    // Tool calls running at once; 0 means the default.
    std::size_t concurrency = 2;
    // The per-call timeout; zero or less means the default.
    std::chrono::steady_clock::duration call_timeout = std::chrono::seconds(30);
    // Where the engine's records go (dropped tools, calls, failures), with their fields
    // (tool, duration, error); an empty logger drops them.
    gocompat::logger log;
};

// One of the server's concurrency slots. Move-only; destroying it frees the slot for the
// next call waiting in acquire().
using slot = toolkit::slot_pool::slot;

// A tool request that passed intake: decoded, validated, and naming a served tool.
struct admitted_call {
    tool_request request;
    toolkit::tool_ptr tool;
};

// Intake's verdict on one body: a reply to send at once, or a call to run.
using admission = std::variant<reply, admitted_call>;

class server {
public:
    // Selects the served tools (logging why each dropped one was dropped) and computes the
    // agent card, once. Throws std::invalid_argument when the identity is not valid.
    server(boost::asio::any_io_executor executor, toolkit::tool_list tools, server_options options);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    [[nodiscard]] const std::string& identity() const noexcept;
    [[nodiscard]] const agent_card& card() const noexcept;
    // The served tools, in input order: what the card advertises and all that is invocable.
    [[nodiscard]] const toolkit::tool_list& exposed() const noexcept;

    // Sans-I/O intake for one body on one route. Refusals are `400` service errors;
    // everything else is an a2a reply or an admitted call.
    [[nodiscard]] admission admit(route r, std::string_view body) const;

    // One concurrency slot; waits while every slot is held.
    [[nodiscard]] boost::asio::awaitable<slot> acquire();

    // Runs an admitted call: its input (absent or null: `{}`), the default-deny prompter,
    // the call timeout. A command's outcome, whatever its exit code, is a result; a harness
    // failure (could not run, timed out, threw) is an in-band `is_error` reply. `held` is
    // the slot the call runs in (std::invalid_argument if it is empty); the caller keeps it
    // until the reply has been sent, then drops it, and it must outlive the awaitable.
    [[nodiscard]] boost::asio::awaitable<reply> execute(admitted_call call, slot& held);

    // Serves both routes of `t` for this identity until stop(): discovery answered inline
    // on its intake, tool calls each in a worker of their own, at most `concurrency` at
    // once. Completes after every call it started has been answered. Throws
    // boost::system::system_error if the transport cannot listen.
    [[nodiscard]] boost::asio::awaitable<void> serve(transport& t);

    // Closes the intakes serve() is reading; calls already admitted still run and are
    // answered. Idempotent; returns at once.
    void stop();
    // stop(), and every running call is cancelled (a command's process group is killed);
    // each still answers, with `context canceled`. For a second interrupt. Call it on the
    // server's executor. Idempotent.
    void cancel();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace fiskai::a2a
