#pragma once
// A listener owned by the library: accepts connections, reads requests with body and
// header limits, serves the MCP endpoint at one path, and shuts down gracefully.

#include <fiskai/mcpserver/server.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace fiskai::mcpserver {

struct listener_options {
    std::string path = "/mcp";
    std::size_t max_header_bytes = 16 * 1024;
    // How long an idle keep-alive connection may wait for its next request.
    std::chrono::steady_clock::duration idle_timeout = std::chrono::minutes(2);
    // How long the head of a request (request line and headers) may take once its first
    // byte has arrived; shorter than idle_timeout so a client trickling a header byte by
    // byte (slowloris) cannot hold a connection. Answered 408 and closed.
    std::chrono::steady_clock::duration header_timeout = std::chrono::seconds(10);
    // How long the body may take after the head.
    std::chrono::steady_clock::duration body_timeout = std::chrono::minutes(2);
    // Connections served at once. Past it a new connection is answered 503 at once and
    // closed, so one client cannot take every descriptor (config: expose.agent.mcp.max_connections).
    std::size_t max_connections = 256;
    // A failed accept (out of descriptors, say) is retried after a delay growing from
    // the first to the last value, so the loop never spins a core.
    std::chrono::steady_clock::duration accept_backoff_min = std::chrono::milliseconds(5);
    std::chrono::steady_clock::duration accept_backoff_max = std::chrono::seconds(1);
    // Graceful shutdown budget, after which remaining connections are closed.
    std::chrono::steady_clock::duration shutdown_grace = std::chrono::seconds(5);
};

class listener {
public:
    // Binds and listens at once (throws system_error on failure), so the bound port is
    // known before run() starts. Port 0 picks a free port.
    listener(server& srv, const boost::asio::ip::tcp::endpoint& endpoint, listener_options options = {});
    ~listener();

    [[nodiscard]] boost::asio::ip::tcp::endpoint local_endpoint() const;
    // Connections being served now (not counting those refused over the cap).
    [[nodiscard]] std::size_t connection_count() const noexcept;
    // Accepts that failed since the start (diagnostics and tests).
    [[nodiscard]] std::size_t failed_accepts() const noexcept;

    // Accepts until stop(); completes once every connection has finished or the grace
    // period has passed.
    boost::asio::awaitable<void> run();
    // Stops accepting, shuts the server down (cancelling calls and streams), and lets
    // in-flight responses finish within the grace period. Idempotent.
    void stop();
    // stop() without the grace period: every connection is closed at once, so run()
    // completes promptly. For a second interrupt. Idempotent.
    void cancel();

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::mcpserver
