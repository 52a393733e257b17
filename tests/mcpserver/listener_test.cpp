// The library's listener against real sockets: the header deadline (slowloris) and the
// connection cap. The server runs on its own thread; the test is a blocking client.

#include <fiskai/mcpserver/listener.hpp>
#include <fiskai/mcpserver/server.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include "async_test.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

using namespace fiskai;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// A listener on 127.0.0.1:0 served by a background thread until destroyed.
class running_listener {
public:
    explicit running_listener(mcpserver::listener_options options, toolkit::tool_list tools = {}) {
        srv_.emplace(ioc_.get_executor(), mcpserver::server_options{}, std::move(tools));
        lst_.emplace(*srv_, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}, std::move(options));
        asio::co_spawn(ioc_, lst_->run(), asio::detached);
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~running_listener() {
        asio::post(ioc_, [this] { lst_->stop(); });
        thread_.join();
    }
    [[nodiscard]] unsigned short port() const { return port_ = lst_->local_endpoint().port(); }
    // Read on the server's thread: the listener is single-threaded.
    [[nodiscard]] std::size_t connections() {
        return asio::post(ioc_, asio::use_future([this] { return lst_->connection_count(); })).get();
    }

private:
    asio::io_context ioc_;
    std::optional<mcpserver::server> srv_;
    std::optional<mcpserver::listener> lst_;
    std::thread thread_;
    mutable unsigned short port_ = 0;
};

tcp::socket connect_to(asio::io_context& ioc, unsigned short port) {
    tcp::socket s(ioc);
    s.connect({asio::ip::make_address("127.0.0.1"), port});
    // Every read below is bounded: a test never hangs on a server that keeps quiet.
    timeval tv{5, 0};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
}

// Everything the server sends until it closes the connection, or what came before a
// receive timeout (SO_RCVTIMEO; ::recv honours it, Asio's blocking read would poll on).
std::string read_until_closed(tcp::socket& s) {
    std::string out;
    char buf[4096];
    for (;;) {
        const auto n = ::recv(s.native_handle(), buf, sizeof buf, 0);
        if (n > 0) {
            out.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0) out += "<no close before the receive timeout>";
        return out;
    }
}

// Whether the connection stays silent and open for `window`.
bool silent_and_open_for(tcp::socket& s, std::chrono::milliseconds window) {
    timeval tv{0, static_cast<suseconds_t>(window.count() * 1000)};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char byte;
    const auto n = ::recv(s.native_handle(), &byte, 1, 0);
    const bool timed_out = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    timeval back{5, 0};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &back, sizeof back);
    return timed_out;
}

}  // namespace

TEST_CASE("listener: a request head trickling in is answered 408 and closed at the header deadline",
          "[mcp][listener]") {
    mcpserver::listener_options o;
    o.header_timeout = std::chrono::milliseconds(300);
    o.idle_timeout = std::chrono::seconds(30);
    running_listener server(o);
    asio::io_context client;
    auto s = connect_to(client, server.port());
    const auto started = std::chrono::steady_clock::now();
    asio::write(s, asio::buffer(std::string("POST /mcp HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")));
    const auto answer = read_until_closed(s);
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(answer.starts_with("HTTP/1.1 408 Request Timeout\r\n"));
    CHECK_THAT(answer, Catch::Contains("Request Timeout: the request headers did not arrive within 300ms of the first "
                                       "byte"));
    // Closed at the header deadline, long before the idle timeout.
    CHECK(took < std::chrono::seconds(5));
}

TEST_CASE("listener: an idle connection is not cut by the header deadline before its first byte", "[mcp][listener]") {
    mcpserver::listener_options o;
    o.header_timeout = std::chrono::milliseconds(200);
    o.idle_timeout = std::chrono::seconds(30);
    running_listener server(o);
    asio::io_context client;
    auto s = connect_to(client, server.port());
    REQUIRE(test::wait_until([&] { return server.connections() == 1; }));
    // Well past the header deadline with nothing sent: still open, and a request is served.
    CHECK(silent_and_open_for(s, std::chrono::milliseconds(600)));
    asio::write(s,
                asio::buffer(std::string("GET /elsewhere HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")));
    CHECK(read_until_closed(s).starts_with("HTTP/1.1 404 Not Found\r\n"));
}

TEST_CASE("listener: past the connection cap a new connection is answered 503 and closed", "[mcp][listener]") {
    mcpserver::listener_options o;
    o.max_connections = 2;
    running_listener server(o);
    asio::io_context client;
    // Both places are taken by connections with a request under way (a head begun), which
    // do not give way as idle ones do.
    auto first = connect_to(client, server.port());
    auto second = connect_to(client, server.port());
    for (auto* s : {&first, &second}) asio::write(*s, asio::buffer(std::string("GET /mcp HTTP/1.1\r\n")));
    REQUIRE(test::wait_until([&] { return server.connections() == 2; }));

    auto third = connect_to(client, server.port());
    asio::write(third, asio::buffer(std::string("GET /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n")));
    const auto refused = read_until_closed(third);
    CHECK(refused.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
    CHECK_THAT(refused, Catch::Contains("Service Unavailable: the server is serving its limit of 2 connections; retry "
                                        "later (an operator can raise expose.agent.mcp.max_connections)"));
    CHECK(server.connections() == 2);

    // A connection that ends frees its place for the next client.
    first.close();
    REQUIRE(test::wait_until([&] { return server.connections() == 1; }));
    auto fourth = connect_to(client, server.port());
    asio::write(fourth,
                asio::buffer(std::string("GET /elsewhere HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")));
    CHECK(read_until_closed(fourth).starts_with("HTTP/1.1 404 Not Found\r\n"));
}

TEST_CASE("listener: at the cap, the connection idle longest gives way to a new one", "[mcp][listener]") {
    mcpserver::listener_options o;
    o.max_connections = 2;
    running_listener server(o);
    asio::io_context client;
    // The first sends nothing (as a flood of empty connections would); the second has a
    // request under way.
    auto idle = connect_to(client, server.port());
    REQUIRE(test::wait_until([&] { return server.connections() == 1; }));
    auto busy = connect_to(client, server.port());
    asio::write(busy, asio::buffer(std::string("GET /elsewhere HTTP/1.1\r\n")));
    REQUIRE(test::wait_until([&] { return server.connections() == 2; }));

    auto newcomer = connect_to(client, server.port());
    asio::write(newcomer,
                asio::buffer(std::string("GET /elsewhere HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")));
    CHECK(read_until_closed(newcomer).starts_with("HTTP/1.1 404 Not Found\r\n"));
    // The idle one was closed without an answer; the busy one is still served.
    CHECK(read_until_closed(idle).empty());
    asio::write(busy, asio::buffer(std::string("Host: localhost\r\nConnection: close\r\n\r\n")));
    CHECK(read_until_closed(busy).starts_with("HTTP/1.1 404 Not Found\r\n"));
}

TEST_CASE("listener: a Transfer-Encoding other than chunked is refused and its body never read as a request",
          "[mcp][listener]") {
    running_listener server({});
    asio::io_context client;
    const std::string smuggled = "GET /elsewhere HTTP/1.1\r\nHost: localhost\r\n\r\n";
    {
        auto s = connect_to(client, server.port());
        asio::write(
            s, asio::buffer("POST /mcp HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n" + smuggled));
        CHECK_THAT(read_until_closed(s),
                   Catch::Contains("Bad Request: Transfer-Encoding \\\"gzip\\\" is not supported; "
                                   "send the body with Content-Length or Transfer-Encoding: "
                                   "chunked"));
    }
    for (const std::string te : {"Transfer-Encoding: gzip\r\n", "Transfer-Encoding: chunked, gzip\r\n",
                                 "Transfer-Encoding: xchunked\r\nContent-Length: 47\r\n",
                                 "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n"}) {
        INFO(te);
        auto s = connect_to(client, server.port());
        asio::write(s, asio::buffer("POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" + te +
                                    "\r\n" + smuggled));
        const auto answer = read_until_closed(s);
        CHECK(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"));
        // Ours names the fix; Beast refuses some shapes itself ("bad Transfer-Encoding").
        CHECK_THAT(answer, Catch::Contains("Transfer-Encoding"));
        // One answer, then the close: the body was not served as a second request.
        CHECK(answer.find("HTTP/1.1", 1) == std::string::npos);
    }
}

TEST_CASE("listener: a request with two Host headers is refused", "[mcp][listener]") {
    running_listener server({});
    asio::io_context client;
    auto s = connect_to(client, server.port());
    asio::write(s, asio::buffer(std::string("GET /mcp HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n"
                                            "Accept: text/event-stream\r\n\r\n")));
    const auto answer = read_until_closed(s);
    CHECK(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"));
    CHECK_THAT(answer, Catch::Contains("Bad Request: a request needs exactly one Host header; this one has 2"));
}

namespace {

// Sends one request and reads its response head (through the blank line).
std::string request_head(tcp::socket& s, const std::string& request) {
    asio::write(s, asio::buffer(request));
    std::string head;
    char c;
    while (!head.ends_with("\r\n\r\n") && ::recv(s.native_handle(), &c, 1, 0) == 1) head += c;
    return head;
}

std::string post(const std::string& session, const std::string& body, const std::string& version = "1.1") {
    return fmt::format(
        "POST /mcp HTTP/{}\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n{}Content-Length: {}\r\n\r\n{}",
        version, session.empty() ? "" : "Mcp-Session-Id: " + session + "\r\n", body.size(), body);
}

// Opens an initialized session on its own connection; returns its id.
std::string open_session(asio::io_context& client, unsigned short port) {
    auto s = connect_to(client, port);
    const auto head = request_head(
        s, post("", R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                    R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"));
    const auto at = head.find("Mcp-Session-Id: ");
    REQUIRE(at != std::string::npos);
    const auto id = head.substr(at + 16, 32);
    s.close();
    auto n = connect_to(client, port);
    CHECK(request_head(n, post(id, R"({"jsonrpc":"2.0","method":"notifications/initialized"})"))
              .starts_with("HTTP/1.1 202"));
    return id;
}

}  // namespace

TEST_CASE("listener: an HTTP/1.0 client gets its event stream without chunked coding", "[mcp][listener]") {
    running_listener server({});
    asio::io_context client;
    const auto session = open_session(client, server.port());
    auto s = connect_to(client, server.port());
    const auto head =
        request_head(s, fmt::format("GET /mcp HTTP/1.0\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
                                    "Mcp-Session-Id: {}\r\n\r\n",
                                    session));
    CHECK(head.starts_with("HTTP/1.0 200 OK\r\n"));
    CHECK_THAT(head, Catch::Contains("text/event-stream"));
    CHECK_THAT(head, !Catch::Contains("chunked"));
    // The body is the events themselves (the priming event first), not a chunk size line.
    char first[4] = {};
    REQUIRE(::recv(s.native_handle(), first, 4, MSG_WAITALL) == 4);
    CHECK(std::string(first, 4) == "id: ");
}

// The writer of an event stream held up by a client that does not read, while the
// session is ended from another connection: the stream's events go, and the writer, when
// it resumes, must not touch them (it once walked the freed queue: a use-after-free).
TEST_CASE("listener: a session ended while its event stream is being written ends that stream cleanly",
          "[mcp][listener]") {
    auto logged = std::make_shared<bool>(false);
    toolkit::tool_list tools{toolkit::make_function_tool(
        {.name = "loud",
         .description = "logs two large lines, then answers",
         .exposed = toolkit::exposure{toolkit::surface::mcp},
         .confirm = toolkit::confirm_posture::not_required,
         .handler = [logged](const boost::json::object&,
                             const toolkit::call_options& o) -> asio::awaitable<toolkit::outcome> {
             const std::string line(8 << 20, 'x');
             o.on_log("info", line);
             o.on_log("info", line);
             *logged = true;
             co_return toolkit::outcome::from_json(boost::json::object{{"ok", true}});
         }})};
    running_listener server({}, tools);
    asio::io_context client;
    const auto session = open_session(client, server.port());
    auto level = connect_to(client, server.port());
    CHECK(request_head(level, post(session, R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel",)"
                                            R"("params":{"level":"info"}})"))
              .starts_with("HTTP/1.1 200"));

    // A small receive buffer, and nothing read: the writer suspends inside the first event.
    tcp::socket reader(client);
    reader.open(tcp::v4());
    const int small = 4096;
    ::setsockopt(reader.native_handle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    reader.connect({asio::ip::make_address("127.0.0.1"), server.port()});
    timeval tv{5, 0};
    ::setsockopt(reader.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    asio::write(reader, asio::buffer(post(session, R"({"jsonrpc":"2.0","id":3,"method":"tools/call",)"
                                                   R"("params":{"name":"loud","arguments":{}}})")));
    REQUIRE(test::wait_until([&] { return *logged; }));

    auto ender = connect_to(client, server.port());
    CHECK(request_head(ender, fmt::format("DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: {}\r\n"
                                          "Content-Length: 0\r\n\r\n",
                                          session))
              .starts_with("HTTP/1.1 204"));

    // Reading now lets the writer resume: what it had started arrives, then the response
    // ends (its last chunk), with nothing from the freed queue after it.
    std::string got;
    char buf[65536];
    while (!got.ends_with("\r\n0\r\n\r\n")) {
        const auto n = ::recv(reader.native_handle(), buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, static_cast<std::size_t>(n));
    }
    CHECK(got.starts_with("HTTP/1.1 200 OK\r\n"));
    CHECK(got.ends_with("\r\n0\r\n\r\n"));
    CHECK(got.size() < (17u << 20));
    // And the server is well: a new session opens.
    CHECK(open_session(client, server.port()).size() == 32);
}

// A client that closes while its event stream waits for events gives its connection back
// at once, not at the next keepalive write (15 s by default); one that has pipelined a
// request behind the stream is not taken for gone.
TEST_CASE("listener: an event stream whose client closes gives its connection back before any keepalive",
          "[mcp][listener]") {
    running_listener server({});
    asio::io_context client;
    const auto session = open_session(client, server.port());
    const auto get = fmt::format(
        "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: {}\r\n\r\n", session);
    // open_session's connections are closed; the server sees it at once (a read in progress).
    REQUIRE(test::wait_until([&] { return server.connections() == 0; }));

    auto streaming = connect_to(client, server.port());
    REQUIRE(request_head(streaming, get).starts_with("HTTP/1.1 200 OK\r\n"));
    REQUIRE(server.connections() == 1);
    const auto closed_at = std::chrono::steady_clock::now();
    streaming.close();
    REQUIRE(test::wait_until([&] { return server.connections() == 0; }, std::chrono::seconds(5)));
    CHECK(std::chrono::steady_clock::now() - closed_at < std::chrono::seconds(5));

    // The session's standalone stream is free again for the client's next connection.
    auto again = connect_to(client, server.port());
    CHECK(request_head(again, get).starts_with("HTTP/1.1 200 OK\r\n"));

    // Bytes behind an open stream are a pipelined request, not a close: the stream stays.
    auto pipelined = connect_to(client, server.port());
    auto other = open_session(client, server.port());
    CHECK(request_head(pipelined, fmt::format("GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
                                              "Mcp-Session-Id: {}\r\n\r\n",
                                              other))
              .starts_with("HTTP/1.1 200 OK\r\n"));
    asio::write(pipelined, asio::buffer(post(other, R"({"jsonrpc":"2.0","id":9,"method":"ping"})")));
    // What the stream sends (its priming event) may come; the connection must not end.
    timeval short_wait{0, 300'000};
    ::setsockopt(pipelined.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof short_wait);
    char buf[512];
    ssize_t n = 0;
    while ((n = ::recv(pipelined.native_handle(), buf, sizeof buf, 0)) > 0) {}
    CHECK(n < 0);
    CHECK((errno == EAGAIN || errno == EWOULDBLOCK));
    CHECK(server.connections() == 2);
}

// The same while a call runs and nothing has been sent yet: the client that closes gets
// its connection back at once, and the call still runs to its end.
TEST_CASE("listener: a request whose client closes before anything is sent gives its connection back",
          "[mcp][listener]") {
    struct call_state {
        std::atomic<bool> started{false}, release{false}, finished{false};
    };
    auto state = std::make_shared<call_state>();
    toolkit::tool_list tools{toolkit::make_function_tool(
        {.name = "held",
         .description = "runs until the test lets it finish",
         .exposed = toolkit::exposure{toolkit::surface::mcp},
         .confirm = toolkit::confirm_posture::not_required,
         .handler = [state](const boost::json::object&,
                            const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
             state->started = true;
             asio::steady_timer tick(co_await asio::this_coro::executor);
             while (!state->release) {
                 tick.expires_after(std::chrono::milliseconds(5));
                 co_await tick.async_wait(asio::use_awaitable);
             }
             state->finished = true;
             co_return toolkit::outcome::from_json(boost::json::object{{"ok", true}});
         }})};
    running_listener server({}, tools);
    asio::io_context client;
    const auto session = open_session(client, server.port());
    REQUIRE(test::wait_until([&] { return server.connections() == 0; }));

    auto caller = connect_to(client, server.port());
    asio::write(caller, asio::buffer(post(session, R"({"jsonrpc":"2.0","id":5,"method":"tools/call",)"
                                                   R"("params":{"name":"held","arguments":{}}})")));
    REQUIRE(test::wait_until([&] { return state->started.load(); }));
    REQUIRE(server.connections() == 1);
    caller.close();
    CHECK(test::wait_until([&] { return server.connections() == 0; }, std::chrono::seconds(5)));
    CHECK_FALSE(state->finished);
    state->release = true;
    CHECK(test::wait_until([&] { return state->finished.load(); }));
}
