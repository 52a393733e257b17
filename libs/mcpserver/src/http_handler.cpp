// The streamable HTTP transport on Beast: admission checks, sessions, and the choice
// between a JSON answer and a server-sent event stream.

#include "server_impl.hpp"

#include <fiskai/mcpserver/http_handler.hpp>
#include <fiskai/mcpserver/test_stream.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <variant>

namespace fiskai::mcpserver {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
constexpr auto write_timeout = std::chrono::seconds(30);

std::string supported_versions_text() {
    std::string out;
    for (auto v : supported_protocol_versions) out += (out.empty() ? "" : ", ") + std::string(v);
    return out;
}

// Deadlines on the stream when it has them (tcp_stream); a test stream has none.
template <typename Stream>
void write_deadline(Stream& stream, std::chrono::steady_clock::duration d) {
    if constexpr (requires { stream.expires_after(d); }) stream.expires_after(d);
}
template <typename Stream>
void no_deadline(Stream& stream) {
    if constexpr (requires { stream.expires_never(); }) stream.expires_never();
}

// Writes a complete response; returns whether the connection can be reused.
template <typename Stream>
asio::awaitable<bool> write_response(Stream& stream, http::response<http::string_body> res) {
    res.prepare_payload();
    const bool keep = res.keep_alive();
    write_deadline(stream, write_timeout);
    auto [ec, n] = co_await http::async_write(stream, res, tuple_awaitable);
    no_deadline(stream);
    co_return !ec && keep;
}

http::response<http::string_body> json_response(const http_request& req, http::status status,
                                                const json::object& body) {
    http::response<http::string_body> res{status, req.version()};
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-store");
    res.keep_alive(req.keep_alive());
    res.body() = json::serialize(body);
    return res;
}

// An HTTP-level refusal, with a JSON-RPC error body (no id) saying what was wrong.
http::response<http::string_body> refusal(const http_request& req, http::status status, std::string message,
                                          int code = -32000) {
    return json_response(req, status, make_error(nullptr, code, std::move(message)));
}

http::response<http::string_body> empty_response(const http_request& req, http::status status) {
    http::response<http::string_body> res{status, req.version()};
    res.keep_alive(req.keep_alive());
    return res;
}

std::string header(const http_request& req, std::string_view name) {
    auto it = req.find(name);
    return it == req.end() ? std::string() : std::string(it->value());
}

bool has_header(const http_request& req, std::string_view name) { return req.find(name) != req.end(); }

// The live session a request names, or the refusal to send instead: 400 without the
// header, 404 for an unknown or ended session (the client then starts over).
std::variant<std::shared_ptr<session>, http::response<http::string_body>> lookup_session(server::impl& impl,
                                                                                         const http_request& req) {
    const auto session_id = header(req, "Mcp-Session-Id");
    if (session_id.empty()) {
        return refusal(req, http::status::bad_request,
                       "Bad Request: Mcp-Session-Id header is required; send initialize first to open a session");
    }
    if (auto s = impl.find_session(session_id)) return s;
    return refusal(req, http::status::not_found,
                   "Not Found: unknown or ended session; send initialize to open a new one", -32001);
}

bool priming_wanted(const std::shared_ptr<session>& s) { return s && s->protocol_version >= "2025-11-25"; }

// How long a client should wait before resuming a dropped stream (the SSE `retry` field).
constexpr int retry_ms = 1000;
// Events already written that are still kept, in case the connection dropped before the
// client read them.
constexpr std::size_t retained_after_delivery = 256;
constexpr std::size_t retained_bytes_after_delivery = std::size_t{1} << 20;

// One piece of an event stream: a chunk, or for an HTTP/1.0 client (which has no chunked
// coding) the bytes as they are, the response ending when the connection closes.
template <typename Stream>
asio::awaitable<bool> write_chunk(Stream& stream, const std::string& text, bool chunked) {
    write_deadline(stream, write_timeout);
    auto [ec, n] = chunked ? co_await asio::async_write(stream, http::make_chunk(asio::buffer(text)), tuple_awaitable)
                           : co_await asio::async_write(stream, asio::buffer(text), tuple_awaitable);
    co_return !ec;
}

// The end of an event stream's response: the last chunk; nothing for HTTP/1.0, whose
// response ends with the connection (so it is never kept alive).
template <typename Stream>
asio::awaitable<bool> end_event_stream(Stream& stream, const http_request& req) {
    if (req.version() < 11) co_return false;
    write_deadline(stream, write_timeout);
    auto [ec, n] = co_await asio::async_write(stream, http::make_chunk_last(), tuple_awaitable);
    no_deadline(stream);
    co_return !ec && req.keep_alive();
}

// Notices a client that goes away while its event stream waits for events: without it the
// connection (and its slot under the listener's cap) stays until the next keepalive write
// fails. The socket turning readable with nothing to read is the client's close (as Go's
// server reads it); bytes there (a pipelined request) are left for the next request, and
// the watch ends. Only sockets are watched; the in-memory test stream has none.
struct hangup_watch {
    bool active = true;  // false once the stream is done: the socket may be gone by then
    bool client_gone = false;
};

// A wake with nothing to read is not a close: Asio's reactor can hand a socket's slot the
// readiness queued for the descriptor that held the slot before, so the watch looks again.
template <typename Socket>
void arm_hangup_watch(Socket& socket, std::shared_ptr<hangup_watch> watch, std::shared_ptr<outbound_stream> out) {
    socket.async_wait(asio::socket_base::wait_read, [watch, out, &socket](boost::system::error_code ec) mutable {
        if (ec || !watch->active) return;
        char byte = 0;
        const auto n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) return;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            arm_hangup_watch(socket, std::move(watch), std::move(out));
            return;
        }
        watch->client_gone = true;
        out->wake.cancel();
    });
}

template <typename Stream>
std::shared_ptr<hangup_watch> watch_for_hangup(Stream& stream, std::shared_ptr<outbound_stream> out) {
    auto watch = std::make_shared<hangup_watch>();
    if constexpr (requires { stream.socket().native_handle(); }) {
        arm_hangup_watch(stream.socket(), watch, std::move(out));
    }
    return watch;
}

template <typename Stream>
void end_hangup_watch(Stream& stream, hangup_watch& watch) {
    watch.active = false;
    if constexpr (requires { stream.socket().native_handle(); }) {
        // Only the watch is pending on the socket between a stream's writes.
        beast::error_code ignored;
        stream.socket().cancel(ignored);
    }
}

// Streams `out` as server-sent events on this connection until the stream completes, the
// server interrupts it, or the client goes away. Events written are kept for a while so a
// client can resume with Last-Event-ID. `keepalive` sends a comment on an idle stream.
template <typename Stream>
asio::awaitable<bool> write_event_stream(Stream& stream, const http_request& req, std::shared_ptr<outbound_stream> out,
                                         std::chrono::steady_clock::duration keepalive, std::shared_ptr<session> s,
                                         bool prime) {
    http::response<http::empty_body> res{http::status::ok, req.version()};
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    res.set("X-Accel-Buffering", "no");
    const bool chunked = req.version() >= 11;
    res.keep_alive(chunked && req.keep_alive());
    res.chunked(chunked);
    http::response_serializer<http::empty_body> sr{res};
    // Attached before the first suspension, so no second writer (a resumption) can take the
    // stream while this one writes its head.
    out->writer_attached = true;
    write_deadline(stream, write_timeout);
    if (auto [ec, n] = co_await http::async_write_header(stream, sr, tuple_awaitable); ec) {
        out->writer_lost();
        co_return false;
    }
    // 2025-11-25: an event id and a retry time first, so a client whose connection drops
    // before the answer knows where to resume and when.
    if (prime && !co_await write_chunk(stream, fmt::format("id: {}\nretry: {}\ndata: \n\n", out->event_id(0), retry_ms),
                                       chunked)) {
        out->writer_lost();
        co_return false;
    }
    const auto watch = watch_for_hangup(stream, out);
    for (;;) {
        if (watch->client_gone) {
            end_hangup_watch(stream, *watch);
            out->writer_lost();
            co_return false;
        }
        if (out->interrupt_requested) {
            // End this response cleanly; the stream goes on and the client resumes it.
            end_hangup_watch(stream, *watch);
            out->interrupt_requested = false;
            out->writer_attached = false;
            co_return co_await end_event_stream(stream, req);
        }
        // No reference into the queue is held across a write: the event is formatted into
        // its chunk first, and the next one looked up again after.
        while (const auto* next = out->next_undelivered()) {
            const auto seq = next->seq;
            const auto chunk = fmt::format("id: {}\nevent: message\ndata: {}\n\n", out->event_id(seq), next->data);
            if (!co_await write_chunk(stream, chunk, chunked)) {
                end_hangup_watch(stream, *watch);
                out->writer_lost();
                co_return false;
            }
            out->delivered = std::max(out->delivered, seq);
        }
        out->trim_delivered(retained_after_delivery, retained_bytes_after_delivery);
        if (out->complete() || out->dead) break;
        if (watch->client_gone) continue;
        no_deadline(stream);
        if (keepalive.count() > 0) {
            out->wake.expires_after(keepalive);
        } else {
            out->wake.expires_at(asio::steady_timer::time_point::max());
        }
        auto [wait_ec] = co_await out->wake.async_wait(tuple_awaitable);
        if (!wait_ec && !out->has_pending() && !out->finished && !out->interrupt_requested && !watch->client_gone) {
            // Idle: a comment keeps intermediaries from timing out and reveals a dead client.
            if (s) s->last_seen = std::chrono::steady_clock::now();
            if (!co_await write_chunk(stream, ": keepalive\n\n", chunked)) {
                end_hangup_watch(stream, *watch);
                out->writer_lost();
                co_return false;
            }
        }
    }
    end_hangup_watch(stream, *watch);
    out->writer_attached = false;
    if (s && out->complete()) s->resumable.erase(out->stream_id);
    co_return co_await end_event_stream(stream, req);
}

template <typename Stream>
asio::awaitable<bool> handle_request_message(server::impl& impl, std::shared_ptr<server::impl> keep_impl,
                                             std::shared_ptr<session> s, rpc_request request, const http_request& req,
                                             Stream& stream) {
    auto out = s->new_stream(impl.executor, impl.retention);
    impl.open_streams.push_back(out);
    auto call = std::make_shared<in_flight_call>();
    const auto key = id_key(request.id);
    s->in_flight[key] = call;
    const json::value id = request.id;

    // The dispatch runs on its own: a client that disconnects does not cancel it (only
    // notifications/cancelled does); its messages wait for a resumption, within bounds.
    asio::co_spawn(impl.executor, impl.dispatch_request(s, std::move(request), out),
                   asio::bind_cancellation_slot(call->signal.slot(), [keep_impl, s, key, out, call, id](
                                                                         std::exception_ptr e,
                                                                         std::optional<json::object> response) {
                       if (auto it = s->in_flight.find(key); it != s->in_flight.end() && it->second == call) {
                           s->in_flight.erase(it);
                       }
                       if (e) {
                           response = make_error(id, rpc_error::internal_error, "Internal error");
                           try {
                               std::rethrow_exception(e);
                           } catch (const std::exception& ex) {
                               keep_impl->log(log_level::error, fmt::format("request {} failed: {}", key, ex.what()));
                           } catch (...) {}
                       }
                       if (call->cancelled) {
                           out->finish();  // a cancelled request gets no response
                       } else {
                           out->finish(std::move(response));
                       }
                   }));

    const auto watch = watch_for_hangup(stream, out);
    while (!out->has_pending() && !out->finished && !out->interrupt_requested && !watch->client_gone) {
        out->wake.expires_at(asio::steady_timer::time_point::max());
        co_await out->wake.async_wait(tuple_awaitable);
    }
    end_hangup_watch(stream, *watch);
    if (watch->client_gone) {
        // Gone before anything was sent: the client holds no event id to resume from, so
        // nothing of this stream can be read again. The call itself goes on.
        s->resumable.erase(out->stream_id);
        out->abandon();
        co_return false;
    }
    // An interrupted call needs an event stream even if it has sent nothing yet: the
    // client resumes from the priming event's id.
    if (out->finished && !out->sent_anything && !out->interrupt_requested) {
        s->resumable.erase(out->stream_id);
        if (out->empty()) {
            // Cancelled before anything was sent: an event stream with no events.
            co_return co_await write_event_stream(stream, req, out, {}, nullptr, false);
        }
        http::response<http::string_body> res{http::status::ok, req.version()};
        res.set(http::field::content_type, "application/json");
        res.set(http::field::cache_control, "no-store");
        res.keep_alive(req.keep_alive());
        res.body() = out->take_only();
        co_return co_await write_response(stream, std::move(res));
    }
    // Something goes out before the result (progress, a log line, an elicitation
    // request): answer with an event stream.
    co_return co_await write_event_stream(stream, req, out, impl.options.keepalive_interval, s, priming_wanted(s));
}

template <typename Stream>
asio::awaitable<bool> handle_post(server::impl& impl, std::shared_ptr<server::impl> keep_impl, const http_request& req,
                                  Stream& stream) {
    if (!is_json_content_type(req[http::field::content_type])) {
        co_return co_await write_response(stream,
                                          refusal(req, http::status::unsupported_media_type,
                                                  "Unsupported Media Type: Content-Type must be application/json"));
    }
    if (!accepts_json_and_sse(req[http::field::accept])) {
        co_return co_await write_response(
            stream, refusal(req, http::status::not_acceptable,
                            "Not Acceptable: Client must accept both application/json and text/event-stream"));
    }
    if (req.body().size() > impl.options.max_body_bytes) {
        co_return co_await write_response(
            stream, refusal(req, http::status::payload_too_large,
                            fmt::format("Payload Too Large: the body has {} bytes; the limit is {}", req.body().size(),
                                        impl.options.max_body_bytes)));
    }

    auto message = parse_message(req.body());
    if (auto* bad = std::get_if<rpc_invalid>(&message)) {
        co_return co_await write_response(
            stream, json_response(req, http::status::bad_request, make_error(bad->id, bad->code, bad->message)));
    }

    // initialize opens a session; everything else must name a live one.
    if (auto* request = std::get_if<rpc_request>(&message); request && request->method == "initialize") {
        // Bad params open no session: the client gets the reason and no Mcp-Session-Id.
        if (auto problem = check_initialize_params(request->params)) {
            co_return co_await write_response(
                stream,
                json_response(req, http::status::ok, make_error(request->id, rpc_error::invalid_params, *problem)));
        }
        std::string error;
        auto s = impl.create_session(error);
        if (!s) {
            co_return co_await write_response(
                stream, refusal(req, http::status::service_unavailable, "Service Unavailable: " + error));
        }
        auto body = make_result(request->id, impl.initialize(*s, request->params));
        auto res = json_response(req, http::status::ok, body);
        res.set("Mcp-Session-Id", s->id);
        co_return co_await write_response(stream, std::move(res));
    }

    auto found = lookup_session(impl, req);
    if (auto* refused = std::get_if<1>(&found)) co_return co_await write_response(stream, std::move(*refused));
    auto s = std::get<0>(std::move(found));

    if (auto* n = std::get_if<rpc_notification>(&message)) {
        impl.handle_notification(s, *n);
        co_return co_await write_response(stream, empty_response(req, http::status::accepted));
    }
    if (auto* r = std::get_if<rpc_response>(&message)) {
        impl.handle_response(s, std::move(*r));
        co_return co_await write_response(stream, empty_response(req, http::status::accepted));
    }
    auto& request = std::get<rpc_request>(message);
    if (s->in_flight.contains(id_key(request.id))) {
        co_return co_await write_response(
            stream, json_response(req, http::status::ok,
                                  make_error(request.id, rpc_error::invalid_request,
                                             "Invalid Request: a request with this id is still running")));
    }
    co_return co_await handle_request_message(impl, std::move(keep_impl), std::move(s), std::move(request), req,
                                              stream);
}

template <typename Stream>
asio::awaitable<bool> handle_get(server::impl& impl, const http_request& req, Stream& stream) {
    if (!accepts_sse(req[http::field::accept])) {
        co_return co_await write_response(
            stream, refusal(req, http::status::not_acceptable, "Not Acceptable: Client must accept text/event-stream"));
    }
    auto found = lookup_session(impl, req);
    if (auto* refused = std::get_if<1>(&found)) co_return co_await write_response(stream, std::move(*refused));
    auto s = std::get<0>(std::move(found));
    // Last-Event-ID `<stream>-<seq>` resumes that stream after the event the client saw.
    if (const auto last = parse_event_id(header(req, "Last-Event-ID"))) {
        auto it = s->resumable.find(last->stream);
        if (it != s->resumable.end() && !it->second->dead && !it->second->writer_attached) {
            auto resumed = it->second;
            resumed->delivered = std::min(last->seq, resumed->delivered);
            co_return co_await write_event_stream(stream, req, resumed, impl.options.keepalive_interval, s, false);
        }
    }
    // One listening stream per session: a new GET replaces the old one.
    if (s->listening) s->listening->finish();
    auto out = s->new_stream(impl.executor, impl.retention);
    s->listening = out;
    impl.open_streams.push_back(out);
    co_return co_await write_event_stream(stream, req, out, impl.options.keepalive_interval, s, priming_wanted(s));
}

template <typename Stream>
asio::awaitable<bool> handle_delete(server::impl& impl, const http_request& req, Stream& stream) {
    auto found = lookup_session(impl, req);
    if (auto* refused = std::get_if<1>(&found)) co_return co_await write_response(stream, std::move(*refused));
    auto s = std::get<0>(std::move(found));
    impl.end_session(s);
    co_return co_await write_response(stream, empty_response(req, http::status::no_content));
}

}  // namespace

template <typename Stream>
asio::awaitable<bool> handle_http(server& srv, http_request req, Stream& stream) {
    auto keep_impl = srv.state();
    auto& impl = *keep_impl;
    try {
        // Forget streams that have ended, so the list does not grow with every request.
        std::erase_if(impl.open_streams, [](const std::weak_ptr<outbound_stream>& w) { return w.expired(); });

        if (impl.stopping) {
            auto res =
                refusal(req, http::status::service_unavailable, "Service Unavailable: the server is shutting down");
            res.keep_alive(false);
            co_return co_await write_response(stream, std::move(res));
        }
        if (has_header(req, "Origin") && !origin_allowed(header(req, "Origin"), impl.options.allowed_origins)) {
            co_return co_await write_response(
                stream, refusal(req, http::status::forbidden,
                                fmt::format("Forbidden: Origin \"{}\" is not allowed; an operator can allow it with "
                                            "expose.agent.mcp.allowed_origins",
                                            header(req, "Origin"))));
        }
        // Exactly one Host (RFC 9112 section 3.2; HTTP/1.0 may send none): with two, the
        // check below would see one name and a proxy might route by the other.
        if (const auto hosts = req.count(http::field::host); hosts > 1 || (hosts == 0 && req.version() >= 11)) {
            auto res =
                refusal(req, http::status::bad_request,
                        fmt::format("Bad Request: a request needs exactly one Host header; this one has {}", hosts));
            res.keep_alive(false);
            co_return co_await write_response(stream, std::move(res));
        }
        if (impl.options.require_loopback_host && !host_is_loopback(req[http::field::host])) {
            co_return co_await write_response(
                stream, refusal(req, http::status::forbidden,
                                fmt::format("Forbidden: invalid Host header \"{}\"; this server only answers to "
                                            "localhost, 127.0.0.1 or [::1]",
                                            std::string(req[http::field::host]))));
        }
        const auto method = req.method();
        if (method != http::verb::post && method != http::verb::get && method != http::verb::delete_) {
            auto res = refusal(req, http::status::method_not_allowed,
                               "Method Not Allowed: the MCP endpoint takes POST, GET and DELETE");
            res.set(http::field::allow, "GET, POST, DELETE");
            co_return co_await write_response(stream, std::move(res));
        }
        if (has_header(req, "MCP-Protocol-Version")) {
            const auto v = header(req, "MCP-Protocol-Version");
            if (!is_supported_protocol_version(v)) {
                co_return co_await write_response(
                    stream,
                    refusal(req, http::status::bad_request,
                            fmt::format("Bad Request: Unsupported protocol version: {} (supported versions: {})", v,
                                        supported_versions_text())));
            }
        }
        impl.expire_idle_sessions();
        if (method == http::verb::post) co_return co_await handle_post(impl, keep_impl, req, stream);
        if (method == http::verb::get) co_return co_await handle_get(impl, req, stream);
        co_return co_await handle_delete(impl, req, stream);
    } catch (const std::exception& e) {
        impl.log(log_level::error, fmt::format("HTTP request failed: {}", e.what()));
        co_return false;
    }
}

// The stream types the library is built for (see http_handler.hpp and test_stream.hpp).
template asio::awaitable<bool> handle_http<beast::tcp_stream>(server&, http_request, beast::tcp_stream&);
template asio::awaitable<bool> handle_http<beast::test::stream>(server&, http_request, beast::test::stream&);

}  // namespace fiskai::mcpserver
