// The HTTP client against a real server on loopback: exchange, keep-alive, the stale
// retry, deadlines, cancellation, caps and every failure kind with its text.

#include <fiskai/net/http_client.hpp>

#include "async_test.hpp"
#include "test_server.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/this_coro.hpp>
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

using namespace std::chrono_literals;
namespace asio = boost::asio;
using fiskai::net::client_options;
using fiskai::net::http_client;
using fiskai::net::http_error;
using fiskai::net::http_request;
using fiskai::net::http_response;
using fiskai::net::http_result;
using fiskai::test::http_test_server;
using fiskai::test::run_awaitable;
using clock_type = std::chrono::steady_clock;

namespace {

http_result<http_response> send_once(http_request request, clock_type::duration budget = 10s,
                                     client_options options = {}) {
    return run_awaitable(
        [](http_request r, clock_type::duration b, client_options o) -> asio::awaitable<http_result<http_response>> {
            auto executor = co_await asio::this_coro::executor;
            http_client client(executor, std::move(o));
            co_return co_await client.send(std::move(r), clock_type::now() + b);
        }(std::move(request), budget, std::move(options)));
}

http_request get(std::string url) { return http_request{.method = "GET", .url = std::move(url)}; }

asio::awaitable<void> answer_ok(http_test_server::session& s) { co_await s.respond(200, "ok"); }

using fiskai::test::eventually;

}  // namespace

TEST_CASE("send: a POST reaches the server whole and the answer comes back with every header", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        const std::string echo =
            fmt::format("{} {} {} ua={} host={} type={}", s.request.method_string(), s.request.target(),
                        s.request.body(), s.request["user-agent"], s.request["host"], s.request["content-type"]);
        // Raw, so the wire order is the test's (Beast's own fields group equal names).
        co_await s.write_raw(
            fmt::format("HTTP/1.1 201 Created\r\nX-First: 1\r\nx-second: 2\r\nX-First: again\r\n"
                        "Content-Length: {}\r\n\r\n{}",
                        echo.size(), echo));
    });
    auto result = send_once({.method = "POST",
                             .url = server.url("/v1/messages?beta=true"),
                             .headers = {{"content-type", "application/json"}},
                             .body = R"({"a":1})"});
    REQUIRE(result.has_value());
    CHECK(result->status == 201);
    CHECK(result->body ==
          fmt::format(R"(POST /v1/messages?beta=true {{"a":1}} ua=fisk-ai host=127.0.0.1:{} type=application/json)",
                      server.port()));
    CHECK(result->header("x-first") == "1");
    CHECK(result->header("X-SECOND") == "2");
    CHECK_FALSE(result->header("x-third").has_value());
    std::vector<std::string> names;
    for (const auto& [name, value] : result->headers) names.push_back(name);
    // Repeated names come out adjacent (Beast keeps fields so), each in its received order.
    CHECK(names == std::vector<std::string>{"X-First", "X-First", "x-second", "Content-Length"});
}

TEST_CASE("send: a caller's user-agent and host are kept", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.respond(200, fmt::format("{}|{}", s.request["user-agent"], s.request["host"]));
    });
    auto result = send_once(
        {.method = "GET", .url = server.url(), .headers = {{"User-Agent", "probe/1"}, {"Host", "api.example"}}});
    REQUIRE(result.has_value());
    CHECK(result->body == "probe/1|api.example");
}

TEST_CASE("send: keep-alive reuses one connection for many calls", "[net]") {
    http_test_server server(answer_ok);
    auto idle = run_awaitable([&]() -> asio::awaitable<std::size_t> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        for (int i = 0; i < 5; ++i) {
            auto result = co_await client.send(get(server.url()), clock_type::now() + 10s);
            REQUIRE(result.has_value());
        }
        co_return client.idle_count();
    }());
    CHECK(server.requests == 5);
    CHECK(server.connections == 1);
    CHECK(idle == 1);
}

TEST_CASE("send: the pool keeps at most idle_per_origin connections and closes them after idle_timeout", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.sleep(50ms);  // the calls overlap, so each needs its own connection
        co_await s.respond(200, "ok");
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor, {.idle_per_origin = 2, .idle_timeout = 300ms});
        int done = 0;
        for (int i = 0; i < 4; ++i) {
            asio::co_spawn(executor, client.send(get(server.url()), clock_type::now() + 10s),
                           [&done](std::exception_ptr, http_result<http_response> r) {
                               CHECK(r.has_value());
                               ++done;
                           });
        }
        CHECK(co_await eventually([&] { return done == 4; }));
        CHECK(server.connections == 4);
        CHECK(client.idle_count() == 2);
        CHECK(co_await eventually([&] { return server.peer_closed == 2; }));  // the two over the limit
        CHECK(co_await eventually([&] { return client.idle_count() == 0; }));
        CHECK(co_await eventually([&] { return server.peer_closed == 4; }));  // the idle timeout closed the rest
    }());
}

TEST_CASE("send: a pooled connection the server closed is retried once on a new connection", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.respond(200, fmt::format("answer {}", s.request.target()));
        s.close_after = true;  // closes without Connection: close, as an idle timeout does
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        auto first = co_await client.send(get(server.url("/1")), clock_type::now() + 10s);
        REQUIRE(first.has_value());
        CHECK(client.idle_count() == 1);
        CHECK(co_await eventually([&] { return server.server_closed == 1; }));
        auto second = co_await client.send(get(server.url("/2")), clock_type::now() + 10s);
        REQUIRE(second.has_value());
        CHECK(second->body == "answer /2");
    }());
    CHECK(server.connections == 2);
    CHECK(server.requests == 2);
}

TEST_CASE("send: a fresh connection closed before the answer is not retried", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        s.close_after = true;
        co_return;
    });
    auto result = send_once(get(server.url()));
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::closed);
    CHECK(result.error().message ==
          fmt::format("127.0.0.1:{} closed the connection before a whole response (end of stream)", server.port()));
    CHECK(server.requests == 1);
}

TEST_CASE("send: a hanging server fails with timeout at the deadline and the socket is closed", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> { co_await s.hang(); });
    const auto start = clock_type::now();
    auto result = send_once(get(server.url()), 300ms);
    const auto elapsed = clock_type::now() - start;
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::timeout);
    CHECK(result.error().message ==
          fmt::format("no whole response from 127.0.0.1:{} within the deadline", server.port()));
    CHECK(elapsed >= 300ms);
    CHECK(elapsed < 2s);
    CHECK(fiskai::test::wait_until([&] { return server.peer_closed == 1; }));
}

TEST_CASE("send: a deadline already passed fails with timeout before connecting", "[net]") {
    http_test_server server(answer_ok);
    auto result = send_once(get(server.url()), -1s);
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::timeout);
    CHECK(result.error().message ==
          fmt::format("connect to 127.0.0.1:{}: the deadline passed before it completed", server.port()));
}

TEST_CASE("send: cancelling the awaiting coroutine closes the socket", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> { co_await s.hang(); });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        asio::cancellation_signal signal;
        std::optional<http_result<http_response>> outcome;
        asio::co_spawn(
            executor, client.send(get(server.url()), clock_type::now() + 30s),
            asio::bind_cancellation_slot(signal.slot(), [&outcome](std::exception_ptr, http_result<http_response> r) {
                outcome = std::move(r);
            }));
        REQUIRE(co_await eventually([&] { return server.requests == 1; }));
        signal.emit(asio::cancellation_type::terminal);
        REQUIRE(co_await eventually([&] { return outcome.has_value(); }, 2s));
        REQUIRE(outcome->has_error());
        CHECK(outcome->error().what == http_error::kind::cancelled);
        CHECK(outcome->error().message == fmt::format("request to 127.0.0.1:{} cancelled", server.port()));
        CHECK(client.idle_count() == 0);
        CHECK(co_await eventually([&] { return server.peer_closed == 1; }));
    }());
}

TEST_CASE("send: a body over the cap fails with too_large", "[net]") {
    http_test_server server(
        [](http_test_server::session& s) -> asio::awaitable<void> { co_await s.respond(200, std::string(5000, 'x')); });
    auto result = send_once(get(server.url()), 10s, {.body_limit = 1000});
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::too_large);
    CHECK(result.error().message ==
          fmt::format("the response from 127.0.0.1:{} is over the body limit of 1000 bytes", server.port()));
    auto fits = send_once(get(server.url()), 10s, {.body_limit = 5000});
    CHECK(fits.has_value());
}

TEST_CASE("send: connection refused names the address and the cause", "[net]") {
    unsigned short port = 0;
    {
        asio::io_context ioc;
        asio::ip::tcp::acceptor probe(ioc, {asio::ip::make_address("127.0.0.1"), 0});
        port = probe.local_endpoint().port();
    }  // closed: nothing listens there now
    auto result = send_once(get(fmt::format("http://127.0.0.1:{}/", port)));
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::connect);
    CHECK(result.error().message == fmt::format("connect to 127.0.0.1:{}: Connection refused", port));
}

TEST_CASE("send: a connection reset or closed in the middle of the body fails with closed", "[net]") {
    const bool reset = GENERATE(true, false);
    http_test_server server([reset](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b");
        if (reset) co_await s.sleep(50ms);  // the bytes reach the client before the RST discards them
        s.close_after = true;
        s.reset_after = reset;
    });
    INFO("reset " << reset);
    auto result = send_once(get(server.url()));
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::closed);
    CHECK(result.error().message.starts_with(fmt::format("127.0.0.1:{} closed the connection", server.port())));
}

TEST_CASE("send: a malformed status line fails with protocol", "[net]") {
    const auto reply = GENERATE(as<std::string>{}, "HTTP/1.1 abc OK\r\n\r\n", "SMTP ready\r\n\r\n",
                                "HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n");
    http_test_server server([&](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw(reply);
        s.close_after = true;
    });
    auto result = send_once(get(server.url()));
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::protocol);
    CHECK(result.error().message.starts_with(fmt::format("malformed response from 127.0.0.1:{}: ", server.port())));
}

TEST_CASE("send: a chunked body is joined", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
        co_await s.sleep(20ms);
        co_await s.write_raw("6\r\n world\r\n0\r\n\r\n");
    });
    auto result = send_once(get(server.url()));
    REQUIRE(result.has_value());
    CHECK(result->body == "hello world");
}

TEST_CASE("send: a HEAD answer's announced length is not waited for", "[net]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        for (int i = 0; i < 2; ++i) {
            http_request request{.method = "HEAD", .url = server.url()};
            auto result = co_await client.send(std::move(request), clock_type::now() + 5s);
            REQUIRE(result.has_value());
            CHECK(result->header("content-length") == "1234");
            CHECK(result->body.empty());
        }
    }());
    CHECK(server.connections == 1);
}

TEST_CASE("send: a bad URL, method or header fails before any connection", "[net]") {
    auto bad_url = send_once(get("ftp://127.0.0.1/"));
    REQUIRE(bad_url.has_error());
    CHECK(bad_url.error().what == http_error::kind::invalid_url);
    CHECK(bad_url.error().message == R"(request URL "ftp://127.0.0.1/": its scheme "ftp" is not one of http https)");

    auto bad_method = send_once({.method = "GET /x", .url = "http://127.0.0.1:9/"});
    REQUIRE(bad_method.has_error());
    CHECK(bad_method.error().what == http_error::kind::protocol);
    CHECK(bad_method.error().message == R"(request method "GET /x" is not an HTTP method token (e.g. GET, POST))");

    auto injected = send_once({.method = "GET", .url = "http://127.0.0.1:9/", .headers = {{"x-a", "1\r\nx-b: 2"}}});
    REQUIRE(injected.has_error());
    CHECK(injected.error().what == http_error::kind::protocol);
    CHECK(injected.error().message.starts_with(R"(request header "x-a" has a name)"));
}

namespace {

// A listener whose accept queue is full, so a further connect is never answered (Linux
// drops the SYN): the only way to make a loopback connect hang.
struct full_listener {
    asio::io_context ioc;
    asio::ip::tcp::acceptor acceptor{ioc};
    std::vector<int> fillers;
    unsigned short port = 0;

    full_listener() {
        asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
        acceptor.open(endpoint.protocol());
        acceptor.bind(endpoint);
        acceptor.listen(0);
        port = acceptor.local_endpoint().port();
        // Raw non-blocking connects (Asio's synchronous connect would wait): fill the
        // queue until one stays in progress.
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (int i = 0; i < 8; ++i) {
            const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
            fillers.push_back(fd);
            if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 && errno == EINPROGRESS) {
                break;
            }
        }
    }
    ~full_listener() {
        for (int fd : fillers) ::close(fd);
    }
};

}  // namespace

TEST_CASE("send: a connect nobody answers fails with connect at connect_timeout", "[net]") {
    full_listener listener;
    const auto start = clock_type::now();
    auto result = send_once(get(fmt::format("http://127.0.0.1:{}/", listener.port)), 10s, {.connect_timeout = 300ms});
    const auto elapsed = clock_type::now() - start;
    REQUIRE(result.has_error());
    CHECK(result.error().what == http_error::kind::connect);
    CHECK(result.error().message == fmt::format("connect to 127.0.0.1:{}: no answer within 300ms", listener.port));
    CHECK(elapsed >= 300ms);
    CHECK(elapsed < 3s);

    // The call's deadline, when earlier, wins and is a timeout.
    auto bounded = send_once(get(fmt::format("http://127.0.0.1:{}/", listener.port)), 200ms);
    REQUIRE(bounded.has_error());
    CHECK(bounded.error().what == http_error::kind::timeout);
    CHECK(bounded.error().message ==
          fmt::format("connect to 127.0.0.1:{}: the deadline passed before it completed", listener.port));
}
