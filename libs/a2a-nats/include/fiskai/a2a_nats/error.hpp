#pragma once
// Codes for the failures of the NATS binding, so a caller can tell them apart without
// reading the text. A failed request keeps its a2a code (agent_unavailable,
// transport_failure: the transport contract the a2a client branches on) and carries one of
// these as its cause (a2a::error::cause): no responders and a passed deadline are both
// agent_unavailable, but only the first means nobody serves the agent. The exceptions the
// binding throws carry one as code(). A Boost.System category, so a code converts to
// std::error_code as well.

#include <boost/system/error_code.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace fiskai::a2a_nats {

enum class errc {
    no_responders = 1,  // no subscriber for the subject: nobody serves that agent
    timed_out,          // the request was delivered (or queued) but no reply came in time
    not_connected,      // no connection was provisioned, or it is closed
    invalid_name,       // a service, endpoint or agent name, or a subject, that NATS cannot carry
    subscribe_failed,   // nats.c refused a subscription
    publish_failed,     // nats.c refused to publish a request or a reply
    service_stopped,    // the micro service was stopped
    receive_failed,     // the reply could not be received (the transport went away)
};

[[nodiscard]] const boost::system::error_category& a2a_nats_category() noexcept;
[[nodiscard]] boost::system::error_code make_error_code(errc e) noexcept;

// What the binding throws: what() is the message to show, code() the errc. An
// std::invalid_argument, as the binding threw before it had codes.
class error : public std::invalid_argument {
public:
    error(errc code, const std::string& message) : std::invalid_argument(message), code_(make_error_code(code)) {}
    [[nodiscard]] boost::system::error_code code() const noexcept { return code_; }

private:
    boost::system::error_code code_;
};

}  // namespace fiskai::a2a_nats

template <>
struct boost::system::is_error_code_enum<fiskai::a2a_nats::errc> : std::true_type {};
template <>
struct std::is_error_code_enum<fiskai::a2a_nats::errc> : std::true_type {};
