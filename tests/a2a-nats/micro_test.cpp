// The NATS micro protocol as a peer sees it: `$SRV.PING|INFO|STATS` in all three forms,
// the JSON shapes of ADR-32, and error replies in the two headers.

#include "nats_flood.hpp"
#include "nats_support.hpp"

#include <boost/json/parse.hpp>

using namespace nats_test;
namespace micro = fiskai::a2a_nats::micro;

namespace {

boost::json::object parse_object(const std::string& text) {
    auto v = boost::json::parse(text);
    REQUIRE(v.is_object());
    return v.as_object();
}

}  // namespace

TEST_CASE("the a2a service answers $SRV.PING, INFO and STATS in all three forms", "[a2a-nats][micro]") {
    nats_env env;
    serving svc(env.ioc, *env.server_conn, {a2a_test::make_tool({.name = "ping"})}, options("svc"));
    REQUIRE(svc.ready(env.ioc));
    const auto service = svc.transport.service("svc");
    REQUIRE(service);
    const auto id = service->id();
    CHECK(id.size() == 22);

    for (std::string verb : {"PING", "INFO", "STATS"}) {
        for (const auto& subject : std::vector<std::string>{micro::verb_subject(verb), micro::verb_subject(verb, "svc"),
                                                            micro::verb_subject(verb, "svc", id)}) {
            INFO(subject);
            const auto r = raw_request(env.ioc, *env.client_conn, subject, "");
            REQUIRE(r.status == NATS_OK);
            const auto o = parse_object(r.data);
            CHECK(o.at("name") == "svc");
            CHECK(o.at("id").as_string() == id);
            CHECK(o.at("version") == "0.0.0");
            CHECK(o.at("metadata").is_object());
            if (verb == "PING") CHECK(o.at("type") == "io.nats.micro.v1.ping_response");
            if (verb == "INFO") {
                CHECK(o.at("type") == "io.nats.micro.v1.info_response");
                CHECK(o.at("description") == "fisk-ai a2a tool server");
                const auto& eps = o.at("endpoints").as_array();
                REQUIRE(eps.size() == 2);
                CHECK(eps[0].at("name") == "discovery");
                CHECK(eps[0].at("subject") == "choria.fisk-ai.discovery.svc");
                CHECK(eps[0].at("queue_group") == "svc");
                CHECK(eps[0].at("metadata").is_object());
                CHECK(eps[1].at("name") == "tool");
                CHECK(eps[1].at("subject") == "choria.fisk-ai.tool.svc");
                CHECK(eps[1].at("queue_group") == "svc");
            }
            if (verb == "STATS") {
                CHECK(o.at("type") == "io.nats.micro.v1.stats_response");
                CHECK(o.at("started").as_string().ends_with("Z"));
                const auto& eps = o.at("endpoints").as_array();
                REQUIRE(eps.size() == 2);
                for (const char* key : {"name", "subject", "queue_group", "num_requests", "num_errors", "last_error",
                                        "processing_time", "average_processing_time"}) {
                    INFO(key);
                    CHECK(eps[0].as_object().contains(key));
                }
            }
        }
    }
    // Another service's name and another instance's id are not ours to answer.
    CHECK(raw_request(env.ioc, *env.client_conn, micro::verb_subject("PING", "other"), "", 300ms).no_responders);
    CHECK(raw_request(env.ioc, *env.client_conn, micro::verb_subject("PING", "svc", "not-the-id"), "", 300ms)
              .no_responders);
    svc.stop(env.ioc);
}

TEST_CASE("a refused request gets an empty body and the two error headers, STATS counts it", "[a2a-nats][micro]") {
    nats_env env;
    serving svc(env.ioc, *env.server_conn, {a2a_test::make_tool({.name = "ping"})}, options("svc"));
    REQUIRE(svc.ready(env.ioc));

    // A tool request sent on the discovery subject (a2a.md 16.9).
    const std::string body =
        R"({"protocol":"io.choria.fisk-ai.v1.tool.request","id":"x","request":"x","conversation":"x","sequence":0,)"
        R"("time":"2026-01-01T00:00:00Z","sender":{"name":"caller"},"name":"ping"})";
    const auto r = raw_request(env.ioc, *env.client_conn, "choria.fisk-ai.discovery.svc", body);
    REQUIRE(r.status == NATS_OK);
    CHECK(r.data.empty());
    CHECK(r.headers.at("Nats-Service-Error-Code") == "400");
    CHECK(r.headers.at("Nats-Service-Error") ==
          "unexpected message protocol: got \"io.choria.fisk-ai.v1.tool.request\", want "
          "\"io.choria.fisk-ai.v1.discovery.request\"");

    const auto stats = parse_object(raw_request(env.ioc, *env.client_conn, "$SRV.STATS.svc", "").data);
    const auto& discovery = stats.at("endpoints").as_array()[0].as_object();
    CHECK(discovery.at("num_requests") == 1);
    CHECK(discovery.at("num_errors") == 1);
    CHECK(discovery.at("last_error")
              .as_string()
              .starts_with("\"choria.fisk-ai.discovery.svc\": unexpected message protocol"));
    svc.stop(env.ioc);
}

TEST_CASE("a micro service is reusable: endpoints of its own, pull-based, answered once", "[a2a-nats][micro]") {
    nats_env env;
    auto service = std::make_shared<micro::service>(*env.server_conn, env.ioc.get_executor(),
                                                    micro::service_config{"calc", "1.2.3", "adds", {{"k", "v"}}, "q"});
    auto ep = service->add_endpoint({"add", "demo.add", std::nullopt, {{"ep", "1"}}});

    auto pending_reply = std::async(std::launch::async, [&] {
        natsMsg* reply = nullptr;
        const auto s = natsConnection_RequestString(&reply, env.client_conn->native_handle(), "demo.add", "1 2", 5000);
        std::string data = reply ? std::string(natsMsg_GetData(reply), natsMsg_GetDataLength(reply)) : "";
        if (reply) natsMsg_Destroy(reply);
        return std::make_pair(s, data);
    });
    // Not asked for yet: it waits in nats.c's queue for this endpoint.
    REQUIRE(wait_for_pending(env.ioc, *ep));
    auto req = a2a_test::run(env.ioc, ep->next());
    REQUIRE(req);
    CHECK(req->data() == "1 2");
    CHECK(req->subject() == "demo.add");
    CHECK(req->respond("3"));
    CHECK_FALSE(req->respond("4"));  // answered once
    CHECK(req->answered());
    REQUIRE(run_until(env.ioc, [&] { return pending_reply.wait_for(0s) == std::future_status::ready; }));
    const auto [status, data] = pending_reply.get();
    CHECK(status == NATS_OK);
    CHECK(data == "3");

    const auto info = parse_object(service->info_json());
    CHECK(info.at("metadata").at("k") == "v");
    CHECK(info.at("endpoints").as_array()[0].at("queue_group") == "q");
    CHECK(info.at("endpoints").as_array()[0].at("metadata").at("ep") == "1");
    CHECK(ep->stats().num_requests == 1);

    // A request taken and dropped unanswered still gets one answer: a 500.
    auto second =
        std::async(std::launch::async, [&] { return raw_request_blocking(*env.client_conn, "demo.add", "x"); });
    {
        auto dropped = a2a_test::run(env.ioc, ep->next());
        REQUIRE(dropped);
    }
    REQUIRE(run_until(env.ioc, [&] { return second.wait_for(0s) == std::future_status::ready; }));
    const auto got = second.get();
    CHECK(got.headers.at("Nats-Service-Error-Code") == "500");

    // Closing: next() ends, the endpoint leaves INFO.
    ep->close();
    auto after = a2a_test::run(env.ioc, ep->next());
    CHECK_FALSE(after);
    CHECK(parse_object(service->info_json()).at("endpoints").as_array().empty());
    service->stop();
}

// Endpoints come and go under load (a worker restarting its service while callers keep
// sending). Closing starts a drain (the server stops sending at once) well before the
// subscription is retired, so this passes with an immediate destroy too; the task intake,
// whose subscription goes microseconds after its unsubscribe, has the sharper test in
// resilience_test.cpp.
TEST_CASE("micro endpoints closed while requests flood in end without harm", "[a2a-nats][micro]") {
    nats_env env;
    natsConnection* peer = env.client_conn->native_handle();
    fiskai::test::nats_flood flood(peer, "demo.flooded", "x", "_INBOX.flood");

    constexpr int rounds = 100;
    int closed = 0;
    for (int i = 0; i < rounds; ++i) {
        auto service = std::make_shared<micro::service>(*env.server_conn, env.ioc.get_executor(),
                                                        micro::service_config{"flooded", "1.0.0", "", {}, "q"});
        auto ep = service->add_endpoint({"flooded", "demo.flooded", std::nullopt, {}});
        // Closed only once requests are reaching it, so the reader thread is busy with it.
        REQUIRE(run_until(env.ioc, [&] { return ep->pending() > 0; }));
        ep.reset();
        service.reset();
        ++closed;
    }
    flood.stop();
    CHECK(closed == rounds);
    // The connection still serves: a new service answers its PING.
    micro::service after(*env.server_conn, env.ioc.get_executor(),
                         micro::service_config{"after", "1.0.0", "", {}, "q"});
    const auto pong = raw_request(env.ioc, *env.client_conn, "$SRV.PING.after", "");
    REQUIRE(pong.status == NATS_OK);
    CHECK(parse_object(pong.data).at("name") == "after");
}
