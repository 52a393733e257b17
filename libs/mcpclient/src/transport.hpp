#pragma once
// How a session's JSON-RPC messages travel: a stdio child or streamable HTTP. Private.

#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/system/result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace fiskai::mcpclient {

struct rpc_failure {
    enum class kind {
        timeout,          // no answer by the deadline
        cancelled,        // the awaiting coroutine was cancelled
        dead,             // the session is not running (why says what happened)
        session_expired,  // HTTP 404 on a session id: initialize again
        failed,           // this exchange failed (HTTP status, connection), the session lives on
    };
    kind what = kind::failed;
    std::string why;
};
using rpc_result = boost::system::result<boost::json::value, rpc_failure>;
using clock = std::chrono::steady_clock;

// One JSON-RPC message from a server at most this long, on either transport.
inline constexpr std::size_t message_cap = std::size_t{64} << 20;

// Warnings about a server's malformed messages: the first few are logged, then one line
// says the rest are not, so a server that sends nothing else cannot flood the log.
class malformed_messages {
public:
    static constexpr long long logged = 5;
    // Whether this one is logged; the first one past the limit logs that the rest are not.
    bool admit(const gocompat::logger& log, const std::string& server) {
        if (++seen_ <= logged) return true;
        if (seen_ == logged + 1) {
            log.warn("mcp client: more messages that are not JSON-RPC; no longer logging them", {{"server", server}});
        }
        return false;
    }

private:
    long long seen_ = 0;
};

class transport {
public:
    virtual ~transport() = default;
    // Sends a request and waits for the response with that id (the whole message).
    virtual boost::asio::awaitable<rpc_result> request(boost::json::object message, std::int64_t id,
                                                       clock::time_point deadline) = 0;
    virtual boost::asio::awaitable<std::optional<rpc_failure>> notify(boost::json::object message,
                                                                      clock::time_point deadline) = 0;
    // Fire and forget (notifications/cancelled from a cancelled call): never waits.
    virtual void post_notification(boost::json::object message) = 0;
    // After a successful initialize (HTTP sends MCP-Protocol-Version from then on).
    virtual void set_protocol_version(std::string version) = 0;
    // HTTP: forget the session id before initializing again.
    virtual void reset_session() {}
    virtual boost::asio::awaitable<void> close() = 0;
    // Declares the session dead (an HTTP session that cannot be re-established): pending
    // and later requests fail with `why`, on_death fires.
    virtual void fail(std::string why) = 0;
    [[nodiscard]] virtual std::optional<std::string> dead() const = 0;
    [[nodiscard]] virtual const char* name() const noexcept = 0;
    [[nodiscard]] virtual int child_pid() const noexcept { return -1; }
    // Set by the session; called once when the transport dies while open.
    std::function<void(const std::string&)> on_death;
};

// Starts the child; the error is the startup text.
boost::system::result<std::shared_ptr<transport>, std::string> start_stdio(boost::asio::any_io_executor ex,
                                                                           const config::mcp_server& server,
                                                                           gocompat::logger log);
boost::system::result<std::shared_ptr<transport>, std::string> start_http(boost::asio::any_io_executor ex,
                                                                          const config::mcp_server& server,
                                                                          gocompat::logger log);

}  // namespace fiskai::mcpclient
