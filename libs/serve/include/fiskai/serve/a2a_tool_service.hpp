#pragma once
// The a2a tool service (serve.md §5.1, §6.1, D12, Amendments 7, 15, 16): the runtime's
// tools served to peer agents over a2a on channel_nats, the way `fisk-ai-a2a serve` serves
// them: `discovery` and `tool` endpoints of a micro service named after the identity
// (a2a::server over a2a_nats::nats_transport; calls run with the default-deny prompter).
//
// The micro service opens at construction so that the a2a channel can add its `request`
// endpoint to it (a2a_channel_options::request_service) before run(): `$SRV` INFO and
// STATS then list all three. stop() closes `discovery` and `tool` only; the `request`
// endpoint belongs to the channel, which drains it (Amendment 16).

#include <fiskai/a2a/server.hpp>
#include <fiskai/serve/serve.hpp>
#include <fiskai/toolkit/tool.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace fiskai::conns {
class connection;
}  // namespace fiskai::conns
namespace fiskai::a2a_nats::micro {
class service;
}  // namespace fiskai::a2a_nats::micro

namespace fiskai::serve {

class a2a_tool_service final : public service {
public:
    // Selects the tools (a2a::server's rules) and opens the micro service. Throws
    // std::runtime_error when no tool is left to serve, a2a_nats::error when the micro
    // service cannot subscribe. `nats` must outlive the service and the channel using
    // micro_service().
    a2a_tool_service(conns::connection& nats, boost::asio::any_io_executor executor, toolkit::tool_list tools,
                     a2a::server_options options);
    ~a2a_tool_service() override;
    a2a_tool_service(const a2a_tool_service&) = delete;
    a2a_tool_service& operator=(const a2a_tool_service&) = delete;

    [[nodiscard]] std::string_view name() const override { return "a2a tools"; }
    // Serves discovery and tool calls until stop(); returns once every admitted call has
    // been answered.
    boost::asio::awaitable<void> run() override;
    // Closes `discovery` and `tool`; running calls finish and are answered. Idempotent.
    void stop() override;
    // stop(), and running calls are cancelled (still answered). For a second interrupt.
    void cancel();

    // The micro service the channel's `request` endpoint joins.
    [[nodiscard]] std::shared_ptr<a2a_nats::micro::service> micro_service() const;
    // The tools served (after selection).
    [[nodiscard]] std::size_t tools() const noexcept;
    // The banner line (serve::a2a_tools_service_line).
    [[nodiscard]] std::string description() const;

    struct impl;

private:
    std::unique_ptr<impl> impl_;
};

}  // namespace fiskai::serve
