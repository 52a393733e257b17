#include <fiskai/net/http_client.hpp>

#include "transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/asio/ssl/error.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <unordered_map>

namespace fiskai::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using clock = std::chrono::steady_clock;
using error_code = boost::system::error_code;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

namespace {

// Response heads larger than this are refused (Beast's default of 8 KiB is too small for
// some API gateways' cookie-laden answers).
constexpr std::uint32_t header_limit = 64 * 1024;

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::optional<std::string_view> find_header(const header_list& headers, std::string_view name) {
    for (const auto& [key, value] : headers) {
        if (iequals(key, name)) return std::string_view(value);
    }
    return std::nullopt;
}

bool is_token(std::string_view text) {
    constexpr std::string_view specials = "!#$%&'*+-.^_`|~";
    return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || specials.find(c) != std::string_view::npos;
    });
}

}  // namespace

std::optional<std::string_view> http_response::header(std::string_view name) const {
    return find_header(headers, name);
}

namespace detail {

// The read buffer's capacity, and so the most one read of the socket takes.
constexpr std::size_t read_buffer_bytes = 64 * 1024;

// A live connection and what it has read past the last response.
struct connection {
    std::string origin;
    std::string authority;
    transport io;
    beast::flat_buffer buffer;
    clock::time_point idle_since;
};

// Idle keep-alive connections by origin. A timer closes those idle longer than the
// timeout; it holds the pool weakly so a destroyed client leaves nothing running.
class connection_pool : public std::enable_shared_from_this<connection_pool> {
public:
    connection_pool(asio::any_io_executor executor, std::size_t per_origin, clock::duration timeout)
        : sweeper_(std::move(executor)), per_origin_(per_origin), timeout_(timeout) {}

    // The most recently used idle connection of the origin (the likeliest to be alive).
    std::unique_ptr<connection> take(const std::string& origin) {
        auto found = idle_.find(origin);
        if (found == idle_.end()) return nullptr;
        auto& list = found->second;
        while (!list.empty()) {
            auto conn = std::move(list.back());
            list.pop_back();
            if (clock::now() - conn->idle_since < timeout_) return conn;
            conn->io.close();
        }
        return nullptr;
    }

    void put(std::unique_ptr<connection> conn) {
        if (per_origin_ == 0 || timeout_ <= clock::duration::zero()) {
            conn->io.close();
            return;
        }
        conn->idle_since = clock::now();
        auto& list = idle_[conn->origin];
        list.push_back(std::move(conn));
        while (list.size() > per_origin_) {
            list.front()->io.close();
            list.pop_front();
        }
        arm();
    }

    void close_all() {
        for (auto& [origin, list] : idle_) {
            for (auto& conn : list) conn->io.close();
        }
        idle_.clear();
        sweeper_.cancel();
        armed_ = false;
    }

    [[nodiscard]] std::size_t size() const {
        std::size_t total = 0;
        for (const auto& [origin, list] : idle_) total += list.size();
        return total;
    }

private:
    // Waits for the earliest expiry. A connection put later expires later, so an armed
    // timer never needs to move earlier.
    void arm() {
        if (armed_) return;
        std::optional<clock::time_point> earliest;
        for (const auto& [origin, list] : idle_) {
            if (!list.empty() && (!earliest || list.front()->idle_since < *earliest))
                earliest = list.front()->idle_since;
        }
        if (!earliest) return;
        armed_ = true;
        sweeper_.expires_at(*earliest + timeout_);
        sweeper_.async_wait([weak = weak_from_this()](const error_code& ec) {
            if (ec) return;
            if (auto self = weak.lock()) {
                self->armed_ = false;
                self->sweep();
            }
        });
    }

    void sweep() {
        const auto now = clock::now();
        for (auto it = idle_.begin(); it != idle_.end();) {
            auto& list = it->second;
            while (!list.empty() && now - list.front()->idle_since >= timeout_) {
                list.front()->io.close();
                list.pop_front();
            }
            it = list.empty() ? idle_.erase(it) : std::next(it);
        }
        arm();
    }

    asio::steady_timer sweeper_;
    std::size_t per_origin_;
    clock::duration timeout_;
    bool armed_ = false;
    std::unordered_map<std::string, std::deque<std::unique_ptr<connection>>> idle_;
};

namespace {

enum class phase { write, read };

void set_deadline(connection& conn, clock::time_point deadline) {
    if (deadline == clock::time_point::max()) {
        conn.io.lowest().expires_never();
    } else {
        conn.io.lowest().expires_at(deadline);
    }
}

template <class Stream, class Parser>
asio::awaitable<error_code> write_then_read(Stream& stream, beast::flat_buffer& buffer,
                                            http::request<http::string_body>& request, Parser& parser, bool head_only,
                                            phase& where) {
    where = phase::write;
    auto [write_ec, written] = co_await http::async_write(stream, request, use_tuple);
    if (write_ec) co_return write_ec;
    where = phase::read;
    if (head_only) {
        auto [ec, read] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
        co_return ec;
    }
    auto [ec, read] = co_await http::async_read(stream, buffer, parser, use_tuple);
    co_return ec;
}

template <class Parser>
asio::awaitable<error_code> exchange(connection& conn, http::request<http::string_body>& request, Parser& parser,
                                     bool head_only, phase& where) {
    if (conn.io.tls) co_return co_await write_then_read(*conn.io.tls, conn.buffer, request, parser, head_only, where);
    co_return co_await write_then_read(*conn.io.plain, conn.buffer, request, parser, head_only, where);
}

template <class Stream, class Parser>
asio::awaitable<error_code> read_some_of(Stream& stream, beast::flat_buffer& buffer, Parser& parser) {
    auto [ec, read] = co_await http::async_read_some(stream, buffer, parser, use_tuple);
    co_return ec;
}

// The peer closed or reset the connection: the failure a stale keep-alive connection shows.
bool is_closed(const error_code& ec) {
    return ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == asio::error::connection_aborted || ec == asio::ssl::error::stream_truncated;
}

http_error exchange_failure(const error_code& ec, phase where, const std::string& authority, bool was_cancelled,
                            std::size_t body_limit) {
    using kind = http_error::kind;
    if (was_cancelled) return {kind::cancelled, fmt::format("request to {} cancelled", authority)};
    if (ec == beast::error::timeout) {
        return {kind::timeout, where == phase::write
                                   ? fmt::format("sending the request to {}: the deadline passed", authority)
                                   : fmt::format("no whole response from {} within the deadline", authority)};
    }
    if (ec == http::error::body_limit) {
        return {kind::too_large,
                fmt::format("the response from {} is over the body limit of {} bytes", authority, body_limit)};
    }
    if (ec == http::error::header_limit) {
        return {kind::too_large,
                fmt::format("the response head from {} is over the limit of {} bytes", authority, header_limit)};
    }
    if (is_closed(ec)) {
        return {kind::closed,
                fmt::format("{} closed the connection before a whole response ({})", authority, ec.message())};
    }
    if (ec.category() == http::make_error_code(http::error::bad_version).category()) {
        return {kind::protocol, fmt::format("malformed response from {}: {}", authority, ec.message())};
    }
    return {kind::closed, fmt::format("{} {}: {}", where == phase::write ? "sending the request to" : "reading from",
                                      authority, ec.message())};
}

std::string host_header(const parsed_url& url) {
    const bool default_port = url.port == (url.tls ? 443 : 80);
    const std::string host = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
    return default_port ? host : fmt::format("{}:{}", host, url.port);
}

http_result<http::request<http::string_body>> make_request(http_request& in, const parsed_url& url,
                                                           const client_options& options) {
    using kind = http_error::kind;
    if (!is_token(in.method)) {
        return http_error{kind::protocol,
                          fmt::format("request method \"{}\" is not an HTTP method token (e.g. GET, POST)", in.method)};
    }
    http::request<http::string_body> request;
    const auto verb = http::string_to_verb(in.method);
    if (verb == http::verb::unknown) {
        request.method_string(in.method);
    } else {
        request.method(verb);
    }
    request.target(url.target);
    request.version(11);
    for (const auto& [name, value] : in.headers) {
        // A line break in a header would let a value inject headers or a second request.
        if (!is_token(name) || value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
            return http_error{kind::protocol,
                              fmt::format("request header \"{}\" has a name that is not a token or a value with a "
                                          "line break or NUL; remove it",
                                          name)};
        }
        request.insert(name, value);
    }
    if (request.find(http::field::host) == request.end()) request.set(http::field::host, host_header(url));
    if (request.find(http::field::user_agent) == request.end())
        request.set(http::field::user_agent, options.user_agent);
    request.body() = std::move(in.body);
    request.prepare_payload();
    return request;
}

template <class Body>
header_list headers_of(const http::response<Body>& response) {
    header_list out;
    for (const auto& field : response) out.emplace_back(std::string(field.name_string()), std::string(field.value()));
    return out;
}

}  // namespace

// A connection with a response head (or a whole response) read on it.
template <class Body>
struct exchanged {
    std::unique_ptr<connection> conn;
    std::unique_ptr<http::response_parser<Body>> parser;
};

struct client_core {
    asio::any_io_executor executor;
    client_options options;
    std::shared_ptr<tls_context_source> tls;
    std::shared_ptr<connection_pool> pool;

    asio::awaitable<http_result<std::unique_ptr<connection>>> connect(const parsed_url& url,
                                                                      clock::time_point deadline) {
        auto dialled = co_await dial(url, *tls, options.connect_timeout, deadline);
        if (!dialled) co_return dialled.error();
        auto conn = std::unique_ptr<connection>(new connection{url.origin(), url.authority(), std::move(*dialled)});
        // Beast reads at most the buffer's free capacity (512 bytes at least), and a parser
        // that moves the body out keeps the buffer nearly empty, so it never grows: a large
        // body came in reads of about 700 bytes (100,000 recvmsg calls for 70 MiB).
        conn->buffer.reserve(read_buffer_bytes);
        co_return conn;
    }

    // Hands a connection whose exchange ended cleanly back to the pool, or closes it.
    void release(std::unique_ptr<connection> conn, bool keep_alive) {
        if (keep_alive) {
            pool->put(std::move(conn));
        } else {
            conn->io.close();
        }
    }

    // The last URL parsed: a client mostly calls one endpoint (a model API) over and over.
    std::string last_url;
    std::optional<parsed_url> last_parsed;

    boost::system::result<parsed_url, std::string> parsed(const std::string& text) {
        if (last_parsed && text == last_url) return *last_parsed;
        auto url = parse_url(text);
        if (url) {
            last_url = text;
            last_parsed = *url;
        }
        return url;
    }

    // Writes the request and reads the head (head_only) or the whole response. A pooled
    // connection that fails before any response byte is retried once on a fresh one: the
    // peer closed it while idle, and the request never reached a handler.
    template <class Body>
    asio::awaitable<http_result<exchanged<Body>>> perform(http_request request, clock::time_point deadline,
                                                          bool head_only) {
        auto url = parsed(request.url);
        if (!url) {
            co_return http_error{http_error::kind::invalid_url,
                                 fmt::format("request URL \"{}\": {}", request.url, url.error())};
        }
        auto message = make_request(request, *url, options);
        if (!message) co_return message.error();
        const auto origin = url->origin();
        if (clock::now() >= deadline) {
            co_return http_error{
                http_error::kind::timeout,
                fmt::format("connect to {}: the deadline passed before it completed", url->authority())};
        }
        for (int attempt = 0;; ++attempt) {
            auto conn = attempt == 0 ? pool->take(origin) : nullptr;
            const bool reused = conn != nullptr;
            if (!conn) {
                auto dialled = co_await connect(*url, deadline);
                if (!dialled) co_return dialled.error();
                conn = std::move(*dialled);
            }
            auto parser = std::make_unique<http::response_parser<Body>>();
            parser->header_limit(header_limit);
            if constexpr (std::is_same_v<Body, http::string_body>)
                parser->body_limit(options.body_limit);
            else
                parser->body_limit(boost::none);
            // A HEAD answer announces a body it does not send.
            if (message->method() == http::verb::head) parser->skip(true);
            set_deadline(*conn, deadline);
            phase where = phase::write;
            const auto ec = co_await exchange(*conn, *message, *parser, head_only, where);
            if (!ec) co_return exchanged<Body>{std::move(conn), std::move(parser)};
            conn->io.close();
            const bool was_cancelled = co_await cancelled();
            if (reused && !was_cancelled && !parser->got_some() && is_closed(ec)) continue;
            co_return exchange_failure(ec, where, conn->authority, was_cancelled, options.body_limit);
        }
    }

    asio::awaitable<http_result<http_response>> send(http_request request, clock::time_point deadline) {
        const bool caller_keeps_alive = !find_header(request.headers, "connection").has_value() ||
                                        !iequals(*find_header(request.headers, "connection"), "close");
        auto done = co_await perform<http::string_body>(std::move(request), deadline, false);
        if (!done) co_return done.error();
        auto& parser = *done->parser;
        const bool keep_alive = caller_keeps_alive && parser.get().keep_alive();
        http_response response;
        response.status = static_cast<int>(parser.get().result_int());
        response.headers = headers_of(parser.get());
        response.body = std::move(parser.get().body());
        release(std::move(done->conn), keep_alive);
        co_return response;
    }
};

}  // namespace detail

struct http_client::impl : detail::client_core {};

struct response_stream::state {
    std::shared_ptr<detail::connection_pool> pool;
    std::size_t event_limit = 0;
    std::unique_ptr<detail::connection> conn;
    std::unique_ptr<http::response_parser<http::buffer_body>> parser;
    int status = 0;
    header_list headers;
    bool ended = false;
    std::optional<http_error> failed;
    sse_parser events;
    std::array<char, 16 * 1024> chunk{};

    explicit state(std::size_t limit) : event_limit(limit), events(limit) {}

    void fail(http_error error) {
        if (conn) conn->io.close();
        conn.reset();
        failed = std::move(error);
    }
};

response_stream::response_stream(std::unique_ptr<state> s) : state_(std::move(s)) {}
response_stream::~response_stream() { close(); }
response_stream::response_stream(response_stream&&) noexcept = default;
response_stream& response_stream::operator=(response_stream&& other) noexcept {
    if (this != &other) {
        close();
        state_ = std::move(other.state_);
    }
    return *this;
}

int response_stream::status() const { return state_->status; }
const header_list& response_stream::headers() const { return state_->headers; }
std::optional<std::string_view> response_stream::header(std::string_view name) const {
    return find_header(state_->headers, name);
}

void response_stream::close() {
    if (state_ && state_->conn) {
        state_->conn->io.close();
        state_->conn.reset();
    }
}

namespace {

asio::awaitable<http_result<std::optional<std::string>>> read_piece(response_stream::state& s,
                                                                    clock::time_point deadline) {
    if (s.failed) co_return *s.failed;
    while (!s.ended) {
        if (!s.conn) co_return http_error{http_error::kind::closed, "the response stream was closed"};
        // Beast's timer cannot end a read whose bytes are already waiting (the read completes
        // before the expired timer's handler runs), so a server that never stops sending would
        // outrun the deadline: it is checked here, before every read.
        if (clock::now() >= deadline) {
            s.fail(detail::exchange_failure(beast::error::timeout, detail::phase::read, s.conn->authority, false, 0));
            co_return *s.failed;
        }
        // The same holds for a cancellation: no waiting read is there to be aborted.
        if (co_await detail::cancelled()) {
            s.fail(detail::exchange_failure({}, detail::phase::read, s.conn->authority, true, 0));
            co_return *s.failed;
        }
        auto& body = s.parser->get().body();
        body.data = s.chunk.data();
        body.size = s.chunk.size();
        detail::set_deadline(*s.conn, deadline);
        auto& conn = *s.conn;
        auto ec = conn.io.tls ? co_await detail::read_some_of(*conn.io.tls, conn.buffer, *s.parser)
                              : co_await detail::read_some_of(*conn.io.plain, conn.buffer, *s.parser);
        if (ec == http::error::need_buffer) ec = {};
        if (ec) {
            const bool was_cancelled = co_await detail::cancelled();
            s.fail(detail::exchange_failure(ec, detail::phase::read, conn.authority, was_cancelled, 0));
            co_return *s.failed;
        }
        const std::size_t got = s.chunk.size() - s.parser->get().body().size;
        if (s.parser->is_done()) {
            s.ended = true;
            conn.io.lowest().expires_never();
            if (s.parser->get().keep_alive()) {
                s.pool->put(std::move(s.conn));
            } else {
                s.conn->io.close();
                s.conn.reset();
            }
        }
        if (got > 0) co_return std::string(s.chunk.data(), got);
    }
    co_return std::nullopt;
}

asio::awaitable<http_result<std::optional<sse_event>>> read_event(response_stream::state& s,
                                                                  clock::time_point deadline) {
    for (;;) {
        if (auto event = s.events.next()) co_return event;
        auto piece = co_await read_piece(s, deadline);
        if (!piece) co_return piece.error();
        if (!*piece) co_return std::nullopt;
        if (!s.events.feed(**piece)) {
            const auto authority = s.conn ? s.conn->authority : std::string("the server");
            s.fail({http_error::kind::too_large,
                    fmt::format("an event from {} is over the limit of {} bytes", authority, s.event_limit)});
            co_return *s.failed;
        }
    }
}

}  // namespace

asio::awaitable<http_result<std::optional<std::string>>> response_stream::read_some(clock::time_point deadline) {
    co_return co_await detail::without_throw_on_cancel(read_piece(*state_, deadline));
}

asio::awaitable<http_result<std::optional<sse_event>>> response_stream::next_event(clock::time_point deadline) {
    co_return co_await detail::without_throw_on_cancel(read_event(*state_, deadline));
}

http_client::http_client(asio::any_io_executor executor, client_options options) : impl_(std::make_shared<impl>()) {
    impl_->executor = executor;
    impl_->tls = std::make_shared<detail::tls_context_source>(options.ca_file);
    impl_->pool = std::make_shared<detail::connection_pool>(executor, options.idle_per_origin, options.idle_timeout);
    impl_->options = std::move(options);
}

http_client::http_client(asio::any_io_executor executor) : http_client(std::move(executor), client_options{}) {}

http_client::~http_client() { impl_->pool->close_all(); }

asio::awaitable<http_result<http_response>> http_client::send(http_request request, clock::time_point deadline) {
    auto self = impl_;  // the call outlives a client destroyed while it runs
    co_return co_await detail::without_throw_on_cancel(self->send(std::move(request), deadline));
}

asio::awaitable<http_result<response_stream>> http_client::open_stream(http_request request,
                                                                       clock::time_point deadline) {
    auto self = impl_;
    auto done =
        co_await detail::without_throw_on_cancel(self->perform<http::buffer_body>(std::move(request), deadline, true));
    if (!done) co_return done.error();
    auto s = std::make_unique<response_stream::state>(self->options.body_limit);
    s->pool = self->pool;
    s->status = static_cast<int>(done->parser->get().result_int());
    s->headers = detail::headers_of(done->parser->get());
    s->conn = std::move(done->conn);
    s->parser = std::move(done->parser);
    s->ended = s->parser->is_done();
    if (s->ended) self->release(std::move(s->conn), s->parser->get().keep_alive());
    co_return response_stream(std::move(s));
}

void http_client::close_idle() { impl_->pool->close_all(); }

asio::any_io_executor http_client::get_executor() const { return impl_->executor; }

std::size_t http_client::idle_count() const { return impl_->pool->size(); }

}  // namespace fiskai::net
