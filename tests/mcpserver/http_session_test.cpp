// The streamable HTTP transport through handle_http on Beast's in-memory test stream:
// sessions, event streams, resumption with Last-Event-ID and cancellation, with no
// sockets and no timing: every wait is on a condition, bounded by the test deadline.

#include <fiskai/mcpserver/server.hpp>
#include <fiskai/mcpserver/test_stream.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include "async_test.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace fiskai;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
using response = http::response<http::string_body>;

// What the test tools report back to the test.
struct tool_probe {
    bool slow_started = false;
    bool slow_cancelled = false;
    bool resume_interrupted = false;
    bool release_resume = false;
};

// Waits (on the io_context, never blocking it) until `flag` is true. A flag, not a
// predicate: GCC 12 destroys a lambda temporary in a co_await expression twice.
asio::awaitable<void> until(const bool& flag) {
    asio::steady_timer tick(co_await asio::this_coro::executor);
    while (!flag) {
        tick.expires_after(std::chrono::milliseconds(1));
        co_await tick.async_wait(tuple_awaitable);
    }
}

toolkit::tool_list test_tools(std::shared_ptr<tool_probe> probe) {
    auto tool = [](std::string name, toolkit::function_handler h) {
        return toolkit::make_function_tool({.name = std::move(name),
                                            .description = "a test tool",
                                            .exposed = toolkit::exposure{toolkit::surface::mcp},
                                            .confirm = toolkit::confirm_posture::not_required,
                                            .handler = std::move(h)});
    };
    return {
        tool("quick",
             [](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
                 co_return toolkit::outcome::from_json(json::object{{"ok", true}});
             }),
        tool("counting",
             [](const json::object&, const toolkit::call_options& o) -> asio::awaitable<toolkit::outcome> {
                 for (int i = 0; i < 3; ++i) o.on_progress({.progress = double(i), .total = 3.0, .message = "step"});
                 co_return toolkit::outcome::from_json(json::object{{"counted", 3}});
             }),
        tool("slow",
             [probe](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
                 probe->slow_started = true;
                 asio::steady_timer forever(co_await asio::this_coro::executor, std::chrono::hours(1));
                 auto [ec] = co_await forever.async_wait(tuple_awaitable);
                 probe->slow_cancelled = ec == asio::error::operation_aborted;
                 co_return toolkit::outcome::failure("stopped");
             }),
        tool("resumable",
             [probe](const json::object&, const toolkit::call_options& o) -> asio::awaitable<toolkit::outcome> {
                 o.on_progress({.progress = 1, .message = "before the drop"});
                 mcpserver::client_channel_of(o)->interrupt_stream();
                 probe->resume_interrupted = true;
                 co_await until(probe->release_resume);
                 o.on_progress({.progress = 2, .message = "after the drop"});
                 co_return toolkit::outcome::from_json(json::object{{"resumed", true}});
             }),
    };
}

// One client connection: an in-memory stream pair whose server end is served by
// handle_http in a loop, as a listener would.
struct connection {
    beast::test::stream client;
    beast::test::stream server_end;
    beast::flat_buffer buffer;

    explicit connection(asio::any_io_executor ex) : client(ex), server_end(ex) { client.connect(server_end); }

    bool closed = false;  // the server side has finished

    void serve(mcpserver::server& srv) {
        asio::co_spawn(client.get_executor(), serve_loop(srv, server_end, closed), asio::detached);
    }
    static asio::awaitable<void> serve_loop(mcpserver::server& srv, beast::test::stream& s, bool& closed) {
        beast::flat_buffer in;
        for (;;) {
            mcpserver::http_request req;
            auto [ec, n] = co_await http::async_read(s, in, req, tuple_awaitable);
            if (ec) break;
            if (!co_await mcpserver::handle_http(srv, std::move(req), s)) break;
        }
        s.close();
        closed = true;
    }
    // Hangs up and waits for the server side to finish, so nothing outlives the test.
    asio::awaitable<void> close() {
        client.close();
        co_await until(closed);
    }

    asio::awaitable<response> send(http::verb verb, std::string session, std::string body = {},
                                   std::vector<std::pair<std::string, std::string>> extra = {}) {
        mcpserver::http_request req{verb, "/mcp", 11};
        req.set(http::field::host, "localhost");
        req.set(http::field::accept,
                verb == http::verb::get ? "text/event-stream" : "application/json, text/event-stream");
        if (!body.empty()) req.set(http::field::content_type, "application/json");
        if (!session.empty()) req.set("Mcp-Session-Id", session);
        for (auto& [k, v] : extra) req.set(k, v);
        req.body() = std::move(body);
        req.prepare_payload();
        auto [wec, wn] = co_await http::async_write(client, req, tuple_awaitable);
        REQUIRE_FALSE(wec);
        response res;
        auto [rec, rn] = co_await http::async_read(client, buffer, res, tuple_awaitable);
        INFO(rec.message());
        REQUIRE_FALSE(rec);
        co_return res;
    }
};

std::string rpc(int id, std::string_view method, json::object params = {}) {
    return json::serialize(
        json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
}
std::string notification(std::string_view method, json::object params = {}) {
    return json::serialize(json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

// Built outside the coroutines: GCC 12 miscompiles nested braced lists in a coroutine.
json::object call_params(std::string_view name, json::value token = nullptr) {
    json::object p{{"name", name}};
    if (!token.is_null()) p["_meta"] = json::object{{"progressToken", token}};
    return p;
}
json::object cancel_params(int id) {
    json::object p;
    p["requestId"] = id;
    p["reason"] = "test";
    return p;
}

const json::object init_params{{"protocolVersion", "2025-11-25"},
                               {"capabilities", json::object{}},
                               {"clientInfo", json::object{{"name", "beast-test"}, {"version", "1"}}}};

// Opens and initializes a session; returns its id.
asio::awaitable<std::string> open_session(connection& c) {
    auto res = co_await c.send(http::verb::post, "", rpc(1, "initialize", init_params));
    REQUIRE(res.result() == http::status::ok);
    const std::string sid(res["Mcp-Session-Id"]);
    REQUIRE(sid.size() == 32);
    auto ack = co_await c.send(http::verb::post, sid, notification("notifications/initialized"));
    REQUIRE(ack.result() == http::status::accepted);
    co_return sid;
}

// The data lines of an event stream body, parsed, skipping the priming event.
std::vector<json::object> events(const std::string& body) {
    std::vector<json::object> out;
    std::size_t at = 0;
    while ((at = body.find("data: ", at)) != std::string::npos) {
        const auto end = body.find('\n', at);
        const auto data = body.substr(at + 6, end - at - 6);
        if (!data.empty()) out.push_back(json::parse(data).as_object());
        at = end;
    }
    return out;
}

asio::awaitable<void> send_into(connection& c, std::string sid, std::string body, std::optional<response>& out,
                                bool& done) {
    out = co_await c.send(http::verb::post, std::move(sid), std::move(body));
    done = true;
}

struct fixture {
    asio::any_io_executor ex;
    std::shared_ptr<tool_probe> probe = std::make_shared<tool_probe>();
    mcpserver::server srv;
    explicit fixture(asio::any_io_executor e) : ex(e), srv(e, {}, test_tools(probe)) {}
};

}  // namespace

TEST_CASE("beast test stream: a session opens, answers, ends on DELETE and is then unknown", "[mcp][http]") {
    test::run_awaitable([]() -> asio::awaitable<void> {
        fixture f(co_await asio::this_coro::executor);
        connection c(f.ex);
        c.serve(f.srv);
        const auto sid = co_await open_session(c);
        CHECK(f.srv.session_count() == 1);

        auto list = co_await c.send(http::verb::post, sid, rpc(2, "tools/list"));
        CHECK(list[http::field::content_type] == "application/json");
        CHECK(json::parse(list.body()).at("result").at("tools").as_array().size() == 4);

        auto call = co_await c.send(http::verb::post, sid, rpc(3, "tools/call", call_params("quick")));
        CHECK(json::parse(call.body()).at("result").at("content").at(0).at("text") == R"({"ok":true})");

        auto bye = co_await c.send(http::verb::delete_, sid);
        CHECK(bye.result() == http::status::no_content);
        CHECK(f.srv.session_count() == 0);
        auto gone = co_await c.send(http::verb::post, sid, rpc(4, "ping"));
        CHECK(gone.result() == http::status::not_found);
        CHECK(json::parse(gone.body()).at("error").at("code") == -32001);
        co_await c.close();
    }());
}

TEST_CASE("beast test stream: bad initialize params open no session", "[mcp][http]") {
    test::run_awaitable([]() -> asio::awaitable<void> {
        fixture f(co_await asio::this_coro::executor);
        connection c(f.ex);
        c.serve(f.srv);
        auto params = init_params;
        params["capabilities"] = "none";
        auto res = co_await c.send(http::verb::post, "", rpc(1, "initialize", params));
        CHECK(res.find("Mcp-Session-Id") == res.end());
        CHECK(json::parse(res.body()).at("error").at("code") == -32602);
        CHECK(f.srv.session_count() == 0);
        co_await c.close();
    }());
}

TEST_CASE("beast test stream: progress goes out as an event stream before the result", "[mcp][http]") {
    test::run_awaitable([]() -> asio::awaitable<void> {
        fixture f(co_await asio::this_coro::executor);
        connection c(f.ex);
        c.serve(f.srv);
        const auto sid = co_await open_session(c);
        auto res = co_await c.send(http::verb::post, sid, rpc(5, "tools/call", call_params("counting", "t")));
        CHECK(res[http::field::content_type] == "text/event-stream");
        // 2025-11-25: a priming event with an id and a retry time comes first.
        CHECK(res.body().starts_with("id: 1-0\nretry: 1000\ndata: \n\n"));
        CHECK(res.body().find(R"("params":{"progressToken":"t","progress":0,"total":3,"message":"step"})") !=
              std::string::npos);
        const auto got = events(res.body());
        REQUIRE(got.size() == 4);
        CHECK(got[2].at("params").at("progress") == 2);
        CHECK(got[3].at("id") == 5);
        CHECK(got[3].at("result").at("content").at(0).at("text") == R"({"counted":3})");
        co_await c.close();
    }());
}

TEST_CASE("beast test stream: a dropped stream is resumed with Last-Event-ID", "[mcp][http]") {
    test::run_awaitable([]() -> asio::awaitable<void> {
        fixture f(co_await asio::this_coro::executor);
        connection c(f.ex);
        c.serve(f.srv);
        const auto sid = co_await open_session(c);
        auto first = co_await c.send(http::verb::post, sid, rpc(6, "tools/call", call_params("resumable", 9)));
        // The server ended this response early, before writing the pending event; the
        // call goes on and the client resumes from the last id it saw (the priming one).
        CHECK(first[http::field::content_type] == "text/event-stream");
        CHECK(events(first.body()).empty());
        const auto last_id = first.body().substr(first.body().rfind("id: ") + 4);
        const auto seen = last_id.substr(0, last_id.find('\n'));
        CHECK(seen == "1-0");
        CHECK(f.probe->resume_interrupted);

        f.probe->release_resume = true;
        connection again(f.ex);
        again.serve(f.srv);
        std::vector<std::pair<std::string, std::string>> resume_header;
        resume_header.emplace_back("Last-Event-ID", seen);
        auto rest = co_await again.send(http::verb::get, sid, {}, std::move(resume_header));
        const auto after = events(rest.body());
        REQUIRE(after.size() == 3);
        CHECK(after[0].at("params").at("message") == "before the drop");
        CHECK(after[1].at("params").at("message") == "after the drop");
        CHECK(after[2].at("id") == 6);
        CHECK(after[2].at("result").at("content").at(0).at("text") == R"({"resumed":true})");
        CHECK(rest.body().find("id: 1-3\n") != std::string::npos);
        co_await c.close();
        co_await again.close();
    }());
}

namespace {
// The scenario as a named coroutine: it spawns a request and waits on its result.
asio::awaitable<void> cancel_scenario() {
    fixture f(co_await asio::this_coro::executor);
    connection control(f.ex);
    control.serve(f.srv);
    const auto sid = co_await open_session(control);

    connection calling(f.ex);
    calling.serve(f.srv);
    std::optional<response> answer;
    bool answered = false;
    asio::co_spawn(f.ex, send_into(calling, sid, rpc(7, "tools/call", call_params("slow")), answer, answered),
                   asio::detached);
    co_await until(f.probe->slow_started);
    CHECK(f.srv.calls_in_flight() == 1);

    auto ack = co_await control.send(http::verb::post, sid, notification("notifications/cancelled", cancel_params(7)));
    CHECK(ack.result() == http::status::accepted);
    co_await until(answered);
    CHECK(f.probe->slow_cancelled);
    CHECK(f.srv.calls_in_flight() == 0);
    // No response for a cancelled request: an event stream with no events.
    CHECK((*answer)[http::field::content_type] == "text/event-stream");
    CHECK(events(answer->body()).empty());

    // The slot came back: the next call runs.
    auto next = co_await control.send(http::verb::post, sid, rpc(8, "tools/call", call_params("quick")));
    CHECK(json::parse(next.body()).at("result").at("content").at(0).at("text") == R"({"ok":true})");
    co_await calling.close();
    co_await control.close();
}
}  // namespace

TEST_CASE("beast test stream: notifications/cancelled stops the call and suppresses its answer", "[mcp][http]") {
    test::run_awaitable(cancel_scenario());
}
