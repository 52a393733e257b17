// The client: discovery and tool calls end to end over the in-memory transport, and the
// mapping of every way a call can fail.

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/memory_transport.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>

#include "engine_support.hpp"
#include "support.hpp"

using namespace fiskai::a2a;
using namespace a2a_test;
using namespace std::chrono_literals;

namespace {

// A served agent `svc` with `ping` and `stream_info` on an in-memory bus.
struct served {
    asio::io_context ctx;
    memory_transport bus{ctx.get_executor()};
    std::shared_ptr<fake_tool> ping = make_tool({});
    std::shared_ptr<fake_tool> info = make_tool(
        {.name = "stream_info",
         .title = "stream info",
         .description = "show a stream",
         .run = [](const boost::json::value& args, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
             co_return toolkit::outcome::from_command(
                 {"stream info -- " + std::string(args.at("stream").as_string()), 3, "boom\n", false});
         }});
    server srv{ctx.get_executor(), {ping, info}, [] {
                   server_options o;
                   o.identity = "svc";
                   o.version = "v1";
                   return o;
               }()};
    std::shared_ptr<std::optional<bool>> serving;
    client c{bus, {"caller", 5s}};

    served() { serving = start(ctx, serve_until_stopped(srv, bus)); }
    ~served() {
        srv.stop();
        run_until(ctx, [this] { return serving->has_value(); });
    }
};

}  // namespace

TEST_CASE("a2a.client: discovering a served agent returns its card", "[a2a][client]") {
    served s;
    const auto card = run(s.ctx, s.c.discover("svc"));
    REQUIRE(card);
    CHECK(card->name == "svc");
    CHECK(card->version == "v1");
    REQUIRE(card->tools.size() == 2);
    CHECK(card->tools[0].name == "ping");
    CHECK(card->tools[1].description == "show a stream");
    CHECK(card->sender == identity{"svc", ""});
    CHECK(card->recipient == identity{"caller", ""});
    CHECK(card->request == card->conversation);
}

TEST_CASE("a2a.client: invoking a tool: no input, input verbatim, a non-zero exit, an unknown tool", "[a2a][client]") {
    served s;
    const auto pong = run(s.ctx, s.c.invoke("svc", "ping"));
    REQUIRE(pong);
    CHECK_FALSE(pong->is_error);
    CHECK(pong->output == "pong\n");
    CHECK(pong->exec == exec_result{"ping", 0, false});

    for (const char* none : {"", "null"}) {
        CAPTURE(none);
        REQUIRE(run(s.ctx, s.c.invoke("svc", "ping", none)));
    }
    CHECK(s.ping->seen.size() == 3);
    CHECK(s.ping->seen.back() == boost::json::object{});

    const auto three = run(s.ctx, s.c.invoke("svc", "stream_info", R"( {"stream" : "ORDERS"} )"));
    REQUIRE(three);
    CHECK_FALSE(three->is_error);
    CHECK(three->exec == exec_result{"stream info -- ORDERS", 3, false});

    // A failed or refused call is a reply, not an error.
    const auto missing = run(s.ctx, s.c.invoke("svc", "missing"));
    REQUIRE(missing);
    CHECK(missing->is_error);
    CHECK(missing->output == R"(tool "missing" is not available)");
}

TEST_CASE("a2a.client: nobody serving the agent: unavailable at once, nobody answering: at the deadline",
          "[a2a][client]") {
    served s;
    const auto nobody = run(s.ctx, s.c.discover("ghost"), 2s);
    REQUIRE_FALSE(nobody);
    CHECK(nobody.error().code == errc::agent_unavailable);
    CHECK(
        nobody.error().message ==
        R"(remote agent unavailable: no reply on "choria.fisk-ai.discovery.ghost": no responders available for request)");

    // An intake that never reads.
    auto mute = run(s.ctx, s.bus.listen(route::tool, "mute"));
    REQUIRE(mute);
    const auto started = std::chrono::steady_clock::now();
    const auto late = run(s.ctx, s.c.invoke("svc-never", "ping", {}, 100ms), 2s);
    CHECK(late.error().code == errc::agent_unavailable);
    const auto silent = run(s.ctx, s.c.invoke("mute", "ping", {}, 100ms), 5s);
    REQUIRE_FALSE(silent);
    CHECK(silent.error().code == errc::agent_unavailable);
    CHECK(silent.error().message ==
          R"(remote agent unavailable: no reply on "choria.fisk-ai.tool.mute": deadline exceeded)");
    CHECK(std::chrono::steady_clock::now() - started >= 100ms);
}

TEST_CASE("a2a.client: an outgoing message the receiver would refuse is refused before it is sent", "[a2a][client]") {
    scripted_transport t;
    client c(t, {"caller", 1s});
    asio::io_context ctx;

    for (const char* agent : {"a.b", "a b", "*", ">", "a\n"}) {
        CAPTURE(agent);
        const auto r = run(ctx, c.discover(agent));
        REQUIRE_FALSE(r);
        CHECK(r.error().code == errc::schema_violation);
        CHECK(r.error().message.starts_with("invalid outgoing request: schema validation failed"));
    }
    CHECK(t.requests.empty());

    const auto not_object = run(ctx, c.invoke("svc", "ping", "[1]"));
    CHECK(not_object.error().code == errc::schema_violation);
    const auto not_json = run(ctx, c.invoke("svc", "ping", "{bad"));
    CHECK(not_json.error().code == errc::invalid_json);
    CHECK(not_json.error().message.starts_with("marshaling request: invalid JSON"));

    client bad_self(t, {"me.you", 1s});
    CHECK(run(ctx, bad_self.discover("svc")).error().code == errc::schema_violation);
    CHECK(t.requests.empty());
}

TEST_CASE("a2a.client: prepared requests are stamped, validated and carry input verbatim", "[a2a][client]") {
    scripted_transport t;
    client c(t, {"caller", 1s});
    const auto body = c.prepare_tool_call("nats", "stream_info", R"({"stream":"ORDERS","n":1.50})").value();
    const auto m = default_validator().check_as<tool_request>(body).value();
    CHECK(m.id.size() == 27);
    CHECK(m.request == m.id);
    CHECK(m.conversation == m.id);
    CHECK(m.sender == identity{"caller", ""});
    CHECK(m.recipient == identity{"nats", ""});
    CHECK(body.ends_with(R"("name":"stream_info","input":{"stream":"ORDERS","n":1.50}})"));
    CHECK(c.prepare_tool_call("nats", "ping", "null").value().ends_with(R"("name":"ping"})"));
}

TEST_CASE("a2a.client: replies: service errors, wrong types and invalid bodies are errors", "[a2a][client]") {
    scripted_transport t;
    client c(t, {"caller", 1s});
    asio::io_context ctx;

    t.answers.push_back(reply::refusal(400, R"(unexpected message protocol: got "x", want "y")"));
    const auto refused = run(ctx, c.discover("svc"));
    CHECK(refused.error().code == errc::error_reply);
    CHECK(refused.error().message ==
          R"(remote agent answered with an error: 400 unexpected message protocol: got "x", want "y")");

    discovery_request asked;
    stamp_request(asked, "caller", "svc");
    tool_reply wrong;
    stamp_reply(wrong, asked, "svc");
    t.answers.push_back(reply::message(encode(wrong).value()));
    const auto mismatch = run(ctx, c.discover("svc"));
    CHECK(mismatch.error().code == errc::protocol_mismatch);

    t.answers.push_back(reply::message(""));
    CHECK(run(ctx, c.discover("svc")).error().message.starts_with("invalid reply: invalid JSON"));

    t.answers.push_back(reply::message(std::string(786433, ' ')));
    CHECK(run(ctx, c.invoke("svc", "ping")).error().message == "invalid reply: message exceeds 786432 bytes");

    t.answers.push_back(make_error(errc::transport_failure, "connection closed"));
    CHECK(run(ctx, c.invoke("svc", "ping")).error().code == errc::transport_failure);

    CHECK(t.requests.size() == 5);
    CHECK(t.requests[0].route == route::discovery);
    CHECK(t.requests[3].route == route::tool);
    CHECK(t.requests[3].agent == "svc");
}
