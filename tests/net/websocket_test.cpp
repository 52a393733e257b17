// The WebSocket client against a Beast WebSocket server on loopback, over ws:// and wss://.

#include <fiskai/net/websocket.hpp>

#include "async_test.hpp"
#include "test_server.hpp"
#include "tls_fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ws = beast::websocket;
using fiskai::net::http_error;
using fiskai::net::websocket;
using fiskai::net::websocket_options;
using fiskai::test::run_awaitable;
using fiskai::test::tls_material;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// Echoes every message. "bye" makes it close with 4000 "asked to"; "quiet" makes it read
// on without answering; "big" answers 5000 bytes. It records the Authorization header.
class echo_server {
public:
    explicit echo_server(std::shared_ptr<asio::ssl::context> tls = nullptr) : tls_(std::move(tls)), acceptor_(ioc_) {
        asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
        acceptor_.open(endpoint.protocol());
        acceptor_.bind(endpoint);
        acceptor_.listen();
        port_ = acceptor_.local_endpoint().port();
        asio::co_spawn(ioc_, accept_loop(), asio::detached);
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~echo_server() {
        ioc_.stop();
        thread_.join();
    }
    [[nodiscard]] std::string url(const std::string& host = "127.0.0.1") const {
        return fmt::format("{}://{}:{}/socket?ticket=1", tls_ ? "wss" : "ws", host, port_);
    }
    [[nodiscard]] unsigned short port() const { return port_; }

    std::atomic<int> sessions{0};
    std::atomic<int> ended{0};  // sessions over (the client closed, went away, or was closed)
    std::atomic<int> pings{0};
    std::string authorization;  // written before `sessions` counts the session
    std::string target;

private:
    asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(use_tuple);
            if (ec) co_return;
            asio::co_spawn(ioc_, serve(std::move(socket)), asio::detached);
        }
    }

    asio::awaitable<void> serve(asio::ip::tcp::socket socket) {
        if (!tls_) {
            ws::stream<beast::tcp_stream> stream(std::move(socket));
            co_await echo(stream);
        } else {
            ws::stream<asio::ssl::stream<beast::tcp_stream>> stream(std::move(socket), *tls_);
            auto [ec] = co_await stream.next_layer().async_handshake(asio::ssl::stream_base::server, use_tuple);
            if (!ec) co_await echo(stream);
        }
        ended++;
    }

    template <class Stream>
    asio::awaitable<void> echo(Stream& stream) {
        stream.control_callback([this](ws::frame_type kind, beast::string_view) {
            if (kind == ws::frame_type::ping) pings++;
        });
        ws::request_type request;
        beast::flat_buffer buffer;
        auto [read_ec, n] = co_await beast::http::async_read(stream.next_layer(), buffer, request, use_tuple);
        if (read_ec) co_return;
        authorization = std::string(request["authorization"]);
        target = std::string(request.target());
        auto [accept_ec] = co_await stream.async_accept(request, use_tuple);
        if (accept_ec) co_return;
        sessions++;
        for (;;) {
            beast::flat_buffer message;
            auto [ec, size] = co_await stream.async_read(message, use_tuple);
            if (ec) co_return;
            const auto text = beast::buffers_to_string(message.data());
            if (text == "bye") {
                co_await stream.async_close(ws::close_reason(static_cast<ws::close_code>(4000), "asked to"), use_tuple);
                co_return;
            }
            if (text == "quiet") continue;
            const std::string answer = text == "big" ? std::string(5000, 'x') : text;
            stream.text(stream.got_text());
            auto [write_ec, written] = co_await stream.async_write(asio::buffer(answer), use_tuple);
            if (write_ec) co_return;
        }
    }

    std::shared_ptr<asio::ssl::context> tls_;
    asio::io_context ioc_;
    asio::ip::tcp::acceptor acceptor_;
    unsigned short port_ = 0;
    std::thread thread_;
};

std::optional<http_error> connect_error(std::string url) {
    return run_awaitable([](std::string u) -> asio::awaitable<std::optional<http_error>> {
        auto connected = co_await websocket::connect(std::move(u), clock_type::now() + 10s);
        if (connected.has_error()) co_return connected.error();
        co_return std::nullopt;
    }(std::move(url)));
}

asio::awaitable<void> echo_round_trip(const std::string& url, websocket_options options) {
    auto connected = co_await websocket::connect(url, clock_type::now() + 10s, std::move(options));
    REQUIRE(connected.has_value());
    auto socket = std::move(*connected);
    CHECK(socket.is_open());
    for (const auto* text : {"hello", "{\"envelope_id\":\"1\"}"}) {
        auto sent = co_await socket.send_text(text, clock_type::now() + 10s);
        REQUIRE(sent.has_value());
        auto echoed = co_await socket.read(clock_type::now() + 10s);
        REQUIRE(echoed.has_value());
        CHECK(echoed->data == text);
        CHECK(echoed->text);
    }
    auto pinged = co_await socket.ping("are you there", clock_type::now() + 10s);
    CHECK(pinged.has_value());
    auto closed = co_await socket.close(clock_type::now() + 10s);
    CHECK(closed.has_value());
    CHECK_FALSE(socket.is_open());
}

}  // namespace

TEST_CASE("websocket: echo over ws://, with handshake headers", "[net][websocket]") {
    echo_server server;
    run_awaitable(echo_round_trip(server.url(), {.headers = {{"Authorization", "Bearer xapp-test"}}}));
    CHECK(fiskai::test::wait_until([&] { return server.ended == 1; }));
    CHECK(server.authorization == "Bearer xapp-test");
    CHECK(server.target == "/socket?ticket=1");
    CHECK(server.pings == 1);
}

TEST_CASE("websocket: echo over wss:// with the CA trusted, refused without", "[net][websocket][tls]") {
    const auto& material = tls_material::get();
    echo_server server(material.server_context("localhost"));
    run_awaitable(echo_round_trip(server.url("localhost"), {.ca_file = material.ca_file}));
    auto refused = connect_error(server.url("localhost"));
    REQUIRE(refused.has_value());
    CHECK(refused->what == http_error::kind::tls);
    CHECK_THAT(refused->message,
               Catch::StartsWith("TLS handshake with localhost:") && Catch::Contains("certificate verify failed ("));
}

TEST_CASE("websocket: a close from the server names its code and reason", "[net][websocket]") {
    echo_server server;
    run_awaitable([&]() -> asio::awaitable<void> {
        auto connected = co_await websocket::connect(server.url(), clock_type::now() + 10s);
        REQUIRE(connected.has_value());
        REQUIRE((co_await connected->send_text("bye", clock_type::now() + 10s)).has_value());
        auto read = co_await connected->read(clock_type::now() + 10s);
        REQUIRE(read.has_error());
        CHECK(read.error().what == http_error::kind::closed);
        CHECK(read.error().message ==
              fmt::format("127.0.0.1:{} closed the WebSocket (code 4000: asked to)", server.port()));
        CHECK_FALSE(connected->is_open());
        auto after = co_await connected->send_text("late", clock_type::now() + 10s);
        REQUIRE(after.has_error());
        CHECK(after.error().message == fmt::format("the WebSocket to 127.0.0.1:{} is closed", server.port()));
    }());
}

TEST_CASE("websocket: a read deadline closes the connection", "[net][websocket]") {
    echo_server server;
    run_awaitable([&]() -> asio::awaitable<void> {
        auto connected = co_await websocket::connect(server.url(), clock_type::now() + 10s);
        REQUIRE(connected.has_value());
        REQUIRE((co_await connected->send_text("quiet", clock_type::now() + 10s)).has_value());
        const auto start = clock_type::now();
        auto read = co_await connected->read(start + 200ms);
        REQUIRE(read.has_error());
        CHECK(read.error().what == http_error::kind::timeout);
        CHECK(read.error().message ==
              fmt::format("no WebSocket message from 127.0.0.1:{} within the deadline", server.port()));
        CHECK(clock_type::now() - start < 2s);
        CHECK_FALSE(connected->is_open());
    }());
    CHECK(fiskai::test::wait_until([&] { return server.ended == 1; }));
}

TEST_CASE("websocket: a message over the limit fails with too_large", "[net][websocket]") {
    echo_server server;
    run_awaitable([&]() -> asio::awaitable<void> {
        websocket_options options{.message_limit = 1000};  // a local: see docs/net.md on GCC 12
        auto connected = co_await websocket::connect(server.url(), clock_type::now() + 10s, std::move(options));
        REQUIRE(connected.has_value());
        REQUIRE((co_await connected->send_text("big", clock_type::now() + 10s)).has_value());
        auto read = co_await connected->read(clock_type::now() + 10s);
        REQUIRE(read.has_error());
        CHECK(read.error().what == http_error::kind::too_large);
        CHECK(read.error().message ==
              fmt::format("a WebSocket message from 127.0.0.1:{} is over the limit of 1000 bytes", server.port()));
    }());
}

TEST_CASE("websocket: cancelling a pending read closes the connection", "[net][websocket]") {
    echo_server server;
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        auto connected = co_await websocket::connect(server.url(), clock_type::now() + 10s);
        REQUIRE(connected.has_value());
        asio::cancellation_signal signal;
        std::optional<fiskai::net::http_result<fiskai::net::websocket_message>> outcome;
        asio::co_spawn(executor, connected->read(clock_type::now() + 30s),
                       asio::bind_cancellation_slot(
                           signal.slot(), [&outcome](std::exception_ptr, auto r) { outcome = std::move(r); }));
        asio::steady_timer settle(executor, 50ms);  // the read is pending on the socket by then
        co_await settle.async_wait(asio::use_awaitable);
        signal.emit(asio::cancellation_type::terminal);
        asio::steady_timer poll(executor);
        for (int i = 0; i < 200 && !outcome; ++i) {
            poll.expires_after(10ms);
            co_await poll.async_wait(asio::use_awaitable);
        }
        REQUIRE(outcome.has_value());
        REQUIRE(outcome->has_error());
        CHECK(outcome->error().what == http_error::kind::cancelled);
        CHECK_FALSE(connected->is_open());
    }());
    CHECK(fiskai::test::wait_until([&] { return server.ended == 1; }));
}

TEST_CASE("websocket: concurrent sends go out whole and in call order", "[net][websocket]") {
    echo_server server;
    run_awaitable([&]() -> asio::awaitable<void> {
        auto executor = co_await asio::this_coro::executor;
        auto connected = co_await websocket::connect(server.url(), clock_type::now() + 10s);
        REQUIRE(connected.has_value());
        int sent = 0;
        for (int i = 0; i < 10; ++i) {
            asio::co_spawn(
                executor,
                connected->send_text(fmt::format("message {} {}", i, std::string(20000, 'p')), clock_type::now() + 10s),
                [&sent](std::exception_ptr, auto r) {
                    CHECK(r.has_value());
                    ++sent;
                });
        }
        for (int i = 0; i < 10; ++i) {
            auto echoed = co_await connected->read(clock_type::now() + 10s);
            REQUIRE(echoed.has_value());
            CHECK(echoed->data.starts_with(fmt::format("message {} ", i)));
        }
        CHECK(sent == 10);
    }());
}

TEST_CASE("websocket: bad URLs and a declined upgrade", "[net][websocket]") {
    auto not_ws = connect_error("https://127.0.0.1:9/");
    REQUIRE(not_ws.has_value());
    CHECK(not_ws->what == http_error::kind::invalid_url);
    CHECK(not_ws->message == R"(WebSocket URL "https://127.0.0.1:9/": its scheme "https" is not one of ws wss)");

    fiskai::test::http_test_server plain_http([](fiskai::test::http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.respond(404, "no sockets here");
    });
    auto declined = connect_error(fmt::format("ws://127.0.0.1:{}/", plain_http.port()));
    REQUIRE(declined.has_value());
    CHECK(declined->what == http_error::kind::protocol);
    CHECK(declined->message ==
          fmt::format("WebSocket handshake with 127.0.0.1:{}: the server declined the upgrade (HTTP 404)",
                      plain_http.port()));
}
