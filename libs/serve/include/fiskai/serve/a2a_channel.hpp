#pragma once
// The a2a channel (serve.md §6): task requests on `choria.fisk-ai.request.<identity>`
// (a plain queue subscription, queue group = the identity, D12; or the `request` endpoint
// of the tool service's micro service when serve_tools is on) become works; each work
// answers its caller with the reply set: the ack (sequence 1), events while streaming,
// questions when elicitation is on, keepalives after 10 s of silence, and exactly one
// terminal. A task's cancel and elicit subjects (keyed by the request's own id) are
// subscribed before the ack and closed after the terminal.
//
// The protocol decisions live in a2a_rules.hpp; this is the I/O around them. Everything
// runs on the executor given (one thread); the connection must outlive the channel and
// every work it handed out.

#include <fiskai/gocompat/log.hpp>
#include <fiskai/serve/serve.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::conns {
class connection;
}  // namespace fiskai::conns
namespace fiskai::a2a_nats::micro {
class service;
}  // namespace fiskai::a2a_nats::micro
namespace fiskai::runstate {
class store;
}  // namespace fiskai::runstate

namespace fiskai::serve {

struct a2a_channel_options {
    std::string identity;
    // expose.agent.a2a.prompts
    bool elicitation = false;
    std::chrono::nanoseconds question_timeout = std::chrono::minutes(5);
    std::chrono::nanoseconds accept_window = std::chrono::seconds(60);
    // The tools a run has (tool hints naming others are left out of the prompt).
    std::vector<std::string> tool_names;
    // Written into thinking blocks.
    std::string provider;
    gocompat::logger log;
    // serve_tools on: the micro service serving the tools (a2a_tool_service::micro_service());
    // the intake is then its `request` endpoint. Unset: a plain queue subscription (D12).
    std::shared_ptr<a2a_nats::micro::service> request_service;

    // D3 fixes these; tests shorten them.
    std::chrono::nanoseconds keepalive_interval = std::chrono::seconds(10);
    std::chrono::nanoseconds question_timeout_floor = std::chrono::seconds(30);
};

class a2a_channel final : public channel, public releasable {
public:
    // Opens the intake (throws a2a_nats::error with the subscribe failure). `sessions`
    // decides follow-ups (Amendment 11); null means no session exists.
    a2a_channel(conns::connection& nats, boost::asio::any_io_executor executor,
                std::shared_ptr<runstate::store> sessions, a2a_channel_options options);
    ~a2a_channel() override;
    a2a_channel(const a2a_channel&) = delete;
    a2a_channel& operator=(const a2a_channel&) = delete;

    [[nodiscard]] std::string_view name() const override { return "a2a"; }
    boost::asio::awaitable<std::unique_ptr<work>> next() override;
    // §6.8: the shutdown gate first (intake refuses), then the request subscription is
    // drained (pending requests refused, Amendment 16), then next() returns nullptr.
    void release() override;

    // The banner line: `a2a: requests on choria.fisk-ai.request.<id> (queue group <id>), elicitation on|off`.
    [[nodiscard]] std::string description() const;

    // For tests and the banner.
    [[nodiscard]] std::size_t pending_requests() const noexcept;  // held by nats.c, not yet taken
    [[nodiscard]] std::size_t held_approvals() const noexcept;    // late approval answers held here

    struct impl;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::serve
