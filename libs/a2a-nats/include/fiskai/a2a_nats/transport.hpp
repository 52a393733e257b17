#pragma once
// The NATS binding of the a2a transport (a2a.md section 8).
//
// Serving: listen(route, identity) subscribes `choria.fisk-ai.<route>.<identity>` in the
// queue group `<identity>` as an endpoint (`discovery` or `tool`) of a micro service named
// after the identity (version 0.0.0, `fisk-ai a2a tool server`), which also answers the
// `$SRV` verbs. The intake hands a request to the engine only when the engine asks for
// the next one; until then it stays in nats.c's bounded pending queue, so a server whose
// slots are all busy stops taking requests rather than queueing them in memory. Each
// request gets exactly one reply; a refusal travels in the micro error headers.
//
// Calling: request() publishes with a reply subject under one shared inbox subscription
// and waits for the reply or the deadline. No responders and a passed deadline are
// a2a::errc::agent_unavailable, told apart by the error's cause (a2a_nats::errc::
// no_responders, timed_out); an error reply is handed back as a service_error.
//
// Threading: everything runs on the executor given, which must not run handlers
// concurrently (an io_context run by one thread, or a strand). nats.c's callbacks only
// copy and post to it. The connection must outlive the transport and every intake.

#include <fiskai/a2a/transport.hpp>
#include <fiskai/a2a_nats/error.hpp>
#include <fiskai/a2a_nats/micro.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/gocompat/log.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

namespace fiskai::a2a_nats {

inline constexpr std::string_view service_version = "0.0.0";
inline constexpr std::string_view service_description = "fisk-ai a2a tool server";

struct transport_options {
    // A request's deadline when the caller gives none (zero or less).
    std::chrono::steady_clock::duration timeout = std::chrono::seconds(30);
    // Where the binding's own records go; an empty logger drops them.
    gocompat::logger log;
};

namespace detail {
struct transport_state;
}  // namespace detail

class nats_transport final : public a2a::transport {
public:
    // Borrows the provider's connection. Throws a2a_nats::error, not_connected
    // (`a2a NATS transport requires a NATS connection but none was provisioned`), when the
    // provider has none.
    nats_transport(const conns::provider& nats, boost::asio::any_io_executor executor, transport_options options = {});
    nats_transport(conns::connection& nats, boost::asio::any_io_executor executor, transport_options options = {});
    ~nats_transport() override;
    nats_transport(const nats_transport&) = delete;
    nats_transport& operator=(const nats_transport&) = delete;

    boost::asio::awaitable<a2a::result<a2a::reply>> request(a2a::route r, std::string agent, std::string body,
                                                            std::chrono::steady_clock::duration timeout) override;
    boost::asio::awaitable<a2a::result<std::unique_ptr<a2a::intake>>> listen(a2a::route r,
                                                                             std::string identity) override;

    // The micro service serving `identity`, while one of its intakes is open.
    [[nodiscard]] std::shared_ptr<micro::service> service(std::string_view identity) const;
    // The micro service serving `identity`, created when none is open. Holding it lets
    // another binding add an endpoint (the a2a channel's `request`) to the same service
    // that listen() later adds `discovery` and `tool` to. Throws a2a_nats::error
    // (invalid_name, not_connected, subscribe_failed).
    [[nodiscard]] std::shared_ptr<micro::service> open_service(const std::string& identity);

private:
    std::shared_ptr<detail::transport_state> state_;
};

}  // namespace fiskai::a2a_nats
