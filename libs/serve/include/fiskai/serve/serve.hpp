#pragma once
// The serve core (serve.md §5): a server takes work from channels, runs each on the shared
// agent runtime when a slot is free, and reports the outcome to the channel that gave it.
// A channel is two methods and says nothing about transport; what it can do is what it
// fills in on the work it hands over (a channel that can ask a human supplies a prompter).

#include <fiskai/agent/agent.hpp>
#include <fiskai/gocompat/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::toolkit {
class prompter;
}  // namespace fiskai::toolkit

namespace fiskai::serve {

// Who sent a work. `verified` is reserved (§5.9): no binding authenticates a publisher.
struct caller {
    std::string name;
    bool verified = false;
};

// A caller's limits for one work. Zero: not lowered. They may only lower the operator's
// limits (§5.4); the tool timeout is not among them.
struct budget {
    std::int64_t max_tokens = 0;
    std::int64_t max_iterations = 0;
    std::chrono::nanoseconds call_timeout{0};
};

// The operator's limits lowered by a work's budget: for each, the work's value when it
// is set and below the configured one, else the configured one.
[[nodiscard]] agent::limits effective_limits(const agent::limits& configured, const budget& work) noexcept;

// What became of one work: the run's terminal reason plus what a reason cannot express.
struct outcome {
    std::string reason;        // completed|suspended|error|budget|max_iterations; "" when abandoned/crashed/rejected
    std::string error;         // text for error/suspended/abandoned/crashed
    bool rejected = false;     // reserved: always false (§5.9)
    bool abandoned = false;    // taken, never ran: the server was cancelled while it waited for a slot
    bool crashed = false;      // the run hit a bug; the journal holds no terminal
    bool interrupted = false;  // a hard cancel parked the run (reason "suspended")
    bool replayed = false;     // nothing ran: the session already had its outcome
    std::vector<agent::deferred_call> deferred;
    std::string session_id;
    std::string text;  // the final assistant text
    std::string model_stop_reason;
    agent::stats counters;
};

// The run's result as an outcome (§5.3). `interrupted` is set by the caller that cancelled.
[[nodiscard]] outcome to_outcome(const agent::run_result& r);

// The texts the core writes (exact).
namespace text {
inline constexpr std::string_view abandoned = "the worker stopped before this work started";
}  // namespace text

// What the run reports to while it lives; both optional.
struct run_hooks {
    agent::event_sink* events = nullptr;
    agent::stop_gate* stop = nullptr;
};

class work {
public:
    virtual ~work() = default;

    std::string session_id;  // derived by the channel (session_ids.hpp), never taken from a caller
    std::string prompt;      // opening prompt (with context) or the follow-up text
    bool follow_up = false;  // only from channels whose deliveries never repeat
    caller from;
    budget limits;                                        // may only lower (§5.4)
    toolkit::prompter* prompter = nullptr;                // null: no human reachable; default-deny is used
    std::optional<std::chrono::nanoseconds> prompt_wait;  // reserved: wraps the prompter in bounded_prompter
    std::string label;                                    // for logs: `a2a request <R> from <sender>`

    // Exactly once, after the slot is acquired, immediately before the run: the only signal
    // a channel gets that its work started. Never called for abandoned work.
    virtual run_hooks run_context() = 0;
    // Exactly once, on a scope that is not the run's, so a cancelled run still records what
    // happened. The work is destroyed after it completes.
    virtual boost::asio::awaitable<void> done(outcome result) = 0;
};

class channel {
public:
    virtual ~channel() = default;
    [[nodiscard]] virtual std::string_view name() const = 0;
    // The next work; nullptr when the channel has ended (after release()); throws on a fault.
    virtual boost::asio::awaitable<std::unique_ptr<work>> next() = 0;
};

// A channel or service that can be told to stop taking work. Idempotent; called on the
// io_context thread. A channel blocked in next() is unblocked by it.
class releasable {
public:
    virtual ~releasable() = default;
    virtual void release() = 0;
};

// A channel that can fail while the server is not in its next(): with every slot busy the
// puller calls next() no more (Amendment 3), so the server also awaits ended() from the
// start. It returns once the channel has ended after release(), and throws the channel's
// fault as soon as there is one (a channel fault, as if next() had thrown it).
class fault_watch {
public:
    virtual ~fault_watch() = default;
    virtual boost::asio::awaitable<void> ended() = 0;
};

// Something the server runs beside the channels (the a2a tool server, the MCP-client
// watcher). run() returns after stop(); throwing from run() is a fault.
class service {
public:
    virtual ~service() = default;
    [[nodiscard]] virtual std::string_view name() const = 0;
    virtual boost::asio::awaitable<void> run() = 0;
    virtual void stop() = 0;
};

struct channel_options {
    // Whether a work may be delivered again (a queue redelivers; a2a and Slack never do).
    // A follow-up from such a channel is refused. Amendment 17: defaults to true.
    bool deliveries_repeat = true;
};

struct server_options {
    std::size_t workers = 2;  // runs at once across all channels
    std::chrono::nanoseconds report_timeout = std::chrono::seconds(30);
    gocompat::logger log;
};

// A channel or service failed while serving; the server drained first. what():
// `channel "<n>" failed: <what>` / `service "<n>" failed: <what>` / `channel "<n>" ended unexpectedly`.
class fault : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class server {
public:
    server(boost::asio::any_io_executor executor, std::shared_ptr<const agent::runtime> runtime,
           server_options options);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Before run().
    void add(std::shared_ptr<channel> ch, channel_options options = {});
    void add(std::shared_ptr<service> svc);

    // Until drained and every taken work has been reported. Throws fault after draining
    // when a channel or service failed.
    boost::asio::awaitable<void> run();

    // First stage: close the hold once (no more work is taken), release every releasable
    // channel and stop every service. Runs in flight continue. Idempotent.
    void drain();
    // Second stage: drain, and cancel every run (ends suspended, interrupted) and every
    // slot wait (the work is reported abandoned). Reports still run.
    void cancel();

    // Runs in flight and works waiting for a slot (for tests and the banner).
    [[nodiscard]] std::size_t running() const noexcept;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::serve
