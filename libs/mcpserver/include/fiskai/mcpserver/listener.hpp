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

    // Accepts until stop(); completes once every connection has finished or the grace
    // period has passed.
    boost::asio::awaitable<void> run();
    // Stops accepting, shuts the server down (cancelling calls and streams), and lets
    // in-flight responses finish within the grace period. Idempotent.
    void stop();

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::mcpserver
