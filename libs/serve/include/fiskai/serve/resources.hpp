#pragma once
// What a served worker builds once and shares with every run (serve.md §5.7): the NATS
// connections, the session and memory stores (bound, never created), the LLM provider, the
// tools (application, remote, MCP client) and the agent runtime over them. Built strictly
// in that order; each failure throws std::runtime_error whose what() is the exact startup
// text. close() releases them in the opposite order of dependence.

#include <fiskai/agent/agent.hpp>
#include <fiskai/config/config.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/gocompat/log.hpp>
#include <fiskai/toolkit/application.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fiskai::mcpclient {
class session;
}  // namespace fiskai::mcpclient

namespace fiskai::serve {

struct resource_options {
    // The file the configuration came from (the "no tools" text names it).
    std::string config_path;
    // How to introspect the wrapped application (filters, secrets); the app fills it from
    // the config. An empty application_path loads nothing.
    toolkit::application_options application;
    // Start a loopback nats-server child and carry the channels on it (`serve
    // --embedded-broker`, and `run`'s hosted mode). Stores and remote tools keep the
    // configured nats_context.
    std::optional<conns::broker_options> broker;
    // Whether a channel or service needs channel_nats. Unset: derived from the config
    // (expose.agent.a2a.prompts or serve_tools).
    std::optional<bool> channel_needs_nats;
    // The run-store base handed to the session and memory backends; empty: their defaults.
    std::string store_dir;
    // Connection events, provider retries, MCP servers' stderr.
    gocompat::logger log;
};

// What the banner says about the tools and stores (§5.8).
struct resource_summary {
    std::string nats_context;  // the context name ("embedded" for the broker, "" when none)
    std::string nats_url;      // the URL the channel connection is connected to
    std::string sessions_backend;
    std::string sessions_location;
    std::string memory_backend;  // "" when off
    std::string memory_location;
    std::size_t application_tools = 0;
    std::size_t remote_tools = 0;
    struct mcp_server {
        std::string name;
        std::string transport;  // stdio | http
        std::size_t tools = 0;
    };
    std::vector<mcp_server> mcp_servers;
};

class resources;

// Builds everything, strictly and in order (§5.7). Nothing in storage is created. Throws
// std::runtime_error with the exact startup text; what was built so far is released first.
[[nodiscard]] boost::asio::awaitable<std::shared_ptr<resources>> build_resources(const config::config& cfg,
                                                                                 resource_options options);

class resources {
public:
    struct impl;
    explicit resources(std::unique_ptr<impl> p) noexcept;
    ~resources();
    resources(const resources&) = delete;
    resources& operator=(const resources&) = delete;

    // The runtime every run shares (the server borrows it).
    [[nodiscard]] std::shared_ptr<const agent::runtime> runtime() const noexcept;
    // The connection the a2a channel and the tool service use; null when none is needed.
    [[nodiscard]] conns::connection* channel_nats() const noexcept;
    // The connection the JetStream stores, the queue and remote tools use; null when none is
    // needed. The same connection as channel_nats() without a broker (Amendment 15).
    [[nodiscard]] conns::connection* store_nats() const noexcept;
    // The loopback broker, when one was started.
    [[nodiscard]] const conns::embedded_broker* broker() const noexcept;
    // The blocking pool (nats.c JetStream calls, fdatasync).
    [[nodiscard]] boost::asio::any_io_executor blocking() const;
    [[nodiscard]] const resource_summary& summary() const noexcept;
    // The MCP-client sessions, one per mcp_servers entry, in config order.
    [[nodiscard]] const std::vector<std::shared_ptr<mcpclient::session>>& mcp_sessions() const noexcept;

    // MCP sessions first, then the stores, then store_nats.drain(5s), channel_nats.drain(5s),
    // then the broker; the blocking pool is joined last. Idempotent. Runs must have ended.
    boost::asio::awaitable<void> close();

private:
    friend boost::asio::awaitable<std::shared_ptr<resources>> build_resources(const config::config& cfg,
                                                                              resource_options options);
    std::unique_ptr<impl> impl_;
};

// The "no tools" and name collision checks over the assembled tool list plus the per-run
// built-ins the config enables (HITL, memory); the first failure's text, or nothing.
[[nodiscard]] std::optional<std::string> check_tool_names(const config::config& cfg, const toolkit::tool_list& tools,
                                                          const std::string& config_path);

}  // namespace fiskai::serve
