#include "server_impl.hpp"

#include <fiskai/mcpserver/http_handler.hpp>
#include <fiskai/mcpserver/listener.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <list>

namespace fiskai::mcpserver {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

struct connection {
    explicit connection(tcp::socket s) : stream(std::move(s)) {}
    beast::tcp_stream stream;
    bool busy = false;  // between having read a request and finishing its response
};

std::string_view path_of(std::string_view target) {
    const auto q = target.find('?');
    return q == std::string_view::npos ? target : target.substr(0, q);
}

}  // namespace

struct listener::impl : std::enable_shared_from_this<listener::impl> {
    impl(server& s, const tcp::endpoint& ep, listener_options o)
        : srv(s), acceptor(s.state()->executor), options(std::move(o)), drained(s.state()->executor) {
        acceptor.open(ep.protocol());
        acceptor.set_option(asio::socket_base::reuse_address(true));
        acceptor.bind(ep);
        acceptor.listen(asio::socket_base::max_listen_connections);
        // DNS rebinding: a loopback listener only answers to loopback Host names.
        srv.state()->options.require_loopback_host = ep.address().is_loopback();
    }

    asio::awaitable<void> serve(std::shared_ptr<connection> conn) {
        beast::flat_buffer buffer;
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(srv.options().max_body_bytes);
            parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
            conn->stream.expires_after(options.idle_timeout);
            auto [ec, n] = co_await http::async_read(conn->stream, buffer, parser, tuple_awaitable);
            if (ec) {
                if (ec == http::error::body_limit || ec == http::error::header_limit) {
                    const bool body = ec == http::error::body_limit;
                    http::response<http::string_body> res{
                        body ? http::status::payload_too_large : http::status::request_header_fields_too_large, 11};
                    res.set(http::field::content_type, "application/json");
                    res.body() = boost::json::serialize(make_error(
                        nullptr, -32000,
                        body ? fmt::format("Payload Too Large: the body exceeds {} bytes", srv.options().max_body_bytes)
                             : fmt::format("Request Header Fields Too Large: the header exceeds {} bytes",
                                           options.max_header_bytes)));
                    res.keep_alive(false);
                    res.prepare_payload();
                    conn->stream.expires_after(std::chrono::seconds(5));
                    co_await http::async_write(conn->stream, res, tuple_awaitable);
                } else if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
                           ec != beast::error::timeout && ec != asio::error::eof &&
                           ec != asio::error::connection_reset) {
                    http::response<http::string_body> res{http::status::bad_request, 11};
                    res.set(http::field::content_type, "application/json");
                    res.body() = boost::json::serialize(make_error(nullptr, -32000, "Bad Request: " + ec.message()));
                    res.keep_alive(false);
                    res.prepare_payload();
                    conn->stream.expires_after(std::chrono::seconds(5));
                    co_await http::async_write(conn->stream, res, tuple_awaitable);
                }
                break;
            }
            conn->stream.expires_never();
            conn->busy = true;
            auto req = parser.release();
            bool keep = false;
            if (path_of(req.target()) != options.path) {
                http::response<http::string_body> res{http::status::not_found, req.version()};
                res.set(http::field::content_type, "application/json");
                res.body() = boost::json::serialize(
                    make_error(nullptr, -32000, fmt::format("Not Found: the MCP endpoint is {}", options.path)));
                res.keep_alive(req.keep_alive());
                res.prepare_payload();
                auto [wec, wn] = co_await http::async_write(conn->stream, res, tuple_awaitable);
                keep = !wec && req.keep_alive();
            } else {
                keep = co_await handle_http(srv, std::move(req), conn->stream);
            }
            conn->busy = false;
            if (!keep || stopped) break;
        }
        beast::error_code ignored;
        conn->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        conn->stream.close();
    }

    void forget(const std::shared_ptr<connection>& c) {
        connections.remove(c);
        if (stopped && connections.empty()) drained.cancel();
    }

    server& srv;
    tcp::acceptor acceptor;
    listener_options options;
    asio::steady_timer drained;
    std::list<std::shared_ptr<connection>> connections;
    bool stopped = false;
};

listener::listener(server& srv, const tcp::endpoint& endpoint, listener_options options)
    : impl_(std::make_shared<impl>(srv, endpoint, std::move(options))) {}

listener::~listener() = default;

tcp::endpoint listener::local_endpoint() const { return impl_->acceptor.local_endpoint(); }

asio::awaitable<void> listener::run() {
    auto self = impl_;
    while (!self->stopped) {
        auto [ec, socket] = co_await self->acceptor.async_accept(tuple_awaitable);
        if (ec) {
            if (self->stopped || ec == asio::error::operation_aborted) break;
            continue;  // a failed accept (e.g. out of descriptors) must not end the server
        }
        auto conn = std::make_shared<connection>(std::move(socket));
        self->connections.push_back(conn);
        asio::co_spawn(self->acceptor.get_executor(), self->serve(conn),
                       [self, conn](std::exception_ptr) { self->forget(conn); });
    }
    // Graceful end: responses under way get the grace period, then everything closes.
    if (!self->connections.empty()) {
        self->drained.expires_after(self->options.shutdown_grace);
        co_await self->drained.async_wait(tuple_awaitable);
        for (auto& c : self->connections) c->stream.socket().close();
    }
}

void listener::stop() {
    if (impl_->stopped) return;
    impl_->stopped = true;
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->srv.shutdown();
    // Idle keep-alive connections are only waiting for a next request: close them now.
    for (auto& c : impl_->connections) {
        if (!c->busy) c->stream.socket().close(ignored);
    }
    if (impl_->connections.empty()) impl_->drained.cancel();
}

}  // namespace fiskai::mcpserver
