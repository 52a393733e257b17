// Bodies and names a hostile or broken peer sends: refused with the right code and text,
// never reaching a tool, never taking the service down.

#include "nats_support.hpp"

#include <boost/json/parse.hpp>

using namespace nats_test;

namespace {

const std::string discovery_body =
    R"({"protocol":"io.choria.fisk-ai.v1.discovery.request","id":"x","request":"x","conversation":"x","sequence":0,)"
    R"("time":"2026-01-01T00:00:00Z","sender":{"name":"caller"}})";

std::string tool_body(const std::string& name) {
    return R"({"protocol":"io.choria.fisk-ai.v1.tool.request","id":"x","request":"x","conversation":"x","sequence":0,)"
           R"("time":"2026-01-01T00:00:00Z","sender":{"name":"caller"},"name":")" +
           name + R"("})";
}

}  // namespace

TEST_CASE("hostile bodies are refused with 400 and the Go texts, the tool never runs", "[a2a-nats][hostile]") {
    nats_env env;
    auto tool = a2a_test::make_tool({.name = "ping"});
    serving svc(env.ioc, *env.server_conn, {tool}, options("svc"));
    REQUIRE(svc.ready(env.ioc));
    const auto tool_subject = "choria.fisk-ai.tool.svc";

    SECTION("over the 768 KiB cap, by one byte") {
        auto body = tool_body("ping");
        body.insert(body.size() - 1, std::string(786433 - body.size(), ' '));
        REQUIRE(body.size() == 786433);
        const auto r = raw_request(env.ioc, *env.client_conn, tool_subject, body);
        CHECK(r.data.empty());
        CHECK(r.headers.at("Nats-Service-Error-Code") == "400");
        CHECK(r.headers.at("Nats-Service-Error") == "request exceeds 786432 bytes");
    }
    SECTION("exactly at the cap is accepted") {
        auto body = discovery_body;
        body.insert(body.size() - 1, std::string(786432 - body.size(), ' '));
        const auto r = raw_request(env.ioc, *env.client_conn, "choria.fisk-ai.discovery.svc", body);
        CHECK(r.headers.empty());
        CHECK(boost::json::parse(r.data).at("protocol") == "io.choria.fisk-ai.v1.discovery.reply");
    }
    SECTION("not JSON") {
        const auto r = raw_request(env.ioc, *env.client_conn, tool_subject, "run ping please");
        CHECK(r.data.empty());
        CHECK(r.headers.at("Nats-Service-Error-Code") == "400");
        CHECK(r.headers.at("Nats-Service-Error").starts_with("invalid request: "));
    }
    SECTION("an unknown protocol id") {
        auto body = tool_body("ping");
        body.replace(body.find("io.choria.fisk-ai.v1.tool.request"), 33, "io.choria.fisk-ai.v9.tool.request");
        const auto r = raw_request(env.ioc, *env.client_conn, tool_subject, body);
        CHECK(r.headers.at("Nats-Service-Error-Code") == "400");
        CHECK(r.headers.at("Nats-Service-Error") ==
              "invalid request: unknown protocol: \"io.choria.fisk-ai.v9.tool.request\"");
    }
    SECTION("a valid message of the wrong type for the subject") {
        const auto r = raw_request(env.ioc, *env.client_conn, tool_subject, discovery_body);
        CHECK(r.headers.at("Nats-Service-Error-Code") == "400");
        CHECK(r.headers.at("Nats-Service-Error").find("want \"io.choria.fisk-ai.v1.tool.request\"") !=
              std::string::npos);
    }
    SECTION("a request with no reply subject is not run") {
        REQUIRE(natsConnection_PublishString(env.client_conn->native_handle(), tool_subject,
                                             tool_body("ping").c_str()) == NATS_OK);
        REQUIRE(run_until(env.ioc, [&] {
            return boost::json::parse(svc.transport.service("svc")->stats_json())
                       .at("endpoints")
                       .as_array()[1]
                       .at("num_errors") == 1;
        }));
        CHECK(tool->calls == 0);
    }
    // Every refusal left the service answering.
    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    a2a::client client(client_transport, {"caller"});
    auto ok = a2a_test::run(env.ioc, client.invoke("svc", "ping", "", 5s));
    REQUIRE(ok);
    CHECK(ok->output == "pong\n");
    svc.stop(env.ioc);
}

TEST_CASE("identities crafted to inject subject tokens go nowhere", "[a2a-nats][hostile]") {
    nats_env env;
    auto tool = a2a_test::make_tool({.name = "ping"});
    serving svc(env.ioc, *env.server_conn, {tool}, options("svc"));
    REQUIRE(svc.ready(env.ioc));
    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());

    for (const std::string agent : {"svc.>", "*", "svc.extra", "svc extra", "", "svc\r\nPUB x 1"}) {
        INFO(agent);
        // The transport refuses the name before anything is published...
        auto raw = a2a_test::run(env.ioc, client_transport.request(a2a::route::tool, agent, tool_body("ping"), 2s));
        REQUIRE_FALSE(raw);
        CHECK(raw.error().code == a2a::errc::transport_failure);
        // ...and so does the client, at outgoing validation.
        a2a::client client(client_transport, {"caller"});
        auto r = a2a_test::run(env.ioc, client.invoke(agent, "ping", "", 2s));
        CHECK_FALSE(r);
    }
    // A subject below the served one is not served (no wildcard subscription).
    CHECK(raw_request(env.ioc, *env.client_conn, "choria.fisk-ai.tool.svc.extra", tool_body("ping"), 300ms)
              .no_responders);
    CHECK(tool->calls == 0);

    // The serving side refuses to listen as such an identity.
    for (const std::string identity : {"x.>", "*", "a b"}) {
        auto intake = a2a_test::run(env.ioc, svc.transport.listen(a2a::route::tool, identity));
        CHECK_FALSE(intake);
    }
    svc.stop(env.ioc);
}

TEST_CASE("a body over the broker's max payload fails at the client, not with a timeout", "[a2a-nats][hostile]") {
    nats_env env;
    a2a_nats::nats_transport client_transport(*env.client_conn, env.ioc.get_executor());
    auto r = a2a_test::run(env.ioc,
                           client_transport.request(a2a::route::tool, "svc", std::string(2 * 1024 * 1024, 'x'), 5s));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == a2a::errc::transport_failure);
    CHECK(r.error().message.find("requesting \"choria.fisk-ai.tool.svc\"") != std::string::npos);
}
