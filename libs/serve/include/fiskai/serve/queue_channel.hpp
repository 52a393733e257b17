#pragma once
// The queue channel (serve.md §7, Amendments 1, 4, 13, 17): jobs are task requests on the
// operator's JetStream work-queue stream, taken through the operator's durable pull
// consumer one at a time, and only when the server has a free slot (it calls next() then).
// While a job's work lives it is kept in progress (`+WPI` every ack_wait / 3); its answer,
// the task's terminal message, is stored in the task-store bucket under `<identity>.<task>`
// before the job is acked. Nothing is created: the stream, the bucket and the consumer are
// the operator's, and open() names what is missing with the command that creates it.
//
// Register it with channel_options{deliveries_repeat = true}: a job may come again (a crash,
// a lost ack), and its session then resumes or replays from the journal.

#include <fiskai/gocompat/log.hpp>
#include <fiskai/serve/serve.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::conns {
class connection;
}  // namespace fiskai::conns
namespace fiskai::jetstream {
class context;
}  // namespace fiskai::jetstream

namespace fiskai::serve {

struct queue_channel_options {
    std::string identity;
    // expose.agent.queue: names only. An empty consumer is the identity.
    std::string stream = "FISK_WORK";
    std::string task_store = "FISK_TASKS";
    std::string consumer;
    // What the consumer must have (Amendment 1: read from the consumer, asserted here).
    std::chrono::nanoseconds ack_wait = std::chrono::seconds(30);
    std::int64_t max_deliver = 5;
    // expose.agent.queue.dead_letter: the operator's stream for jobs that fail for good
    // (records on `choria.fisk-ai.dead.<identity>`); empty: none, said once at open().
    std::string dead_letter;
    // The NATS context's name, for the "JetStream is not enabled" text.
    std::string context_name;
    // The tools a run has (tool hints naming others are left out of the prompt).
    std::vector<std::string> tool_names;
    gocompat::logger log;

    // §7.3 fixes these; tests shorten them.
    std::chrono::milliseconds fetch_wait{5000};
    std::chrono::milliseconds crash_delay{30000};      // NakWithDelay after a crash
    std::chrono::milliseconds put_retry_delay{5000};   // NakWithDelay after a failed answer put
    std::chrono::milliseconds startup_timeout{10000};  // each startup check
};

// A startup check failed; what() is the exact text (§7.2, Amendments 1 and 4).
class queue_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class queue_channel final : public channel, public releasable {
public:
    // Checks JetStream, the stream, the bucket, the consumer and the dead-letter stream (when
    // configured) in that order, binds the
    // consumer and listens for its MAX_DELIVERIES advisories (queue group = the consumer).
    // Throws queue_error. `nats` and `js` (on `nats`) must outlive the channel and every
    // work it handed out.
    static boost::asio::awaitable<std::shared_ptr<queue_channel>> open(conns::connection& nats, jetstream::context& js,
                                                                       boost::asio::any_io_executor executor,
                                                                       queue_channel_options options);
    ~queue_channel() override;
    queue_channel(const queue_channel&) = delete;
    queue_channel& operator=(const queue_channel&) = delete;

    [[nodiscard]] std::string_view name() const override { return "queue"; }
    // One job, fetched only now; invalid jobs are settled here and skipped. nullptr after release().
    boost::asio::awaitable<std::unique_ptr<work>> next() override;
    // §7.5: stop fetching (next() → nullptr); jobs in flight keep heartbeating until their
    // done(); the consumer subscription is unbound after the last one (an invalid job being
    // settled counts, and a done() cut short by the report timeout counts out).
    void release() override;

    // The banner line: `queue: jobs on choria.fisk-ai.work.<id> from stream <s> (consumer <c>,
    // ack wait <d>, max deliver <n>), answers in KV <b>`.
    [[nodiscard]] std::string description() const;

    // Jobs taken and not yet settled, invalid ones included (for tests and the banner).
    [[nodiscard]] std::size_t in_flight() const noexcept;
    // MAX_DELIVERIES advisories handled (for tests).
    [[nodiscard]] std::size_t advisories_handled() const noexcept;

    struct impl;
    explicit queue_channel(std::shared_ptr<impl> p) noexcept;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace fiskai::serve
