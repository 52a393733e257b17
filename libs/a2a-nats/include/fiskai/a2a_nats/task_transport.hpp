#pragma once
// The NATS side of the task flow, worker end (serve.md §6.1, §6.4, §6.5, §6.8; D12).
//
// Intake: `choria.fisk-ai.request.<identity>` as a plain queue subscription (queue group
// = the identity), or as the `request` endpoint of the micro service that serves the
// tools when serve_tools is on (D12). A request leaves nats.c's bounded pending queue only when
// next_request() asks for one, so a worker whose slots are all busy leaves requests in
// the transport. drain_intake() withdraws interest with a drain and hands every request
// nats.c still holds to a refuser (Amendment 16) until the subscription is invalid.
//
// Per task: open_task() subscribes the cancel and elicit subjects keyed by the admitted
// request's own id (Amendment 10) and flushes, so that a cancel published right after the
// ack is already routed here. publish() sends to a reply subject captured at intake (the
// ack through the same call: on a plain subscription the single-reply path is a publish
// to the request's reply subject).
//
// Threading: nats.c callbacks and the intake thread only copy and post to the executor,
// which must not run handlers concurrently. The connection must outlive the transport.

#include <fiskai/a2a/error.hpp>
#include <fiskai/a2a/messages.hpp>
#include <fiskai/a2a/task_flow.hpp>
#include <fiskai/a2a_nats/micro.hpp>
#include <fiskai/conns/connection.hpp>
#include <fiskai/gocompat/log.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace fiskai::a2a_nats {

// One message as it arrived: copied off the nats.c thread.
struct inbound {
    std::string subject;
    std::string reply;  // the caller's inbox; empty when none was given
    std::string data;
};

// The caller-to-worker arrival pipeline for one task (§6.5), free of I/O: cap, protocol
// id, schema, decode (the validator), then the kind this subject carries, the task id,
// the sender, and the numbering. A message it refuses is dropped (plain publishes get no
// reply); the why is for a DEBUG or WARN log.
class inbound_filter {
public:
    inbound_filter(std::string task, std::string sender) : task_(std::move(task)), sender_(std::move(sender)) {}

    struct verdict {
        std::optional<a2a::message> accepted;  // set: act on it
        std::string why;                       // when dropped: why
        std::string warning;                   // accepted after a gap: the WARN text
    };
    // `route` is cancel (carries `cancel`) or elicit (carries `answer` and `keepalive`).
    [[nodiscard]] verdict receive(a2a::task_route route, std::string_view body);

private:
    std::string task_;
    std::string sender_;
    a2a::inbound_sequencer sequence_;
};

namespace detail {
struct task_transport_state;
struct task_subscriptions_state;
}  // namespace detail

// A task's cancel and elicit subscriptions; closed (unsubscribed) on destruction.
class task_subscriptions {
public:
    ~task_subscriptions();
    task_subscriptions(const task_subscriptions&) = delete;
    task_subscriptions& operator=(const task_subscriptions&) = delete;
    void close() noexcept;

private:
    friend class task_transport;
    task_subscriptions() = default;
    std::shared_ptr<detail::task_subscriptions_state> state_;
};

class task_transport {
public:
    // Called on the executor for each message on a task's subjects.
    using task_handler = std::function<void(a2a::task_route route, std::string body)>;
    // Called on the executor for each request refused while the intake drains.
    using refuser = std::function<void(inbound request)>;

    // Throws a2a_nats::error (not_connected) when the connection has no handle.
    task_transport(conns::connection& nats, boost::asio::any_io_executor executor, gocompat::logger log = {});
    ~task_transport();
    task_transport(const task_transport&) = delete;
    task_transport& operator=(const task_transport&) = delete;

    // Subscribes `choria.fisk-ai.request.<identity>` in queue group `<identity>` and waits
    // one round trip so the server routes it here on return. Throws a2a_nats::error
    // (invalid_name, subscribe_failed).
    void open_intake(std::string_view identity);
    // The same intake as the `request` endpoint of `service` (serve_tools on, serve.md
    // §6.1): `$SRV` INFO and STATS list it beside the tool endpoints. Requests are handed
    // over (micro::request::hand_over) since the task flow answers with a reply set;
    // drain_intake() closes the endpoint and refuses what it still held the same way.
    void open_intake(std::shared_ptr<micro::service> service, std::string_view identity);
    // The subject the intake listens on (empty before open_intake()).
    [[nodiscard]] const std::string& intake_subject() const noexcept;

    // The next request; nullopt once the intake is draining or closed. One call at a time.
    boost::asio::awaitable<std::optional<inbound>> next_request();
    // Messages nats.c holds for the intake that next_request() has not taken yet.
    [[nodiscard]] std::size_t pending() const noexcept;

    // Amendment 16: withdraws interest with a drain; every request nats.c still holds (and
    // one taken by a next_request() nobody awaits any more) goes to `refuse`, on the
    // executor, until the subscription is invalid. A waiting next_request() gets nullopt.
    // Idempotent; the first refuser is kept.
    void drain_intake(refuser refuse);

    // The cancel and elicit subscriptions of the task whose request id is `id`, flushed
    // (at most `flush_timeout`). Failure: a2a::errc::transport_failure with nats.c's text.
    boost::asio::awaitable<a2a::result<std::unique_ptr<task_subscriptions>>> open_task(
        std::string identity, std::string id, task_handler on_message,
        std::chrono::milliseconds flush_timeout = std::chrono::seconds(5));

    // Publishes `data` to `subject` (a captured inbox). False when nats.c refused it.
    bool publish(std::string_view subject, std::string_view data);
    // A micro-style error reply (`Nats-Service-Error`, `Nats-Service-Error-Code` headers)
    // for a request that cannot be parsed: no ack, no reply set.
    bool publish_error(std::string_view subject, int code, std::string_view description);

private:
    std::shared_ptr<detail::task_transport_state> state_;
};

}  // namespace fiskai::a2a_nats
