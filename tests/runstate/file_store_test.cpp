// The file backend: the shared contract, then what is particular to files: tail repair,
// interior corruption, the OFD lock in one process and across processes, a failed append
// that keeps the terminal writable, directory resolution, options, a Go-written journal.
#include <fiskai/runstate/file_store.hpp>
#include <fiskai/runstate/fingerprint.hpp>

#include "child.hpp"
#include "file_env.hpp"
#include "store_contract.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdarg>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

namespace rs = fiskai::runstate;
namespace llm = fiskai::llm;
namespace fs = std::filesystem;
using fiskai::test::runstate_contract::await;
using fiskai::test::runstate_contract::sample_meta;

namespace {

struct env {
    fiskai::test::temp_dir dir;
    boost::asio::thread_pool pool{2};
    std::shared_ptr<rs::store> store = rs::make_file_store(dir.str() + "/runs", pool.get_executor());
    [[nodiscard]] fs::path journal(const std::string& id) const { return dir.path / "runs" / (id + ".json"); }
};

std::string writer_path() { return fiskai::test::binary_path("tests/runstate/runstate_journal_writer"); }

// While it lives, a write that would make a file of this process larger than `bytes` fails
// part-way (EFBIG), as on a full disk.
class file_size_limit {
public:
    explicit file_size_limit(std::size_t bytes) {
        std::signal(SIGXFSZ, SIG_IGN);
        REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved_) == 0);
        rlimit small = saved_;
        small.rlim_cur = bytes;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    }
    ~file_size_limit() {
        ::setrlimit(RLIMIT_FSIZE, &saved_);
        std::signal(SIGXFSZ, SIG_DFL);
    }
    file_size_limit(const file_size_limit&) = delete;
    file_size_limit& operator=(const file_size_limit&) = delete;

private:
    rlimit saved_{};
};

// runstate_tests is linked with -Wl,--wrap=ftruncate and -Wl,--wrap=fcntl, so the
// backend's calls come through here. While armed, a ftruncate fails with EIO, as a cut-back
// on a failing disk would; and the next OFD lock first runs `before_lock`, which puts another
// thread's step between an open and its lock.
std::atomic<int> ftruncate_failures{0};
std::mutex before_lock_mutex;
std::function<void()> before_lock;

}  // namespace

extern "C" int __real_ftruncate(int fd, off_t length);
extern "C" int __wrap_ftruncate(int fd, off_t length) {
    if (ftruncate_failures > 0) {
        --ftruncate_failures;
        errno = EIO;
        return -1;
    }
    return __real_ftruncate(fd, length);
}

extern "C" int __real_fcntl(int fd, int cmd, ...);
extern "C" int __wrap_fcntl(int fd, int cmd, ...) {
    // As glibc's own fcntl does: the third argument is read as a pointer whatever the command.
    std::va_list args;
    va_start(args, cmd);
    void* arg = va_arg(args, void*);
    va_end(args);
    if (cmd == F_OFD_SETLK) {
        std::function<void()> hook;
        {
            const std::lock_guard lock(before_lock_mutex);
            hook = std::exchange(before_lock, nullptr);
        }
        if (hook) hook();
    }
    return __real_fcntl(fd, cmd, arg);
}

TEST_CASE("file backend: the store contract", "[file][contract]") {
    fiskai::test::temp_dir dir;
    boost::asio::thread_pool pool(2);
    int n = 0;
    fiskai::test::runstate_contract::run_store_contract(
        [&] { return rs::make_file_store(dir.str() + "/s" + std::to_string(n++), pool.get_executor()); });
}

TEST_CASE("file backend: directory and journal modes, one line per record", "[file]") {
    env e;
    auto j = await(e.store->create("modes", sample_meta()));
    REQUIRE(j.has_value());
    struct stat st {};
    REQUIRE(::stat((e.dir.path / "runs").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    REQUIRE(::stat(e.journal("modes").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(await((*j)->append(2, rs::record{2, rs::terminal_record{rs::terminal_reason::completed, ""}})).has_value());
    const auto text = fiskai::test::read_file(e.journal("modes"));
    CHECK(std::count(text.begin(), text.end(), '\n') == 2);
    CHECK(
        text.ends_with("{\"seq\":2,\"protocol\":\"io.choria.fisk-ai.v1.session.terminal\",\"terminal\":{\"reason\":"
                       "\"completed\"}}\n"));
    // Only hashes of the configuration are stored, never the prompt inside the fingerprint.
    CHECK(text.find("\"fingerprint\":{\"provider\":\"anthropic\"") != std::string::npos);
}

TEST_CASE("file backend: a torn last line is dropped on read and cut away under the lock on open", "[file]") {
    env e;
    {
        auto j = await(e.store->create("torn", sample_meta()));
        REQUIRE(j.has_value());
        REQUIRE(await((*j)->append(2, fiskai::test::runstate_contract::assistant_text(2, 0, "kept"))).has_value());
    }
    const auto good = fiskai::test::read_file(e.journal("torn"));

    SECTION("a half record") {
        fiskai::test::write_file(e.journal("torn"), good + R"({"seq":3,"protocol":"io.choria.fisk-ai.v1.sess)");
    }
    SECTION("a whole record without its newline") {
        fiskai::test::write_file(
            e.journal("torn"),
            good + R"({"seq":3,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"completed"}})");
    }
    SECTION("garbage with a newline (Go's rule)") {
        fiskai::test::write_file(e.journal("torn"), good + "{\"seq\":3,\x01\n");
    }

    auto loaded = await(e.store->load("torn"));
    REQUIRE(loaded.has_value());
    CHECK(loaded->last_seq == 2);
    CHECK(!loaded->terminal);

    auto j = await(e.store->open("torn"));
    REQUIRE(j.has_value());
    CHECK((*j)->last_seq() == 2);
    CHECK(fiskai::test::read_file(e.journal("torn")) == good);
    REQUIRE(await((*j)->append_next(rs::terminal_record{rs::terminal_reason::suspended, ""})).has_value());
    auto state = await(e.store->load("torn"));
    REQUIRE(state.has_value());
    CHECK(state->last_seq == 3);
    CHECK(state->terminal->reason == rs::terminal_reason::suspended);
}

TEST_CASE("file backend: a create cut before its meta was written", "[file]") {
    env e;
    REQUIRE(await(e.store->create("first", sample_meta())).has_value());
    SECTION("an empty journal") { fiskai::test::write_file(e.journal("cut"), ""); }
    SECTION("half a meta line") { fiskai::test::write_file(e.journal("cut"), R"({"seq":1,"protocol":"io.ch)"); }
    CHECK(await(e.store->create("cut", sample_meta())).error().code == rs::errc::exists);
    auto l = await(e.store->load("cut"));
    REQUIRE(!l.has_value());
    CHECK(l.error().message == "no records");
    auto j = await(e.store->open("cut"));
    REQUIRE(j.has_value());
    CHECK((*j)->last_seq() == 0);
    CHECK(fiskai::test::read_file(e.journal("cut")).empty());
    j->reset();
    REQUIRE(await(e.store->remove("cut")).has_value());
    CHECK(await(e.store->create("cut", sample_meta())).has_value());
    // list skips it while it has no records, and shows the healthy run.
    auto list = await(e.store->list());
    REQUIRE(list.has_value());
    CHECK(list->size() == 2);
}

TEST_CASE("file backend: interior garbage and schema failures are corrupt and never appended to", "[file]") {
    env e;
    {
        auto j = await(e.store->create("bad", sample_meta()));
        REQUIRE(j.has_value());
    }
    const auto good = fiskai::test::read_file(e.journal("bad"));
    const std::string terminal =
        R"({"seq":3,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"completed"}})";

    SECTION("garbage inside") {
        fiskai::test::write_file(e.journal("bad"), good + "not json\n" + terminal + "\n");
        auto l = await(e.store->load("bad"));
        REQUIRE(!l.has_value());
        CHECK(l.error().code == rs::errc::corrupt);
        CHECK_THAT(l.error().message, Catch::Matchers::StartsWith("corrupt record sequence: line 2: not JSON"));
    }
    SECTION("a last line that parses but fails its schema") {
        fiskai::test::write_file(
            e.journal("bad"),
            good + R"({"seq":2,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"finished"}})"
                   "\n");
        auto l = await(e.store->load("bad"));
        REQUIRE(!l.has_value());
        CHECK_THAT(l.error().message, Catch::Matchers::StartsWith(
                                          "corrupt record sequence: line 2: session.terminal.json: /terminal/reason"));
    }
    const auto before = fiskai::test::read_file(e.journal("bad"));
    auto o = await(e.store->open("bad"));
    REQUIRE(!o.has_value());
    CHECK(o.error().code == rs::errc::corrupt);
    CHECK(fiskai::test::read_file(e.journal("bad")) == before);
    // Nothing holds the lock after a refused open.
    fiskai::test::write_file(e.journal("bad"), good);
    CHECK(await(e.store->open("bad")).has_value());
}

TEST_CASE("file backend: a journal ending at the largest seq refuses the next record instead of skipping it",
          "[file]") {
    env e;
    {
        auto j = await(e.store->create("top", sample_meta()));
        REQUIRE(j.has_value());
    }
    const auto good = fiskai::test::read_file(e.journal("top"));
    const std::string suspended =
        R"({"seq":18446744073709551615,"protocol":"io.choria.fisk-ai.v1.session.terminal","terminal":{"reason":"suspended"}})";
    fiskai::test::write_file(e.journal("top"), good + suspended + "\n");
    const auto before = fiskai::test::read_file(e.journal("top"));

    auto j = await(e.store->open("top"));
    REQUIRE(j.has_value());
    auto next = await((*j)->append_next(rs::terminal_record{rs::terminal_reason::completed, ""}));
    REQUIRE(!next.has_value());
    CHECK(next.error().code == rs::errc::corrupt);
    std::vector<rs::payload> batch{rs::terminal_record{rs::terminal_reason::completed, ""}};
    auto batched = await((*j)->append_next_all(std::move(batch)));
    REQUIRE(!batched.has_value());
    CHECK(batched.error().code == rs::errc::corrupt);
    auto started = await((*j)->append_next_started(rs::terminal_record{rs::terminal_reason::completed, ""}));
    REQUIRE(!started.has_value());
    CHECK(fiskai::test::read_file(e.journal("top")) == before);
}

TEST_CASE("file backend: the OFD lock excludes a second journal of one run in this process", "[file][lock]") {
    env e;
    auto first = await(e.store->create("one", sample_meta()));
    REQUIRE(first.has_value());
    auto again = await(e.store->open("one"));
    REQUIRE(!again.has_value());
    CHECK(again.error().code == rs::errc::locked);
    // A second store over the same directory is another description too.
    auto other_store = rs::make_file_store((e.dir.path / "runs").string(), e.pool.get_executor());
    CHECK(await(other_store->open("one")).error().code == rs::errc::locked);
    auto rm = await(e.store->remove("one"));
    REQUIRE(!rm.has_value());
    CHECK(rm.error().code == rs::errc::locked);
    // Load, read, list and exists take no lock.
    CHECK(await(e.store->load("one")).has_value());
    CHECK(await(e.store->exists("one")).value());
    REQUIRE((*first)->close().has_value());
    auto reopened = await(e.store->open("one"));
    REQUIRE(reopened.has_value());
    reopened->reset();  // the destructor releases the lock too
    CHECK(await(e.store->open("one")).has_value());
}

TEST_CASE("file backend: the lock holds across processes and dies with its holder", "[file][lock]") {
    env e;
    fiskai::test::child_process holder({writer_path(), "hold", (e.dir.path / "runs").string(), "shared"});
    REQUIRE(holder.read_line() == "holding");
    auto o = await(e.store->open("shared"));
    REQUIRE(!o.has_value());
    CHECK(o.error().code == rs::errc::locked);
    CHECK(await(e.store->create("shared", sample_meta())).error().code == rs::errc::exists);

    SECTION("released when the holder closes it") {
        holder.close_stdin();
        CHECK(WIFEXITED(holder.wait()));
    }
    SECTION("released by the kernel when the holder is killed") {
        holder.kill(SIGKILL);
        CHECK(WIFSIGNALED(holder.wait()));
    }
    auto after = await(e.store->open("shared"));
    REQUIRE(after.has_value());
    CHECK((*after)->last_seq() == 1);
    // And the child is refused while this process holds it.
    fiskai::test::child_process second({writer_path(), "hold", (e.dir.path / "runs").string(), "shared"});
    const auto line = second.read_line();
    REQUIRE(line.has_value());
    CHECK(*line == "error run is already locked (by another process or a concurrent run of the same id)");
}

TEST_CASE("file backend: a failed append leaves the journal whole and the terminal writable", "[file]") {
    env e;
    auto j = await(e.store->create("full", sample_meta()));
    REQUIRE(j.has_value());
    const auto before = fiskai::test::read_file(e.journal("full"));

    std::optional<rs::result<void>> big;
    {
        const file_size_limit limit(before.size() + 300);
        big = await((*j)->append(2, fiskai::test::runstate_contract::assistant_text(2, 0, std::string(4000, 'z'))));
    }
    REQUIRE(big);

    REQUIRE(!big->has_value());
    CHECK(big->error().code == rs::errc::storage);
    CHECK(big->error().message == "writing record: File too large");
    CHECK((*j)->last_seq() == 1);
    CHECK(fiskai::test::read_file(e.journal("full")) == before);

    // The runner's local seq moved on; append_next still lands the terminal.
    REQUIRE(await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "journaling run: writing record"}))
                .has_value());
    auto state = await(e.store->load("full"));
    REQUIRE(state.has_value());
    REQUIRE(state->terminal.has_value());
    CHECK(state->terminal->reason == rs::terminal_reason::error);
    CHECK(state->last_seq == 2);
}

TEST_CASE("file backend: a failed append that cannot be cut back takes no more records until reopened", "[file]") {
    env e;
    auto j = await(e.store->create("stuck", sample_meta()));
    REQUIRE(j.has_value());
    const auto before = fiskai::test::read_file(e.journal("stuck"));

    std::optional<rs::result<void>> big;
    {
        const file_size_limit limit(before.size() + 300);
        ftruncate_failures = 1;
        big = await((*j)->append(2, fiskai::test::runstate_contract::assistant_text(2, 0, std::string(4000, 'z'))));
        ftruncate_failures = 0;
    }
    REQUIRE(big);
    REQUIRE(!big->has_value());
    CHECK(big->error().code == rs::errc::storage);
    const std::string stuck = fmt::format(
        "writing record: File too large; cutting the journal back to its last whole record ({} bytes) failed too: "
        "Input/output error; it takes no more records (opening it again drops the partial one)",
        before.size());
    CHECK(big->error().message == stuck);
    // Part of the record is left at the end: anything appended now would follow it.
    CHECK(fiskai::test::read_file(e.journal("stuck")).size() == before.size() + 300);

    auto terminal = await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "journaling run"}));
    REQUIRE(!terminal.has_value());
    CHECK(terminal.error().message == stuck);
    std::vector<rs::payload> batch{rs::terminal_record{rs::terminal_reason::error, "journaling run"}};
    CHECK(await((*j)->append_next_all(std::move(batch))).error().message == stuck);
    CHECK(await((*j)->append_next_started(rs::terminal_record{rs::terminal_reason::error, ""})).error().message ==
          stuck);
    CHECK(fiskai::test::read_file(e.journal("stuck")).size() == before.size() + 300);
    REQUIRE((*j)->close().has_value());

    // Opened again, the partial record is cut away and the journal takes the terminal.
    auto reopened = await(e.store->open("stuck"));
    REQUIRE(reopened.has_value());
    CHECK((*reopened)->last_seq() == 1);
    CHECK(fiskai::test::read_file(e.journal("stuck")) == before);
    REQUIRE(
        await((*reopened)->append_next(rs::terminal_record{rs::terminal_reason::error, "journaling run"})).has_value());
    auto state = await(e.store->load("stuck"));
    REQUIRE(state.has_value());
    REQUIRE(state->terminal.has_value());
    CHECK(state->last_seq == 2);
}

TEST_CASE("file backend: a journal removed or replaced between open's open and its lock is not written in the dark",
          "[file][lock]") {
    env e;
    {
        auto j = await(e.store->create("gone", sample_meta()));
        REQUIRE(j.has_value());
    }
    // remove() takes the lock first and unlinks: what open() holds is then a nameless file.
    {
        const std::lock_guard lock(before_lock_mutex);
        before_lock = [path = e.journal("gone")] { fs::remove(path); };
    }
    auto opened = await(e.store->open("gone"));
    REQUIRE(!opened.has_value());
    CHECK(opened.error().code == rs::errc::not_found);
    CHECK(opened.error().message == "run not found: \"gone\"");

    // Removed and written anew in between (another file of the same records): open() takes
    // the journal the name holds now.
    {
        auto j = await(e.store->create("again", sample_meta()));
        REQUIRE(j.has_value());
        REQUIRE(await((*j)->append_next(rs::terminal_record{rs::terminal_reason::suspended, ""})).has_value());
    }
    {
        const std::lock_guard lock(before_lock_mutex);
        before_lock = [path = e.journal("again")] {
            const auto text = fiskai::test::read_file(path);
            fs::remove(path);
            fiskai::test::write_file(path, text);
        };
    }
    auto reopened = await(e.store->open("again"));
    REQUIRE(reopened.has_value());
    CHECK((*reopened)->last_seq() == 2);
    REQUIRE(await((*reopened)->append_next(rs::terminal_record{rs::terminal_reason::error, "after"})).has_value());
    auto state = await(e.store->load("again"));
    REQUIRE(state.has_value());
    CHECK(state->last_seq == 3);
}

TEST_CASE("file backend: a started append that fails fails the next step and every one after it", "[file]") {
    env e;
    auto j = await(e.store->create_started("late", sample_meta()));
    REQUIRE(j.has_value());
    REQUIRE(await((*j)->durable()).has_value());
    const auto before = fiskai::test::read_file(e.journal("late"));

    // As in the case above, the write fails part-way; here in the background, after
    // append_started has returned.
    std::optional<rs::result<void>> started, settled;
    {
        const file_size_limit limit(before.size() + 300);
        started = await(
            (*j)->append_started(2, fiskai::test::runstate_contract::assistant_text(2, 0, std::string(4000, 'z'))));
        settled = await((*j)->durable());
    }
    REQUIRE((started && settled));
    REQUIRE(started->has_value());
    CHECK((*j)->last_seq() == 2);
    REQUIRE(!settled->has_value());
    CHECK(settled->error().code == rs::errc::storage);
    CHECK(settled->error().message == "writing record: File too large");
    CHECK(fiskai::test::read_file(e.journal("late")) == before);  // cut back to the last whole record

    // Sticky: a record may be missing, so nothing more is appended, durable or not.
    auto next = await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "journaling run"}));
    REQUIRE(!next.has_value());
    CHECK(next.error().message == "writing record: File too large");
    CHECK(!await((*j)->append_next_started(rs::terminal_record{rs::terminal_reason::error, ""})).has_value());
    CHECK(!await((*j)->durable()).has_value());
    CHECK(fiskai::test::read_file(e.journal("late")) == before);
}

TEST_CASE("file backend: a journal closed with its first sync under way still lands the record", "[file]") {
    env e;
    for (int i = 0; i < 20; ++i) {
        const std::string id = "early-" + std::to_string(i);
        // One coroutine, so the close really comes while the sync is under way (await()
        // would drain the background work before returning).
        auto seq = fiskai::test::run_awaitable([&]() -> boost::asio::awaitable<std::uint64_t> {
            auto j = co_await e.store->create_started(id, sample_meta());
            if (!j) co_return 0;
            if (!(*j)->close()) co_return 0;
            j->reset();
            // The background sync holds the lock (its own descriptor) until it has finished.
            boost::asio::steady_timer pause(co_await boost::asio::this_coro::executor);
            for (int attempt = 0; attempt < 2000; ++attempt) {
                auto opened = co_await e.store->open(id);
                if (opened) co_return (*opened)->last_seq();
                if (opened.error().code != rs::errc::locked) co_return 0;
                pause.expires_after(std::chrono::milliseconds(1));
                co_await pause.async_wait(boost::asio::use_awaitable);
            }
            co_return 0;
        }());
        CHECK(seq == 1);
        auto state = await(e.store->load(id));
        REQUIRE(state.has_value());
        CHECK(state->prompt == sample_meta().prompt);
    }
}

TEST_CASE("file backend: records appended while a sync is under way join it and land in order, closed or not",
          "[file]") {
    namespace contract = fiskai::test::runstate_contract;
    env e;
    for (int i = 0; i < 20; ++i) {
        const std::string id = "joined-" + std::to_string(i);
        const bool close_early = i % 2 == 1;
        // One coroutine, so the appends come while the first sync is under way.
        auto appended = fiskai::test::run_awaitable([&]() -> boost::asio::awaitable<bool> {
            auto j = co_await e.store->create_started(id, sample_meta());
            if (!j) co_return false;
            if (!co_await (*j)->append_started(2, contract::assistant_text(2, 0, "checking"))) co_return false;
            if (!co_await (*j)->append_next_started(contract::assistant_text(0, 1, "still checking").payload))
                co_return false;
            if (close_early) {
                // Closed with the syncs under way: they still land, and hold the lock until then.
                co_return (*j)->close().has_value();
            }
            std::vector<rs::payload> last;
            last.push_back(contract::assistant_text(0, 1, "done").payload);
            last.push_back(rs::terminal_record{rs::terminal_reason::completed, ""});
            if (!co_await (*j)->append_next_all(std::move(last))) co_return false;
            co_return (*j)->last_seq() == 5;
        }());
        REQUIRE(appended);
        rs::result<std::vector<rs::record>> read = std::vector<rs::record>{};
        for (int attempt = 0; attempt < 2000; ++attempt) {
            if (auto opened = await(e.store->open(id))) {
                read = await((*opened)->records());
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        REQUIRE(read.has_value());
        REQUIRE(read->size() == (close_early ? 3U : 5U));
        for (std::size_t k = 0; k < read->size(); ++k) CHECK((*read)[k].seq == k + 1);
    }
}

TEST_CASE("file backend: a record that joined a sync and fails is cut away and fails every step after it", "[file]") {
    namespace contract = fiskai::test::runstate_contract;
    env e;
    auto j = await(e.store->create_started("joined-full", sample_meta()));
    REQUIRE(j.has_value());
    REQUIRE(await((*j)->durable()).has_value());
    const auto before = fiskai::test::read_file(e.journal("joined-full"));
    std::optional<rs::result<void>> second, third, settled;
    {
        const file_size_limit limit(before.size() + 300);
        auto outcome = fiskai::test::run_awaitable([&]() -> boost::asio::awaitable<std::array<rs::result<void>, 3>> {
            auto a = co_await (*j)->append_started(2, contract::assistant_text(2, 0, "short"));
            auto b = co_await (*j)->append_started(3, contract::assistant_text(3, 0, std::string(4000, 'z')));
            auto c = co_await (*j)->durable();
            co_return std::array<rs::result<void>, 3>{a, b, c};
        }());
        second = outcome[0];
        third = outcome[1];
        settled = outcome[2];
    }
    REQUIRE((second && third && settled));
    CHECK(second->has_value());
    CHECK(third->has_value());
    REQUIRE(!settled->has_value());
    CHECK(settled->error().message == "writing record: File too large");
    // Cut back to the last whole record: the short one is there, the long one is not.
    const auto after = fiskai::test::read_file(e.journal("joined-full"));
    CHECK(after.size() > before.size());
    CHECK(after.substr(0, before.size()) == before);
    CHECK(after.find("zzzz") == std::string::npos);
    CHECK(after.back() == '\n');
    CHECK(!await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "journaling run"})).has_value());
}

TEST_CASE("file backend: a closed journal refuses every append and read with its path", "[file]") {
    namespace contract = fiskai::test::runstate_contract;
    env e;
    auto j = await(e.store->create_started("shut", sample_meta()));
    REQUIRE(j.has_value());
    REQUIRE((*j)->close().has_value());
    const std::string path = e.journal("shut").string();
    const std::string closed = "appending to " + path + ": the journal is closed";
    auto plain = await((*j)->append(2, contract::assistant_text(2, 0, "late")));
    REQUIRE(!plain.has_value());
    CHECK(plain.error().message == closed);
    auto started = await((*j)->append_started(2, contract::assistant_text(2, 0, "late")));
    REQUIRE(!started.has_value());
    CHECK(started.error().message == closed);
    std::vector<rs::record> batch{contract::assistant_text(2, 0, "late")};
    auto all = await((*j)->append_all(std::move(batch)));
    REQUIRE(!all.has_value());
    CHECK(all.error().message == closed);
    auto read = await((*j)->records());
    REQUIRE(!read.has_value());
    CHECK(read.error().message == "reading " + path + ": the journal is closed");
    CHECK((*j)->last_seq() == 1);
}

TEST_CASE("file backend: list skips what is not a readable run", "[file]") {
    env e;
    REQUIRE(await(e.store->create("ok", sample_meta())).has_value());
    fiskai::test::write_file(e.dir.path / "runs" / "ok.lock", "");          // a stale Go lock file
    fiskai::test::write_file(e.dir.path / "runs" / "bad name.json", "{}");  // not a valid id
    fiskai::test::write_file(e.dir.path / "runs" / "broken.json", "garbage\n{}\n");
    fiskai::test::write_file(e.dir.path / "runs" / "notes.txt", "");
    fs::create_directory(e.dir.path / "runs" / "dir.json");
    auto list = await(e.store->list());
    REQUIRE(list.has_value());
    REQUIRE(list->size() == 1);
    CHECK((*list)[0].run_id == "ok");
    CHECK((*list)[0].updated.seconds.time_since_epoch().count() > 0);
    // Removing a run also removes a stale Go lock file beside it.
    REQUIRE(await(e.store->remove("ok")).has_value());
    CHECK(!fs::exists(e.dir.path / "runs" / "ok.lock"));
    CHECK(!fs::exists(e.journal("ok")));
}

TEST_CASE("file backend: a journal that is not a regular file or is too large is refused with its path", "[file]") {
    env e;
    const auto path = e.journal("odd").string();
    const auto refused = [&](const std::string& why) {
        auto r = await(e.store->read("odd"));
        REQUIRE(!r.has_value());
        CHECK(r.error().code == rs::errc::storage);
        CHECK(r.error().message == "journal " + path + " " + why);
        auto o = await(e.store->open("odd"));
        REQUIRE(!o.has_value());
        CHECK(o.error().message == "journal " + path + " " + why);
    };
    SECTION("a symbolic link to /dev/zero") {
        fs::create_symlink("/dev/zero", path);
        refused("is not a regular file");
    }
    SECTION("a FIFO") {
        REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
        refused("is not a regular file");
    }
    SECTION("a directory") {
        fs::create_directory(path);
        auto r = await(e.store->read("odd"));
        REQUIRE(!r.has_value());
        CHECK(r.error().message == "journal " + path + " is not a regular file");
    }
    SECTION("a (sparse) file one byte over the limit") {
        fiskai::test::write_file(path, "");
        fs::resize_file(path, rs::max_journal_size + 1);
        refused("is larger than the limit of 1073741824 bytes (1073741825 bytes)");
    }
    SECTION("a symbolic link to a journal is followed") {
        REQUIRE(await(e.store->create("real", sample_meta())).has_value());
        fs::create_symlink(e.journal("real"), path);
        CHECK(await(e.store->read("odd")).has_value());
    }
}

TEST_CASE("file backend: directory resolution and options", "[file][options]") {
    SECTION("the option, rebased under the store dir when relative; absolute wins") {
        CHECK(rs::resolve_file_directory("sessions", "/state") == "/state/sessions");
        CHECK(rs::resolve_file_directory("/abs/runs", "/state") == "/abs/runs");
        CHECK(rs::resolve_file_directory("", "/state") == "/state/runs");
    }
    SECTION("XDG_STATE_HOME, then the home directory") {
        const char* old_xdg = std::getenv("XDG_STATE_HOME");
        const std::string saved_xdg = old_xdg ? old_xdg : "";
        ::setenv("XDG_STATE_HOME", "/xdg", 1);
        CHECK(rs::resolve_file_directory("", "") == "/xdg/fisk-ai/runs");
        ::unsetenv("XDG_STATE_HOME");
        CHECK(rs::resolve_file_directory("", "") == std::string(std::getenv("HOME")) + "/.local/state/fisk-ai/runs");
        if (old_xdg) ::setenv("XDG_STATE_HOME", saved_xdg.c_str(), 1);
    }
    SECTION("make_store builds the file backend from strict options") {
        fiskai::test::temp_dir dir;
        boost::asio::thread_pool pool(1);
        rs::context ctx{pool.get_executor(), dir.str(), nullptr};
        auto s = rs::make_store("file", R"({"directory":"mine"})", ctx);
        CHECK(s->location() == dir.str() + "/mine");
        CHECK(fs::is_directory(dir.path / "mine"));
        CHECK(rs::make_store("file", "", ctx)->location() == dir.str() + "/runs");
        CHECK_THROWS_WITH(rs::make_store("file", R"({"dir":"x"})", ctx),
                          R"(invalid file session options: json: unknown field "dir" (known: directory))");
        CHECK_THROWS_WITH(rs::make_store("file", R"({"directory":3})", ctx),
                          Catch::Matchers::StartsWith(R"(invalid file session options: "directory" is a number)"));
        CHECK_THROWS_WITH(rs::make_store("file", "[1]", ctx),
                          "invalid file session options: want a JSON object, got a array");
        CHECK_THROWS_WITH(rs::make_store("sqlite", "", ctx),
                          Catch::Matchers::StartsWith(R"(unknown session backend "sqlite": known backends are [file)"));
        CHECK(!rs::needs_nats("file"));
        CHECK_THROWS_AS(rs::register_backend(
                            "file", [](std::string_view, const rs::context&) { return std::shared_ptr<rs::store>(); }),
                        std::logic_error);
    }
}

TEST_CASE("file backend: a journal the Go original wrote folds and resumes without drift", "[file][go]") {
    env e;
    const auto fixture = fiskai::test::read_file(fiskai::test::source_path("tests/runstate/fixtures/go_journal.json"));
    const std::string id = "2xK9c0ZqJ6m2W3o1S8TQb5ZQwVb";
    fiskai::test::write_file(e.journal(id), fixture);

    auto state = await(e.store->load(id));
    REQUIRE(state.has_value());
    CHECK(state->terminal->reason == rs::terminal_reason::suspended);
    REQUIRE(state->pending.has_value());
    CHECK(state->pending->iteration == 2);
    CHECK(state->counters == rs::counters{3, 2, 1, 1590, 270, 3000, 3000});
    CHECK(state->next_iteration == 3);

    // The same configuration fingerprinted here: no drift, no --force.
    rs::fingerprint current{
        "anthropic",
        "claude-sonnet-4-6",
        rs::system_hash(
            {"You are a NATS operator. Use <tools> & report.", "When you need a human, ask with the hitl tools."}),
        rs::tools_hash(
            {{"stream_info", "Shows a stream's <state> & config",
              boost::json::parse(
                  R"({"type":"object","properties":{"stream":{"type":"string","description":"the stream"},"limit":{"type":"integer","maximum":100}},"required":["stream"]})")
                  .as_object(),
              false},
             {"memory_read", "Reads a memory",
              boost::json::parse(R"({"type":"object","properties":{"key":{"type":"string"}}})").as_object(), true}}),
        "summarized",
        200000,
        50};
    CHECK(rs::check_resume(id, state->fingerprint, current, false) == std::nullopt);

    // Resume: finish the pending tool, answer, complete.
    auto j = await(e.store->open(id));
    REQUIRE(j.has_value());
    CHECK((*j)->last_seq() == 8);
    REQUIRE(await((*j)->append(9, rs::record{9, rs::tool_result_record{"toolu_03", {"toolu_03", "{}", false}, false}}))
                .has_value());
    REQUIRE(await((*j)->append(10, fiskai::test::runstate_contract::assistant_text(10, 3, "done"))).has_value());
    REQUIRE(await((*j)->append_next(rs::terminal_record{rs::terminal_reason::completed, ""})).has_value());
    auto done = await(e.store->load(id));
    REQUIRE(done.has_value());
    CHECK(done->completed());
    CHECK(!done->pending);
    // The Go bytes are untouched and ours follow them.
    CHECK(fiskai::test::read_file(e.journal(id)).starts_with(fixture));
}
