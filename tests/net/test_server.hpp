#pragma once
// A real HTTP/1.1 server on loopback for the net tests, on its own thread and io_context.
// Each request goes to a handler coroutine that decides what the client sees: an answer,
// a delay, a hang until the client goes away, a close mid-response, raw bytes (chunked
// bodies, malformed status lines). Optionally TLS. It counts connections, requests and
// the connections the client closed, so tests can wait on them.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace fiskai::test {

namespace net_asio = boost::asio;
namespace net_beast = boost::beast;
namespace net_http = boost::beast::http;

class http_test_server {
public:
    // One request on one connection, and the means to answer it.
    class session {
    public:
        net_http::request<net_http::string_body> request;

        net_asio::awaitable<void> respond(int status, std::string body,
                                          std::vector<std::pair<std::string, std::string>> headers = {}) {
            net_http::response<net_http::string_body> response{static_cast<net_http::status>(status), 11};
            for (auto& [name, value] : headers) response.insert(name, value);
            if (response.find(net_http::field::content_type) == response.end()) {
                response.set(net_http::field::content_type, "text/plain");
            }
            response.body() = std::move(body);
            response.prepare_payload();
            if (tls_) {
                co_await net_http::async_write(*tls_, response, net_asio::as_tuple(net_asio::use_awaitable));
            } else {
                co_await net_http::async_write(*plain_, response, net_asio::as_tuple(net_asio::use_awaitable));
            }
        }

        net_asio::awaitable<void> write_raw(std::string bytes) {
            if (tls_) {
                co_await net_asio::async_write(*tls_, net_asio::buffer(bytes),
                                               net_asio::as_tuple(net_asio::use_awaitable));
            } else {
                co_await net_asio::async_write(*plain_, net_asio::buffer(bytes),
                                               net_asio::as_tuple(net_asio::use_awaitable));
            }
        }

        net_asio::awaitable<void> sleep(std::chrono::steady_clock::duration how_long) {
            net_asio::steady_timer timer(co_await net_asio::this_coro::executor, how_long);
            co_await timer.async_wait(net_asio::as_tuple(net_asio::use_awaitable));
        }

        // Waits until the client closes the connection (it counts as peer_closed) and
        // then ends it here too.
        net_asio::awaitable<void> hang() {
            char byte = 0;
            for (;;) {
                auto [ec, n] = tls_ ? co_await tls_->async_read_some(net_asio::buffer(&byte, 1),
                                                                     net_asio::as_tuple(net_asio::use_awaitable))
                                    : co_await plain_->async_read_some(net_asio::buffer(&byte, 1),
                                                                       net_asio::as_tuple(net_asio::use_awaitable));
                if (ec) break;
            }
            owner_->peer_closed++;
            close_after = true;
        }

        // Close the connection once the handler returns (without saying so in a header).
        bool close_after = false;
        // With close_after: reset it (RST, SO_LINGER 0) instead of a FIN.
        bool reset_after = false;

    private:
        friend class http_test_server;
        http_test_server* owner_ = nullptr;
        net_beast::tcp_stream* plain_ = nullptr;
        net_asio::ssl::stream<net_beast::tcp_stream>* tls_ = nullptr;
    };

    using handler_type = std::function<net_asio::awaitable<void>(session&)>;

    explicit http_test_server(handler_type handler, std::shared_ptr<net_asio::ssl::context> tls = nullptr)
        : handler_(std::move(handler)), tls_(std::move(tls)), acceptor_(ioc_) {
        net_asio::ip::tcp::endpoint endpoint(net_asio::ip::make_address("127.0.0.1"), 0);
        acceptor_.open(endpoint.protocol());
        acceptor_.set_option(net_asio::socket_base::reuse_address(true));
        acceptor_.bind(endpoint);
        acceptor_.listen();
        port_ = acceptor_.local_endpoint().port();
        net_asio::co_spawn(ioc_, accept_loop(), net_asio::detached);
        thread_ = std::thread([this] { ioc_.run(); });
    }

    ~http_test_server() {
        ioc_.stop();
        thread_.join();
    }

    http_test_server(const http_test_server&) = delete;
    http_test_server& operator=(const http_test_server&) = delete;

    [[nodiscard]] unsigned short port() const { return port_; }
    [[nodiscard]] std::string url(const std::string& path = "/") const {
        return fmt::format("{}://127.0.0.1:{}{}", tls_ ? "https" : "http", port_, path);
    }

    std::atomic<int> connections{0};
    std::atomic<int> requests{0};
    std::atomic<int> peer_closed{0};    // connections the client closed (EOF or reset seen here)
    std::atomic<int> server_closed{0};  // connections this server closed after a handler

private:
    net_asio::awaitable<void> accept_loop() {
        for (;;) {
            auto [ec, socket] = co_await acceptor_.async_accept(net_asio::as_tuple(net_asio::use_awaitable));
            if (ec) co_return;
            connections++;
            net_asio::co_spawn(ioc_, serve(std::move(socket)), net_asio::detached);
        }
    }

    net_asio::awaitable<void> serve(net_asio::ip::tcp::socket socket) {
        net_beast::tcp_stream plain(std::move(socket));
        if (!tls_) {
            co_await serve_on(plain, &plain, nullptr);
            co_return;
        }
        net_asio::ssl::stream<net_beast::tcp_stream> tls(std::move(plain), *tls_);
        auto [ec] = co_await tls.async_handshake(net_asio::ssl::stream_base::server,
                                                 net_asio::as_tuple(net_asio::use_awaitable));
        if (ec) {
            handshake_failures++;
            co_return;
        }
        co_await serve_on(tls, nullptr, &tls);
    }

    template <class Stream>
    net_asio::awaitable<void> serve_on(Stream& stream, net_beast::tcp_stream* plain,
                                       net_asio::ssl::stream<net_beast::tcp_stream>* tls) {
        net_beast::flat_buffer buffer;
        for (;;) {
            session current;
            current.owner_ = this;
            current.plain_ = plain;
            current.tls_ = tls;
            net_http::request_parser<net_http::string_body> parser;
            parser.body_limit(std::size_t{1} << 30);
            auto [ec, n] =
                co_await net_http::async_read(stream, buffer, parser, net_asio::as_tuple(net_asio::use_awaitable));
            if (ec) {
                peer_closed++;
                co_return;
            }
            requests++;
            current.request = parser.release();
            co_await handler_(current);
            if (current.close_after) {
                net_beast::error_code ignored;
                auto& lowest = plain ? *plain : tls->next_layer();
                if (current.reset_after) {
                    lowest.socket().set_option(net_asio::socket_base::linger(true, 0), ignored);
                } else {
                    lowest.socket().shutdown(net_asio::ip::tcp::socket::shutdown_both, ignored);
                }
                lowest.socket().close(ignored);
                server_closed++;
                co_return;
            }
        }
    }

public:
    std::atomic<int> handshake_failures{0};

private:
    handler_type handler_;
    std::shared_ptr<net_asio::ssl::context> tls_;
    net_asio::io_context ioc_;
    net_asio::ip::tcp::acceptor acceptor_;
    unsigned short port_ = 0;
    std::thread thread_;
};

}  // namespace fiskai::test
