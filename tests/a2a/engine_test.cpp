// The serving engine: which tools are served and why the others are not, the agent card,
// intake's verdicts, a call's outcome mapping, the timeout, and the concurrency bound taken
// before a worker starts, all over the in-memory transport.

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/memory_transport.hpp>
#include <fiskai/a2a/server.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/toolkit/prompter.hpp>

#include "engine_support.hpp"
#include "support.hpp"

#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

using namespace fiskai::a2a;
using namespace a2a_test;
using namespace std::chrono_literals;

namespace {

using fiskai::gocompat::log_level;
using fiskai::gocompat::logger;

// Each record as the text format writes its message and fields (the level kept apart).
struct log_capture {
    std::vector<std::pair<log_level, std::string>> lines;
    logger sink() {
        return [this](log_level l, std::string_view message, fiskai::gocompat::log_fields fields) {
            std::string line = fiskai::gocompat::format_text_line(log_level::info, message, fields);
            line.pop_back();  // the newline
            lines.emplace_back(l, std::move(line));
        };
    }
    bool has(log_level l, std::string_view text) const {
        return std::any_of(lines.begin(), lines.end(), [&](const auto& e) { return e.first == l && e.second == text; });
    }
};

server_options options(logger log = {}, std::size_t concurrency = 2) {
    server_options o;
    o.identity = "svc";
    o.version = "v1";
    o.concurrency = concurrency;
    o.log = std::move(log);
    return o;
}

std::string tool_call_body(std::string_view tool, std::string_view input = {}) {
    tool_request m;
    m.name = std::string(tool);
    if (!input.empty()) m.input = raw_json::parse(input).value();
    stamp_request(m, "caller", "svc");
    return encode(m).value();
}

std::string discovery_body() {
    discovery_request m;
    stamp_request(m, "caller", "svc");
    return encode(m).value();
}

tool_reply reply_of(const admission& a) {
    const auto& r = std::get<reply>(a);
    REQUIRE_FALSE(r.error);
    return default_validator().check_as<tool_reply>(r.body).value();
}

// A gate a tool waits at until the test opens it.
struct gate {
    explicit gate(asio::io_context& ctx) : ch(ctx, 16) {}
    asio::awaitable<void> pass() { co_await ch.async_receive(asio::use_awaitable); }
    void open_one() { ch.try_send(boost::system::error_code{}); }
    asio::experimental::channel<void(boost::system::error_code)> ch;
};

}  // namespace

TEST_CASE("a2a.engine: selection drops five classes of tool, logging a reason for each", "[a2a][engine]") {
    asio::io_context ctx;
    log_capture log;
    auto ok = make_tool({});
    auto unexposed = make_tool({.name = "hidden", .exposed = toolkit::exposure{toolkit::surface::mcp}});
    auto unknown_gate = make_tool({.name = "shrug", .posture = toolkit::confirm_posture::unknown});
    auto gated = make_tool({.name = "stream_rm", .posture = toolkit::confirm_posture::required});
    auto bad_name = make_tool({.name = "stream.rm"});
    auto mute = make_tool({.name = "mute", .description = ""});
    auto twin = make_tool({.name = "ping", .description = "the second ping"});
    auto other = make_tool({.name = "pong"});
    server s(ctx.get_executor(), {ok, unexposed, unknown_gate, gated, bad_name, mute, twin, nullptr, other},
             options(log.sink()));

    REQUIRE(s.exposed().size() == 2);
    CHECK(s.exposed()[0] == ok);
    CHECK(s.exposed()[1] == other);
    CHECK(log.has(log_level::warn, "Skipping tool: it does not declare a2a exposure tool=hidden"));
    CHECK(log.has(log_level::warn,
                  "Skipping tool: it cannot report whether it is confirmation-gated; it is refused rather than served "
                  "ungated tool=shrug"));
    CHECK(log.has(
        log_level::warn,
        "Skipping tool: confirmation-gated commands are not served over a2a (no operator to approve); use ai:deny "
        "to suppress this tool=stream_rm"));
    CHECK(log.has(log_level::warn, "Skipping tool: not a valid a2a tool name tool=stream.rm"));
    CHECK(log.has(log_level::warn,
                  "Skipping tool: served tools must advertise a description; remote agents will not import a "
                  "description-less tool tool=mute"));
    CHECK(log.has(log_level::warn, "Skipping tool: another served tool already has this name tool=ping"));
    CHECK(log.lines.size() == 6);
}

TEST_CASE("a2a.engine: the agent card: identity, version, the namespace, one descriptor per served tool",
          "[a2a][engine]") {
    asio::io_context ctx;
    boost::json::object schema =
        boost::json::parse(
            R"({"type":"object","properties":{"stream":{"type":"string"}},"required":["stream"],"additionalProperties":false})")
            .as_object();
    auto info = make_tool({.name = "stream_info", .description = "show a stream\n\nTags: impact:ro", .schema = schema});
    auto ping = make_tool({});
    server s(ctx.get_executor(), {info, ping}, options());

    const auto& card = s.card();
    CHECK(card.name == "svc");
    CHECK(card.version == "v1");
    CHECK(card.description.empty());
    CHECK(card.protocols == std::vector<std::string>{"io.choria.fisk-ai.v1"});
    REQUIRE(card.tools.size() == 2);
    CHECK(card.tools[0].name == "stream_info");
    CHECK(card.tools[0].description == "show a stream\n\nTags: impact:ro");
    CHECK(
        card.tools[0].input_schema->text() ==
        R"({"additionalProperties":false,"properties":{"stream":{"type":"string"}},"required":["stream"],"type":"object"})");
    CHECK(card.tools[1].input_schema->text() == R"({"type":"object"})");

    // Computed once: what a tool says later does not change it.
    info->set_description("changed");
    CHECK(s.card().tools[0].description == "show a stream\n\nTags: impact:ro");

    server unversioned(ctx.get_executor(), {}, [] {
        auto o = options();
        o.version.clear();
        return o;
    }());
    CHECK(unversioned.card().version == "dev");
    CHECK(unversioned.card().tools.empty());

    CHECK_THROWS_AS(server(ctx.get_executor(), {},
                           [] {
                               auto o = options();
                               o.identity = "a.b";
                               return o;
                           }()),
                    std::invalid_argument);
}

TEST_CASE("a2a.engine: intake answers discovery from the card, stamped against the request", "[a2a][engine]") {
    asio::io_context ctx;
    server s(ctx.get_executor(), {make_tool({})}, options());
    const auto body = discovery_body();
    const auto request = decode(body).value();
    const auto verdict = s.admit(route::discovery, body);
    const auto& r = std::get<reply>(verdict);
    REQUIRE_FALSE(r.error);
    const auto d = default_validator().check_as<discovery_reply>(r.body).value();
    CHECK(static_cast<const agent_card&>(d) == s.card());
    CHECK(d.request == header_of(request).request);
    CHECK(d.conversation == header_of(request).conversation);
    CHECK(d.id != header_of(request).id);
    CHECK(d.sender == identity{"svc", ""});
    CHECK(d.recipient == identity{"caller", ""});
}

TEST_CASE("a2a.engine: intake refuses bad bodies with a 400 and Go's descriptions", "[a2a][engine]") {
    asio::io_context ctx;
    server s(ctx.get_executor(), {make_tool({})}, options());
    auto refusal = [&](route r, std::string_view body) {
        const auto a = s.admit(r, body);
        const auto& rep = std::get<reply>(a);
        REQUIRE(rep.error);
        CHECK(rep.body.empty());
        CHECK(rep.error->code == 400);
        return rep.error->description;
    };
    CHECK(
        refusal(route::discovery, tool_call_body("ping")) ==
        R"(unexpected message protocol: got "io.choria.fisk-ai.v1.tool.request", want "io.choria.fisk-ai.v1.discovery.request")");
    CHECK(
        refusal(route::tool, discovery_body()) ==
        R"(unexpected message protocol: got "io.choria.fisk-ai.v1.discovery.request", want "io.choria.fisk-ai.v1.tool.request")");
    CHECK(refusal(route::tool, std::string(786433, ' ')) == "request exceeds 786432 bytes");
    CHECK(refusal(route::tool, "not json").starts_with("invalid request: invalid JSON"));
    CHECK(refusal(route::tool, a2a_test::body("nope")) == R"(invalid request: unknown protocol: "nope")");
    const auto schema = refusal(route::tool, a2a_test::body(protocols::tool_request, R"(,"name":"ping","prompt":"x")"));
    CHECK(schema.starts_with("invalid request: schema validation failed: tool.request.json: /prompt"));
    CHECK(refusal(route::tool,
                  a2a_test::body(protocols::tool_request, R"(,"name":"ping")")
                      .replace(a2a_test::body(protocols::tool_request).find("2026-05-04T"), 10, "2026/05/04"))
              .starts_with("unexpected message protocol: invalid field value: \"time\""));
    // Descriptions are one line: they travel in a header.
    CHECK(refusal(route::tool, "{\n").find('\n') == std::string::npos);
}

TEST_CASE("a2a.engine: an unknown or dropped tool is answered in-band, without a slot, and nothing runs",
          "[a2a][engine]") {
    asio::io_context ctx;
    log_capture log;
    auto gated = make_tool({.name = "stream_rm", .posture = toolkit::confirm_posture::required});
    server s(ctx.get_executor(), {make_tool({}), gated}, options(log.sink(), 1));

    // Hold the only slot: an unknown tool is still answered.
    const auto held = run(ctx, s.acquire());
    for (const char* name : {"missing", "stream_rm"}) {
        CAPTURE(name);
        const auto a = s.admit(route::tool, tool_call_body(name));
        const auto r = reply_of(a);
        CHECK(r.is_error);
        CHECK(r.output == "tool \"" + std::string(name) + "\" is not available");
        CHECK_FALSE(r.exec);
        CHECK(r.recipient == identity{"caller", ""});
    }
    CHECK(gated->calls == 0);
    CHECK(log.has(log_level::warn, "Rejecting unknown tool call tool=missing sender=caller"));

    // The name is quoted as Go's %q quotes it.
    CHECK(reply_of(s.admit(route::tool, tool_call_body("a\"b\\c\x01"))).output ==
          R"(tool "a\"b\\c\x01" is not available)");
}

TEST_CASE("a2a.engine: a call's outcome becomes its reply", "[a2a][engine]") {
    asio::io_context ctx;
    log_capture log;
    auto exit3 =
        make_tool({.name = "stream_info",
                   .title = "stream info",
                   .run = [](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
                       co_return toolkit::outcome::from_command({"stream info -- ORDERS", 3, "boom\n", true});
                   }});
    auto broken = make_tool(
        {.name = "broken",
         .run = [](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
             co_return toolkit::outcome::failure("building command line for \"broken\": unknown property \"x\"");
         }});
    auto builtin = make_tool(
        {.name = "lookup",
         .kind = toolkit::tool_kind::builtin,
         .run = [](const boost::json::value& args, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
             co_return toolkit::outcome::from_json(boost::json::value{{"z", 1}, {"a", args}});
         }});
    auto thrower =
        make_tool({.name = "thrower",
                   .kind = toolkit::tool_kind::builtin,
                   .run = [](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
                       throw std::runtime_error("kaboom");
                       co_return toolkit::outcome::failure("unreachable");
                   }});
    auto ping = make_tool({});
    server s(ctx.get_executor(), {exit3, broken, builtin, thrower, ping}, options(log.sink()));

    auto call = [&](std::string_view tool, std::string_view input = {}) {
        auto admitted = std::get<admitted_call>(s.admit(route::tool, tool_call_body(tool, input)));
        auto held = run(ctx, s.acquire());
        const auto r = run(ctx, s.execute(std::move(admitted), held));
        REQUIRE_FALSE(r.error);
        return default_validator().check_as<tool_reply>(r.body).value();
    };

    SECTION("exit 0: exec carries the command, exit_code is omitted") {
        const auto r = call("ping");
        CHECK_FALSE(r.is_error);
        CHECK(r.output == "pong\n");
        CHECK(r.exec == exec_result{"ping", 0, false});
        CHECK(r.sender == identity{"svc", ""});
        CHECK(ping->seen.at(0) == boost::json::object{});  // absent input: an empty object
        CHECK(ping->prompter_seen == &toolkit::default_deny_prompter());
        CHECK(log.has(log_level::info, "Running tool call tool=ping command=ping sender=caller"));
    }
    SECTION("a non-zero exit is a result, not an error, and keeps truncated") {
        const auto r = call("stream_info", R"({"stream":"ORDERS"})");
        CHECK_FALSE(r.is_error);
        CHECK(r.output == "boom\n");
        CHECK(r.exec == exec_result{"stream info -- ORDERS", 3, true});
        CHECK(exit3->seen.at(0) == boost::json::parse(R"({"stream":"ORDERS"})"));
    }
    SECTION("a harness failure is in-band: is_error, the text, no exec") {
        const auto r = call("broken");
        CHECK(r.is_error);
        CHECK(r.output == R"(building command line for "broken": unknown property "x")");
        CHECK_FALSE(r.exec);
        CHECK(std::any_of(log.lines.begin(), log.lines.end(), [](const auto& l) {
            return l.first == log_level::error && l.second.starts_with("Tool call failed tool=broken duration=");
        }));
    }
    SECTION("an in-process tool's JSON travels verbatim") {
        const auto r = call("lookup", R"({"q":"x"})");
        CHECK_FALSE(r.is_error);
        CHECK(r.output == R"({"z":1,"a":{"q":"x"}})");
        CHECK_FALSE(r.exec);
    }
    SECTION("a tool that throws is a harness failure") {
        const auto r = call("thrower");
        CHECK(r.is_error);
        CHECK(r.output == R"(running tool "thrower": kaboom)");
    }
    SECTION("a null input is an empty object") {
        auto admitted = std::get<admitted_call>(s.admit(route::tool, tool_call_body("ping")));
        admitted.request.input = raw_json::parse("null").value();
        auto held = run(ctx, s.acquire());
        const auto r = run(ctx, s.execute(std::move(admitted), held));
        REQUIRE_FALSE(r.error);
        CHECK(ping->seen.at(0) == boost::json::object{});
    }
}

TEST_CASE("a2a.engine: a call that outlives the timeout is cancelled and answered in-band", "[a2a][engine]") {
    asio::io_context ctx;
    bool cancelled = false;
    auto slow =
        make_tool({.name = "ping",
                   .run = [&](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
                       asio::steady_timer forever(co_await asio::this_coro::executor, std::chrono::hours(1));
                       try {
                           co_await forever.async_wait(asio::use_awaitable);
                       } catch (const boost::system::system_error&) {
                           cancelled = true;
                           throw;
                       }
                       co_return toolkit::outcome::from_command({"ping", 0, "late", false});
                   }});
    auto o = options();
    o.call_timeout = 50ms;
    server s(ctx.get_executor(), {slow}, o);
    auto admitted = std::get<admitted_call>(s.admit(route::tool, tool_call_body("ping")));
    auto held = run(ctx, s.acquire());
    const auto r = run(ctx, s.execute(std::move(admitted), held), 5s);
    const auto m = default_validator().check_as<tool_reply>(r.body).value();
    CHECK(m.is_error);
    CHECK(m.output == R"(running command "ping": context deadline exceeded (timed out after 50ms))");
    CHECK_FALSE(m.exec);
    CHECK(cancelled);
}

TEST_CASE("a2a.engine: with concurrency 1 a second call never starts before the first releases its slot",
          "[a2a][engine]") {
    asio::io_context ctx;
    gate g(ctx);
    auto blocking =
        make_tool({.name = "block",
                   .run = [&](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
                       co_await g.pass();
                       co_return toolkit::outcome::from_command({"block", 0, "done\n", false});
                   }});
    memory_transport bus(ctx.get_executor());
    server s(ctx.get_executor(), {blocking}, options({}, 1));
    auto serving = start(ctx, serve_until_stopped(s, bus));
    client c(bus, {"caller", 10s});

    auto first = start(ctx, c.invoke("svc", "block"));
    REQUIRE(run_until(ctx, [&] { return blocking->calls == 1; }));
    auto second = start(ctx, c.invoke("svc", "block"));
    auto third = start(ctx, c.invoke("svc", "block"));
    run_until_idle(ctx);

    // The first holds the slot; the intake took the second and waits for a slot with it;
    // the third is still queued in the transport, unread.
    CHECK(blocking->calls == 1);
    CHECK_FALSE(first->has_value());
    CHECK_FALSE(second->has_value());
    CHECK(bus.queued(route::tool, "svc") == 1);

    // Discovery has its own intake and still answers.
    const auto card = run(ctx, c.discover("svc"));
    REQUIRE(card);
    CHECK(card->tools.size() == 1);

    g.open_one();
    REQUIRE(run_until(ctx, [&] { return first->has_value() && blocking->calls == 2; }));
    run_until_idle(ctx);
    CHECK_FALSE(second->has_value());
    CHECK(bus.queued(route::tool, "svc") == 0);

    g.open_one();
    g.open_one();
    REQUIRE(run_until(ctx, [&] { return second->has_value() && third->has_value(); }));
    for (const auto* r : {&*first, &*second, &*third}) {
        REQUIRE(r->has_value());
        REQUIRE(**r);
        CHECK((**r)->output == "done\n");
    }
    CHECK(blocking->calls == 3);
    CHECK(blocking->max_running == 1);

    s.stop();
    REQUIRE(run_until(ctx, [&] { return serving->has_value(); }));
}

TEST_CASE("a2a.engine: the default bound lets two calls run at once, and stop() waits for them", "[a2a][engine]") {
    asio::io_context ctx;
    gate g(ctx);
    auto blocking =
        make_tool({.name = "block",
                   .run = [&](const boost::json::value&, toolkit::call_options) -> asio::awaitable<toolkit::outcome> {
                       co_await g.pass();
                       co_return toolkit::outcome::from_command({"block", 0, "done\n", false});
                   }});
    memory_transport bus(ctx.get_executor());
    server s(ctx.get_executor(), {blocking}, options());
    auto serving = start(ctx, serve_until_stopped(s, bus));
    client c(bus, {"caller", 10s});

    auto first = start(ctx, c.invoke("svc", "block"));
    auto second = start(ctx, c.invoke("svc", "block"));
    REQUIRE(run_until(ctx, [&] { return blocking->running == 2; }));

    // Stopping closes intake: new requests find nobody; admitted calls still finish.
    s.stop();
    run_until_idle(ctx);
    CHECK_FALSE(serving->has_value());
    const auto late = run(ctx, c.invoke("svc", "block"));
    REQUIRE_FALSE(late);
    CHECK(late.error().code == errc::agent_unavailable);

    g.open_one();
    g.open_one();
    REQUIRE(run_until(ctx, [&] { return serving->has_value() && first->has_value() && second->has_value(); }));
    CHECK((**first)->output == "done\n");
    CHECK((**second)->output == "done\n");
    CHECK(blocking->max_running == 2);
}
