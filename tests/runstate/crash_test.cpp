// A writer killed with SIGKILL in the middle of its append loop: reopening repairs the
// tail and nothing it was told is durable is lost.
#include <fiskai/runstate/file_store.hpp>

#include "child.hpp"
#include "file_env.hpp"
#include "store_contract.hpp"

#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>

#include <csignal>
#include <string>

namespace rs = fiskai::runstate;
using fiskai::test::runstate_contract::await;

TEST_CASE("a journal cut by kill -9 during a write loop reopens repaired with every acknowledged record",
          "[file][crash]") {
    fiskai::test::temp_dir dir;
    boost::asio::thread_pool pool(2);
    const std::string runs = dir.str() + "/runs";
    auto store = rs::make_file_store(runs, pool.get_executor());
    const auto writer = fiskai::test::binary_path("tests/runstate/runstate_journal_writer");

    const auto journal_path = dir.path / "runs" / "crashy.json";
    int torn_seen = 0;
    int rounds = 0;
    std::uint64_t expected_at_least = 0;
    // Rounds on one run, each writer resuming where the killed one stopped. The kill is aimed
    // inside a write: once a record is acknowledged, the file size is watched until the next
    // 1 MiB line has started but not finished (the kernel stops a large write at a fatal
    // signal). Whether or not it lands there, nothing acknowledged may be lost.
    while (rounds < 8 && torn_seen < 2) {
        ++rounds;
        fiskai::test::child_process child({writer, "append", runs, "crashy", "1048576"});
        const auto line = child.read_line();
        REQUIRE(line.has_value());
        REQUIRE(line->starts_with("acked "));
        const std::uint64_t acked = std::stoull(line->substr(6));
        const auto acked_size = std::filesystem::file_size(journal_path);
        // Every record line of this writer is about as long as the first one after the ack
        // boundary; the kill waits (at most 5 s) until the size sits well inside a line.
        const std::uintmax_t line_size = 1048576 + 200;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (std::chrono::steady_clock::now() < deadline) {
            std::error_code ec;
            const auto size = std::filesystem::file_size(journal_path, ec);
            if (ec || size <= acked_size) continue;
            const auto into_line = (size - acked_size) % line_size;
            if (into_line > 4096 && into_line < line_size - 4096) break;
        }
        child.kill(SIGKILL);
        child.wait();

        const auto text = fiskai::test::read_file(journal_path);
        if (!text.empty() && text.back() != '\n') ++torn_seen;

        // Reading without the lock already drops the tear.
        auto loaded = await(store->load("crashy"));
        REQUIRE(loaded.has_value());
        CHECK(loaded->last_seq >= acked);
        CHECK(loaded->last_seq >= expected_at_least);

        auto j = await(store->open("crashy"));
        REQUIRE(j.has_value());
        CHECK((*j)->last_seq() >= acked);
        auto records = await((*j)->records());
        REQUIRE(records.has_value());
        for (std::size_t i = 0; i < records->size(); ++i) CHECK((*records)[i].seq == i + 1);
        CHECK(fiskai::test::read_file(journal_path).back() == '\n');
        expected_at_least = (*j)->last_seq();
    }
    WARN("kills that tore a line (repaired on open): " << torn_seen << " of " << rounds);

    auto j = await(store->open("crashy"));
    REQUIRE(j.has_value());
    REQUIRE(await((*j)->append_next(rs::terminal_record{rs::terminal_reason::completed, ""})).has_value());
    auto state = await(store->load("crashy"));
    REQUIRE(state.has_value());
    CHECK(state->completed());
}
