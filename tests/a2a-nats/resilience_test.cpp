// Failures around a call: the serving peer vanishes mid-call, the calling peer vanishes
// mid-call, and the broker restarts under a running service; task intakes closed under a
// flood of requests.

#include "nats_flood.hpp"
#include "nats_support.hpp"

#include <fiskai/a2a_nats/task_transport.hpp>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

using namespace nats_test;

namespace {}  // namespace

TEST_CASE("a serving peer that vanishes mid-call leaves the caller unavailable at its deadline",
          "[a2a-nats][resilience]") {
    nats_env env;
    gates g;
    auto tool = g.tool();
    serving svc(env.ioc, *env.server_conn, {tool}, options("svc", 1, 60s));
    REQUIRE(svc.ready(env.ioc));
    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    a2a::client client(client_transport, {"caller"});

    auto pending = a2a_test::start(env.ioc, client.invoke("svc", "gate", "", 1500ms));
    REQUIRE(run_until(env.ioc, [&] { return tool->calls == 1; }));
    env.server_conn->close();  // the serving process is gone, mid-call

    REQUIRE(run_until(
        env.ioc, [&] { return pending->has_value(); }, 10s));
    REQUIRE_FALSE(**pending);
    CHECK((**pending).error().code == a2a::errc::agent_unavailable);
    CHECK((**pending).error().cause == a2a_nats::errc::timed_out);
    CHECK((**pending).error().message ==
          "remote agent unavailable: no reply on \"choria.fisk-ai.tool.svc\": context deadline exceeded");

    // Its intake ended with the connection; the running call finishes and serve() returns.
    g.open(0);
    REQUIRE(run_until(env.ioc, [&] { return svc.done->has_value(); }));
}

TEST_CASE("a caller that vanishes mid-call does not disturb the service", "[a2a-nats][resilience]") {
    nats_env env;
    gates g;
    auto tool = g.tool();
    serving svc(env.ioc, *env.server_conn, {tool}, options("svc", 1, 60s));
    REQUIRE(svc.ready(env.ioc));
    {
        auto vanishing = conns::connection::dial_url(env.broker.url(), test_options("vanishing"));
        a2a_nats::nats_transport t(*vanishing, env.ioc.get_executor());
        a2a::client c(t, {"caller"});
        auto abandoned = a2a_test::start(env.ioc, c.invoke("svc", "gate", "", 60s));
        REQUIRE(run_until(env.ioc, [&] { return tool->calls == 1; }));
        vanishing->close();
        // `abandoned` never completes: its connection is gone; the frame dies with ioc.
    }
    g.open(0);  // the call finishes and answers an inbox nobody listens on
    a2a_test::run_until_idle(env.ioc);

    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    a2a::client client(client_transport, {"caller"});
    auto next = a2a_test::start(env.ioc, client.invoke("svc", "gate", "", 10s));
    REQUIRE(run_until(env.ioc, [&] { return tool->calls == 2; }));
    g.open(1);
    REQUIRE(run_until(env.ioc, [&] { return next->has_value(); }));
    REQUIRE(**next);
    CHECK((**next)->output == "opened\n");
    svc.stop(env.ioc);
}

TEST_CASE("the broker restarting mid-run: the service comes back and serves again", "[a2a-nats][resilience]") {
    auto broker = std::make_unique<conns::embedded_broker>();
    const auto port = broker->port();
    asio::io_context ioc;
    // Connection events are posted to the io_context and logged there.
    std::vector<std::string> events;
    auto server_options = test_options("server");
    server_options.executor = ioc.get_executor();
    server_options.log = [&events](fiskai::gocompat::log_level, std::string_view text, fiskai::gocompat::log_fields) {
        events.emplace_back(text);
    };
    auto server_conn = conns::connection::dial_url(broker->url(), server_options);
    auto client_conn = conns::connection::dial_url(broker->url(), test_options("client"));
    serving svc(ioc, *server_conn, {a2a_test::make_tool({.name = "ping"})}, options("svc"));
    REQUIRE(svc.ready(ioc));
    a2a_nats::nats_transport client_transport(*client_conn, ioc.get_executor());
    a2a::client client(client_transport, {"caller"});
    REQUIRE(a2a_test::run(ioc, client.invoke("svc", "ping", "", 5s)));

    broker->stop();
    REQUIRE(run_until(ioc, [&] { return !server_conn->is_connected() && !client_conn->is_connected(); }));
    auto down = a2a_test::run(ioc, client.invoke("svc", "ping", "", 500ms));
    CHECK_FALSE(down);

    conns::broker_options same_port;
    same_port.port = port;
    broker = std::make_unique<conns::embedded_broker>(same_port);
    REQUIRE(run_until(
        ioc, [&] { return server_conn->is_connected() && client_conn->is_connected(); }, 20s));
    REQUIRE(run_until(ioc, [&] {
        return std::find(events.begin(), events.end(), "NATS connection restored to " + broker->url()) != events.end();
    }));
    CHECK(std::find(events.begin(), events.end(), "NATS connection lost; reconnecting") != events.end());

    // The subscriptions were replayed on reconnect; give the broker a round trip to have
    // them, then the same service answers again.
    REQUIRE(natsConnection_FlushTimeout(server_conn->native_handle(), 2000) == NATS_OK);
    auto again = a2a_test::run(ioc, client.invoke("svc", "ping", "", 5s));
    REQUIRE(again);
    CHECK(again->output == "pong\n");
    auto card = a2a_test::run(ioc, client.discover("svc", 5s));
    REQUIRE(card);
    CHECK(card->name == "svc");
    svc.stop(ioc);
}

// The intake's subscription ends through conns::retire_subscription: destroyed at once while
// requests were arriving, Debian's nats.c 3.4.1 could free it under its reader thread and
// abort the process (nats-io/nats.c#638), as a worker's shutdown under load would.
TEST_CASE("task intakes closed while requests flood in end without harm", "[a2a-nats][resilience]") {
    nats_env env;
    natsConnection* peer = env.client_conn->native_handle();
    fiskai::test::nats_flood flood(peer, "choria.fisk-ai.request.flooded", "{}", "_INBOX.flood");

    constexpr int rounds = 100;
    int closed = 0;
    for (int i = 0; i < rounds; ++i) {
        a2a_nats::task_transport intake(*env.server_conn, env.ioc.get_executor());
        intake.open_intake("flooded");
        // Closed only once requests are reaching it, so the reader thread is busy with it.
        REQUIRE(run_until(env.ioc, [&] { return intake.pending() > 0; }));
        ++closed;
    }
    flood.stop();
    CHECK(closed == rounds);

    // The connection still takes requests: a new intake gets one.
    a2a_nats::task_transport intake(*env.server_conn, env.ioc.get_executor());
    intake.open_intake("after");
    auto next = a2a_test::start(env.ioc, intake.next_request());
    REQUIRE(natsConnection_PublishRequestString(peer, "choria.fisk-ai.request.after", "_INBOX.after", "{\"n\":1}") ==
            NATS_OK);
    REQUIRE(run_until(env.ioc, [&] { return next->has_value(); }));
    REQUIRE(**next);
    CHECK((**next)->reply == "_INBOX.after");
    CHECK((**next)->data == "{\"n\":1}");
}
