#pragma once
// One outbound MCP session (serve.md §11): a stdio child or a streamable HTTP endpoint,
// initialized and listed once, then shared by every run of the worker. A run never opens
// or closes it; the owner (the serve resources) opens it at start and closes it last.

#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/log.hpp>
#include <fiskai/mcpclient/protocol.hpp>
#include <fiskai/toolkit/outcome.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::mcpclient {

class transport;
struct rpc_failure;

struct session_options {
    // clientInfo.version in initialize.
    std::string client_version = "0.0.0";
    gocompat::logger log;
};

class session : public std::enable_shared_from_this<session> {
public:
    // Starts the transport (spawns the child, or nothing for HTTP), then initialize,
    // notifications/initialized and tools/list, all within the server's startup_timeout.
    // The error is the whole startup refusal text, naming the server.
    static boost::asio::awaitable<text_result<std::shared_ptr<session>>> open(config::mcp_server server,
                                                                              session_options options);

    session(config::mcp_server server, session_options options, std::shared_ptr<transport> t);
    // Without close() first, kills the stdio child's group (no DELETE over HTTP).
    ~session();
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    [[nodiscard]] const config::mcp_server& server() const noexcept { return server_; }
    // "stdio" or "http" (the banner's word).
    [[nodiscard]] std::string_view transport_name() const noexcept;
    [[nodiscard]] const server_identity& identity() const noexcept { return identity_; }
    // The server's tools that passed include/exclude and make valid local names, in its order.
    [[nodiscard]] const std::vector<listed_tool>& tools() const noexcept { return tools_; }

    // tools/call of the server's tool `tool`; zero timeout: none. Never throws for what
    // the server or the transport did: a dead session, a timeout, a JSON-RPC error, all
    // come back as failures with their texts. Cancelling the awaiting coroutine sends
    // notifications/cancelled.
    boost::asio::awaitable<toolkit::outcome> call(std::string tool, boost::json::value arguments,
                                                  std::chrono::nanoseconds timeout);

    // Why the session is not running (child exited, HTTP session lost), or nothing.
    [[nodiscard]] std::optional<std::string> fault() const;
    // Called once, on the session's executor, when the session dies while open (not when
    // it is closed); at once if it has already died.
    void on_fault(std::function<void(const std::string& why)> handler);

    // stdio: close stdin, 2 s, SIGTERM to the group, 2 s, SIGKILL, reap. HTTP: DELETE the
    // session. Idempotent.
    boost::asio::awaitable<void> close();

    // The stdio child's pid (its process group id), -1 for HTTP. For tests and logs.
    [[nodiscard]] int child_pid() const noexcept;

private:
    boost::asio::awaitable<boost::system::result<boost::json::value, rpc_failure>> exchange(
        boost::json::object message, std::int64_t id, std::chrono::steady_clock::time_point deadline);
    boost::asio::awaitable<std::optional<std::string>> handshake(std::chrono::steady_clock::time_point deadline);
    boost::asio::awaitable<std::optional<std::string>> list_tools(std::chrono::steady_clock::time_point deadline);

    config::mcp_server server_;
    session_options options_;
    std::shared_ptr<transport> transport_;
    server_identity identity_;
    std::vector<listed_tool> tools_;
    std::int64_t next_id_ = 1;
    bool closed_ = false;
};

}  // namespace fiskai::mcpclient
