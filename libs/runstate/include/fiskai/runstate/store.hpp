#pragma once
// The session store and journal every backend implements (file, jetstream), and the
// registry that builds one from `harness.sessions.backend` and `.options`.
//
// Threading: every method is called on the caller's executor (one io thread); a backend
// runs its blocking work (file writes, fdatasync, nats.c JetStream calls) on the blocking
// pool of its context and resumes on the caller's executor. An in-flight create or append
// is never abandoned: cancelling the awaiting coroutine has no effect on it, the method
// completes (bounded by the backend's own timeout) and last_seq reflects the outcome. A
// caller that writes after a hard cancel (its terminal) must first reset its coroutine's
// cancellation state (`co_await this_coro::reset_cancellation_state()`): asio refuses any
// co_await in a cancelled coroutine otherwise.

#include <fiskai/gocompat/time.hpp>
#include <fiskai/runstate/error.hpp>
#include <fiskai/runstate/records.hpp>
#include <fiskai/runstate/state.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fiskai::conns {
class connection;
}  // namespace fiskai::conns

namespace fiskai::runstate {

// Backend names.
inline constexpr std::string_view backend_file = "file";
inline constexpr std::string_view backend_jetstream = "jetstream";

// One run's append-only log. Not safe for concurrent use (one run owns it). The file
// backend holds the run's lock from create/open until close or destruction.
class journal {
public:
    virtual ~journal() = default;

    // Appends `rec` at `seq` (rec.seq is set to it) under the append contract
    // (check_append): a duplicate is skipped with success, a gap is errc::seq_gap.
    // last_seq() advances only when the record is durable. A failed append leaves the
    // journal as it was before it, so the next append at last_seq() + 1 (a terminal after
    // a failure) can still succeed.
    virtual boost::asio::awaitable<result<void>> append(std::uint64_t seq, record rec) = 0;
    // append(), except that it returns once the record's write and sync are under way
    // rather than done, for a step that acts on nothing the record says (the next model
    // call): the sync overlaps that step. last_seq() counts the record at once. The next
    // append(), append_started() or durable() waits for it first and fails with its error if
    // it failed, and so does every later one (the journal is then unusable: a record may be
    // missing). A backend may let a later append_started() or append_all() join the sync
    // still under way instead of waiting for it (the file backend does: one pool round trip
    // for records appended back to back); the failure then shows at the first step that
    // waits, durable() at the latest. A backend that cannot defer makes the record durable
    // before returning.
    virtual boost::asio::awaitable<result<void>> append_started(std::uint64_t seq, record rec) {
        auto written = co_await append(seq, std::move(rec));
        co_return written;
    }
    // Appends `recs` (consecutive seqs from last_seq() + 1) as one durable step: all of
    // them or, on failure, none (the file backend writes them in one write and syncs once).
    // What a runner uses for records that are decided together, such as a final answer and
    // the terminal that follows it. A backend that cannot group them appends them in turn.
    // Joined to a started sync still under way, a failure is sticky as for append_started().
    virtual boost::asio::awaitable<result<void>> append_all(std::vector<record> recs) {
        for (auto& rec : recs) {
            const std::uint64_t seq = rec.seq;
            auto written = co_await append(seq, std::move(rec));
            if (!written) co_return written;
        }
        co_return result<void>{};
    }
    // Waits until every record appended so far is durable: what a runner does before an
    // action a crash must not repeat (running a tool) once it has started appends.
    virtual boost::asio::awaitable<result<void>> durable() { co_return result<void>{}; }

    // Every record in seq order, schema-checked (a torn tail is never returned).
    virtual boost::asio::awaitable<result<std::vector<record>>> records() = 0;

    // The highest seq written, durable.
    [[nodiscard]] virtual std::uint64_t last_seq() const noexcept = 0;

    // Releases the journal (and its lock). Idempotent; also done by the destructor. A sync
    // still under way finishes on its own and holds the lock until it has.
    virtual result<void> close() = 0;

    // Appends at last_seq() + 1: what a runner uses after a failed append, so the terminal
    // is never refused as a gap (Go's runner can lose it that way).
    boost::asio::awaitable<result<void>> append_next(runstate::payload body) {
        const std::uint64_t seq = last_seq() + 1;
        record rec{seq, std::move(body)};
        auto written = co_await append(seq, std::move(rec));
        co_return written;
    }
    // append_all() of `bodies` at last_seq() + 1, + 2, ...
    boost::asio::awaitable<result<void>> append_next_all(std::vector<runstate::payload> bodies) {
        std::vector<record> recs;
        std::uint64_t seq = last_seq();
        for (auto& body : bodies) recs.push_back(record{++seq, std::move(body)});
        auto written = co_await append_all(std::move(recs));
        co_return written;
    }
    // append_started() at last_seq() + 1.
    boost::asio::awaitable<result<void>> append_next_started(runstate::payload body) {
        const std::uint64_t seq = last_seq() + 1;
        record rec{seq, std::move(body)};
        auto written = co_await append_started(seq, std::move(rec));
        co_return written;
    }
};

// A summary of a stored run, for `session ls`.
struct run_info {
    std::string run_id;
    gocompat::go_time created;
    gocompat::go_time updated;  // file: mtime; jetstream: the last message's time
    std::string model;
    std::string prompt;
    std::optional<terminal_reason> terminal;  // none: open (suspended by a crash, or running)

    friend bool operator==(const run_info&, const run_info&) = default;
};

class store {
public:
    virtual ~store() = default;

    // Starts a run: writes `meta` as seq 1 (meta.run_id is set to id) and returns the
    // journal, locked. errc::exists when the id is present, errc::invalid_id, errc::locked.
    virtual boost::asio::awaitable<result<std::unique_ptr<journal>>> create(std::string id, meta_record meta) = 0;
    // create(), except that it returns once the id is claimed (the run exists, locked, with
    // seq 1 written) while seq 1's sync goes on, as journal::append_started(): the new
    // run's first model call need not wait for it. Same errors as create(). A backend that
    // cannot defer returns a durable run.
    virtual boost::asio::awaitable<result<std::unique_ptr<journal>>> create_started(std::string id, meta_record meta) {
        auto created = co_await create(std::move(id), std::move(meta));
        co_return created;
    }

    // Opens an existing run for appending (resume), next seq = last_seq() + 1.
    // errc::not_found, errc::invalid_id, errc::locked (file backend; jetstream takes no lock
    // and fences at the first conflicting append instead).
    virtual boost::asio::awaitable<result<std::unique_ptr<journal>>> open(std::string id) = 0;

    // Every record of a run, without the lock. errc::not_found when absent.
    virtual boost::asio::awaitable<result<std::vector<record>>> read(std::string id) = 0;

    // Whether a run exists, without the lock (used to decide follow-up).
    virtual boost::asio::awaitable<result<bool>> exists(std::string id) = 0;

    // Every readable run (unreadable ones are skipped), sorted by run id.
    virtual boost::asio::awaitable<result<std::vector<run_info>>> list() = 0;

    // Removes a run. Idempotent (an absent run is success).
    virtual boost::asio::awaitable<result<void>> remove(std::string id) = 0;

    // What the startup banner shows after the backend name: the directory or the stream.
    [[nodiscard]] virtual std::string location() const = 0;

    // read() then fold(): the run's resumable state, without the lock.
    boost::asio::awaitable<result<run_state>> load(std::string id);
};

// What a backend may need beyond its options.
struct context {
    // The blocking pool's executor (required): file writes, fdatasync and nats.c calls run
    // there and resume on the caller's executor.
    boost::asio::any_io_executor blocking;
    // The run-store base (serve's state dir); empty keeps the XDG default.
    std::string store_dir;
    // The NATS connection a connection-backed backend borrows (never closes); null when
    // none was provisioned (such a backend then refuses to start).
    conns::connection* nats = nullptr;
};

// Builds a store from raw options JSON (empty text: no options). Throws startup_error
// with the operator's text on bad options or an unusable backing store.
using factory = std::function<std::shared_ptr<store>(std::string_view options_json, const context& ctx)>;

// Registers a backend. Throws std::logic_error on an empty name, an empty factory or a
// duplicate. The file backend is registered by the library itself.
void register_backend(std::string name, factory make, bool requires_nats = false);

// The registered backend names, sorted.
[[nodiscard]] std::vector<std::string> backends();

// Whether a registered backend needs ctx.nats (false for an unknown one).
[[nodiscard]] bool needs_nats(std::string_view backend);

// Builds the named backend. Unknown: startup_error
// `unknown session backend "<x>": known backends are [file jetstream]`.
[[nodiscard]] std::shared_ptr<store> make_store(std::string_view backend, std::string_view options_json,
                                                const context& ctx);

// Decodes a backend's options strictly: a JSON object whose keys are all in `allowed`;
// anything else throws startup_error `invalid <what> options: ...` naming the bad key or
// value. Empty text gives an empty object.
[[nodiscard]] boost::json::object decode_options(std::string_view options_json, std::string_view what,
                                                 const std::vector<std::string_view>& allowed);

}  // namespace fiskai::runstate
