#pragma once
// The seam between the engine and a binding (NATS today, a second binding later). A
// transport moves bytes and keeps the two routes apart; it never decodes a body. All
// validation and back-pressure live in the engine (server.hpp, client.hpp).

#include <fiskai/a2a/error.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fiskai::a2a {

// The two request-reply paths. A binding gives each its own address so that a permission
// set can allow discovery without allowing tool execution. Routing only: the engine takes
// a message's meaning from its `protocol`, never from the route it came on.
enum class route { discovery, tool };

[[nodiscard]] std::string_view to_string(route r) noexcept;

// The NATS subject of a route for an identity: `choria.fisk-ai.discovery.<identity>` and
// `choria.fisk-ai.tool.<identity>`.
inline constexpr std::string_view subject_prefix = "choria.fisk-ai";
[[nodiscard]] std::string subject(route r, std::string_view identity);

// A refusal as NATS micro carries one: no body, a code and a one-line description in the
// `Nats-Service-Error-Code` and `Nats-Service-Error` headers. Not an a2a message.
struct service_error {
    int code = 0;  // 400: the inbound message was refused; 500: no reply could be built
    std::string description;

    friend bool operator==(const service_error&, const service_error&) = default;
};

// What one request gets back: an a2a message, or a service error (and then no body).
struct reply {
    std::string body;
    std::optional<service_error> error;

    [[nodiscard]] static reply message(std::string body) { return {std::move(body), std::nullopt}; }
    [[nodiscard]] static reply refusal(int code, std::string description) {
        return {{}, service_error{code, std::move(description)}};
    }
    friend bool operator==(const reply&, const reply&) = default;
};

// The answer owed to one incoming request, sent exactly once. A second call is ignored.
// Destroyed unanswered, it sends `500 no reply was produced`, so a caller never waits out
// its deadline because a handler failed. The reply goes where the transport says (a NATS
// reply inbox), never to an address taken from the body.
class responder {
public:
    using function = std::function<void(reply)>;

    responder() = default;
    explicit responder(function send) : send_(std::move(send)) {}
    responder(responder&& other) noexcept : send_(std::exchange(other.send_, nullptr)) {}
    responder& operator=(responder&& other) noexcept;
    responder(const responder&) = delete;
    responder& operator=(const responder&) = delete;
    ~responder();

    void operator()(reply r);
    // Whether the answer is still owed.
    [[nodiscard]] explicit operator bool() const noexcept { return static_cast<bool>(send_); }

private:
    function send_;
};

// One request as a binding hands it to the engine.
struct incoming {
    std::string body;
    responder respond;
};

// The serving side of one route for one identity: a sequential intake. The engine asks for
// the next request only when it can take it; while it waits for a concurrency slot it does
// not ask, so the pressure reaches the transport instead of piling requests up in memory.
class intake {
public:
    virtual ~intake() = default;
    // The next request, or nullopt once the intake is closed.
    virtual boost::asio::awaitable<std::optional<incoming>> next() = 0;
    // Stops the intake; a pending next() completes with nullopt. Idempotent, and safe to
    // call from any thread.
    virtual void close() = 0;
};

class transport {
public:
    virtual ~transport() = default;

    // Client side: sends `body` on `r` to the agent `agent` and waits up to `timeout` for its
    // one reply. Errors: agent_unavailable (nobody serves that agent, or the deadline
    // passed), transport_failure (anything else).
    virtual boost::asio::awaitable<result<reply>> request(route r, std::string agent, std::string body,
                                                          std::chrono::steady_clock::duration timeout) = 0;

    // Server side: starts receiving the requests for `identity` on `r`. Several intakes for
    // the same identity share the load (a NATS queue group), each request going to one.
    virtual boost::asio::awaitable<result<std::unique_ptr<intake>>> listen(route r, std::string identity) = 0;
};

}  // namespace fiskai::a2a
