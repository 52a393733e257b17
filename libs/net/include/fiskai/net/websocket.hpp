#pragma once
// A WebSocket client (RFC 6455) for long-lived connections such as Slack's Socket Mode:
// ws:// or wss:// with the same TLS checks as http_client (default verify paths, peer and
// host-name verification, SNI). Beast and OpenSSL stay behind the pimpl.
//
// One read and any number of writes (send_text, ping, close) may be outstanding at once;
// writes are queued in call order. A deadline that passes or a cancelled awaiting
// coroutine closes the connection: a WebSocket has no way to abandon half a frame.

#include <fiskai/net/http_client.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace fiskai::net {

struct websocket_options {
    std::chrono::steady_clock::duration connect_timeout = std::chrono::seconds(10);
    // A message larger than this fails read with kind too_large (and closes the connection).
    std::size_t message_limit = std::size_t{16} << 20;
    // Extra CA certificates, as client_options::ca_file.
    std::string ca_file;
    // Headers added to the upgrade request (e.g. Authorization).
    header_list headers;
    std::string user_agent = "fisk-ai";
};

struct websocket_message {
    std::string data;
    bool text = true;  // false for a binary message
};

class websocket {
public:
    // Dials, completes TLS for wss://, and performs the upgrade handshake, all before the
    // deadline (the dial also within connect_timeout). A URL that is not ws:// or wss://
    // fails with kind invalid_url; an upgrade the server declines with kind protocol.
    // The connection lives on the awaiting coroutine's executor.
    [[nodiscard]] static boost::asio::awaitable<http_result<websocket>> connect(
        std::string url, std::chrono::steady_clock::time_point deadline, websocket_options options);
    // With default options. An overload, not a default argument: GCC 12 corrupts a
    // defaulted class-type argument of a coroutine called inside a co_await expression.
    [[nodiscard]] static boost::asio::awaitable<http_result<websocket>> connect(
        std::string url, std::chrono::steady_clock::time_point deadline);

    ~websocket();  // closes the socket (no close handshake: call close() for one)
    websocket(websocket&&) noexcept;
    websocket& operator=(websocket&&) noexcept;

    // The next message, pings answered on the way. A close from the peer fails with kind
    // closed naming its code and reason.
    [[nodiscard]] boost::asio::awaitable<http_result<websocket_message>> read(
        std::chrono::steady_clock::time_point deadline);

    [[nodiscard]] boost::asio::awaitable<http_result<void>> send_text(std::string text,
                                                                      std::chrono::steady_clock::time_point deadline);

    [[nodiscard]] boost::asio::awaitable<http_result<void>> ping(std::string payload,
                                                                 std::chrono::steady_clock::time_point deadline);

    // The close handshake (code 1000), then the socket is closed.
    [[nodiscard]] boost::asio::awaitable<http_result<void>> close(std::chrono::steady_clock::time_point deadline);

    // When the last frame of any kind arrived (a message, a ping, a pong): a socket that
    // answers no ping for a while is dead even though it is open.
    [[nodiscard]] std::chrono::steady_clock::time_point last_received() const;
    // Closes the socket now, no handshake; a read waiting on it fails.
    void abort();

    // False once the connection failed or was closed.
    [[nodiscard]] bool is_open() const;

    struct impl;
    explicit websocket(std::shared_ptr<impl> state);

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::net
