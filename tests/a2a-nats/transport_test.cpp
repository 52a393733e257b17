// Discovery and tool calls over a real broker, with the demo application's commands as
// the served tools: the same path `fisk-ai-a2a serve` takes.

#include "nats_support.hpp"

using namespace nats_test;

namespace {

std::vector<std::string> names(const a2a::agent_card& card) {
    std::vector<std::string> out;
    for (const auto& t : card.tools) out.push_back(t.name);
    return out;
}

}  // namespace

TEST_CASE("discovery returns the card, confirm-gated and denied commands are not on it", "[a2a-nats][discovery]") {
    nats_env env;
    serving svc(env.ioc, *env.server_conn, demo_tools(env.ioc), options("demo"));
    REQUIRE(svc.ready(env.ioc));

    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    a2a::client client(client_transport, {"caller"});
    auto card = a2a_test::run(env.ioc, client.discover("demo", 5s));
    REQUIRE(card);
    CHECK(card->name == "demo");
    CHECK(card->version == "v1");
    CHECK(card->protocols == std::vector<std::string>{"io.choria.fisk-ai.v1"});
    CHECK(card->sender.name == "demo");
    REQUIRE(card->recipient);
    CHECK(card->recipient->name == "caller");
    const auto n = names(*card);
    for (const char* served : {"stream_info", "pub", "sleep", "flood", "fail", "echo", "env", "config_get"}) {
        INFO(served);
        CHECK(std::find(n.begin(), n.end(), served) != n.end());
    }
    for (const char* hidden : {"stream_rm", "config_set", "reset", "debug_dump"}) {
        INFO(hidden);
        CHECK(std::find(n.begin(), n.end(), hidden) == n.end());
    }
    svc.stop(env.ioc);
}

TEST_CASE("tool calls: success, non-zero exit, timeout and unknown tool", "[a2a-nats][tool]") {
    nats_env env;
    serving svc(env.ioc, *env.server_conn, demo_tools(env.ioc), options("demo", 2, 1500ms));
    REQUIRE(svc.ready(env.ioc));
    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    a2a::client client(client_transport, {"caller"});

    SECTION("a command that exits 0") {
        auto r = a2a_test::run(env.ioc, client.invoke("demo", "echo", R"({"text":["hello","over","nats"]})", 10s));
        REQUIRE(r);
        CHECK_FALSE(r->is_error);
        CHECK(r->output == "hello over nats\n");
        REQUIRE(r->exec);
        CHECK(r->exec->exit_code == 0);
        CHECK(r->exec->command == "echo -- hello over nats");
    }
    SECTION("a command that exits 3 is a result, not an error") {
        auto r = a2a_test::run(env.ioc, client.invoke("demo", "fail", R"({"code":3})", 10s));
        REQUIRE(r);
        CHECK_FALSE(r->is_error);
        REQUIRE(r->exec);
        CHECK(r->exec->exit_code == 3);
        CHECK(r->output.find("failing with code 3") != std::string::npos);
    }
    SECTION("a command past the call timeout is an in-band harness failure") {
        auto r = a2a_test::run(env.ioc, client.invoke("demo", "sleep", R"({"duration":"20s"})", 15s), 20s);
        REQUIRE(r);
        CHECK(r->is_error);
        CHECK(r->output == "running command \"sleep\": context deadline exceeded (timed out after 1500ms)");
        CHECK_FALSE(r->exec);
    }
    SECTION("an unknown tool, and a confirm-gated one, are in-band refusals") {
        for (const char* tool : {"missing", "stream_rm"}) {
            auto r = a2a_test::run(env.ioc, client.invoke("demo", tool, R"({"name":"ORDERS"})", 10s));
            REQUIRE(r);
            CHECK(r->is_error);
            CHECK(r->output == std::string("tool \"") + tool + "\" is not available");
        }
    }
    SECTION("an agent nobody serves is unavailable: no responders, at once") {
        const auto started = std::chrono::steady_clock::now();
        auto r = a2a_test::run(env.ioc, client.discover("nobody", 10s));
        REQUIRE_FALSE(r);
        CHECK(r.error().code == a2a::errc::agent_unavailable);
        CHECK(r.error().cause == a2a_nats::errc::no_responders);
        CHECK(r.error().message ==
              "remote agent unavailable: no reply on \"choria.fisk-ai.discovery.nobody\": nats: no responders "
              "available for "
              "request");
        CHECK(std::chrono::steady_clock::now() - started < 5s);
    }
    svc.stop(env.ioc);
}

TEST_CASE("processes serving one identity share its requests (queue group)", "[a2a-nats][queue]") {
    nats_env env;
    auto second_conn = conns::connection::dial_url(env.broker.url(), test_options("server-2"));
    int first_calls = 0;
    int second_calls = 0;
    auto tool_counting = [](int& counter) {
        return a2a_test::make_tool(
            {.name = "ping",
             .run = [&counter](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
                 ++counter;
                 co_return toolkit::outcome::from_command({"ping", 0, "pong\n", false});
             }});
    };
    serving one(env.ioc, *env.server_conn, {tool_counting(first_calls)}, options("shared"));
    serving two(env.ioc, *second_conn, {tool_counting(second_calls)}, options("shared"));
    REQUIRE(one.ready(env.ioc));
    REQUIRE(two.ready(env.ioc));
    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    a2a::client client(client_transport, {"caller"});
    for (int i = 0; i < 40; ++i) {
        auto r = a2a_test::run(env.ioc, client.invoke("shared", "ping", "", 5s));
        REQUIRE(r);
        REQUIRE(r->output == "pong\n");
    }
    CHECK(first_calls + second_calls == 40);
    CHECK(first_calls > 0);  // 40 requests, random queue choice: both get some
    CHECK(second_calls > 0);
    one.stop(env.ioc);
    two.stop(env.ioc);
}

TEST_CASE("an error reply reaches the caller as the peer's error, not as a decode failure", "[a2a-nats][client]") {
    nats_env env;
    // A peer that refuses everything on the tool subject, as a micro service does.
    a2a_nats::micro::service peer(*env.server_conn, env.ioc.get_executor(), {"refuser"});
    auto ep = peer.add_endpoint({"tool", "choria.fisk-ai.tool.refuser", std::string("refuser"), {}});
    auto answer = [&]() -> asio::awaitable<bool> {
        auto r = co_await ep->next();
        if (!r) co_return false;
        co_return r->respond_error(400, "invalid request: nope\nsecond line");
    };
    auto answered = a2a_test::start(env.ioc, answer());

    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    a2a::client client(client_transport, {"caller"});
    auto r = a2a_test::run(env.ioc, client.invoke("refuser", "ping", "", 5s));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == a2a::errc::error_reply);
    CHECK(r.error().message == "remote agent answered with an error: 400 invalid request: nope second line");
    REQUIRE(run_until(env.ioc, [&] { return answered->has_value(); }));
    CHECK(**answered);
    peer.stop();
}

TEST_CASE("a2a-nats: failures carry a2a_nats::errc codes usable as std::error_code", "[a2a-nats][errc]") {
    asio::io_context ioc;
    const conns::provider none;
    try {
        a2a_nats::nats_transport t(none, ioc.get_executor());
        FAIL("a transport without a connection was built");
    } catch (const a2a_nats::error& e) {
        CHECK(e.code() == a2a_nats::errc::not_connected);
        CHECK(std::string(e.what()) == "a2a NATS transport requires a NATS connection but none was provisioned");
    }
    const std::error_code std_code = a2a_nats::errc::no_responders;
    CHECK(std_code.message() == "no responders available for request");
    CHECK(std::string(std_code.category().name()) == "fiskai.a2a_nats");
}
