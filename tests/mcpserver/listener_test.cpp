// The library's listener against real sockets: the header deadline (slowloris) and the
// connection cap. The server runs on its own thread; the test is a blocking client.

#include <fiskai/mcpserver/listener.hpp>
#include <fiskai/mcpserver/server.hpp>

#include "async_test.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/time.h>

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
    explicit running_listener(mcpserver::listener_options options) {
        srv_.emplace(ioc_.get_executor(), mcpserver::server_options{}, toolkit::tool_list{});
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
    auto first = connect_to(client, server.port());
    auto second = connect_to(client, server.port());
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
