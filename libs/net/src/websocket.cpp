#include <fiskai/net/websocket.hpp>

#include "transport.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace fiskai::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ws = beast::websocket;
using namespace asio::experimental::awaitable_operators;
using clock = std::chrono::steady_clock;
using error_code = boost::system::error_code;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct websocket::impl {
    std::unique_ptr<detail::tls_context_source> tls_context;
    std::optional<ws::stream<beast::tcp_stream>> plain;
    std::optional<ws::stream<detail::tls_stream>> tls;
    std::string authority;
    bool open = false;
    // Any frame, control frames included: a pong is how a silent socket proves it is alive.
    clock::time_point last_received{};
    beast::flat_buffer buffer;
    // Writes wait here in call order; Beast allows one write of each kind at a time.
    bool writing = false;
    std::deque<asio::steady_timer*> write_waiters;

    beast::tcp_stream& lowest() { return plain ? beast::get_lowest_layer(*plain) : beast::get_lowest_layer(*tls); }

    // Closes the socket at once: after a deadline or a cancellation the stream may hold
    // half a frame, so it cannot be used again.
    void shut() {
        open = false;
        error_code ignored;
        lowest().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
        lowest().socket().close(ignored);
    }

    http_error closed_here() const {
        return {http_error::kind::closed, fmt::format("the WebSocket to {} is closed", authority)};
    }
};

namespace {

// Runs `op` unless the deadline passes first (then nothing: the op was cancelled).
template <class T>
asio::awaitable<std::optional<T>> before(asio::awaitable<T> op, clock::time_point deadline) {
    auto executor = co_await asio::this_coro::executor;
    asio::steady_timer timer(executor, deadline);
    auto outcome = co_await (std::move(op) || timer.async_wait(use_tuple));
    if (outcome.index() == 1) co_return std::nullopt;
    co_return std::get<0>(std::move(outcome));
}

bool bad_header(const std::string& name, const std::string& value) {
    return name.empty() || name.find_first_of(std::string_view(" :\r\n\0", 5)) != std::string::npos ||
           value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos;
}

template <class Stream>
asio::awaitable<error_code> upgrade(Stream& stream, const parsed_url& url, const websocket_options& options,
                                    ws::response_type& response) {
    stream.set_option(ws::stream_base::decorator([&options](ws::request_type& request) {
        request.set(beast::http::field::user_agent, options.user_agent);
        for (const auto& [name, value] : options.headers) request.insert(name, value);
    }));
    stream.read_message_max(options.message_limit);
    const bool default_port = url.port == (url.tls ? 443 : 80);
    const std::string host = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
    // A named local: GCC 12 mishandles temporaries inside a co_await expression.
    const std::string host_field = default_port ? host : fmt::format("{}:{}", host, url.port);
    auto [ec] = co_await stream.async_handshake(response, host_field, url.target, use_tuple);
    co_return ec;
}

asio::awaitable<http_result<websocket_message>> read_message(websocket::impl& s, clock::time_point deadline);

}  // namespace

websocket::websocket(std::shared_ptr<impl> state) : impl_(std::move(state)) {}
websocket::~websocket() {
    if (impl_) impl_->shut();
}
websocket::websocket(websocket&&) noexcept = default;
websocket& websocket::operator=(websocket&& other) noexcept {
    if (this != &other) {
        if (impl_) impl_->shut();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

std::chrono::steady_clock::time_point websocket::last_received() const {
    return impl_ ? impl_->last_received : clock::time_point{};
}

void websocket::abort() {
    if (impl_) impl_->shut();
}

bool websocket::is_open() const {
    if (!impl_ || !impl_->open) return false;
    return impl_->plain ? impl_->plain->is_open() : impl_->tls->is_open();
}

namespace {

asio::awaitable<http_result<websocket>> connect_websocket(std::string url, clock::time_point deadline,
                                                          websocket_options options,
                                                          std::shared_ptr<websocket::impl> state) {
    using kind = http_error::kind;
    auto parsed = parse_url(url, "ws wss");
    if (!parsed) co_return http_error{kind::invalid_url, fmt::format("WebSocket URL \"{}\": {}", url, parsed.error())};
    for (const auto& [name, value] : options.headers) {
        if (bad_header(name, value)) {
            co_return http_error{kind::protocol,
                                 fmt::format("WebSocket header \"{}\" has a name that is not a token or "
                                             "a value with a line break or NUL; remove it",
                                             name)};
        }
    }
    try {
        state->tls_context = std::make_unique<detail::tls_context_source>(options.ca_file);
    } catch (const std::exception& e) {
        co_return http_error{kind::tls, e.what()};
    }
    auto dialled = co_await detail::dial(*parsed, *state->tls_context, options.connect_timeout, deadline);
    if (!dialled) co_return dialled.error();
    state->authority = parsed->authority();
    if (dialled->tls) {
        state->tls.emplace(std::move(*dialled->tls));
    } else {
        state->plain.emplace(std::move(*dialled->plain));
    }
    state->lowest().expires_at(deadline);
    ws::response_type response;
    const auto ec = state->plain ? co_await upgrade(*state->plain, *parsed, options, response)
                                 : co_await upgrade(*state->tls, *parsed, options, response);
    const std::string what = fmt::format("WebSocket handshake with {}", state->authority);
    if (ec) {
        const bool was_cancelled = co_await detail::cancelled();
        state->shut();
        if (was_cancelled) co_return http_error{kind::cancelled, what + ": cancelled"};
        if (ec == beast::error::timeout) co_return http_error{kind::timeout, what + ": the deadline passed"};
        if (ec == ws::error::upgrade_declined) {
            co_return http_error{kind::protocol, fmt::format("{}: the server declined the upgrade (HTTP {})", what,
                                                             response.result_int())};
        }
        co_return http_error{kind::protocol, fmt::format("{}: {}", what, ec.message())};
    }
    // From here each call carries its own deadline; the stream's own timer stays off.
    state->lowest().expires_never();
    state->open = true;
    state->last_received = clock::now();
    auto* raw = state.get();  // the stream is the impl's member: it never outlives it
    auto mark = [raw](ws::frame_type, beast::string_view) { raw->last_received = clock::now(); };
    if (state->plain) {
        state->plain->control_callback(mark);
    } else {
        state->tls->control_callback(mark);
    }
    co_return websocket(std::move(state));
}

template <class Stream>
asio::awaitable<std::optional<std::tuple<error_code, std::size_t>>> read_on(Stream& stream, beast::flat_buffer& buffer,
                                                                            clock::time_point deadline) {
    co_return co_await before(stream.async_read(buffer, use_tuple), deadline);
}

asio::awaitable<http_result<websocket_message>> read_message(websocket::impl& s, clock::time_point deadline) {
    using kind = http_error::kind;
    if (!s.open) co_return s.closed_here();
    s.buffer.clear();
    auto outcome =
        s.plain ? co_await read_on(*s.plain, s.buffer, deadline) : co_await read_on(*s.tls, s.buffer, deadline);
    if (co_await detail::cancelled()) {
        s.shut();
        co_return http_error{kind::cancelled, fmt::format("WebSocket read from {} cancelled", s.authority)};
    }
    if (!outcome) {
        s.shut();
        co_return http_error{kind::timeout,
                             fmt::format("no WebSocket message from {} within the deadline", s.authority)};
    }
    const auto [ec, size] = *outcome;
    if (ec == ws::error::closed) {
        s.open = false;
        const auto reason = s.plain ? s.plain->reason() : s.tls->reason();
        co_return http_error{kind::closed, fmt::format("{} closed the WebSocket (code {}{}{})", s.authority,
                                                       static_cast<unsigned>(reason.code),
                                                       reason.reason.empty() ? "" : ": ", reason.reason.c_str())};
    }
    if (ec == ws::error::message_too_big) {
        s.shut();
        co_return http_error{kind::too_large,
                             fmt::format("a WebSocket message from {} is over the limit of {} bytes", s.authority,
                                         s.plain ? s.plain->read_message_max() : s.tls->read_message_max())};
    }
    if (ec) {
        const bool was_open = s.open;
        s.shut();
        if (!was_open) co_return s.closed_here();
        co_return http_error{kind::closed, fmt::format("reading from {}: {}", s.authority, ec.message())};
    }
    s.last_received = clock::now();
    websocket_message message;
    message.data = beast::buffers_to_string(s.buffer.data());
    message.text = s.plain ? s.plain->got_text() : s.tls->got_text();
    co_return message;
}

enum class write_kind { text, ping, close };

template <class Stream>
asio::awaitable<std::optional<std::tuple<error_code>>> write_on(Stream& stream, write_kind what,
                                                                const std::string& payload,
                                                                clock::time_point deadline) {
    switch (what) {
        case write_kind::text: {
            stream.text(true);
            auto done = co_await before(stream.async_write(asio::buffer(payload), use_tuple), deadline);
            if (!done) co_return std::nullopt;
            co_return std::tuple<error_code>(std::get<0>(*done));
        }
        case write_kind::ping: {
            const ws::ping_data data(payload.c_str());
            co_return co_await before(stream.async_ping(data, use_tuple), deadline);
        }
        case write_kind::close:
            co_return co_await before(stream.async_close(ws::close_code::normal, use_tuple), deadline);
    }
    co_return std::nullopt;
}

// Waits for this write's turn. False when the deadline passed or the caller was
// cancelled while waiting (the waiter is then off the queue).
asio::awaitable<bool> take_write_turn(websocket::impl& s, clock::time_point deadline) {
    while (s.writing) {
        auto executor = co_await asio::this_coro::executor;
        asio::steady_timer turn(executor, deadline);
        s.write_waiters.push_back(&turn);
        auto [ec] = co_await turn.async_wait(use_tuple);
        std::erase(s.write_waiters, &turn);
        // The timer is cancelled by the write before this one when it finishes; it
        // running out, or the caller's cancellation, ends the wait.
        if (!ec || co_await detail::cancelled()) co_return false;
    }
    s.writing = true;
    co_return true;
}

void give_write_turn(websocket::impl& s) {
    s.writing = false;
    if (!s.write_waiters.empty()) {
        s.write_waiters.front()->cancel();
        s.write_waiters.pop_front();
    }
}

asio::awaitable<http_result<void>> write_frame(websocket::impl& s, write_kind what, std::string payload,
                                               clock::time_point deadline) {
    using kind = http_error::kind;
    const char* verb = what == write_kind::text ? "sending to" : what == write_kind::ping ? "pinging" : "closing";
    if (!s.open) co_return s.closed_here();
    if (!co_await take_write_turn(s, deadline)) {
        if (co_await detail::cancelled()) {
            co_return http_error{kind::cancelled, fmt::format("{} {} cancelled", verb, s.authority)};
        }
        co_return http_error{kind::timeout, fmt::format("{} {}: the deadline passed", verb, s.authority)};
    }
    if (!s.open) {
        give_write_turn(s);
        co_return s.closed_here();
    }
    auto outcome = s.plain ? co_await write_on(*s.plain, what, payload, deadline)
                           : co_await write_on(*s.tls, what, payload, deadline);
    give_write_turn(s);
    if (co_await detail::cancelled()) {
        s.shut();
        co_return http_error{kind::cancelled, fmt::format("{} {} cancelled", verb, s.authority)};
    }
    if (!outcome) {
        s.shut();
        co_return http_error{kind::timeout, fmt::format("{} {}: the deadline passed", verb, s.authority)};
    }
    const auto [ec] = *outcome;
    if (what == write_kind::close) {
        s.shut();  // Beast tore the connection down after the handshake; the socket may linger
        if (ec && ec != ws::error::closed) {
            co_return http_error{kind::closed, fmt::format("closing {}: {}", s.authority, ec.message())};
        }
        co_return boost::system::result<void, http_error>();
    }
    if (ec) {
        s.shut();
        co_return http_error{kind::closed, fmt::format("{} {}: {}", verb, s.authority, ec.message())};
    }
    co_return boost::system::result<void, http_error>();
}

}  // namespace

asio::awaitable<http_result<websocket>> websocket::connect(std::string url, clock::time_point deadline,
                                                           websocket_options options) {
    co_return co_await detail::without_throw_on_cancel(
        connect_websocket(std::move(url), deadline, std::move(options), std::make_shared<impl>()));
}

// Not a coroutine: the default options are built here, outside any co_await expression.
asio::awaitable<http_result<websocket>> websocket::connect(std::string url, clock::time_point deadline) {
    return connect(std::move(url), deadline, websocket_options{});
}

asio::awaitable<http_result<websocket_message>> websocket::read(clock::time_point deadline) {
    auto self = impl_;  // the read outlives a websocket destroyed while it waits
    co_return co_await detail::without_throw_on_cancel(read_message(*self, deadline));
}

asio::awaitable<http_result<void>> websocket::send_text(std::string text, clock::time_point deadline) {
    auto self = impl_;
    co_return co_await detail::without_throw_on_cancel(write_frame(*self, write_kind::text, std::move(text), deadline));
}

asio::awaitable<http_result<void>> websocket::ping(std::string payload, clock::time_point deadline) {
    auto self = impl_;
    if (payload.size() > 125) {
        co_return http_error{http_error::kind::protocol,
                             fmt::format("a ping payload holds at most 125 bytes, not {}", payload.size())};
    }
    co_return co_await detail::without_throw_on_cancel(
        write_frame(*self, write_kind::ping, std::move(payload), deadline));
}

asio::awaitable<http_result<void>> websocket::close(clock::time_point deadline) {
    auto self = impl_;
    co_return co_await detail::without_throw_on_cancel(write_frame(*self, write_kind::close, {}, deadline));
}

}  // namespace fiskai::net
