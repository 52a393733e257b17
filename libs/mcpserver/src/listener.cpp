#include "server_impl.hpp"

#include <fiskai/mcpserver/http_handler.hpp>
#include <fiskai/mcpserver/listener.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <list>
#include <tuple>

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
    bool idle = false;  // waiting for the first byte of a request (a new or a keep-alive connection)
    bool evicted = false;
    std::chrono::steady_clock::time_point idle_since;
};

// `chunked` alone, in any case, with optional whitespace around it.
bool is_plain_chunked(std::string_view te) {
    while (!te.empty() && (te.front() == ' ' || te.front() == '\t')) te.remove_prefix(1);
    while (!te.empty() && (te.back() == ' ' || te.back() == '\t')) te.remove_suffix(1);
    return beast::iequals(te, "chunked");
}

std::string_view path_of(std::string_view target) {
    const auto q = target.find('?');
    return q == std::string_view::npos ? target : target.substr(0, q);
}

}  // namespace

struct listener::impl : std::enable_shared_from_this<listener::impl> {
    impl(server& s, const tcp::endpoint& ep, listener_options o)
        : srv(s),
          acceptor(s.state()->executor),
          options(std::move(o)),
          drained(s.state()->executor),
          backoff_timer(s.state()->executor) {
        acceptor.open(ep.protocol());
        acceptor.set_option(asio::socket_base::reuse_address(true));
        acceptor.bind(ep);
        acceptor.listen(asio::socket_base::max_listen_connections);
        // DNS rebinding: a loopback listener only answers to loopback Host names.
        srv.state()->options.require_loopback_host = ep.address().is_loopback();
    }

    // Answers an error on a connection whose request could not be read, then closes it.
    static asio::awaitable<void> answer_and_close(beast::tcp_stream& stream, http::status status, std::string message) {
        http::response<http::string_body> res{status, 11};
        res.set(http::field::content_type, "application/json");
        res.body() = boost::json::serialize(make_error(nullptr, -32000, std::move(message)));
        res.keep_alive(false);
        res.prepare_payload();
        stream.expires_after(std::chrono::seconds(5));
        co_await http::async_write(stream, res, tuple_awaitable);
    }

    asio::awaitable<void> serve(std::shared_ptr<connection> conn) {
        beast::flat_buffer buffer;
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(srv.options().max_body_bytes);
            parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
            // An idle keep-alive connection waits up to idle_timeout for a first byte;
            // from then the head has header_timeout and the body body_timeout.
            if (buffer.size() == 0) {
                conn->stream.expires_after(options.idle_timeout);
                conn->idle = true;
                conn->idle_since = std::chrono::steady_clock::now();
                auto [ec, n] = co_await conn->stream.async_read_some(buffer.prepare(4096), tuple_awaitable);
                conn->idle = false;
                if (ec || conn->evicted) break;
                buffer.commit(n);
            }
            // The head's deadline cancels the read rather than closing the socket (as the
            // stream's own timeout would), so the client can still be told why: 408.
            conn->stream.expires_after(options.idle_timeout);
            auto head_expired = std::make_shared<bool>(false);
            asio::steady_timer head_deadline(conn->stream.get_executor(), options.header_timeout);
            head_deadline.async_wait([conn, head_expired](boost::system::error_code wait_ec) {
                if (wait_ec) return;
                *head_expired = true;
                beast::error_code ignored;
                conn->stream.socket().cancel(ignored);
            });
            auto [ec, n] = co_await http::async_read_header(conn->stream, buffer, parser, tuple_awaitable);
            head_deadline.cancel();
            if (*head_expired) ec = beast::error::timeout;
            // A Transfer-Encoding other than plain `chunked` (gzip, `chunked, gzip`, ...) is
            // one this server cannot decode: Beast would read no body, and the body would be
            // taken as the next request (RFC 9112 section 6.3: answer 400 and close).
            if (!ec) {
                const auto& head = parser.get();
                const auto te = head[http::field::transfer_encoding];
                if (head.count(http::field::transfer_encoding) > 1 || (!te.empty() && !is_plain_chunked(te))) {
                    co_await answer_and_close(
                        conn->stream, http::status::bad_request,
                        fmt::format("Bad Request: Transfer-Encoding \"{}\" is not supported; send the body with "
                                    "Content-Length or Transfer-Encoding: chunked",
                                    std::string(te.substr(0, 64))));
                    break;
                }
            }
            if (!ec && !parser.is_done()) {
                conn->stream.expires_after(options.body_timeout);
                std::tie(ec, n) = co_await http::async_read(conn->stream, buffer, parser, tuple_awaitable);
                if (ec == beast::error::timeout) {
                    // The stream's timeout closed the socket: nothing can be answered.
                    break;
                }
            }
            if (ec) {
                if (ec == http::error::body_limit) {
                    co_await answer_and_close(
                        conn->stream, http::status::payload_too_large,
                        fmt::format("Payload Too Large: the body exceeds {} bytes", srv.options().max_body_bytes));
                } else if (ec == http::error::header_limit) {
                    co_await answer_and_close(
                        conn->stream, http::status::request_header_fields_too_large,
                        fmt::format("Request Header Fields Too Large: the header exceeds {} bytes",
                                    options.max_header_bytes));
                } else if (*head_expired && !stopped) {
                    co_await answer_and_close(conn->stream, http::status::request_timeout,
                                              fmt::format("Request Timeout: the request headers did not arrive within "
                                                          "{} of the first byte",
                                                          describe_duration(options.header_timeout)));
                } else if (ec != http::error::end_of_stream && ec != asio::error::operation_aborted &&
                           ec != beast::error::timeout && ec != asio::error::eof &&
                           ec != asio::error::connection_reset && ec != http::error::partial_message) {
                    co_await answer_and_close(conn->stream, http::status::bad_request, "Bad Request: " + ec.message());
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

    // Over the cap: a short 503 so the client knows why, then close. Refusals are bounded
    // too (a second cap), past which a connection is closed without an answer.
    void refuse(tcp::socket socket) {
        if (refusing >= options.max_connections) {
            beast::error_code ignored;
            socket.close(ignored);
            return;
        }
        ++refusing;
        auto conn = std::make_shared<beast::tcp_stream>(std::move(socket));
        auto text = fmt::format(
            "Service Unavailable: the server is serving its limit of {} connections; retry later "
            "(an operator can raise expose.agent.mcp.max_connections)",
            options.max_connections);
        auto refusal = [](std::shared_ptr<beast::tcp_stream> stream, std::string message) -> asio::awaitable<void> {
            co_await answer_and_close(*stream, http::status::service_unavailable, std::move(message));
            beast::error_code ignored;
            stream->socket().shutdown(tcp::socket::shutdown_send, ignored);
            // Read what the client sent until it closes (briefly), so closing does not
            // reset the connection and discard the answer before the client reads it.
            stream->expires_after(std::chrono::seconds(1));
            std::array<char, 1024> sink;
            for (;;) {
                auto [ec, n] = co_await stream->async_read_some(asio::buffer(sink), tuple_awaitable);
                if (ec) break;
            }
            stream->close();
        };
        asio::co_spawn(acceptor.get_executor(), refusal(conn, std::move(text)),
                       [self = shared_from_this()](std::exception_ptr) { --self->refusing; });
    }

    // At the cap, the connection that has waited longest for a request gives way to a new
    // one: connections that send nothing (a client's spare keep-alives, or a flood of empty
    // ones) cannot hold every slot until their idle timeout. False when none is idle.
    bool evict_longest_idle() {
        std::shared_ptr<connection> longest;
        for (const auto& c : connections) {
            if (c->idle && !c->evicted && (!longest || c->idle_since < longest->idle_since)) longest = c;
        }
        if (!longest) return false;
        longest->evicted = true;
        ++evicted_count;
        beast::error_code ignored;
        longest->stream.socket().cancel(ignored);
        return true;
    }

    void forget(const std::shared_ptr<connection>& c) {
        if (c->evicted) --evicted_count;
        connections.remove(c);
        if (stopped && connections.empty()) drained.cancel();
    }

    server& srv;
    tcp::acceptor acceptor;
    listener_options options;
    asio::steady_timer drained;
    asio::steady_timer backoff_timer;
    std::list<std::shared_ptr<connection>> connections;
    std::size_t evicted_count = 0;  // of `connections`: told to go, not yet gone
    std::size_t refusing = 0;
    std::size_t failed_accepts = 0;
    bool stopped = false;
};

listener::listener(server& srv, const tcp::endpoint& endpoint, listener_options options)
    : impl_(std::make_shared<impl>(srv, endpoint, std::move(options))) {}

listener::~listener() = default;

tcp::endpoint listener::local_endpoint() const { return impl_->acceptor.local_endpoint(); }

std::size_t listener::connection_count() const noexcept { return impl_->connections.size(); }
std::size_t listener::failed_accepts() const noexcept { return impl_->failed_accepts; }

asio::awaitable<void> listener::run() {
    auto self = impl_;
    auto backoff = std::chrono::steady_clock::duration::zero();
    while (!self->stopped) {
        auto [ec, socket] = co_await self->acceptor.async_accept(tuple_awaitable);
        if (ec) {
            if (self->stopped || ec == asio::error::operation_aborted) break;
            // A failed accept (out of descriptors, say) must neither end the server nor
            // spin: the pending connection stays queued, so retrying at once fails again.
            ++self->failed_accepts;
            backoff = backoff == backoff.zero() ? self->options.accept_backoff_min
                                                : std::min(backoff * 2, self->options.accept_backoff_max);
            if (backoff == self->options.accept_backoff_min) {  // once per streak of failures
                self->srv.state()->log(log_level::warning,
                                       fmt::format("accepting a connection failed: {}; retrying with a growing delay "
                                                   "up to {}",
                                                   ec.message(), describe_duration(self->options.accept_backoff_max)));
            }
            self->backoff_timer.expires_after(backoff);
            co_await self->backoff_timer.async_wait(tuple_awaitable);
            continue;
        }
        backoff = backoff.zero();
        // Connections already evicted are on their way out and do not count.
        if (self->connections.size() - self->evicted_count >= self->options.max_connections &&
            !self->evict_longest_idle()) {
            self->refuse(std::move(socket));
            continue;
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
    impl_->backoff_timer.cancel();
    impl_->srv.shutdown();
    // Idle keep-alive connections are only waiting for a next request: close them now.
    for (auto& c : impl_->connections) {
        if (!c->busy) c->stream.socket().close(ignored);
    }
    if (impl_->connections.empty()) impl_->drained.cancel();
}

void listener::cancel() {
    stop();
    // No grace: every connection closes now, so run() completes without waiting for
    // responses still being written.
    beast::error_code ignored;
    for (auto& c : impl_->connections) c->stream.socket().close(ignored);
    impl_->drained.cancel();
}

}  // namespace fiskai::mcpserver
