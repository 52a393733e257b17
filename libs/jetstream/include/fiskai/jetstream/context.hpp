#pragma once
// The suite's one user of nats.c's JetStream and KV API. Every call that may block (all of
// nats.c's JetStream calls are synchronous requests) runs on a blocking pool and resumes
// the awaiting coroutine on its executor (offload.hpp), so the io thread never waits on the
// network. Each call carries its own timeout; a cancelled awaiter abandons the result and
// the call still finishes.
//
// Nothing here provisions storage: streams, consumers and buckets are the operator's.

#include <fiskai/jetstream/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fiskai::conns {
class connection;
}  // namespace fiskai::conns

namespace fiskai::jetstream {

using std::chrono::milliseconds;
using clock_time = std::chrono::system_clock::time_point;

// Message headers in wire order; a name may repeat.
using headers = std::vector<std::pair<std::string, std::string>>;

// The first value of header `name` (case-sensitive, as NATS headers are), if any.
[[nodiscard]] std::optional<std::string> find_header(const headers& h, std::string_view name);

// A stored message read back (last by subject, by sequence, an ordered read).
struct message {
    std::string subject;
    std::string data;
    jetstream::headers headers;
    std::uint64_t sequence = 0;  // stream sequence
    clock_time time{};           // when the stream stored it

    [[nodiscard]] std::optional<std::string> header(std::string_view name) const { return find_header(headers, name); }
};

enum class retention_policy { limits, interest, work_queue };
enum class discard_policy { old_messages, new_messages };
enum class storage_type { file, memory };

// The stream settings the suite checks (nats.c's jsStreamConfig, in part).
struct stream_config {
    std::string name;
    std::vector<std::string> subjects;
    retention_policy retention = retention_policy::limits;
    std::int64_t max_consumers = -1;
    std::int64_t max_msgs = -1;
    std::int64_t max_bytes = -1;
    std::chrono::nanoseconds max_age{0};  // 0: no limit
    std::int64_t max_msgs_per_subject = -1;
    std::int32_t max_msg_size = -1;  // <= 0: unlimited
    discard_policy discard = discard_policy::old_messages;
    bool discard_new_per_subject = false;
    storage_type storage = storage_type::file;
    std::chrono::nanoseconds duplicate_window{0};
    bool allow_direct = false;
};

struct stream_state {
    std::uint64_t msgs = 0;
    std::uint64_t bytes = 0;
    std::uint64_t first_seq = 0;
    std::uint64_t last_seq = 0;
    std::int64_t num_subjects = 0;
    std::int64_t consumers = 0;
    // Per-subject message counts, filled only when a subject filter was asked for.
    std::map<std::string, std::uint64_t> subjects;
};

struct stream_info {
    stream_config config;
    stream_state state;
};

struct publish_options {
    std::string msg_id;                                         // Nats-Msg-Id (deduplication)
    std::optional<std::uint64_t> expect_last_sequence;          // Nats-Expected-Last-Sequence
    std::optional<std::uint64_t> expect_last_subject_sequence;  // Nats-Expected-Last-Subject-Sequence
    std::string expect_stream;                                  // Nats-Expected-Stream
    milliseconds timeout{0};                                    // 0: the context's default
};

struct publish_ack {
    std::string stream;
    std::uint64_t sequence = 0;
    bool duplicate = false;  // the duplicate window already held this Nats-Msg-Id
};

enum class ack_policy { none, all, explicit_ack };
enum class deliver_policy { all, last, new_messages, by_start_sequence, by_start_time, last_per_subject };

struct consumer_config {
    std::string name;
    std::string durable;
    std::string filter_subject;
    ack_policy ack = ack_policy::explicit_ack;
    deliver_policy deliver = deliver_policy::all;
    std::chrono::nanoseconds ack_wait{0};
    std::int64_t max_deliver = -1;
    std::int64_t max_ack_pending = -1;
    std::int64_t max_waiting = 0;
};

struct consumer_info {
    std::string stream;
    std::string name;
    consumer_config config;
    std::int64_t num_ack_pending = 0;
    std::int64_t num_redelivered = 0;
    std::int64_t num_waiting = 0;
    std::uint64_t num_pending = 0;
    bool push_bound = false;
};

// Delivery metadata of a message taken from a consumer.
struct delivery_metadata {
    std::uint64_t stream_sequence = 0;
    std::uint64_t consumer_sequence = 0;
    std::uint64_t num_delivered = 0;  // 1 on the first delivery
    std::uint64_t num_pending = 0;
    clock_time timestamp{};
    std::string stream;
    std::string consumer;
};

// One message taken from a pull consumer, to be settled once. Copies share the message,
// which keeps its subscription alive: it may be settled after the subscription's release().
class pulled_message {
public:
    struct impl;
    explicit pulled_message(std::shared_ptr<impl> p) noexcept;

    [[nodiscard]] const std::string& subject() const noexcept;
    [[nodiscard]] const std::string& data() const noexcept;
    [[nodiscard]] const jetstream::headers& headers() const noexcept;
    [[nodiscard]] const delivery_metadata& metadata() const noexcept;

    // Settling; each is a publish on the connection, offloaded like every other call.
    boost::asio::awaitable<result<void>> ack();
    boost::asio::awaitable<result<void>> nak();
    boost::asio::awaitable<result<void>> nak_with_delay(milliseconds delay);
    boost::asio::awaitable<result<void>> in_progress();
    boost::asio::awaitable<result<void>> term();

private:
    std::shared_ptr<impl> impl_;
};

// A pull subscription bound to an existing durable consumer. Its fetches run on a thread
// of their own (a fetch waits for work for a long time and must not hold a pool thread).
class pull_subscription {
public:
    struct impl;
    pull_subscription() noexcept = default;  // bound to nothing: fetch() fails with cancelled
    explicit pull_subscription(std::shared_ptr<impl> p) noexcept;
    ~pull_subscription();
    pull_subscription(pull_subscription&&) noexcept;
    pull_subscription& operator=(pull_subscription&&) noexcept;

    // Up to `batch` messages, waiting at most `wait` for the first: an empty vector when
    // none came. After release() it fails with errc::cancelled, and a message that a
    // fetch in flight returns after release() is Nak'ed at once.
    boost::asio::awaitable<result<std::vector<pulled_message>>> fetch(int batch, milliseconds wait);

    // Stops taking messages. The consumer is never deleted (it is the operator's); the
    // nats.c subscription is retired once the fetch in flight, if any, has returned and no
    // message taken from it is left (settling one uses the subscription).
    void release() noexcept;

private:
    std::shared_ptr<impl> impl_;
};

enum class kv_operation { put, del, purge };

struct kv_entry {
    std::string bucket;
    std::string key;
    std::string value;
    std::uint64_t revision = 0;
    clock_time created{};
    std::uint64_t delta = 0;  // how many newer entries the bucket held when this one was read
    kv_operation operation = kv_operation::put;
};

struct kv_status {
    std::string bucket;
    std::uint64_t values = 0;
    std::int64_t history = 1;
    std::chrono::nanoseconds ttl{0};
    // The KV_<bucket> stream's max message size (nats.c's kvStatus does not carry it);
    // <= 0: unlimited. Headers count against it.
    std::int32_t max_value_size = -1;
};

struct watch_options {
    bool ignore_deletes = false;
    bool include_history = false;
    bool meta_only = false;
};

// What a watcher delivers: an entry, or the marker that every value present when the
// watch started has been delivered (the live tail follows).
struct watch_event {
    std::optional<kv_entry> entry;  // empty: the end-of-initial-values marker
};

// A KV watch. A thread of its own reads nats.c's watcher and posts each event to the
// executor it was created on; next() hands them out in order.
class kv_watcher {
public:
    struct impl;
    kv_watcher() noexcept = default;  // watching nothing: next() fails with cancelled
    explicit kv_watcher(std::shared_ptr<impl> p) noexcept;
    ~kv_watcher();
    kv_watcher(kv_watcher&&) noexcept;
    kv_watcher& operator=(kv_watcher&&) noexcept;

    // The next event, waiting at most `wait`: errc::timed_out when none came, errc::cancelled
    // after stop(), or the error that ended the watch (then every later call returns it).
    boost::asio::awaitable<result<watch_event>> next(milliseconds wait);
    // On the executor the watch was started on, as next(): a waiting next() returns
    // cancelled at once; the reader thread ends nats.c's watcher within 100 ms.
    void stop() noexcept;

private:
    std::shared_ptr<impl> impl_;
};

// A KV bucket that exists. Create, update and put publish to `$KV.<bucket>.<key>` like
// nats.c does, but return the JetStream API error code (10071 for a revision that moved).
class kv_bucket {
public:
    struct impl;
    kv_bucket() noexcept = default;  // bound to nothing: only for result<kv_bucket>; do not call
    explicit kv_bucket(std::shared_ptr<impl> p) noexcept;

    [[nodiscard]] const std::string& name() const noexcept;

    // The live value: errc::not_found when absent, deleted or purged.
    boost::asio::awaitable<result<kv_entry>> get(std::string key);
    // Writes only when the key has no live value (absent, deleted or purged); a live one
    // is errc::api_error with err_code 10071. Returns the new revision.
    boost::asio::awaitable<result<std::uint64_t>> create(std::string key, std::string value);
    // Writes only when the key's latest revision is `revision` (else 10071).
    boost::asio::awaitable<result<std::uint64_t>> update(std::string key, std::string value, std::uint64_t revision);
    boost::asio::awaitable<result<std::uint64_t>> put(std::string key, std::string value);
    // A delete marker (history kept, as nats.c's kvStore_Delete).
    boost::asio::awaitable<result<void>> remove(std::string key);
    boost::asio::awaitable<result<kv_status>> status();
    // Watches `keys` (a key or a wildcard such as `agent.>` or `>`). Events are posted to
    // the awaiting coroutine's executor.
    boost::asio::awaitable<result<kv_watcher>> watch(std::string keys, watch_options options = {});

private:
    std::shared_ptr<impl> impl_;
};

struct context_options {
    // Timeout of a call that names none.
    milliseconds default_timeout{15000};
};

// JetStream on one connection. `blocking` is the blocking pool's executor (a thread_pool's):
// nats.c calls run there. The connection and the pool must outlive the context and
// everything made from it. Methods are called from the io thread; each resumes there.
class context {
public:
    context(conns::connection& connection, boost::asio::any_io_executor blocking, context_options options = {});
    ~context();
    context(const context&) = delete;
    context& operator=(const context&) = delete;

    [[nodiscard]] milliseconds default_timeout() const noexcept;
    [[nodiscard]] const boost::asio::any_io_executor& blocking() const noexcept;

    // What to tell the operator when the JetStream API answers errc::no_responders: the
    // server this connection reached runs without JetStream (`JetStream is not enabled on
    // the NATS server at nats://…; start it with -js (or jetstream {} in its configuration)`).
    [[nodiscard]] std::string not_enabled_text() const;

    // Stream configuration and state; with `subjects_filter`, the per-subject counts of the
    // subjects it matches.
    boost::asio::awaitable<result<jetstream::stream_info>> get_stream_info(std::string stream,
                                                                           std::string subjects_filter = {},
                                                                           milliseconds timeout = milliseconds(0));
    // An asynchronous JetStream publish (no pool thread): resumes when the ack, an API
    // error or the timeout comes. nats.c answers nothing once the connection has closed: a
    // publish still unanswered a second after its timeout resumes with errc::timed_out.
    boost::asio::awaitable<result<publish_ack>> publish(std::string subject, std::string data,
                                                        jetstream::headers headers = {}, publish_options options = {});
    // The last message stored on `subject` (which may be a wildcard): errc::not_found when none.
    boost::asio::awaitable<result<message>> last_message(std::string stream, std::string subject,
                                                         milliseconds timeout = milliseconds(0));
    boost::asio::awaitable<result<message>> get_message(std::string stream, std::uint64_t sequence,
                                                        milliseconds timeout = milliseconds(0));
    // Reads up to `count` messages on `filter` in stream order through an ordered push
    // consumer (nats.c 3.4.1 has no ordered pull), waiting at most `wait` for each; stops
    // early when one does not come.
    boost::asio::awaitable<result<std::vector<message>>> ordered_read(std::string stream, std::string filter,
                                                                      std::size_t count, milliseconds wait);
    // Removes every message on `subject` (a wildcard allowed) from the stream.
    boost::asio::awaitable<result<void>> purge(std::string stream, std::string subject,
                                               milliseconds timeout = milliseconds(0));
    boost::asio::awaitable<result<void>> delete_message(std::string stream, std::uint64_t sequence,
                                                        milliseconds timeout = milliseconds(0));
    boost::asio::awaitable<result<jetstream::consumer_info>> get_consumer_info(std::string stream, std::string consumer,
                                                                               milliseconds timeout = milliseconds(0));
    // Binds to the existing durable `consumer` of `stream` (never creates one).
    boost::asio::awaitable<result<pull_subscription>> bind_pull(std::string stream, std::string consumer,
                                                                std::string filter_subject,
                                                                milliseconds timeout = milliseconds(0));
    // Binds to an existing bucket: errc::not_found when it does not exist. The bucket's
    // calls time out after `timeout`.
    boost::asio::awaitable<result<kv_bucket>> bind_kv(std::string bucket, milliseconds timeout = milliseconds(0));

    // Flushes the connection (natsConnection_FlushTimeout) off the io thread.
    boost::asio::awaitable<result<void>> flush(milliseconds timeout = milliseconds(0));

    struct impl;

private:
    void start_async_publishing();
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::jetstream
