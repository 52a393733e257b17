// The file backend. A journal is `<dir>/<id>.json`, one record per line. Its writer holds
// an OFD write lock on the journal file itself for the journal's life: per open file
// description, so two runs of one session in one process conflict as two processes do,
// and released by the kernel when the process dies. Durability per record: one write of
// the whole line, then fdatasync, then last_seq advances.
#include <fiskai/runstate/file_store.hpp>

#include "internal.hpp"

#include <fiskai/jetstream/offload.hpp>
#include <fiskai/gocompat/file.hpp>
#include <fiskai/gocompat/json.hpp>
#include <fiskai/gocompat/quote.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fiskai::runstate {

namespace fs = std::filesystem;

namespace {

// File writes are never abandoned (serve.md Amendment 6): a started write finishes and
// reports, whatever happens to the awaiting coroutine.
using detail::storage_error;
using detail::system_error;
using jetstream::offload_to_completion;

// ---- reading a journal's text ----

struct parsed_journal {
    std::vector<record> records;
    // The length of the text up to and including the last good line's newline: where a
    // torn tail is cut and the next record goes.
    std::size_t good_size = 0;
    bool torn = false;
};

// Go's rules, one stricter: an unparsable last line is a torn tail and dropped; an
// unparsable interior line is corrupt; blank lines are skipped. Stricter: a last line
// without its newline is torn even when it parses (a line is written with its newline in
// one write, so a missing newline means the write was cut or is still in progress), and
// a line that parses but fails its schema is corrupt wherever it is.
result<parsed_journal> parse_journal(std::string_view text) {
    parsed_journal out;
    std::size_t pos = 0;
    std::size_t line_no = 0;
    while (pos < text.size()) {
        ++line_no;
        const auto nl = text.find('\n', pos);
        const bool terminated = nl != std::string_view::npos;
        const auto end = terminated ? nl : text.size();
        const auto line = text.substr(pos, end - pos);
        const bool last = !terminated || end + 1 == text.size();
        if (!terminated) {
            out.torn = true;
            break;
        }
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
            pos = end + 1;
            out.good_size = pos;
            continue;
        }
        auto rec = decode_record(line);
        if (!rec) {
            // result::error() returns a copy: keep it alive while viewing it.
            const std::string message = rec.error().message;
            const bool not_json = message.find("corrupt record sequence: not JSON") == 0;
            if (last && not_json) {
                out.torn = true;
                break;
            }
            auto detail = std::string_view(message);
            constexpr std::string_view prefix = "corrupt record sequence: ";
            if (detail.substr(0, prefix.size()) == prefix) detail.remove_prefix(prefix.size());
            return make_error(errc::corrupt, fmt::format("line {}: {}", line_no, detail));
        }
        out.records.push_back(std::move(*rec));
        pos = end + 1;
        out.good_size = pos;
    }
    return out;
}

error journal_too_large(const std::string& path, std::uint64_t size) {
    return storage_error(
        fmt::format("journal {} is larger than the limit of {} bytes ({} bytes)", path, max_journal_size, size));
}

// Errors for what gocompat's file checks found in a journal, naming `path`.
error journal_file_error(const gocompat::file_outcome& o, const std::string& path) {
    switch (o.status) {
        case gocompat::file_check::not_regular:
            return storage_error(fmt::format("journal {} is not a regular file", path));
        case gocompat::file_check::too_large: return journal_too_large(path, o.size);
        default: return system_error(fmt::format("reading journal {}", path), o.error);
    }
}

// Refuses what `fd` holds unless it is a regular file of at most max_journal_size bytes;
// its size otherwise.
result<std::size_t> check_journal_file(int fd, const std::string& path) {
    const auto checked = gocompat::check_regular_file(fd, max_journal_size);
    if (checked.status != gocompat::file_check::ok) return journal_file_error(checked, path);
    return static_cast<std::size_t>(checked.size);
}

// The whole journal behind `fd` from offset 0, checked as check_journal_file does, and
// again for growth while it is read.
std::optional<error> read_journal(int fd, const std::string& path, std::string& out) {
    const auto read = gocompat::read_regular_file(fd, max_journal_size, out);
    if (read.status != gocompat::file_check::ok) return journal_file_error(read, path);
    return std::nullopt;
}

int write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const auto n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

// An OFD write lock on the whole file; EAGAIN/EACCES when another description holds one.
int lock_file(int fd) {
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 0;
    if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) return errno;
    return 0;
}

int sync_directory(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    const int rc = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    return rc;
}

error locked_error() { return make_error(errc::locked); }

// A new run's first record and its name, made durable.
std::optional<error> sync_new_run(int fd, const std::string& dir) {
    if (::fdatasync(fd) != 0) return system_error("syncing record", errno);
    if (const int err = sync_directory(dir); err != 0) return system_error("syncing store directory", err);
    return std::nullopt;
}

// What an open descriptor holds once locked and checked.
struct opened {
    int fd = -1;
    std::uint64_t last_seq = 0;
    std::size_t size = 0;
};

// How a write and sync ended. A failure leaves the file as it was (`good` bytes), so the
// next append (the terminal, after a failure) lands on a clean line, unless cutting it back
// failed too: then the file ends in part of a record, and an append after it would bury
// that part inside the journal (the descriptor appends), so the journal takes no more.
struct write_outcome {
    std::optional<error> failure;
    bool left_partial = false;
};

// Writes `line` at the end of `fd` and syncs it; on failure cuts the file back to `good`.
write_outcome write_and_sync(int fd, std::size_t good, const std::string& line) {
    const char* what = nullptr;
    int err = 0;
    if (err = write_all(fd, line); err != 0) {
        what = "writing record";
    } else if (::fdatasync(fd) != 0) {
        err = errno;
        what = "syncing record";
    } else {
        return {};
    }
    if (::ftruncate(fd, static_cast<off_t>(good)) != 0) {
        const int cut_err = errno;
        return {storage_error(fmt::format("{}: {}; cutting the journal back to its last whole record ({} bytes) "
                                          "failed too: {}; it takes no more records (opening it again drops the "
                                          "partial one)",
                                          what, std::strerror(err), good, std::strerror(cut_err))),
                true};
    }
    return {system_error(what, err), false};
}

// A write and sync handed to the blocking pool without waiting for them
// (append_started, create_started). The pool job works on its own duplicate of the
// descriptor, so a journal closed in the meantime neither races it nor releases the lock
// before it has finished.
//
// While the job runs, later records join it (join()): it writes and syncs them after its
// own, in the order given, before it reports. So records appended back to back cost one
// pool round trip instead of one each: the io thread neither waits for the first sync to
// come back before starting the next, nor wakes in between (serve's task path appends the
// model's turn while the new session's first sync is still under way).
struct background_sync {
    std::optional<std::optional<error>> outcome;  // set once the job has finished
    // Exists only while the journal's owner waits for an unfinished job: nothing here is
    // bound to an io_context for longer (a journal may outlive the one that created it).
    std::optional<boost::asio::experimental::channel<void(boost::system::error_code)>> waiter;

    // Shared with the pool job, under `mutex`: lines that joined, and whether it still
    // takes them (false once it has found nothing more to write and is about to report).
    std::mutex mutex;
    std::string joined;
    bool open = true;

    // Hands `lines` to the running job. False once it no longer takes any: start another.
    bool join(std::string_view lines) {
        const std::lock_guard lock(mutex);
        if (!open) return false;
        joined.append(lines);
        return true;
    }

    // Runs `job` (returning std::optional<error>) on `blocking` with descriptor `fd` (its
    // own, closed when done; the file holds `good` bytes once the job's own write is in)
    // then writes and syncs what joined, and reports it on `io`.
    template <class Job>
    static std::shared_ptr<background_sync> start(const boost::asio::any_io_executor& io,
                                                  const boost::asio::any_io_executor& blocking, int fd,
                                                  std::size_t good, Job job) {
        auto sync = std::make_shared<background_sync>();
        auto work = [sync, fd, good, job = std::move(job)]() mutable -> std::optional<error> {
            auto failure = job();
            std::size_t size = good;
            while (!failure) {
                std::string lines;
                {
                    const std::lock_guard lock(sync->mutex);
                    if (sync->joined.empty()) {
                        sync->open = false;
                        break;
                    }
                    lines.swap(sync->joined);
                }
                failure = write_and_sync(fd, size, lines).failure;
                size += lines.size();
            }
            if (failure) {
                const std::lock_guard lock(sync->mutex);
                sync->open = false;  // what joined is lost with the failure, which is sticky
            }
            ::close(fd);
            return failure;
        };
        boost::asio::co_spawn(
            io,
            [sync, blocking, work = std::move(work)]() mutable -> boost::asio::awaitable<void> {
                auto failure = co_await offload_to_completion(blocking, std::move(work));
                sync->outcome = std::move(failure);
                if (sync->waiter) sync->waiter->try_send(boost::system::error_code{});
            },
            boost::asio::detached);
        return sync;
    }

    // The job's outcome, on the executor that started it. Cancellation does not reach the
    // wait: a started write is always finished and reported (as offload_to_completion).
    boost::asio::awaitable<std::optional<error>> wait() {
        if (!outcome) {
            const auto io = co_await boost::asio::this_coro::executor;  // GCC 12: not inside emplace()
            waiter.emplace(io, 1);
            auto unstoppable = boost::asio::bind_cancellation_slot(boost::asio::cancellation_slot(),
                                                                   boost::asio::as_tuple(boost::asio::use_awaitable));
            auto [ec] = co_await waiter->async_receive(std::move(unstoppable));
            waiter.reset();
            if (ec || !outcome) co_return storage_error(fmt::format("waiting for a journal sync: {}", ec.message()));
        }
        co_return std::move(*outcome);
    }
};

class file_journal final : public journal {
public:
    file_journal(std::string path, int fd, std::uint64_t last, std::size_t size, boost::asio::any_io_executor blocking)
        : path_(std::move(path)), fd_(fd), last_seq_(last), size_(size), blocking_(std::move(blocking)) {}
    ~file_journal() override { (void)close(); }
    file_journal(const file_journal&) = delete;
    file_journal& operator=(const file_journal&) = delete;

    boost::asio::awaitable<result<void>> append(std::uint64_t seq, record rec) override {
        auto line = co_await prepare(seq, std::move(rec));
        if (!line) co_return line.error();
        if (line->empty()) co_return result<void>{};  // a duplicate, skipped
        const std::size_t line_size = line->size();
        const int fd = fd_;
        const std::size_t good = size_;
        auto job = [fd, good, line = std::move(*line)]() { return write_and_sync(fd, good, line); };
        auto written = co_await offload_to_completion(blocking_, std::move(job));
        if (written.failure) co_return settle_failure(std::move(written));
        size_ = good + line_size;
        last_seq_ = seq;
        co_return result<void>{};
    }

    boost::asio::awaitable<result<void>> append_all(std::vector<record> recs) override {
        if (recs.empty()) co_return result<void>{};
        if (fd_ < 0) co_return closed_for_append();
        if (failed_) co_return *failed_;
        // Checked as a whole first: a gap or a repeat anywhere refuses the batch unwritten.
        std::string lines;
        std::uint64_t last = last_seq_;
        for (auto& rec : recs) {
            // The top seq has no successor (last + 1 would wrap to 0 and pass the test below).
            if (auto next = check_append(last, last + 1); !next) co_return next.error();
            if (rec.seq != last + 1) {
                co_return make_error(errc::seq_gap,
                                     fmt::format("seq {} does not follow {} in one batch", rec.seq, last));
            }
            last = rec.seq;
            lines += encode_record(rec);
            lines.push_back('\n');
        }
        const std::size_t size = lines.size();
        // Joined to a sync under way, the batch is durable when that job has finished; a
        // failure there is sticky, as for a started append.
        if (pending_ && pending_->join(lines)) {
            if (auto settled = co_await durable(); !settled) co_return settled.error();
            size_ += size;
            last_seq_ = last;
            co_return result<void>{};
        }
        if (auto settled = co_await durable(); !settled) co_return settled.error();
        if (fd_ < 0) co_return closed_for_append();
        const int fd = fd_;
        const std::size_t good = size_;
        auto job = [fd, good, lines = std::move(lines)]() { return write_and_sync(fd, good, lines); };
        auto written = co_await offload_to_completion(blocking_, std::move(job));
        if (written.failure) co_return settle_failure(std::move(written));
        size_ = good + size;
        last_seq_ = last;
        co_return result<void>{};
    }

    boost::asio::awaitable<result<void>> append_started(std::uint64_t seq, record rec) override {
        if (fd_ < 0) co_return closed_for_append();
        if (failed_) co_return *failed_;
        auto line = encode_at(seq, std::move(rec));
        if (!line) co_return line.error();
        if (line->empty()) co_return result<void>{};  // a duplicate, skipped
        if (!pending_ || !pending_->join(*line)) {
            if (auto settled = co_await durable(); !settled) co_return settled.error();
            if (fd_ < 0) co_return closed_for_append();
            const int fd = ::dup(fd_);
            if (fd < 0) co_return system_error("writing record", errno);
            auto job = [fd, good = size_, line = *line]() { return write_and_sync(fd, good, line).failure; };
            // GCC 12: nothing temporary beside a co_await in one expression.
            const auto io = co_await boost::asio::this_coro::executor;
            pending_ = background_sync::start(io, blocking_, fd, size_ + line->size(), std::move(job));
        }
        size_ += line->size();
        last_seq_ = seq;
        co_return result<void>{};
    }

    boost::asio::awaitable<result<void>> durable() override {
        if (failed_) co_return *failed_;
        if (!pending_) co_return result<void>{};
        auto sync = std::exchange(pending_, nullptr);
        if (auto failure = co_await sync->wait()) {
            failed_ = std::move(*failure);
            co_return *failed_;
        }
        co_return result<void>{};
    }

    // create_started(): seq 1 is written and its sync (with the directory's) is under way.
    void adopt(std::shared_ptr<background_sync> sync) { pending_ = std::move(sync); }

    boost::asio::awaitable<result<std::vector<record>>> records() override {
        if (fd_ < 0) co_return storage_error(fmt::format("reading {}: the journal is closed", path_));
        if (auto settled = co_await durable(); !settled) co_return settled.error();
        const int fd = fd_;
        auto job = [fd, path = path_]() -> std::pair<std::optional<error>, std::string> {
            std::string text;
            auto failure = read_journal(fd, path, text);
            return {std::move(failure), std::move(text)};
        };
        auto read = co_await offload_to_completion(blocking_, std::move(job));
        if (read.first) co_return std::move(*read.first);
        auto parsed = parse_journal(read.second);
        if (!parsed) co_return parsed.error();
        co_return std::move(parsed->records);
    }

    [[nodiscard]] std::uint64_t last_seq() const noexcept override { return last_seq_; }

    result<void> close() override {
        if (fd_ < 0) return {};
        // Closing the description releases its OFD lock (once a background sync has closed
        // its duplicate too).
        const int rc = ::close(fd_);
        fd_ = -1;
        if (rc != 0 && errno != EINTR) return system_error("closing journal", errno);
        return {};
    }

private:
    // The line to append at `seq` (empty: a duplicate to skip), once what was started
    // before it is durable.
    boost::asio::awaitable<result<std::string>> prepare(std::uint64_t seq, record rec) {
        if (fd_ < 0) co_return closed_for_append();
        if (auto settled = co_await durable(); !settled) co_return settled.error();
        co_return encode_at(seq, std::move(rec));
    }

    // A failed append's error; sticky when the file was left ending in part of a record.
    error settle_failure(write_outcome written) {
        if (written.left_partial) failed_ = *written.failure;
        return std::move(*written.failure);
    }

    [[nodiscard]] error closed_for_append() const {
        return storage_error(fmt::format("appending to {}: the journal is closed", path_));
    }

    // The line for `seq` under the append contract, against the records counted so far.
    result<std::string> encode_at(std::uint64_t seq, record rec) const {
        auto action = check_append(last_seq_, seq);
        if (!action) return action.error();
        if (*action == append_action::skip) return std::string();
        rec.seq = seq;
        std::string line = encode_record(rec);
        line.push_back('\n');
        return line;
    }

    std::string path_;
    int fd_ = -1;
    std::uint64_t last_seq_ = 0;
    std::size_t size_ = 0;
    boost::asio::any_io_executor blocking_;
    std::shared_ptr<background_sync> pending_;  // at most one: each append settles the last first
    // A started append failed, or a failed one could not be cut back: every later one fails.
    std::optional<error> failed_;
};

class file_store final : public store {
public:
    file_store(std::string dir, boost::asio::any_io_executor blocking)
        : dir_(std::move(dir)), blocking_(std::move(blocking)) {}

    boost::asio::awaitable<result<std::unique_ptr<journal>>> create(std::string id, meta_record meta) override {
        auto created = co_await create_run(std::move(id), std::move(meta), false);
        co_return created;
    }

    boost::asio::awaitable<result<std::unique_ptr<journal>>> create_started(std::string id, meta_record meta) override {
        auto created = co_await create_run(std::move(id), std::move(meta), true);
        co_return created;
    }

    boost::asio::awaitable<result<std::unique_ptr<journal>>> open(std::string id) override {
        if (auto v = validate_id(id); !v) co_return v.error();
        const std::string path = path_of(id);
        struct outcome {
            result<opened> value = opened{};
        };
        auto job = [path, id]() -> outcome {
            int fd = -1;
            const auto fail = [&](error e) {
                ::close(fd);
                return outcome{std::move(e)};
            };
            // A remove() between our open and our lock takes its lock first and unlinks the
            // name: locked then, we would write to a file nobody can find. So the lock is
            // checked against the name, and a name that moved on is opened again.
            for (int attempt = 1;; ++attempt) {
                // O_NONBLOCK: opening a FIFO must not wait for a writer (read_journal refuses it).
                fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NONBLOCK);
                if (fd < 0) {
                    if (errno == ENOENT) return {make_error(errc::not_found, gocompat::quote(id))};
                    return {system_error(fmt::format("opening journal {}", path), errno)};
                }
                if (auto checked = check_journal_file(fd, path); !checked) return fail(checked.error());
                // A regular file: back to blocking I/O for the appends.
                if (::fcntl(fd, F_SETFL, O_APPEND) != 0) {
                    return fail(system_error(fmt::format("opening journal {}", path), errno));
                }
                if (const int err = lock_file(fd); err != 0) {
                    return fail(err == EAGAIN || err == EACCES ? locked_error() : system_error("locking run", err));
                }
                struct stat locked {};
                struct stat named {};
                if (::fstat(fd, &locked) != 0)
                    return fail(system_error(fmt::format("opening journal {}", path), errno));
                const bool same =
                    ::stat(path.c_str(), &named) == 0 && named.st_dev == locked.st_dev && named.st_ino == locked.st_ino;
                if (same) break;
                if (attempt == 3) {
                    return fail(storage_error(fmt::format(
                        "opening journal {}: it was removed or replaced while it was being opened, three times",
                        path)));
                }
                ::close(fd);
            }
            std::string text;
            if (auto failure = read_journal(fd, path, text)) return fail(std::move(*failure));
            auto parsed = parse_journal(text);
            if (!parsed) return fail(parsed.error());
            // A torn tail is cut away under the lock before anything is appended, so a
            // crash mid-write never turns into interior corruption.
            if (parsed->torn) {
                if (::ftruncate(fd, static_cast<off_t>(parsed->good_size)) != 0) {
                    return fail(system_error("repairing torn journal tail", errno));
                }
                if (::fdatasync(fd) != 0) return fail(system_error("syncing repaired journal", errno));
            }
            const std::uint64_t last = parsed->records.empty() ? 0 : parsed->records.back().seq;
            return {opened{fd, last, parsed->good_size}};
        };
        auto done = co_await offload_to_completion(blocking_, std::move(job));
        if (!done.value) co_return done.value.error();
        co_return std::unique_ptr<journal>(
            std::make_unique<file_journal>(path, done.value->fd, done.value->last_seq, done.value->size, blocking_));
    }

    boost::asio::awaitable<result<std::vector<record>>> read(std::string id) override {
        if (auto v = validate_id(id); !v) co_return v.error();
        const std::string path = path_of(id);
        struct outcome {
            result<std::vector<record>> value = std::vector<record>{};
        };
        auto job = [path, id]() -> outcome { return {read_path(path, id)}; };
        auto done = co_await offload_to_completion(blocking_, std::move(job));
        co_return std::move(done.value);
    }

    // Inline: a stat waits for no disk (see create_run).
    boost::asio::awaitable<result<bool>> exists(std::string id) override {
        if (auto v = validate_id(id); !v) co_return v.error();
        const std::string path = path_of(id);
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0) co_return true;
        if (errno == ENOENT) co_return false;
        co_return system_error(fmt::format("checking journal {}", path), errno);
    }

    boost::asio::awaitable<result<std::vector<run_info>>> list() override {
        const std::string dir = dir_;
        struct outcome {
            result<std::vector<run_info>> value = std::vector<run_info>{};
        };
        auto job = [dir]() -> outcome { return {list_directory(dir)}; };
        auto done = co_await offload_to_completion(blocking_, std::move(job));
        co_return std::move(done.value);
    }

    boost::asio::awaitable<result<void>> remove(std::string id) override {
        if (auto v = validate_id(id); !v) co_return v.error();
        const std::string path = path_of(id);
        struct outcome {
            result<void> value;
        };
        auto job = [path]() -> outcome {
            // Under the lock, so a journal being written is never removed beneath its writer.
            const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
            if (fd < 0) {
                if (errno == ENOENT) return {};
                return {system_error(fmt::format("opening journal {}", path), errno)};
            }
            if (const int err = lock_file(fd); err != 0) {
                ::close(fd);
                return {err == EAGAIN || err == EACCES ? locked_error() : system_error("locking run", err)};
            }
            outcome out;
            if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
                out.value = system_error(fmt::format("removing journal {}", path), errno);
            }
            ::close(fd);
            // A lock file the Go original left beside the journal goes with it.
            const std::string go_lock = path.substr(0, path.size() - 5) + ".lock";
            ::unlink(go_lock.c_str());
            return out;
        };
        auto done = co_await offload_to_completion(blocking_, std::move(job));
        co_return std::move(done.value);
    }

    [[nodiscard]] std::string location() const override { return dir_; }

private:
    // Claims the id (O_EXCL, locked) with seq 1 written, then makes it durable: seq 1 and
    // the directory (the new name must survive a crash too), before returning or, when
    // `started`, in the background (create_started).
    // The claim runs on the caller's thread: create, lock and a one-line write into the page
    // cache wait for no disk, and a pool round trip (two thread wake-ups) cost more than they
    // do on the path to a task's first model call. Only the syncs go to the blocking pool.
    boost::asio::awaitable<result<std::unique_ptr<journal>>> create_run(std::string id, meta_record meta,
                                                                        bool started) {
        if (auto v = validate_id(id); !v) co_return v.error();
        meta.run_id = id;
        std::string line = encode_record(record{1, std::move(meta)});
        line.push_back('\n');
        const std::string path = path_of(id);
        const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) {
            if (errno == EEXIST) co_return make_error(errc::exists, gocompat::quote(id));
            co_return system_error(fmt::format("creating journal {}", path), errno);
        }
        if (const int err = lock_file(fd); err != 0) {
            // Another process opened the new file between our create and lock.
            ::close(fd);
            co_return err == EAGAIN || err == EACCES ? locked_error() : system_error("locking run", err);
        }
        auto run = std::make_unique<file_journal>(path, fd, 1, line.size(), blocking_);
        const auto fail = [&](error e) {
            (void)run->close();
            ::unlink(path.c_str());
            return e;
        };
        if (const int err = write_all(fd, line); err != 0) co_return fail(system_error("writing record", err));
        // The sync works on a duplicate, so a journal closed meanwhile neither races it nor
        // releases the lock before it has finished.
        const int sync_fd = ::dup(fd);
        if (sync_fd < 0) co_return fail(system_error("syncing record", errno));
        if (!started) {
            auto sync = [sync_fd, dir = dir_]() {
                auto failure = sync_new_run(sync_fd, dir);
                ::close(sync_fd);
                return failure;
            };
            if (auto failure = co_await offload_to_completion(blocking_, std::move(sync))) {
                co_return fail(std::move(*failure));
            }
            co_return std::unique_ptr<journal>(std::move(run));
        }
        const auto io = co_await boost::asio::this_coro::executor;
        auto sync = [sync_fd, dir = dir_]() { return sync_new_run(sync_fd, dir); };
        run->adopt(background_sync::start(io, blocking_, sync_fd, line.size(), std::move(sync)));
        co_return std::unique_ptr<journal>(std::move(run));
    }

    [[nodiscard]] std::string path_of(std::string_view id) const { return dir_ + "/" + std::string(id) + ".json"; }

    static result<std::vector<record>> read_path(const std::string& path, const std::string& id) {
        // O_NONBLOCK: opening a FIFO must not wait for a writer (read_journal refuses it).
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
            if (errno == ENOENT) return make_error(errc::not_found, gocompat::quote(id));
            return system_error(fmt::format("opening journal {}", path), errno);
        }
        std::string text;
        auto failure = read_journal(fd, path, text);
        ::close(fd);
        if (failure) return std::move(*failure);
        auto parsed = parse_journal(text);
        if (!parsed) return parsed.error();
        return std::move(parsed->records);
    }

    static result<std::vector<run_info>> list_directory(const std::string& dir) {
        std::error_code ec;
        fs::directory_iterator it(dir, ec);
        if (ec) return storage_error(fmt::format("reading run store {}: {}", dir, ec.message()));
        std::vector<run_info> out;
        for (const auto& entry : it) {
            const auto name = entry.path().filename().string();
            if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
            const auto id = name.substr(0, name.size() - 5);
            if (!validate_id(id)) continue;
            std::error_code type_ec;
            if (!entry.is_regular_file(type_ec)) continue;
            const auto path = dir + "/" + name;
            struct stat st {};
            if (::stat(path.c_str(), &st) != 0) continue;
            auto records = read_path(path, id);
            if (!records) continue;
            auto state = fold(*records);
            if (!state) continue;
            run_info info;
            info.run_id = state->run_id;
            info.created = state->created;
            info.updated = gocompat::go_time{std::chrono::sys_seconds{std::chrono::seconds{st.st_mtim.tv_sec}},
                                             static_cast<std::uint32_t>(st.st_mtim.tv_nsec),
                                             {}};
            info.model = state->fingerprint.model;
            info.prompt = state->prompt;
            if (state->terminal) info.terminal = state->terminal->reason;
            out.push_back(std::move(info));
        }
        std::sort(out.begin(), out.end(), [](const run_info& a, const run_info& b) { return a.run_id < b.run_id; });
        return out;
    }

    std::string dir_;
    boost::asio::any_io_executor blocking_;
};

// mkdir -p with 0700 for every directory it creates.
void make_directories(const std::string& dir) {
    std::string partial;
    std::size_t pos = 0;
    while (pos <= dir.size()) {
        const auto next = dir.find('/', pos);
        const auto end = next == std::string::npos ? dir.size() : next;
        partial = dir.substr(0, end);
        if (!partial.empty() && ::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
            throw startup_error(fmt::format("creating run store {}: {}", gocompat::quote(dir), std::strerror(errno)));
        }
        if (next == std::string::npos) break;
        pos = next + 1;
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        throw startup_error(fmt::format("creating run store {}: not a directory", gocompat::quote(dir)));
    }
}

}  // namespace

std::string resolve_file_directory(std::string_view option_directory, std::string_view store_dir) {
    if (!option_directory.empty()) {
        fs::path dir(option_directory);
        if (!store_dir.empty() && dir.is_relative()) dir = fs::path(store_dir) / dir;
        return dir.lexically_normal().string();
    }
    if (!store_dir.empty()) return (fs::path(store_dir) / "runs").lexically_normal().string();
    // Never the working directory: journals would leak into repositories.
    std::string base;
    if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != '\0') {
        base = xdg;
    } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
        base = (fs::path(home) / ".local" / "state").string();
    } else {
        throw startup_error(
            "resolving home directory: $HOME is not defined; set XDG_STATE_HOME or harness.sessions.options.directory");
    }
    return (fs::path(base) / "fisk-ai" / "runs").lexically_normal().string();
}

std::shared_ptr<store> make_file_store(std::string directory, boost::asio::any_io_executor blocking) {
    if (directory.empty()) throw startup_error("creating run store: the directory is empty");
    while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
    make_directories(directory);
    return std::make_shared<file_store>(std::move(directory), std::move(blocking));
}

namespace detail {

std::shared_ptr<store> file_store_factory(std::string_view options_json, const context& ctx) {
    const auto options = decode_options(options_json, "file session", {"directory"});
    std::string directory;
    if (const auto* d = options.if_contains("directory")) {
        if (!d->is_string()) {
            throw startup_error(fmt::format(
                "invalid file session options: \"directory\" is a {}, want a string (a path; relative ones are under "
                "the state directory)",
                gocompat::json_kind_name(*d)));
        }
        directory = std::string(d->get_string());
    }
    return make_file_store(resolve_file_directory(directory, ctx.store_dir), ctx.blocking);
}

}  // namespace detail

}  // namespace fiskai::runstate
