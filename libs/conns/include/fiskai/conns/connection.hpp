#pragma once
// NATS connections: dialling one from a context with fisk-ai's connection name and
// reconnect policy, and the provider that says who owns it. nats.c stays behind this
// header; a binding that needs the C handle asks for native_handle().

#include <fiskai/conns/context.hpp>
#include <fiskai/gocompat/log.hpp>
#include <fiskai/conns/error.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

extern "C" {
typedef struct __natsConnection natsConnection;
typedef struct __natsSubscription natsSubscription;
typedef struct __kvWatcher kvWatcher;
}

namespace fiskai::conns {

// A dial that failed: `connecting to NATS context "<ctx>": <nats error>`. code() is
// connection_refused, timed_out, not_authorized, tls_failed, invalid_setting or
// connect_failed.
class connect_error : public error {
public:
    using error::error;
};

// nats.c's text for a status (a natsStatus), with the calling thread's last error detail
// when it says more. Shared by every nats.c user of the suite.
[[nodiscard]] std::string nats_status_text(int status);

// The name a connection announces to the server: `fisk-ai <identity>`.
[[nodiscard]] std::string connection_name(std::string_view identity);

// How a connection behaves. The defaults are the Go client's, which the original used
// unchanged (config-remote-conns C.4): a lost connection is retried 60 times, 2 s apart;
// the first dial is not retried.
struct connect_options {
    std::string name;  // the connection name; see connection_name()
    bool allow_reconnect = true;
    int max_reconnect = 60;
    std::chrono::milliseconds reconnect_wait{2000};
    std::chrono::milliseconds reconnect_jitter{100};
    std::chrono::milliseconds reconnect_jitter_tls{1000};
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds ping_interval{std::chrono::minutes(2)};
    int max_pings_out = 2;
    int reconnect_buffer_bytes = 8 * 1024 * 1024;
    // Write each publish at once instead of leaving it to nats.c's flusher thread, which
    // adds up to a millisecond per hop. Request-reply is latency-bound; the Go client's
    // flusher has no such delay.
    bool send_asap = true;
    // Deliver every asynchronous subscription's messages on nats.c's shared delivery
    // thread instead of a thread per subscription (nats.c's default). A served task opens
    // two subscriptions and closes them at its terminal: without this, each task starts and
    // ends two threads. Only for a connection none of whose callbacks ever blocks (this
    // library's only copy and post): one callback that waits for another subscription's
    // message would wait forever, as both run on the one thread. The apps turn it on.
    bool shared_delivery = false;
    // Connection events are logged on this executor (nats.c calls back on its own
    // threads; the callbacks only post). Without one, events are not reported.
    std::optional<boost::asio::any_io_executor> executor;
    // Where connection events go (lost, reconnected, closed, asynchronous errors). An
    // empty logger drops them.
    gocompat::logger log;
};

// One core NATS connection. Thread-safe as nats.c is: publishing and subscribing from any
// thread. Destroying it closes it.
class connection {
public:
    // Dials the servers of `ctx` with its credentials and TLS settings. Blocks for at most
    // the connect timeout per server. Throws connect_error, or context_error for a setting
    // this client cannot honour (tls_first, socks_proxy, nsc, `op://` credentials).
    [[nodiscard]] static std::unique_ptr<connection> dial(const nats_context& ctx, const connect_options& options);
    // The same for a plain URL list and no credentials (an embedded broker, a test).
    [[nodiscard]] static std::unique_ptr<connection> dial_url(std::string_view urls, const connect_options& options);

    ~connection();
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    // The nats.c handle, valid until close(); for bindings.
    [[nodiscard]] natsConnection* native_handle() const noexcept;
    // The context it was dialled from (empty name: the default).
    [[nodiscard]] const nats_context& context() const noexcept;
    // A unique reply subject under the context's inbox prefix (`_INBOX.` by default).
    [[nodiscard]] std::string new_inbox() const;
    // A fresh NATS unique identifier (22 base62 characters).
    [[nodiscard]] static std::string new_nuid();
    // The URL of the server it is connected to, or empty.
    [[nodiscard]] std::string connected_url() const;
    [[nodiscard]] bool is_connected() const noexcept;
    [[nodiscard]] bool is_closed() const noexcept;
    // The largest payload the server accepts, or 0 when not connected.
    [[nodiscard]] std::int64_t max_payload() const noexcept;

    // Drains: subscriptions stop, what was published is flushed, then the connection closes.
    // Blocks until closed or `timeout`; returns whether it closed in time (it is closed
    // regardless when this returns).
    bool drain(std::chrono::milliseconds timeout);
    // Closes after one flush round trip (at most 250 ms, none when not connected), so a
    // message in flight to a subscription already retired is read whole rather than cut
    // off (see connection.cpp). Idempotent.
    void close() noexcept;

private:
    struct impl;
    explicit connection(std::unique_ptr<impl> p) noexcept;
    std::unique_ptr<impl> impl_;
};

// Who holds a connection, and whether it closes it. An owning provider closes the
// connection it dialled; a borrowing one never closes the connection it was given.
// Consumers (the a2a transport, later the JetStream stores) borrow from a provider and
// never dial themselves.
class provider {
public:
    // Nothing provisioned: nats() is null.
    provider() noexcept = default;
    // Borrows `c`, which must outlive the provider; close() leaves it open.
    explicit provider(connection& c) noexcept : conn_(&c) {}
    // Dials context `context_name` (empty: the selected one, else the default) as
    // `fisk-ai <identity>`. Throws context_error, connect_error
    // (`connecting to NATS context "<ctx>": ...`).
    [[nodiscard]] static provider dial(std::string_view context_name, std::string_view identity,
                                       connect_options options = {},
                                       const context_environment& env = context_environment::from_process());
    // Takes ownership of a connection dialled elsewhere.
    [[nodiscard]] static provider owning(std::unique_ptr<connection> c) noexcept;

    provider(provider&& other) noexcept;
    provider& operator=(provider&& other) noexcept;
    provider(const provider&) = delete;
    provider& operator=(const provider&) = delete;
    ~provider();

    // The connection, or null when none was provisioned (consumers must then refuse loudly).
    [[nodiscard]] connection* nats() const noexcept { return conn_; }
    [[nodiscard]] bool owns() const noexcept { return static_cast<bool>(owned_); }
    // Closes the connection only if this provider dialled it; forgets it either way.
    // Idempotent.
    void close() noexcept;

private:
    connection* conn_ = nullptr;
    std::unique_ptr<connection> owned_;
};

// Ends a subscription the way every subscription this project opens ends: unsubscribed at
// once (no more deliveries), destroyed a second later (at most a quarter more) by a
// background thread. Debian 12's nats.c (3.4.1) takes a message's subscription out of the
// connection's table and then locks it without holding a reference (fixed in nats.c 3.6.0,
// nats-io/nats.c#638): a subscription destroyed at that moment is freed under the reader
// thread, which then aborts the whole process. The reader is past that point within
// microseconds; the second is the margin.
// nats.c's subscriptions hold their connection, so a connection closed meanwhile is fine.
void retire_subscription(natsSubscription* sub) noexcept;
// The same for a KV watcher (nats.c's, which owns a subscription): stopped at once,
// destroyed a second later.
void retire_kv_watcher(kvWatcher* watcher) noexcept;

}  // namespace fiskai::conns
