// libs/jetstream against a real nats-server (JetStream on): stream info and per-subject
// counts, publish with headers and API error codes, last message, get by sequence,
// ordered reads, purge, pull consumers with settling and delivery metadata.

#include <fiskai/jetstream/context.hpp>

#include "async_test.hpp"
#include "js_fixture.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <optional>

namespace asio = boost::asio;
namespace js = fiskai::jetstream;
using namespace std::chrono_literals;
using fiskai::test::js_fixture;
using fiskai::test::run_awaitable;

// nats.c (Debian's libnats) is not instrumented, so ASan cannot see a stale read inside it.
// Freed memory is scribbled instead: such a read (a message settled after its subscription
// was freed) then crashes rather than reading what was there.
extern "C" const char* __asan_default_options() { return "max_free_fill_size=4096:free_fill_byte=190"; }

namespace {

template <class T>
T await(asio::awaitable<T> a) {
    return run_awaitable(std::move(a), 30s);
}

fiskai::test::stream_spec sessions_spec() { return {"SESSIONS", {"fisk.sessions.>"}}; }

}  // namespace

TEST_CASE("stream info reads the settings the checks need, and per-subject counts", "[jetstream][nats]") {
    js_fixture f;
    auto spec = sessions_spec();
    spec.max_msg_size = 8192;
    f.add_stream(spec);
    f.raw_publish("fisk.sessions.a._meta", "m");
    f.raw_publish("fisk.sessions.a.2", "x");
    f.raw_publish("fisk.sessions.b._meta", "m");

    auto info = await(f.js.get_stream_info("SESSIONS"));
    REQUIRE(info.has_value());
    CHECK(info->config.name == "SESSIONS");
    CHECK(info->config.subjects == std::vector<std::string>{"fisk.sessions.>"});
    CHECK(info->config.max_msgs_per_subject == 1);
    CHECK(info->config.discard == js::discard_policy::new_messages);
    CHECK(info->config.discard_new_per_subject);
    CHECK(info->config.max_age == 0ns);
    CHECK(info->config.max_msg_size == 8192);
    CHECK(info->config.retention == js::retention_policy::limits);
    CHECK(info->state.msgs == 3);
    CHECK(info->state.subjects.empty());

    auto filtered = await(f.js.get_stream_info("SESSIONS", "fisk.sessions.*._meta"));
    REQUIRE(filtered.has_value());
    CHECK(filtered->state.subjects ==
          std::map<std::string, std::uint64_t>{{"fisk.sessions.a._meta", 1}, {"fisk.sessions.b._meta", 1}});

    auto missing = await(f.js.get_stream_info("NOPE"));
    REQUIRE(!missing.has_value());
    CHECK(missing.error().code == js::errc::not_found);
    CHECK(missing.error().err_code == js::api_stream_not_found);
    CHECK(!missing.error().message.empty());
}

TEST_CASE("publish carries headers, dedupe, per-subject limits and expectations report API codes",
          "[jetstream][nats]") {
    js_fixture f;
    f.add_stream(sessions_spec());

    js::publish_options o;
    o.msg_id = "nonce-1";
    auto ack = await(f.js.publish("fisk.sessions.r._meta", "meta", {{"X-Test", "one"}}, o));
    REQUIRE(ack.has_value());
    CHECK(ack->stream == "SESSIONS");
    CHECK(ack->sequence == 1);
    CHECK_FALSE(ack->duplicate);

    // The same Nats-Msg-Id inside the duplicate window: acknowledged as a duplicate.
    auto dup = await(f.js.publish("fisk.sessions.r._meta", "meta", {}, o));
    REQUIRE(dup.has_value());
    CHECK(dup->duplicate);
    CHECK(dup->sequence == 1);

    // A second message on a full subject (one per subject, discard new per subject).
    auto full = await(f.js.publish("fisk.sessions.r._meta", "other"));
    REQUIRE(!full.has_value());
    CHECK(full.error().code == js::errc::api_error);
    CHECK(full.error().err_code != 0);
    CHECK(full.error().message.find("maximum messages per subject exceeded") != std::string::npos);

    // A wrong expected last sequence is 10071.
    js::publish_options expect;
    expect.expect_last_sequence = 7;
    auto wrong = await(f.js.publish("fisk.sessions.r.2", "x", {}, expect));
    REQUIRE(!wrong.has_value());
    CHECK(wrong.error().err_code == js::api_wrong_last_sequence);

    auto last = await(f.js.last_message("SESSIONS", "fisk.sessions.r._meta"));
    REQUIRE(last.has_value());
    CHECK(last->data == "meta");
    CHECK(last->sequence == 1);
    CHECK(last->header("X-Test") == "one");
    CHECK(last->header("Nats-Msg-Id") == "nonce-1");
    CHECK(last->time.time_since_epoch().count() > 0);

    auto by_seq = await(f.js.get_message("SESSIONS", 1));
    REQUIRE(by_seq.has_value());
    CHECK(by_seq->subject == "fisk.sessions.r._meta");

    auto none = await(f.js.last_message("SESSIONS", "fisk.sessions.nobody.>"));
    REQUIRE(!none.has_value());
    CHECK(none.error().code == js::errc::not_found);

    auto no_stream = await(f.js.publish("nowhere.at.all", "x"));
    REQUIRE(!no_stream.has_value());
    CHECK(no_stream.error().code == js::errc::no_responders);
}

TEST_CASE("ordered reads return a subject filter's messages in stream order and stop when none come",
          "[jetstream][nats]") {
    js_fixture f;
    f.add_stream(sessions_spec());
    f.raw_publish("fisk.sessions.r._meta", "1");
    for (int i = 2; i <= 5; ++i) f.raw_publish("fisk.sessions.r." + std::to_string(i), std::to_string(i));
    f.raw_publish("fisk.sessions.other._meta", "not mine");

    auto all = await(f.js.ordered_read("SESSIONS", "fisk.sessions.r.>", 5, 2s));
    REQUIRE(all.has_value());
    REQUIRE(all->size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
        CHECK((*all)[i].data == std::to_string(i + 1));
        CHECK((*all)[i].sequence == i + 1);
    }
    // Asking for more than there is: what there is, after one wait.
    auto more = await(f.js.ordered_read("SESSIONS", "fisk.sessions.r.>", 9, 300ms));
    REQUIRE(more.has_value());
    CHECK(more->size() == 5);

    REQUIRE(await(f.js.purge("SESSIONS", "fisk.sessions.r.>")).has_value());
    auto info = await(f.js.get_stream_info("SESSIONS", "fisk.sessions.>"));
    REQUIRE(info.has_value());
    CHECK(info->state.subjects == std::map<std::string, std::uint64_t>{{"fisk.sessions.other._meta", 1}});
    // Idempotent.
    REQUIRE(await(f.js.purge("SESSIONS", "fisk.sessions.r.>")).has_value());
    REQUIRE(await(f.js.delete_message("SESSIONS", 6)).has_value());
    auto gone = await(f.js.get_message("SESSIONS", 6));
    REQUIRE(!gone.has_value());
    CHECK(gone.error().code == js::errc::not_found);
}

// An ordered read that stops before the filter's end leaves the consumer pushing the rest;
// its subscription ends through conns::retire_subscription (nats-io/nats.c#638: see the
// task intake's flood test in tests/a2a-nats, which crashes with an immediate destroy; this
// one did not in 6 runs, the pushes being mostly in or mostly not yet in flight).
TEST_CASE("ordered reads that stop early, with the rest still arriving, end without harm", "[jetstream][nats]") {
    js_fixture f;
    f.add_stream(sessions_spec());
    for (int i = 1; i <= 2000; ++i) f.raw_publish("fisk.sessions.many." + std::to_string(i), std::to_string(i));
    constexpr int rounds = 100;
    int read = 0;
    for (int i = 0; i < rounds; ++i) {
        auto first = await(f.js.ordered_read("SESSIONS", "fisk.sessions.many.>", 1, 2s));
        REQUIRE(first.has_value());
        REQUIRE(first->size() == 1);
        CHECK(first->front().data == "1");
        ++read;
    }
    CHECK(read == rounds);
    // The connection still reads: the whole filter, in order.
    auto all = await(f.js.ordered_read("SESSIONS", "fisk.sessions.many.>", 2000, 2s));
    REQUIRE(all.has_value());
    REQUIRE(all->size() == 2000);
    CHECK(all->back().data == "2000");
}

TEST_CASE("a pull subscription binds to an existing durable and settles messages", "[jetstream][nats]") {
    js_fixture f;
    fiskai::test::stream_spec work{"WORK", {"work.>"}, -1, false, false};
    work.work_queue = true;
    f.add_stream(work);
    f.add_pull_consumer("WORK", "agent", "work.agent");

    auto missing = await(f.js.get_consumer_info("WORK", "nobody"));
    REQUIRE(!missing.has_value());
    CHECK(missing.error().code == js::errc::not_found);
    CHECK(missing.error().err_code == js::api_consumer_not_found);
    auto not_bound = await(f.js.bind_pull("WORK", "nobody", "work.agent"));
    REQUIRE(!not_bound.has_value());

    auto info = await(f.js.get_consumer_info("WORK", "agent"));
    REQUIRE(info.has_value());
    CHECK(info->config.durable == "agent");
    CHECK(info->config.filter_subject == "work.agent");
    CHECK(info->config.ack == js::ack_policy::explicit_ack);
    CHECK(info->config.ack_wait == 30s);
    CHECK(info->config.max_deliver == 5);

    f.raw_publish("work.agent", "job-1");
    f.raw_publish("work.agent", "job-2");

    auto body = [&]() -> asio::awaitable<void> {
        auto sub = co_await f.js.bind_pull("WORK", "agent", "work.agent");
        REQUIRE(sub.has_value());
        auto first = co_await sub->fetch(1, 2s);
        REQUIRE(first.has_value());
        REQUIRE(first->size() == 1);
        auto& m1 = first->front();
        CHECK(m1.data() == "job-1");
        CHECK(m1.metadata().num_delivered == 1);
        CHECK(m1.metadata().stream_sequence == 1);
        CHECK(m1.metadata().stream == "WORK");
        CHECK(m1.metadata().consumer == "agent");
        {
            auto done = co_await m1.in_progress();
            REQUIRE(done.has_value());
        }
        {
            auto done = co_await m1.nak();
            REQUIRE(done.has_value());
        }

        // Redelivered at once, counted.
        auto again = co_await sub->fetch(1, 2s);
        REQUIRE(again.has_value());
        REQUIRE(again->size() == 1);
        CHECK(again->front().data() == "job-1");
        CHECK(again->front().metadata().num_delivered == 2);
        {
            auto done = co_await again->front().ack();
            REQUIRE(done.has_value());
        }

        auto second = co_await sub->fetch(1, 2s);
        REQUIRE(second.has_value());
        REQUIRE(second->size() == 1);
        CHECK(second->front().data() == "job-2");
        {
            auto done = co_await second->front().nak_with_delay(60s);
            REQUIRE(done.has_value());
        }
        // Delayed: nothing to fetch now.
        auto empty = co_await sub->fetch(1, 300ms);
        REQUIRE(empty.has_value());
        CHECK(empty->empty());

        auto ci = co_await f.js.get_consumer_info("WORK", "agent");
        REQUIRE(ci.has_value());
        CHECK(ci->num_ack_pending == 1);

        sub->release();
        auto after = co_await sub->fetch(1, 100ms);
        REQUIRE(!after.has_value());
        CHECK(after.error().code == js::errc::cancelled);
    };
    await(body());
    // The consumer is the operator's: still there after release.
    CHECK(await(f.js.get_consumer_info("WORK", "agent")).has_value());
}

TEST_CASE("a message a fetch returns after release is handed back at once", "[jetstream][nats]") {
    js_fixture f;
    fiskai::test::stream_spec work{"WORK", {"work.>"}, -1, false, false};
    work.work_queue = true;
    f.add_stream(work);
    f.add_pull_consumer("WORK", "agent", "work.agent");

    auto body = [&]() -> asio::awaitable<void> {
        auto sub = co_await f.js.bind_pull("WORK", "agent", "work.agent");
        REQUIRE(sub.has_value());
        std::optional<js::result<std::vector<js::pulled_message>>> outcome;
        auto ex = co_await asio::this_coro::executor;
        asio::co_spawn(ex, sub->fetch(1, 5s), [&](std::exception_ptr, js::result<std::vector<js::pulled_message>> r) {
            outcome = std::move(r);
        });
        // The fetch is waiting on its own thread (or has not started yet: then it is
        // refused at once); release, then give it a message.
        asio::steady_timer t(ex);
        t.expires_after(200ms);
        co_await t.async_wait(asio::use_awaitable);
        sub->release();
        f.raw_publish("work.agent", "late");
        for (int i = 0; i < 1000 && !outcome; ++i) {
            t.expires_after(10ms);
            co_await t.async_wait(asio::use_awaitable);
        }
        REQUIRE(outcome.has_value());
        CHECK(!outcome->has_value());
    };
    await(body());
    // Nak'ed, not held for AckWait: a new subscription gets it at once.
    auto again = [&]() -> asio::awaitable<std::string> {
        auto sub = co_await f.js.bind_pull("WORK", "agent", "work.agent");
        REQUIRE(sub.has_value());
        auto got = co_await sub->fetch(1, 5s);
        REQUIRE(got.has_value());
        std::string out = got->empty() ? "" : got->front().data();
        if (!got->empty()) (void)co_await got->front().ack();
        co_return out;
    };
    CHECK(await(again()) == "late");
}

TEST_CASE("a message taken before release settles after the released subscription's retire delay",
          "[jetstream][nats]") {
    js_fixture f;
    fiskai::test::stream_spec work{"WORK", {"work.>"}, -1, false, false};
    work.work_queue = true;
    f.add_stream(work);
    f.add_pull_consumer("WORK", "agent", "work.agent");
    f.raw_publish("work.agent", "job-1");

    auto body = [&]() -> asio::awaitable<void> {
        auto sub = co_await f.js.bind_pull("WORK", "agent", "work.agent");
        REQUIRE(sub.has_value());
        auto got = co_await sub->fetch(1, 5s);
        REQUIRE(got.has_value());
        REQUIRE(got->size() == 1);
        sub->release();
        // The wait is what is tested: conns::retire_subscription destroys a subscription 1 to
        // 1.25 s after it is retired, and settling reads the message's subscription.
        asio::steady_timer past_retire(co_await asio::this_coro::executor);
        past_retire.expires_after(1500ms);
        co_await past_retire.async_wait(asio::use_awaitable);
        auto acked = co_await got->front().ack();
        REQUIRE(acked.has_value());
        auto ci = co_await f.js.get_consumer_info("WORK", "agent");
        REQUIRE(ci.has_value());
        CHECK(ci->num_ack_pending == 0);
    };
    await(body());
}

TEST_CASE("flush runs off the io thread and reports a closed connection", "[jetstream][nats]") {
    js_fixture f;
    CHECK(await(f.js.flush(2s)).has_value());
    f.connection->close();
    auto closed = await(f.js.flush(2s));
    REQUIRE(!closed.has_value());
    CHECK(closed.error().code == js::errc::connection_closed);
    auto publish = await(f.js.publish("fisk.sessions.x", "x"));
    REQUIRE(!publish.has_value());
    CHECK(publish.error().code == js::errc::connection_closed);
}

TEST_CASE("a publish pending when the connection closes completes with an error instead of hanging",
          "[jetstream][nats]") {
    js_fixture f;
    f.add_stream(sessions_spec());
    f.broker.stop();
    REQUIRE(fiskai::test::wait_until([&] { return !f.connection->is_connected(); }, 20s));
    natsConnection* nc = f.connection->native_handle();
    // Messages published on the connection (counted while it is away too: they are kept for
    // the reconnect).
    auto published_count = [nc] {
        natsStatistics* stats = nullptr;
        std::uint64_t in_msgs = 0, in_bytes = 0, out_msgs = 0, out_bytes = 0, reconnects = 0;
        if (natsStatistics_Create(&stats) == NATS_OK && natsConnection_GetStats(nc, stats) == NATS_OK)
            natsStatistics_GetCounts(stats, &in_msgs, &in_bytes, &out_msgs, &out_bytes, &reconnects);
        natsStatistics_Destroy(stats);
        return out_msgs;
    };
    const auto published_before = published_count();

    auto body = [&]() -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        auto outcome = std::make_shared<std::optional<js::result<js::publish_ack>>>();
        js::publish_options po;
        po.timeout = 1s;
        js::headers no_headers;
        asio::co_spawn(ex, f.js.publish("fisk.sessions.r.1", "x", std::move(no_headers), std::move(po)),
                       [outcome](std::exception_ptr, js::result<js::publish_ack> r) { *outcome = std::move(r); });
        // Handed to nats.c (kept for a reconnect), then the connection closes before nats.c's
        // own timeout: nats.c never answers this publish.
        REQUIRE(co_await fiskai::test::eventually([&] { return published_count() > published_before; }));
        f.connection->close();
        REQUIRE(co_await fiskai::test::eventually([&] { return outcome->has_value(); }, 5s));
        const auto& published = **outcome;
        REQUIRE(!published.has_value());
        CHECK(published.error().code == js::errc::timed_out);
        CHECK(published.error().message.find("the NATS connection may have closed") != std::string::npos);
    };
    const auto started = std::chrono::steady_clock::now();
    fiskai::test::run_awaitable(body(), 10s);
    // Nothing was left on the io_context once the publish had answered: run() returned then.
    CHECK(std::chrono::steady_clock::now() - started < 8s);
}

TEST_CASE("a publish nobody acknowledges still times out through nats.c at its own timeout", "[jetstream][nats]") {
    js_fixture f;
    // A plain subscriber that never replies: the publish reaches it, and no ack comes.
    natsSubscription* silent = nullptr;
    REQUIRE(natsConnection_SubscribeSync(&silent, f.connection->native_handle(), "silent.>") == NATS_OK);
    js::publish_options po;
    po.timeout = 500ms;
    js::headers no_headers;
    auto got = await(f.js.publish("silent.x", "x", std::move(no_headers), std::move(po)));
    fiskai::conns::retire_subscription(silent);
    REQUIRE(!got.has_value());
    CHECK(got.error().code == js::errc::timed_out);
    // nats.c's verdict, not the deadline's for an unanswered publish.
    CHECK(got.error().message.find("may have closed") == std::string::npos);
}
