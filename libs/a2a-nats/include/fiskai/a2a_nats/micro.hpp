#pragma once
// A service in the NATS micro protocol (ADR-32, `$SRV`), written on nats.c 3.4.1's core
// calls since that version has no micro API. Reusable: the a2a transport registers its
// `discovery` and `tool` endpoints here, later bindings (task flow) add theirs.
//
// What makes it a micro service to `nats micro ls/info/stats` and to the JS and Go
// clients: answers to `$SRV.PING|INFO|STATS`, `$SRV.<VERB>.<name>` and
// `$SRV.<VERB>.<name>.<id>` (plain subscriptions, so every instance answers), queue-group
// endpoints, and errors carried in the `Nats-Service-Error` and `Nats-Service-Error-Code`
// headers.
//
// Threading: nats.c delivers on its own threads; those callbacks only copy the message
// and post to the executor, which must not run handlers concurrently (an io_context run
// by one thread, or a strand). Endpoints are pull-based: a message leaves nats.c's
// bounded pending queue only when next() asks for it, so a consumer that does not ask
// exerts back-pressure without holding anything in memory.

#include <fiskai/a2a_nats/error.hpp>
#include <fiskai/conns/connection.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace fiskai::a2a_nats::micro {

inline constexpr std::string_view api_prefix = "$SRV";
inline constexpr std::string_view error_header = "Nats-Service-Error";
inline constexpr std::string_view error_code_header = "Nats-Service-Error-Code";
inline constexpr std::string_view ping_response_type = "io.nats.micro.v1.ping_response";
inline constexpr std::string_view info_response_type = "io.nats.micro.v1.info_response";
inline constexpr std::string_view stats_response_type = "io.nats.micro.v1.stats_response";

using metadata = std::map<std::string, std::string>;

struct service_config {
    std::string name;  // the kind of service, shared by its instances: ^[A-Za-z0-9_-]+$
    std::string version = "0.0.0";
    std::string description;
    metadata meta;
    std::string queue_group = "q";  // what endpoints inherit
};

struct endpoint_config {
    std::string name;
    std::string subject;
    std::optional<std::string> queue_group;  // unset: the service's
    metadata meta;
};

// One endpoint's figures, as STATS reports them.
struct endpoint_stats {
    std::uint64_t num_requests = 0;
    std::uint64_t num_errors = 0;
    std::string last_error;
    std::chrono::nanoseconds processing_time{0};
};

namespace detail {
struct service_state;
struct endpoint_state;
}  // namespace detail

// One request taken from an endpoint. Answered exactly once: the first respond or
// respond_error sends, later ones are ignored. Destroyed unanswered, it answers
// `500 no reply was produced`, so the caller is not left to its deadline.
class request {
public:
    // An empty request, already answered (a moved-from state).
    request() noexcept = default;
    request(request&&) noexcept;
    request& operator=(request&&) noexcept;
    request(const request&) = delete;
    request& operator=(const request&) = delete;
    ~request();

    [[nodiscard]] const std::string& subject() const noexcept { return subject_; }
    [[nodiscard]] const std::string& data() const noexcept { return data_; }
    [[nodiscard]] const std::string& reply_to() const noexcept { return reply_; }
    [[nodiscard]] bool answered() const noexcept { return !endpoint_; }

    // Returns false when the reply could not be published (connection closed, service
    // stopped); it is not retried.
    bool respond(std::string_view data);
    // An error reply: `data` (usually empty) with the two error headers. Line breaks in the
    // description become spaces: it travels in a header.
    bool respond_error(int code, std::string_view description, std::string_view data = {});
    // The caller answers reply_to() itself (a reply set of several messages, the a2a task
    // flow): counted in STATS as a request, nothing is sent here and the destructor no
    // longer answers.
    void hand_over() noexcept;

private:
    friend struct detail::endpoint_state;
    request(std::shared_ptr<detail::endpoint_state> ep, std::string subject, std::string reply, std::string data);
    bool finish(std::optional<std::pair<int, std::string>> error, std::string_view data);

    std::shared_ptr<detail::endpoint_state> endpoint_;
    std::string subject_;
    std::string reply_;
    std::string data_;
    std::chrono::steady_clock::time_point received_;
};

// A queue-group subscription read one message at a time.
class endpoint {
public:
    ~endpoint();  // closes
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    [[nodiscard]] const endpoint_config& config() const noexcept;
    [[nodiscard]] endpoint_stats stats() const;
    // Messages nats.c holds for this endpoint that next() has not taken yet.
    [[nodiscard]] std::size_t pending() const noexcept;

    // The next request. Only now is a message taken from nats.c's pending queue. Returns
    // nullopt once the endpoint is closed. One call at a time.
    [[nodiscard]] boost::asio::awaitable<std::optional<request>> next();

    // Unsubscribes: the endpoint leaves INFO and STATS, messages still pending in nats.c are
    // dropped (their senders time out or, with no other instance, get no-responders), and a
    // pending next() completes with nullopt. Requests already taken can still be answered.
    // Idempotent; any thread.
    void close() noexcept;
    // close(), but each request still held when the drain took effect goes to `refuse`, on
    // the service's executor, instead of the 503 reply (the a2a intake answers with its
    // own refusal, Amendment 16). A request `refuse` leaves unanswered still gets the 503.
    void close(std::function<void(request)> refuse) noexcept;

private:
    friend class service;
    explicit endpoint(std::shared_ptr<detail::endpoint_state> st) noexcept;
    std::shared_ptr<detail::endpoint_state> state_;
    std::thread puller_;  // takes messages from nats.c on demand; joined by the destructor
};

class service {
public:
    // Subscribes the `$SRV` verbs (and waits one round trip, at most 2 s). Throws
    // a2a_nats::error: invalid_name, not_connected, or subscribe_failed when the
    // subscriptions fail. `conn` must outlive the service and every request taken from it.
    service(conns::connection& conn, boost::asio::any_io_executor executor, service_config config);
    ~service();  // stops
    service(const service&) = delete;
    service& operator=(const service&) = delete;

    // Subscribes an endpoint and waits one round trip (at most 2 s) so that the server
    // routes its subject here when this returns. Throws a2a_nats::error: invalid_name for a
    // bad name or subject, service_stopped, subscribe_failed when the subscription fails.
    [[nodiscard]] std::unique_ptr<endpoint> add_endpoint(endpoint_config config);

    [[nodiscard]] const std::string& id() const noexcept;
    [[nodiscard]] const service_config& config() const noexcept;
    // endpoint::pending() of the open endpoint called `name`, or 0.
    [[nodiscard]] std::size_t pending(std::string_view endpoint_name) const;
    // The three answers as they go on the wire.
    [[nodiscard]] std::string ping_json() const;
    [[nodiscard]] std::string info_json() const;
    [[nodiscard]] std::string stats_json() const;

    // Unsubscribes the verbs and closes every endpoint; later replies are dropped.
    // Idempotent.
    void stop() noexcept;

private:
    std::shared_ptr<detail::service_state> state_;
};

// The verb subjects an instance answers: `$SRV.<VERB>`, `$SRV.<VERB>.<name>`,
// `$SRV.<VERB>.<name>.<id>`.
[[nodiscard]] std::string verb_subject(std::string_view verb, std::string_view name = {}, std::string_view id = {});

}  // namespace fiskai::a2a_nats::micro
