#pragma once
// The calling side: discover a peer, invoke one of its tools. Outgoing messages are
// validated against the schema the receiver will use, so a message the peer would refuse
// is refused here, before anything is sent; replies go through the same arrival pipeline
// as requests do on the server.
//
// Failure is in two kinds, kept apart. A call the peer ran and failed, or refused because
// it has no such tool, is a normal reply with `is_error` set. An error means the call could
// not be made or answered: the outgoing message was invalid, nobody answered, the peer
// refused the message itself (a service error), or its reply was invalid or of the wrong
// type.

#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/transport.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::a2a {

struct client_options {
    // This agent's identity: the sender of every request.
    std::string identity;
    // How long a call waits for its reply unless the call says otherwise; zero or less
    // means the default.
    std::chrono::steady_clock::duration timeout = std::chrono::seconds(30);
};

class client {
public:
    client(transport& t, client_options options);

    // ---- the sans-I/O halves ----

    // A stamped, encoded and validated discovery request for `agent`.
    [[nodiscard]] result<std::string> prepare_discovery(std::string_view agent) const;
    // The same for a tool call. `input` is the raw JSON of the arguments; empty or exactly
    // `null` sends none. Anything else is kept as given (compacted), so a non-object
    // input fails validation here.
    [[nodiscard]] result<std::string> prepare_tool_call(std::string_view agent, std::string_view tool,
                                                        std::string_view input) const;
    // A reply checked as the arrival pipeline checks it, then for the expected protocol.
    [[nodiscard]] result<discovery_reply> accept_discovery(const reply& r) const;
    [[nodiscard]] result<tool_reply> accept_tool_reply(const reply& r) const;

    // ---- the exchanges ----

    [[nodiscard]] boost::asio::awaitable<result<discovery_reply>> discover(
        std::string agent, std::optional<std::chrono::steady_clock::duration> timeout = std::nullopt);

    [[nodiscard]] boost::asio::awaitable<result<tool_reply>> invoke(
        std::string agent, std::string tool, std::string input = {},
        std::optional<std::chrono::steady_clock::duration> timeout = std::nullopt);

private:
    [[nodiscard]] std::chrono::steady_clock::duration timeout_or_default(
        std::optional<std::chrono::steady_clock::duration> timeout) const noexcept;

    transport& transport_;
    client_options options_;
};

}  // namespace fiskai::a2a
