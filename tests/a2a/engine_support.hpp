#pragma once
// Test doubles for the engine and client tests: a deterministic function-backed tool, a
// scripted transport, and a way to drive an io_context until a condition holds (with a
// deadline, never a sleep).

#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a/transport.hpp>
#include <fiskai/toolkit/outcome.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace a2a_test {

namespace asio = boost::asio;
namespace toolkit = fiskai::toolkit;

// A tool whose behaviour is a function, with every property settable, including the ones
// the toolkit's own constructors refuse (invalid names, unknown postures).
class fake_tool final : public toolkit::tool {
public:
    using handler = std::function<asio::awaitable<toolkit::outcome>(const boost::json::value&, toolkit::call_options)>;

    struct spec {
        std::string name = "ping";
        std::string title;  // defaults to name
        std::string description = "a command";
        boost::json::object schema;
        toolkit::exposure exposed = toolkit::exposure::everywhere();
        toolkit::confirm_posture posture = toolkit::confirm_posture::not_required;
        toolkit::tool_kind kind = toolkit::tool_kind::command;
        handler run;
    };

    explicit fake_tool(spec s) : spec_(std::move(s)) {
        if (spec_.title.empty()) spec_.title = spec_.name;
    }

    const std::string& name() const override { return spec_.name; }
    const std::string& title() const override { return spec_.title; }
    const std::string& description() const override { return spec_.description; }
    const std::string& model_description() const override { return spec_.description; }
    const boost::json::object& input_schema() const override { return spec_.schema; }
    const std::vector<std::string>& tags() const override { return tags_; }
    toolkit::exposure exposed() const override { return spec_.exposed; }
    toolkit::confirm_requirement confirm() const override { return {spec_.posture, {}}; }
    toolkit::tool_kind kind() const override { return spec_.kind; }

    asio::awaitable<toolkit::outcome> call(boost::json::value arguments, toolkit::call_options options) override {
        ++calls;
        ++running;
        max_running = std::max(max_running, running);
        seen.push_back(arguments);
        prompter_seen = options.asker;
        struct leave {
            int& n;
            ~leave() { --n; }
        } guard{running};
        if (spec_.run) co_return co_await spec_.run(arguments, std::move(options));
        co_return toolkit::outcome::from_command({spec_.title, 0, "pong\n", false});
    }

    // Changes what a fresh card would say; a card computed once does not see it.
    void set_description(std::string d) { spec_.description = std::move(d); }

    int calls = 0;
    int running = 0;
    int max_running = 0;
    std::vector<boost::json::value> seen;
    toolkit::prompter* prompter_seen = nullptr;

private:
    spec spec_;
    std::vector<std::string> tags_;
};

inline std::shared_ptr<fake_tool> make_tool(fake_tool::spec s) { return std::make_shared<fake_tool>(std::move(s)); }

// Runs `ctx` until `done()` holds or `limit` passes; returns whether it holds.
inline bool run_until(asio::io_context& ctx, const std::function<bool()>& done,
                      std::chrono::steady_clock::duration limit = std::chrono::seconds(10)) {
    // An io_context stops when it runs out of work (as when the last run_until let go of
    // its guard); restart it so this run makes progress.
    if (ctx.stopped()) ctx.restart();
    auto guard = asio::make_work_guard(ctx);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
        ctx.run_one_for(std::chrono::milliseconds(20));
    }
    return done();
}

// Runs every handler that is ready, until none is: the system then waits on something
// outside itself (a gate the test holds, a timer).
inline void run_until_idle(asio::io_context& ctx) {
    if (ctx.stopped()) ctx.restart();
    while (ctx.poll() != 0) {}
    ctx.restart();
}

// Starts `a` on `ctx` and returns where its result will land.
template <class T>
std::shared_ptr<std::optional<T>> start(asio::io_context& ctx, asio::awaitable<T> a) {
    auto out = std::make_shared<std::optional<T>>();
    asio::co_spawn(ctx, std::move(a), [out](std::exception_ptr e, T v) {
        if (e) std::rethrow_exception(e);
        *out = std::move(v);
    });
    return out;
}

// Runs `a` to completion within `limit`.
template <class T>
T run(asio::io_context& ctx, asio::awaitable<T> a,
      std::chrono::steady_clock::duration limit = std::chrono::seconds(10)) {
    auto out = start(ctx, std::move(a));
    REQUIRE(run_until(
        ctx, [&] { return out->has_value(); }, limit));
    return std::move(**out);
}

// Serves `t` until stopped. A function, not a lambda: a coroutine lambda's captures die
// with its closure, which is a temporary at the call site.
inline asio::awaitable<bool> serve_until_stopped(fiskai::a2a::server& s, fiskai::a2a::transport& t) {
    co_await s.serve(t);
    co_return true;
}

// A transport that records what the client sends and answers from a script.
class scripted_transport final : public fiskai::a2a::transport {
public:
    struct sent {
        fiskai::a2a::route route;
        std::string agent;
        std::string body;
    };
    std::vector<sent> requests;
    std::deque<fiskai::a2a::result<fiskai::a2a::reply>> answers;

    asio::awaitable<fiskai::a2a::result<fiskai::a2a::reply>> request(fiskai::a2a::route r, std::string agent,
                                                                     std::string body,
                                                                     std::chrono::steady_clock::duration) override {
        requests.push_back({r, std::move(agent), std::move(body)});
        REQUIRE_FALSE(answers.empty());
        auto a = std::move(answers.front());
        answers.pop_front();
        co_return a;
    }
    asio::awaitable<fiskai::a2a::result<std::unique_ptr<fiskai::a2a::intake>>> listen(fiskai::a2a::route,
                                                                                      std::string) override {
        co_return fiskai::a2a::make_error(fiskai::a2a::errc::transport_failure, "scripted transports do not serve");
    }
};

}  // namespace a2a_test
