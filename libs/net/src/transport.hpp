#pragma once
// Private to libs/net: dialling one connection (resolve, TCP connect, TLS handshake with
// peer and host-name verification) under a connect budget and the call's deadline, and
// the texts of its failures. The HTTP client and the WebSocket client share it.

#include <fiskai/net/http_client.hpp>
#include <fiskai/net/url.hpp>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace fiskai::net::detail {

using clock = std::chrono::steady_clock;
using tls_stream = boost::asio::ssl::stream<boost::beast::tcp_stream>;

// A TLS client context: default verify paths (SSL_CERT_FILE, SSL_CERT_DIR), plus
// `ca_file` when given, and peer verification. Throws std::runtime_error naming a bad file.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const std::string& ca_file);

// A client's TLS context, built at its first TLS dial: loading the system's CA bundle
// decodes every certificate in it (tens of milliseconds, a quarter of a billion
// instructions), which a client that only speaks plain HTTP, to a local model say, should
// not pay at start. Extra CA certificates (`ca_file`) are loaded at once, so that a bad
// file is reported at start. Safe to share between threads.
class tls_context_source {
public:
    // Throws std::runtime_error naming a bad `ca_file`.
    explicit tls_context_source(std::string ca_file);
    // The context, built on the first call; the error when it cannot be built.
    http_result<std::shared_ptr<boost::asio::ssl::context>> get();
    // Whether the context has been built (for tests).
    bool built();

private:
    std::mutex mutex_;
    std::string ca_file_;
    std::shared_ptr<boost::asio::ssl::context> context_;
};

// One dialled connection: plain TCP or TLS over TCP (exactly one is set).
struct transport {
    std::optional<boost::beast::tcp_stream> plain;
    std::optional<tls_stream> tls;

    boost::beast::tcp_stream& lowest() { return tls ? tls->next_layer() : *plain; }
    // Closes the socket at once (no TLS close_notify: the peer learns it from the FIN).
    void close();
};

// Connects to `url`'s host and port within min(now + connect_timeout, deadline) and, for a
// TLS scheme, completes the handshake in the same budget. The stream's timer is left
// disarmed. Cancelling the awaiting coroutine fails with kind cancelled.
boost::asio::awaitable<http_result<transport>> dial(const parsed_url& url, tls_context_source& tls,
                                                    clock::duration connect_timeout, clock::time_point deadline);

// True when the awaiting coroutine's cancellation slot has fired.
boost::asio::awaitable<bool> cancelled();

// Asio throws at the next co_await of a coroutine whose slot fired; the client instead
// reports kind cancelled, so it turns that off while it runs and restores the caller's
// setting before it returns.
template <class Work>
boost::asio::awaitable<typename Work::value_type> without_throw_on_cancel(Work work) {
    const bool previous = co_await boost::asio::this_coro::throw_if_cancelled();
    co_await boost::asio::this_coro::throw_if_cancelled(false);
    auto result = co_await std::move(work);
    co_await boost::asio::this_coro::throw_if_cancelled(previous);
    co_return result;
}

}  // namespace fiskai::net::detail
