#pragma once
// The contract every session backend passes, run against a real backing store: a test
// file calls run_store_contract(make) from a TEST_CASE, where `make` returns a fresh,
// empty store (its own directory or stream) each time it is called. Both the file and the
// JetStream backend run exactly these cases (agent-llm-state.md §6, 56-59).

#include <fiskai/runstate/state.hpp>
#include <fiskai/runstate/store.hpp>

#include "async_test.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>

#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace fiskai::test::runstate_contract {

namespace rs = fiskai::runstate;
using store_factory = std::function<std::shared_ptr<rs::store>()>;

inline rs::meta_record sample_meta(const std::string& prompt = "report on the ORDERS stream") {
    rs::meta_record m;
    m.run_id = "";  // set by create
    m.created = gocompat::go_time{std::chrono::sys_seconds{std::chrono::seconds{1777889472}}, 123456789, {}};
    m.fingerprint = {"anthropic", "claude-sonnet-4-6", std::string(64, 'a'), std::string(64, 'b'), "off", 200000, 50};
    m.prompt = prompt;
    return m;
}

inline rs::record assistant_tool_use(std::uint64_t seq, std::int64_t iteration, const std::string& tool_id) {
    rs::assistant_record a;
    a.iteration = iteration;
    a.message.who = llm::role::assistant;
    a.message.content.push_back(llm::tool_use_block{tool_id, "stream_info", R"({"stream":"ORDERS"})", std::nullopt});
    a.stop_reason = "tool_use";
    a.in_tokens = 1200;
    a.out_tokens = 80;
    a.cache_create_tokens = 3000;
    return rs::record{seq, a};
}

inline rs::record tool_result(std::uint64_t seq, const std::string& tool_id, bool remote = false) {
    rs::tool_result_record t;
    t.tool_use_id = tool_id;
    t.result = llm::tool_result_block{tool_id, R"({"exit_code":0,"output":"12 messages"})", false};
    t.remote = remote;
    return rs::record{seq, t};
}

inline rs::record assistant_text(std::uint64_t seq, std::int64_t iteration, const std::string& text) {
    rs::assistant_record a;
    a.iteration = iteration;
    a.message.who = llm::role::assistant;
    a.message.content.push_back(llm::text_block{text});
    a.stop_reason = "end_turn";
    a.in_tokens = 90;
    a.out_tokens = 150;
    a.cache_read_tokens = 3000;
    return rs::record{seq, a};
}

inline rs::record terminal(std::uint64_t seq, rs::terminal_reason reason, const std::string& message = {}) {
    return rs::record{seq, rs::terminal_record{reason, message}};
}

template <class T>
T await(boost::asio::awaitable<T> a) {
    return run_awaitable(std::move(a), std::chrono::seconds(30));
}

// Every case of the contract. Each SECTION gets a fresh store.
inline void run_store_contract(const store_factory& make) {
    SECTION("create, append, read and fold a whole run") {
        auto store = make();
        auto j = await(store->create("run-1", sample_meta()));
        REQUIRE(j.has_value());
        CHECK((*j)->last_seq() == 1);
        REQUIRE(await((*j)->append(2, assistant_tool_use(2, 0, "toolu_01"))).has_value());
        REQUIRE(await((*j)->append(3, tool_result(3, "toolu_01"))).has_value());
        REQUIRE(await((*j)->append(4, assistant_text(4, 1, "ORDERS holds 12 messages."))).has_value());
        REQUIRE(await((*j)->append(5, terminal(5, rs::terminal_reason::completed))).has_value());
        CHECK((*j)->last_seq() == 5);

        auto records = await((*j)->records());
        REQUIRE(records.has_value());
        REQUIRE(records->size() == 5);
        CHECK(std::get<rs::meta_record>(records->front().payload).run_id == "run-1");
        CHECK((*records)[2] == tool_result(3, "toolu_01"));

        auto state = await(store->load("run-1"));
        REQUIRE(state.has_value());
        CHECK(state->run_id == "run-1");
        CHECK(state->completed());
        CHECK(state->messages.size() == 4);
        CHECK(state->counters.llm_calls == 2);
        CHECK(state->counters.tool_calls == 1);
        CHECK(state->counters.cache_read_tokens == 3000);
        CHECK(state->counters.cache_create_tokens == 3000);
        CHECK(state->next_iteration == 2);
        CHECK(!state->pending.has_value());
        CHECK(state->fingerprint == sample_meta().fingerprint);
        CHECK(state->last_seq == 5);
        REQUIRE((*j)->close().has_value());
    }

    SECTION("started creates and appends count at once and read back in order once durable") {
        auto store = make();
        auto j = await(store->create_started("run-s", sample_meta()));
        REQUIRE(j.has_value());
        CHECK((*j)->last_seq() == 1);
        REQUIRE(await((*j)->append_started(2, assistant_tool_use(2, 0, "toolu_01"))).has_value());
        CHECK((*j)->last_seq() == 2);
        REQUIRE(await((*j)->append_next_started(tool_result(3, "toolu_01").payload)).has_value());
        CHECK((*j)->last_seq() == 3);
        REQUIRE(await((*j)->durable()).has_value());
        REQUIRE(await((*j)->append(4, assistant_text(4, 1, "ORDERS holds 12 messages."))).has_value());
        REQUIRE(await((*j)->append_started(5, terminal(5, rs::terminal_reason::completed))).has_value());
        auto records = await((*j)->records());  // waits for the started terminal
        REQUIRE(records.has_value());
        REQUIRE(records->size() == 5);
        CHECK((*records)[2] == tool_result(3, "toolu_01"));
        CHECK((*records)[4] == terminal(5, rs::terminal_reason::completed));
        REQUIRE((*j)->close().has_value());
        auto state = await(store->load("run-s"));
        REQUIRE(state.has_value());
        CHECK(state->completed());
        CHECK(state->last_seq == 5);

        auto again = await(store->create_started("run-s", sample_meta("second")));
        REQUIRE(!again.has_value());
        CHECK(again.error().code == rs::errc::exists);
    }

    SECTION("append_all lands a batch in order, or nothing when it does not continue the run") {
        auto store = make();
        auto j = await(store->create("run-b", sample_meta()));
        REQUIRE(j.has_value());
        REQUIRE(await((*j)->append(2, assistant_tool_use(2, 0, "toolu_01"))).has_value());
        std::vector<rs::record> gap;
        gap.push_back(tool_result(4, "toolu_01"));
        auto refused = await((*j)->append_all(std::move(gap)));
        REQUIRE(!refused.has_value());
        CHECK(refused.error().code == rs::errc::seq_gap);
        CHECK((*j)->last_seq() == 2);
        std::vector<rs::payload> bodies;
        bodies.push_back(tool_result(0, "toolu_01").payload);
        bodies.push_back(assistant_text(0, 1, "ORDERS holds 12 messages.").payload);
        bodies.push_back(terminal(0, rs::terminal_reason::completed).payload);
        REQUIRE(await((*j)->append_next_all(std::move(bodies))).has_value());
        CHECK((*j)->last_seq() == 5);
        auto records = await((*j)->records());
        REQUIRE(records.has_value());
        REQUIRE(records->size() == 5);
        CHECK((*records)[2] == tool_result(3, "toolu_01"));
        CHECK((*records)[4] == terminal(5, rs::terminal_reason::completed));
        REQUIRE((*j)->close().has_value());
    }

    SECTION("a second create of one id is refused and leaves the run untouched") {
        auto store = make();
        auto j = await(store->create("dup", sample_meta("first")));
        REQUIRE(j.has_value());
        REQUIRE((*j)->close().has_value());
        auto again = await(store->create("dup", sample_meta("second")));
        REQUIRE(!again.has_value());
        CHECK(again.error().code == rs::errc::exists);
        CHECK(again.error().message == R"(run already exists: "dup")");
        auto state = await(store->load("dup"));
        REQUIRE(state.has_value());
        CHECK(state->prompt == "first");
    }

    SECTION("open, load and read of an unknown run are not_found; exists says false") {
        auto store = make();
        auto o = await(store->open("nope"));
        REQUIRE(!o.has_value());
        CHECK(o.error().code == rs::errc::not_found);
        CHECK(o.error().message == R"(run not found: "nope")");
        auto l = await(store->load("nope"));
        REQUIRE(!l.has_value());
        CHECK(l.error().code == rs::errc::not_found);
        auto e = await(store->exists("nope"));
        REQUIRE(e.has_value());
        CHECK(!*e);
    }

    SECTION("unsafe ids are refused before any use") {
        auto store = make();
        const std::vector<std::string> unsafe = {"../escape",           "a/b",  ".hidden", "a.b", "",
                                                 std::string(129, 'x'), "-lead"};
        for (const auto& id : unsafe) {
            auto c = await(store->create(id, sample_meta()));
            REQUIRE(!c.has_value());
            CHECK(c.error().code == rs::errc::invalid_id);
            auto o = await(store->open(id));
            REQUIRE(!o.has_value());
            CHECK(o.error().code == rs::errc::invalid_id);
            auto r = await(store->remove(id));
            REQUIRE(!r.has_value());
            CHECK(r.error().code == rs::errc::invalid_id);
        }
    }

    SECTION("a duplicate seq is skipped, a gap is refused and nothing moves") {
        auto store = make();
        auto j = await(store->create("seqs", sample_meta()));
        REQUIRE(j.has_value());
        REQUIRE(await((*j)->append(2, assistant_text(2, 0, "one"))).has_value());
        // A crash-retry of seq 2 with other content is a no-op.
        REQUIRE(await((*j)->append(2, assistant_text(2, 0, "other"))).has_value());
        auto gap = await((*j)->append(4, terminal(4, rs::terminal_reason::completed)));
        REQUIRE(!gap.has_value());
        CHECK(gap.error().code == rs::errc::seq_gap);
        CHECK(gap.error().message == "record seq gap: seq 4 skips ahead of 2");
        CHECK((*j)->last_seq() == 2);
        auto records = await((*j)->records());
        REQUIRE(records.has_value());
        REQUIRE(records->size() == 2);
        CHECK((*records)[1] == assistant_text(2, 0, "one"));
        // append_next continues after a refused append.
        REQUIRE(await((*j)->append_next(rs::terminal_record{rs::terminal_reason::error, "boom"})).has_value());
        CHECK((*j)->last_seq() == 3);
    }

    SECTION("a meta-only run reopens and continues its sequence") {
        auto store = make();
        {
            auto j = await(store->create("meta-only", sample_meta()));
            REQUIRE(j.has_value());
            REQUIRE((*j)->close().has_value());
        }
        auto j = await(store->open("meta-only"));
        REQUIRE(j.has_value());
        CHECK((*j)->last_seq() == 1);
        REQUIRE(await((*j)->append(2, assistant_tool_use(2, 0, "t1"))).has_value());
        REQUIRE((*j)->close().has_value());
        auto state = await(store->load("meta-only"));
        REQUIRE(state.has_value());
        REQUIRE(state->pending.has_value());
        CHECK(state->next_iteration == 1);
    }

    SECTION("a reopened run resumes at its last seq and folds pending tools") {
        auto store = make();
        {
            auto j = await(store->create("resume", sample_meta()));
            REQUIRE(j.has_value());
            REQUIRE(await((*j)->append(2, assistant_tool_use(2, 0, "t1"))).has_value());
            REQUIRE(await((*j)->append(3, terminal(3, rs::terminal_reason::suspended))).has_value());
            REQUIRE((*j)->close().has_value());
        }
        auto j = await(store->open("resume"));
        REQUIRE(j.has_value());
        CHECK((*j)->last_seq() == 3);
        REQUIRE(await((*j)->append(4, tool_result(4, "t1", true))).has_value());
        REQUIRE(await((*j)->append(5, assistant_text(5, 1, "done"))).has_value());
        REQUIRE(await((*j)->append(6, terminal(6, rs::terminal_reason::completed))).has_value());
        REQUIRE((*j)->close().has_value());
        auto state = await(store->load("resume"));
        REQUIRE(state.has_value());
        CHECK(state->completed());
        CHECK(state->counters.remote_tool_calls == 1);
        CHECK(state->messages.size() == 4);
    }

    SECTION("a second writer of one run is refused with locked") {
        auto store = make();
        auto first = await(store->create("busy", sample_meta()));
        REQUIRE(first.has_value());
        // The file backend refuses the open; the JetStream backend takes no lock and
        // refuses the second writer's first conflicting append.
        auto second = await(store->open("busy"));
        if (second.has_value()) {
            REQUIRE(await((*first)->append(2, assistant_text(2, 0, "first"))).has_value());
            auto r = await((*second)->append(2, assistant_text(2, 0, "second")));
            REQUIRE(!r.has_value());
            CHECK(r.error().code == rs::errc::locked);
        } else {
            CHECK(second.error().code == rs::errc::locked);
            CHECK(second.error().message ==
                  "run is already locked (by another process or a concurrent run of the same id)");
        }
        auto records = await(store->read("busy"));
        REQUIRE(records.has_value());
        for (const auto& r : *records) {
            if (const auto* a = std::get_if<rs::assistant_record>(&r.payload)) {
                CHECK(std::get<llm::text_block>(a->message.content.at(0)).text == "first");
            }
        }
    }

    SECTION("list summarizes runs; remove is idempotent; exists follows") {
        auto store = make();
        {
            auto a = await(store->create("alpha", sample_meta("prompt a")));
            REQUIRE(a.has_value());
            REQUIRE(await((*a)->append(2, terminal(2, rs::terminal_reason::completed))).has_value());
            auto b = await(store->create("beta", sample_meta("prompt b")));
            REQUIRE(b.has_value());
        }
        auto list = await(store->list());
        REQUIRE(list.has_value());
        REQUIRE(list->size() == 2);
        CHECK((*list)[0].run_id == "alpha");
        CHECK((*list)[0].prompt == "prompt a");
        CHECK((*list)[0].model == "claude-sonnet-4-6");
        CHECK((*list)[0].terminal == rs::terminal_reason::completed);
        CHECK((*list)[0].created == sample_meta().created);
        CHECK((*list)[1].run_id == "beta");
        CHECK(!(*list)[1].terminal.has_value());

        auto e = await(store->exists("alpha"));
        REQUIRE(e.has_value());
        CHECK(*e);
        REQUIRE(await(store->remove("alpha")).has_value());
        REQUIRE(await(store->remove("alpha")).has_value());
        e = await(store->exists("alpha"));
        REQUIRE(e.has_value());
        CHECK(!*e);
        list = await(store->list());
        REQUIRE(list.has_value());
        CHECK(list->size() == 1);
        // A removed id can be created again.
        auto again = await(store->create("alpha", sample_meta()));
        REQUIRE(again.has_value());
    }

    SECTION("an append in flight when its run is cancelled completes; the terminal follows it") {
        auto store = make();
        auto j = await(store->create("cancelled", sample_meta()));
        REQUIRE(j.has_value());
        rs::journal& journal = **j;
        boost::asio::io_context ioc;
        boost::asio::cancellation_signal signal;
        std::optional<rs::result<void>> first;
        std::optional<rs::result<void>> terminal_written;
        auto run = [&]() -> boost::asio::awaitable<void> {
            // GCC 12: no temporaries inside a co_await expression.
            rs::record in_flight = assistant_text(2, 0, "in flight");
            first = co_await journal.append(2, std::move(in_flight));
            // A run that was hard-cancelled still writes its terminal (serve.md Amendment 6);
            // asio refuses any co_await in a cancelled coroutine until the state is reset.
            co_await boost::asio::this_coro::reset_cancellation_state();
            rs::payload end = rs::terminal_record{rs::terminal_reason::suspended, "interrupted"};
            terminal_written = co_await journal.append_next(std::move(end));
        };
        auto task = run();
        boost::asio::co_spawn(ioc, std::move(task),
                              boost::asio::bind_cancellation_slot(signal.slot(), [](std::exception_ptr e) {
                                  if (e) std::rethrow_exception(e);
                              }));
        // Runs once the coroutine is suspended in its append.
        boost::asio::post(ioc, [&] { signal.emit(boost::asio::cancellation_type::terminal); });
        ioc.run_for(std::chrono::seconds(30));
        REQUIRE(first.has_value());
        CHECK(first->has_value());
        REQUIRE(terminal_written.has_value());
        CHECK(terminal_written->has_value());
        CHECK(journal.last_seq() == 3);
        auto state = await(store->load("cancelled"));
        REQUIRE(state.has_value());
        CHECK(state->messages.size() == 2);
        CHECK(state->terminal == rs::terminal_record{rs::terminal_reason::suspended, "interrupted"});
    }

    SECTION("stored bytes are Go's: a record reads back equal to what was written") {
        auto store = make();
        auto j = await(store->create("bytes", sample_meta("<&> \u2028 \"quoted\"")));
        REQUIRE(j.has_value());
        rs::assistant_record a;
        a.iteration = 0;
        a.message.who = llm::role::assistant;
        a.message.content.push_back(llm::thinking_block{"hmm", std::string("\x00\x01\xff sig", 7)});
        a.message.content.push_back(llm::provider_block{"server_tool_use", R"({"type":"server_tool_use","id":"s1"})"});
        a.message.content.push_back(llm::tool_use_block{"t1", "x", R"({"q":"b","n":[1,2.5]})", std::nullopt});
        REQUIRE(await((*j)->append(2, rs::record{2, a})).has_value());
        auto records = await(store->read("bytes"));
        REQUIRE(records.has_value());
        REQUIRE(records->size() == 2);
        CHECK((*records)[1] == rs::record{2, a});
        CHECK(std::get<rs::meta_record>((*records)[0].payload).prompt == "<&> \u2028 \"quoted\"");
    }
}

}  // namespace fiskai::test::runstate_contract
