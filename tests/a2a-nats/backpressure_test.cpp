// Back-pressure is structural: with every slot held, the next request is not handed on.
// It waits in nats.c's bounded pending queue (observable with pending()), its command
// never starts, and it is answered only after a slot is released. Conditions with
// deadlines throughout; nothing sleeps and hopes.

#include "nats_support.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

using namespace nats_test;

namespace {

using reply_slot = std::shared_ptr<std::optional<a2a::result<a2a::tool_reply>>>;

// An agent `svc` serving one gated tool with a single slot, and a caller.
struct one_slot_agent {
    nats_env env;
    gates g;
    std::shared_ptr<a2a_test::fake_tool> tool = g.tool();
    serving svc{env.ioc, *env.server_conn, {tool}, options("svc", 1, 60s)};
    a2a_nats::nats_transport client_transport{*env.client_conn, env.ioc.get_executor()};
    a2a::client client{client_transport, {"caller"}};

    one_slot_agent() { REQUIRE(svc.ready(env.ioc)); }
    // Starts a call of the gated tool; its reply lands in the returned slot.
    reply_slot call(std::chrono::seconds timeout = 60s) {
        return a2a_test::start(env.ioc, client.invoke("svc", "gate", "", timeout));
    }
};

}  // namespace

TEST_CASE("with concurrency 1 a second request never enters until the first releases its slot",
          "[a2a-nats][backpressure]") {
    one_slot_agent agent;
    auto& [env, g, tool, svc, client_transport, client] = agent;
    const auto service = svc.transport.service("svc");

    reply_slot a = agent.call();
    REQUIRE(run_until(env.ioc, [&] { return tool->calls == 1; }));

    reply_slot b = agent.call();
    reply_slot c = agent.call();
    // B is in the intake's hands waiting for the slot; C is still in nats.c's queue.
    REQUIRE(run_until(env.ioc, [&] { return service->pending("tool") == 1; }));
    a2a_test::run_until_idle(env.ioc);
    CHECK(tool->calls == 1);
    CHECK_FALSE(a->has_value());
    CHECK_FALSE(b->has_value());
    CHECK_FALSE(c->has_value());

    // Discovery has its own intake: it answers while every tool slot is held.
    auto card = a2a_test::run(env.ioc, client.discover("svc", 5s));
    REQUIRE(card);
    CHECK(tool->calls == 1);

    g.open(0);
    REQUIRE(run_until(env.ioc, [&] { return a->has_value() && tool->calls == 2; }));
    REQUIRE(**a);
    CHECK((**a)->output == "opened\n");
    // Now C has left nats.c for the intake, which waits for B's slot.
    REQUIRE(run_until(env.ioc, [&] { return service->pending("tool") == 0; }));
    a2a_test::run_until_idle(env.ioc);
    CHECK(tool->calls == 2);
    CHECK_FALSE(b->has_value());
    CHECK_FALSE(c->has_value());

    g.open(1);
    REQUIRE(run_until(env.ioc, [&] { return b->has_value() && tool->calls == 3; }));
    CHECK_FALSE(c->has_value());
    g.open(2);
    REQUIRE(run_until(env.ioc, [&] { return c->has_value(); }));
    REQUIRE(**b);
    REQUIRE(**c);
    CHECK(tool->max_running == 1);
    svc.stop(env.ioc);
}

TEST_CASE("stopping takes no new request and lets the running one answer", "[a2a-nats][backpressure][shutdown]") {
    one_slot_agent agent;
    auto& [env, g, tool, svc, client_transport, client] = agent;

    reply_slot a = agent.call(30s);
    REQUIRE(run_until(env.ioc, [&] { return tool->calls == 1; }));
    svc.server.stop();
    a2a_test::run_until_idle(env.ioc);
    CHECK_FALSE(svc.done->has_value());  // serve() waits for the running call

    // The intake is closed: a new request finds nobody, or, while the broker has yet to
    // confirm the drain, is refused at once; either way it never waits out its timeout.
    const auto asked = std::chrono::steady_clock::now();
    auto late = a2a_test::run(env.ioc, client.invoke("svc", "gate", "", 5s));
    REQUIRE_FALSE(late);
    CHECK(std::chrono::steady_clock::now() - asked < 4s);
    const bool nobody = late.error().code == a2a::errc::agent_unavailable;
    const bool refused = late.error().message.find("the service is shutting down") != std::string::npos;
    CAPTURE(late.error().message);
    CHECK((nobody || refused));

    g.open(0);
    REQUIRE(run_until(env.ioc, [&] { return a->has_value() && svc.done->has_value(); }));
    REQUIRE(**a);
    CHECK((**a)->output == "opened\n");
    CHECK(tool->calls == 1);
}

TEST_CASE("stopping answers the requests already delivered to the process", "[a2a-nats][backpressure][shutdown]") {
    one_slot_agent agent;
    auto& [env, g, tool, svc, client_transport, client] = agent;
    const auto service = svc.transport.service("svc");

    reply_slot a = agent.call();
    REQUIRE(run_until(env.ioc, [&] { return tool->calls == 1; }));
    reply_slot b = agent.call();
    reply_slot c = agent.call();
    // B is in the intake's hands, waiting for the slot; C waits in nats.c's queue.
    REQUIRE(run_until(env.ioc, [&] { return service->pending("tool") == 1; }));
    reply_slot d = agent.call();
    // C and D wait in nats.c's queue, in this process.
    REQUIRE(run_until(env.ioc, [&] { return service->pending("tool") == 2; }));

    svc.server.stop();
    // C and D are refused at once, long before their 60 s: nobody will ever run them.
    REQUIRE(run_until(
        env.ioc, [&] { return c->has_value() && d->has_value(); }, 10s));
    for (const auto& refused : {c, d}) {
        REQUIRE_FALSE(**refused);
        CHECK_THAT((**refused).error().message, Catch::Contains("the service is shutting down"));
    }
    CHECK_FALSE(a->has_value());
    CHECK_FALSE(b->has_value());

    // What was admitted before the stop still runs and answers.
    g.open(0);
    REQUIRE(run_until(env.ioc, [&] { return a->has_value() && tool->calls == 2; }));
    g.open(1);
    REQUIRE(run_until(env.ioc, [&] { return b->has_value() && svc.done->has_value(); }));
    REQUIRE(**a);
    REQUIRE(**b);
    CHECK(tool->calls == 2);
}
