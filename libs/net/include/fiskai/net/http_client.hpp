#pragma once
// One HTTP/1.1 client for everything the served agent calls over HTTP: the LLM providers,
// the MCP client's streamable HTTP, the Slack Web API. Beast and OpenSSL stay behind the
// pimpl; this header is all a caller sees.
//
// A client is bound to one executor (the app's io_context, run by one thread) and is
// used from coroutines on it. Connections are kept alive per origin and reused. Every
// exchange is bounded by the caller's deadline; cancelling the awaiting coroutine (its
// cancellation slot) closes the socket, so a cancelled call never leaves a half-read
// response in the pool.

#include <fiskai/net/sse.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fiskai::net {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct http_request {
    std::string method = "POST";
    // Absolute http:// or https:// URL. The URL policy (check_url) is the caller's to apply.
    std::string url;
    header_list headers;
    std::string body;
};

struct http_response {
    int status = 0;
    header_list headers;
    std::string body;

    // The first header of that name, compared case-insensitively.
    [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;
};

struct http_error {
    enum class kind {
        invalid_url,  // the URL does not parse, or its scheme is not http/https
        connect,      // resolve or connect failed, or the connect deadline passed
        tls,          // handshake failed (the certificate did not verify, the name did not match)
        timeout,      // the call's deadline passed
        cancelled,    // the awaiting coroutine was cancelled
        closed,       // the peer closed or reset the connection before a whole response
        too_large,    // the response body is over the body cap
        protocol,     // not HTTP/1.1, or a malformed response
    };
    kind what = kind::protocol;
    // A one-line text naming the host and the cause, e.g.
    // `connect to 127.0.0.1:8080: Connection refused`.
    std::string message;
};

template <class T>
using http_result = boost::system::result<T, http_error>;

struct client_options {
    std::chrono::steady_clock::duration connect_timeout = std::chrono::seconds(10);
    std::size_t body_limit = std::size_t{64} << 20;
    std::size_t idle_per_origin = 4;
    std::chrono::steady_clock::duration idle_timeout = std::chrono::seconds(60);
    // user-agent sent when the request carries none.
    std::string user_agent = "fisk-ai";
    // A PEM file of CA certificates trusted in addition to the default verify paths (a
    // private CA, or a test's). Empty: the default paths only. A file that does not load
    // makes the constructor throw, naming it.
    std::string ca_file;
};

// The body of a response read as it arrives (server-sent events, or any long body),
// after its head. It owns its connection: dropping it closes the connection unless the
// body was read to its end, when a keep-alive connection returns to the pool.
class response_stream {
public:
    struct state;
    explicit response_stream(std::unique_ptr<state> state);
    ~response_stream();
    response_stream(response_stream&&) noexcept;
    response_stream& operator=(response_stream&&) noexcept;

    [[nodiscard]] int status() const;
    [[nodiscard]] const header_list& headers() const;
    // The first header of that name, compared case-insensitively.
    [[nodiscard]] std::optional<std::string_view> header(std::string_view name) const;

    // The next piece of the body as it arrived; nothing at the end of the body.
    [[nodiscard]] boost::asio::awaitable<http_result<std::optional<std::string>>> read_some(
        std::chrono::steady_clock::time_point deadline);

    // The next server-sent event; nothing at the end of the stream (a last block without
    // its blank line is dropped, as the standard says). An event over the client's
    // body_limit fails with too_large. Do not mix with read_some on one stream.
    [[nodiscard]] boost::asio::awaitable<http_result<std::optional<sse_event>>> next_event(
        std::chrono::steady_clock::time_point deadline);

    // Closes the connection now (a reader waiting on it fails).
    void close();

private:
    std::unique_ptr<state> state_;
};

class http_client {
public:
    // The TLS context trusts the system's default verify paths (SSL_CERT_FILE and
    // SSL_CERT_DIR honoured), verifies the peer and its host name, and sends SNI.
    http_client(boost::asio::any_io_executor executor, client_options options);
    // An overload, not a default argument: GCC 12 corrupts a defaulted class-type argument
    // built inside a co_await expression (`http_client c(co_await this_coro::executor);`).
    explicit http_client(boost::asio::any_io_executor executor);
    ~http_client();
    http_client(const http_client&) = delete;
    http_client& operator=(const http_client&) = delete;

    // One exchange: connect (or reuse an idle connection of the origin), write, read the
    // whole response. A reused connection that the peer closed before answering is retried
    // once on a fresh connection, as every keep-alive client does; nothing else is retried
    // here (retry policy belongs to the caller).
    [[nodiscard]] boost::asio::awaitable<http_result<http_response>> send(
        http_request request, std::chrono::steady_clock::time_point deadline);

    // Like send, but returns once the response head is read; the body is read from the
    // stream. The deadline bounds connecting, writing and reading the head; each read
    // from the stream has its own.
    [[nodiscard]] boost::asio::awaitable<http_result<response_stream>> open_stream(
        http_request request, std::chrono::steady_clock::time_point deadline);

    // Closes every idle connection.
    void close_idle();

    [[nodiscard]] boost::asio::any_io_executor get_executor() const;

    // Idle connections held now, over all origins (for tests and diagnostics).
    [[nodiscard]] std::size_t idle_count() const;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::net
