// response_stream: server-sent events and long bodies read as they arrive over real HTTP.

#include <fiskai/net/http_client.hpp>

#include "async_test.hpp"
#include "test_server.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <atomic>
#include <optional>
#include <catch2/catch.hpp>

using namespace std::chrono_literals;
namespace asio = boost::asio;
using fiskai::net::http_client;
using fiskai::net::http_error;
using fiskai::net::http_request;
using fiskai::net::sse_event;
using fiskai::test::eventually;
using fiskai::test::http_test_server;
using fiskai::test::run_awaitable;
using clock_type = std::chrono::steady_clock;

namespace {

std::string chunk(std::string_view data) { return fmt::format("{:x}\r\n{}\r\n", data.size(), data); }

constexpr std::string_view sse_head =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";

// A server that sends events without end: every read finds its bytes already waiting.
struct endless_sender {
    std::atomic<bool> stop{false};
    http_test_server server{[this](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw(std::string(sse_head));
        std::string burst;
        for (int i = 0; i < 200; ++i) burst += chunk("data: {\"ping\":true}\n\n");
        while (!stop) co_await s.write_raw(burst);
    }};
    ~endless_sender() { stop = true; }
};

}  // namespace

TEST_CASE("stream: server-sent events arrive one by one, split across chunks", "[net][sse]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw(std::string(sse_head));
        co_await s.write_raw(chunk(": keepalive\n\nevent: message\nid: 1\ndata: {\"a\":"));
        co_await s.sleep(30ms);
        co_await s.write_raw(chunk("1}\n\n"));
        co_await s.sleep(30ms);
        co_await s.write_raw(chunk("data: second\ndata: line\n\n") + "0\r\n\r\n");
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        http_request request{.method = "POST",
                             .url = server.url("/mcp"),
                             .headers = {{"Accept", "application/json, text/event-stream"}},
                             .body = "{}"};
        auto opened = co_await client.open_stream(std::move(request), clock_type::now() + 10s);
        REQUIRE(opened.has_value());
        auto stream = std::move(*opened);
        CHECK(stream.status() == 200);
        CHECK(stream.header("content-type") == "text/event-stream");
        std::vector<sse_event> events;
        for (;;) {
            auto event = co_await stream.next_event(clock_type::now() + 10s);
            REQUIRE(event.has_value());
            if (!*event) break;
            events.push_back(std::move(**event));
        }
        REQUIRE(events.size() == 2);
        CHECK(events[0].data == R"({"a":1})");
        CHECK(events[0].id == "1");
        CHECK(events[1].data == "second\nline");
        CHECK(client.idle_count() == 1);  // read to its end: the connection went back to the pool
    }());
}

TEST_CASE("stream: a long body is read in pieces to its end", "[net][sse]") {
    const std::string body(100'000, 'b');
    http_test_server server(
        [&](http_test_server::session& s) -> asio::awaitable<void> { co_await s.respond(200, body); });
    auto total = run_awaitable([&]() -> asio::awaitable<std::string> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        http_request request{.method = "GET", .url = server.url()};
        auto opened = co_await client.open_stream(std::move(request), clock_type::now() + 10s);
        REQUIRE(opened.has_value());
        std::string all;
        int pieces = 0;
        for (;;) {
            auto piece = co_await opened->read_some(clock_type::now() + 10s);
            REQUIRE(piece.has_value());
            if (!*piece) break;
            all += **piece;
            ++pieces;
        }
        CHECK(pieces > 1);
        co_return all;
    }());
    CHECK(total == body);
}

TEST_CASE("stream: a silent server fails the read at its deadline, and the connection is closed", "[net][sse]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw(std::string(sse_head));
        co_await s.hang();
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        http_request request{.method = "GET", .url = server.url()};
        auto opened = co_await client.open_stream(std::move(request), clock_type::now() + 10s);
        REQUIRE(opened.has_value());
        const auto start = clock_type::now();
        auto event = co_await opened->next_event(start + 200ms);
        REQUIRE(event.has_error());
        CHECK(event.error().what == http_error::kind::timeout);
        CHECK(clock_type::now() - start < 2s);
        auto again = co_await opened->next_event(clock_type::now() + 1s);
        CHECK(again.has_error());  // the stream stays failed
        CHECK(client.idle_count() == 0);
    }());
    CHECK(fiskai::test::wait_until([&] { return server.peer_closed == 1; }));
}

TEST_CASE("stream: a server that never stops sending fails the read at its deadline", "[net][sse]") {
    // The bytes are always waiting, so no read ever waits for the deadline's timer: the
    // deadline must be checked before each read, for events and for raw pieces alike.
    endless_sender sender;
    auto& server = sender.server;
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        for (const bool events : {true, false}) {
            INFO((events ? "next_event" : "read_some"));
            http_request request{.method = "GET", .url = server.url()};
            auto opened = co_await client.open_stream(std::move(request), clock_type::now() + 10s);
            REQUIRE(opened.has_value());
            const auto start = clock_type::now();
            const auto deadline = start + 300ms;
            std::size_t read = 0;
            std::optional<http_error> failure;
            while (!failure && clock_type::now() - start < 20s) {
                if (events) {
                    auto event = co_await opened->next_event(deadline);
                    if (!event) failure = event.error();
                } else {
                    auto piece = co_await opened->read_some(deadline);
                    if (!piece) failure = piece.error();
                }
                ++read;
            }
            REQUIRE(failure.has_value());
            CHECK(failure->what == http_error::kind::timeout);
            CHECK(read > 1);  // it did read while the deadline was ahead
            CHECK(clock_type::now() - start < 5s);
        }
    }());
}

TEST_CASE("stream: cancelling a reader of a server that never stops sending ends it at once", "[net][sse]") {
    endless_sender sender;
    auto& server = sender.server;
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        http_request request{.method = "GET", .url = server.url()};
        auto opened = co_await client.open_stream(std::move(request), clock_type::now() + 10s);
        REQUIRE(opened.has_value());
        auto stream = std::make_shared<fiskai::net::response_stream>(std::move(*opened));
        std::atomic<std::size_t> read{0};
        std::optional<http_error> failure;
        auto reader = [stream, &read]() -> asio::awaitable<http_error> {
            // Only the stream may notice the cancellation, as for every caller that handles
            // its errors as values.
            co_await asio::this_coro::throw_if_cancelled(false);
            for (;;) {
                auto event = co_await stream->next_event(clock_type::now() + 60s);
                if (!event) co_return event.error();
                ++read;
            }
        };
        asio::cancellation_signal signal;
        asio::co_spawn(executor, reader(),
                       asio::bind_cancellation_slot(
                           signal.slot(), [&failure](std::exception_ptr, http_error e) { failure = std::move(e); }));
        REQUIRE(co_await eventually([&] { return read > 100; }));
        const auto start = clock_type::now();
        signal.emit(asio::cancellation_type::terminal);
        REQUIRE(co_await eventually([&] { return failure.has_value(); }, 5s));
        CHECK(failure->what == http_error::kind::cancelled);
        CHECK(clock_type::now() - start < 5s);
    }());
}

TEST_CASE("stream: an event over the body limit fails with too_large", "[net][sse]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw(std::string(sse_head) + chunk("data: " + std::string(2000, 'x') + "\n\n") + "0\r\n\r\n");
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor, {.body_limit = 1000});
        http_request request{.method = "GET", .url = server.url()};
        auto opened = co_await client.open_stream(std::move(request), clock_type::now() + 10s);
        REQUIRE(opened.has_value());
        auto event = co_await opened->next_event(clock_type::now() + 10s);
        REQUIRE(event.has_error());
        CHECK(event.error().what == http_error::kind::too_large);
        CHECK(event.error().message ==
              fmt::format("an event from 127.0.0.1:{} is over the limit of 1000 bytes", server.port()));
    }());
}

TEST_CASE("stream: dropping a stream before its end closes the connection", "[net][sse]") {
    http_test_server server([](http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw(std::string(sse_head) + chunk("data: one\n\n"));
        co_await s.hang();
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        http_client client(executor);
        {
            http_request request{.method = "GET", .url = server.url()};
            auto opened = co_await client.open_stream(std::move(request), clock_type::now() + 10s);
            REQUIRE(opened.has_value());
            auto event = co_await opened->next_event(clock_type::now() + 10s);
            REQUIRE(event.has_value());
            CHECK((*event)->data == "one");
        }
        CHECK(client.idle_count() == 0);
    }());
    CHECK(fiskai::test::wait_until([&] { return server.peer_closed == 1; }));
}
