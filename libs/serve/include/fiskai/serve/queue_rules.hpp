#pragma once
// The queue channel's decisions, free of I/O (serve.md §7, Amendments 1, 4, 13, 17): what a
// job body becomes (a work or an invalid job), how a job is settled from its outcome and
// delivery count, the answer bytes stored for the producer, the storage checks with their
// exact startup texts, and the MAX_DELIVERIES advisory. queue_channel.hpp is the I/O.

#include <fiskai/a2a/messages.hpp>
#include <fiskai/jetstream/context.hpp>
#include <fiskai/serve/serve.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace fiskai::serve::queue_rules {

// The stored error code of a job that is not a task (NEW WIRE, like the a2a codes).
namespace code {
inline constexpr std::string_view invalid_request = "invalid_request";
inline constexpr std::string_view crashed = "crashed";
inline constexpr std::string_view abandoned = "abandoned";
inline constexpr std::string_view interrupted = "interrupted";
}  // namespace code

// A job's size cap plus its Nats-Msg-Id header: what the stream must let through (Amendment 4).
inline constexpr std::int64_t min_stream_msg_size = 787456;
inline constexpr std::int64_t min_kv_value_size = 786432;

// `choria.fisk-ai.work.<identity>`.
[[nodiscard]] std::string work_subject(std::string_view identity);
// `<identity>.<task>`: the answer's key in the task store.
[[nodiscard]] std::string answer_key(std::string_view identity, std::string_view task);

// A job that is a task.
struct job {
    a2a::task_request request;
    std::string task;        // the request's `request` (= its id)
    std::string session_id;  // queue_session_id(identity, task)
    std::string prompt;      // as a2a composes it (§6.3)
    serve::budget limits;
};

// A job that is not one: Term'ed, and its error answer stored when `task` is known.
struct invalid_job {
    std::string task;  // empty: no task id could be read (the body's, else its Nats-Msg-Id)
    std::string error;
};

// The a2a pipeline (size cap, schema, protocol `request`) and the a2a admission rules, minus
// the accept window (a queue job may wait); a continuation (request ≠ id) or a bad budget is
// invalid (Amendment 17). `msg_id` (the Nats-Msg-Id header) names the task when the body
// cannot.
[[nodiscard]] std::variant<job, invalid_job> decode_job(std::string_view body, const std::optional<std::string>& msg_id,
                                                        std::string_view identity,
                                                        std::span<const std::string> tool_names);

// How a job is settled once its work reports (§7.3, Amendment 13).
enum class settle {
    store_then_ack,  // store `answer` under the key, then Ack (a failed put: NakWithDelay(5s))
    nak,             // another worker takes it now and resumes it; nothing stored
    nak_with_delay,  // a crash: try again later; nothing stored
};

struct decision {
    settle action = settle::store_then_ack;
    a2a::message answer;  // for store_then_ack: the terminal (its header is stamped later)
    bool dead = false;    // the job failed on its last delivery: file it as a dead letter
};

// `delivery` counts from 1; `max_deliver` <= 0 is unlimited.
[[nodiscard]] decision decide(const outcome& o, std::uint64_t delivery, std::int64_t max_deliver);

// The error stored for an invalid job.
[[nodiscard]] a2a::task_error invalid_answer(std::string_view error);
// Amendment 13: `the job was delivered <n> times without finishing`.
[[nodiscard]] a2a::task_error max_deliveries_answer(std::uint64_t deliveries);

// The stored bytes: `terminal` stamped as the task's reply (sequence 1, conversation = the
// session id), capped and validated; one that fails becomes the crashed terminal
// (Amendment 17). `request` may be a bare header (an invalid job: request = id = task).
[[nodiscard]] std::string encode_answer(a2a::message terminal, const a2a::header& request, std::string_view identity,
                                        std::string_view session_id);

// What the channel checks at startup (§7.2, Amendments 1 and 4). Each text is exact.
struct storage_names {
    std::string identity;
    std::string stream;
    std::string task_store;
    std::string consumer;
    std::string context;  // the NATS context's name, for the JetStream text
};

namespace text {
[[nodiscard]] std::string jetstream_disabled(const storage_names& n);
[[nodiscard]] std::string stream_missing(const storage_names& n);
[[nodiscard]] std::string bucket_missing(const storage_names& n);
[[nodiscard]] std::string consumer_missing(const storage_names& n);
[[nodiscard]] std::string consumer_taken(const storage_names& n);
[[nodiscard]] std::string dropped_invalid(std::uint64_t stream_seq, std::string_view error);
}  // namespace text

// The first thing wrong with the stream (retention, subject, size), or nullopt.
[[nodiscard]] std::optional<std::string> check_stream(const storage_names& n, const jetstream::stream_info& info);
// The task store's max value size, or nullopt.
[[nodiscard]] std::optional<std::string> check_bucket(const storage_names& n, const jetstream::kv_status& status);

// What the consumer must be: ack_wait and max_deliver come from the config and only assert.
struct consumer_expectation {
    std::chrono::nanoseconds ack_wait = std::chrono::seconds(30);
    std::int64_t max_deliver = 5;
    std::int64_t max_ack_pending = 1000;
};
[[nodiscard]] std::optional<std::string> check_consumer(const storage_names& n, const jetstream::consumer_info& info,
                                                        const consumer_expectation& want);

// Dead letters (NEW WIRE): a record per job that failed for good (past max deliveries, or
// not a task), published on `choria.fisk-ai.dead.<identity>` to the operator's
// dead-letter stream. The body is the job exactly as it was queued, so a retry re-enqueues
// it; the record is in headers.
namespace dead_letter_header {
inline constexpr std::string_view task = "Fisk-Task";
inline constexpr std::string_view stream_seq = "Fisk-Stream-Seq";
inline constexpr std::string_view deliveries = "Fisk-Deliveries";
inline constexpr std::string_view error = "Fisk-Error";
}  // namespace dead_letter_header

[[nodiscard]] std::string dead_letter_subject(std::string_view identity);

struct dead_letter {
    std::string task;  // empty when none could be read
    std::uint64_t stream_seq = 0;
    std::uint64_t deliveries = 0;
    std::string error;
};

// The record's headers (the error cut to 1024 bytes, control characters made spaces).
[[nodiscard]] jetstream::headers dead_letter_headers(const dead_letter& d);
// A record read back; nullopt when the headers are not one.
[[nodiscard]] std::optional<dead_letter> read_dead_letter(const jetstream::headers& h);

namespace text {
[[nodiscard]] std::string dead_letter_missing(std::string_view stream);
[[nodiscard]] std::string dead_letter_unbound(std::string_view stream, std::string_view identity);
inline constexpr std::string_view no_dead_letter =
    "queue: no dead-letter stream configured (expose.agent.queue.dead_letter); jobs that fail for good are answered "
    "and not kept";
}  // namespace text

// NATS subject matching with `*` and `>` in the pattern.
[[nodiscard]] bool subject_matches(std::string_view pattern, std::string_view subject);

// `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.<stream>.<consumer>`.
[[nodiscard]] std::string max_deliveries_subject(std::string_view stream, std::string_view consumer);
struct max_deliveries {
    std::string stream;
    std::string consumer;
    std::uint64_t stream_seq = 0;
    std::uint64_t deliveries = 0;
};
// nullopt when the body is not that advisory.
[[nodiscard]] std::optional<max_deliveries> parse_max_deliveries(std::string_view body);

}  // namespace fiskai::serve::queue_rules
