// The a2a channel's intake over a real nats-server (serve.md §6.3, §6.8, Amendments 9, 11,
// 16): refusals are a negative ack and one terminal error; hostile ids never reach a
// subject; the drain refuses what nats.c still holds; follow-ups are decided by the store.
#include "a2a_channel_support.hpp"

#include <fiskai/runstate/file_store.hpp>
#include <fiskai/runstate/store.hpp>

#include <boost/asio/thread_pool.hpp>

#include <filesystem>

using namespace a2a_channel_test;
namespace runstate = fiskai::runstate;

namespace {

void check_refusal(const raw_caller& c, std::size_t first, const std::string& task, const std::string& code,
                   const std::string& reason) {
    auto ack = c.at_as<a2a::task_ack>(first);
    CHECK_FALSE(ack.accepted);
    CHECK(ack.reason == reason);
    CHECK(ack.sequence == 1);
    CHECK(ack.request == task);
    auto err = c.at_as<a2a::task_error>(first + 1);
    CHECK(err.stop_reason == "error");
    CHECK(err.code == code);
    CHECK(err.error == reason);
    CHECK(err.sequence == 2);
    CHECK(err.conversation == serve::a2a_session_id("svc", c.name(), task));
}

const std::string shutting_down = "the agent is shutting down and takes no new tasks; send it again";

}  // namespace

TEST_CASE("a2a channel: the drain refuses every request nats.c still holds, then next() ends", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller a(*e.caller_conn, "svc", "caller-a");
    raw_caller b(*e.caller_conn, "svc", "caller-b");
    a.send(a.task("P1"));
    b.send(b.task("P2"));
    // Nobody called next(): both wait in nats.c.
    REQUIRE(run_until(e.ioc, [&] { return ch->pending_requests() == 2; }));
    ch->release();
    REQUIRE(e.wait_count(a, 2));
    REQUIRE(e.wait_count(b, 2));
    check_refusal(a, 0, "P1", "shutting_down", shutting_down);
    check_refusal(b, 0, "P2", "shutting_down", shutting_down);
    auto w = a2a_test::run(e.ioc, ch->next());
    CHECK(w == nullptr);
    ch->release();  // idempotent
}

TEST_CASE("a2a channel: next() ends when the drain starts, a request racing the drain is never acked",
          "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller a(*e.caller_conn, "svc");
    // next() is waiting when the drain starts: it ends with nullptr.
    auto pending = a2a_test::start(e.ioc, ch->next());
    run_until(
        e.ioc, [] { return false; }, 100ms);
    ch->release();
    REQUIRE(run_until(e.ioc, [&] { return pending->has_value(); }));
    CHECK(**pending == nullptr);
    // A request racing the drain is refused (nats.c still held it) or finds nobody
    // (no responders): never acked.
    a.send(a.task("P3"));
    run_until(
        e.ioc, [] { return false; }, 300ms);
    const auto got = a.all();
    if (!got.empty() && !got[0].data.empty()) {
        REQUIRE(got.size() == 2);
        check_refusal(a, 0, "P3", "shutting_down", shutting_down);
    }
}

TEST_CASE("a2a channel: a work in flight keeps its subscriptions across the drain", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller a(*e.caller_conn, "svc");
    a.send(a.task("P4"));
    auto w = e.take(*ch);
    ch->release();
    auto hooks = w->run_context();
    a.cancel();
    REQUIRE(run_until(e.ioc, [&] { return hooks.stop->closed(); }));
    serve::outcome o;
    o.reason = "suspended";
    e.done(*w, o);
    REQUIRE(e.wait_count(a, 3));
    check_reply_set(a, "P4", w->session_id);
}

TEST_CASE("a2a channel: hostile task ids are refused before any subject is built", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    for (const std::string& bad : std::vector<std::string>{"a.b", "*", std::string(65, 'x')}) {
        DYNAMIC_SECTION("task id " << bad) {
            raw_caller c(*e.caller_conn, "svc");
            auto req = c.task("GOOD");
            req.request = bad;
            req.id = bad;
            auto body = a2a::encode(req);
            REQUIRE(body.has_value());
            c.send_raw(*body);
            auto next = a2a_test::start(e.ioc, ch->next());
            REQUIRE(e.wait_count(c, 1));
            auto r = c.all().at(0);
            CHECK(r.service_error_code == "400");
            CHECK_FALSE(r.service_error.empty());
            CHECK(r.data.empty());
            CHECK_FALSE(next->has_value());  // no work came of it
            ch->release();
            REQUIRE(run_until(e.ioc, [&] { return next->has_value(); }));
            CHECK(**next == nullptr);
        }
    }
}

TEST_CASE("a2a channel: a bad budget and an expired request are refused with their codes", "[serve][a2a][nats]") {
    env e;
    auto ch = e.channel(e.options());
    raw_caller c(*e.caller_conn, "svc");
    auto req = c.task("B1");
    req.budget = a2a::budget{0, 0, "soon"};
    c.send(req);
    auto next = a2a_test::start(e.ioc, ch->next());
    REQUIRE(e.wait_count(c, 2));
    check_refusal(c, 0, "B1", "invalid_budget",
                  "invalid budget.call_timeout \"soon\": time: invalid duration \"soon\"");

    raw_caller late(*e.caller_conn, "svc");
    auto old = late.task("E1");
    old.time = a2a::timestamp(std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now() -
                                                                                     std::chrono::minutes(5)));
    late.send(old);
    REQUIRE(e.wait_count(late, 2));
    auto ack = late.at_as<a2a::task_ack>(0);
    CHECK(ack.reason.starts_with("the task waited 5m"));
    CHECK(late.at_as<a2a::task_error>(1).code == "expired");
    CHECK_FALSE(next->has_value());
    ch->release();
    REQUIRE(run_until(e.ioc, [&] { return next->has_value(); }));
}

TEST_CASE("a2a channel: follow-ups are decided by the store, a busy session is refused", "[serve][a2a][nats]") {
    env e;
    const auto dir = std::filesystem::temp_directory_path() / ("a2a-channel-" + a2a::new_id());
    std::filesystem::create_directories(dir);
    boost::asio::thread_pool blocking(1);
    auto store = runstate::make_file_store(dir.string(), blocking.get_executor());
    auto ch = std::make_shared<serve::a2a_channel>(*e.worker_conn, e.ioc.get_executor(), store, e.options());
    raw_caller c(*e.caller_conn, "svc");

    SECTION("a continuation of a task nobody ran here is unknown") {
        auto cont = c.task("F1");
        cont.id = a2a::new_id();
        c.send(cont);
        auto next = a2a_test::start(e.ioc, ch->next());
        REQUIRE(e.wait_count(c, 2));
        check_refusal(c, 0, "F1", "unknown_task", "task \"F1\" is not known to this worker");
    }
    SECTION("a new task whose session exists is a duplicate; its continuation is a follow-up") {
        const auto session = serve::a2a_session_id("svc", "caller-1", "F2");
        runstate::meta_record meta;
        meta.prompt = "first";
        auto created = a2a_test::run(e.ioc, store->create(session, meta));
        REQUIRE(created.has_value());
        created->reset();  // unlock

        c.send(c.task("F2"));
        auto next = a2a_test::start(e.ioc, ch->next());
        REQUIRE(e.wait_count(c, 2));
        check_refusal(c, 0, "F2", "duplicate_task",
                      "task \"F2\" was already taken here; continue it with --continue F2");

        raw_caller d(*e.caller_conn, "svc");
        auto cont = d.task("F2", "and now?");
        cont.id = a2a::new_id();
        d.send(cont);
        REQUIRE(run_until(e.ioc, [&] { return next->has_value(); }));
        auto w = std::move(**next);
        REQUIRE(w);
        CHECK(w->follow_up);
        CHECK(w->session_id == session);
        CHECK(w->prompt == "and now?");

        // While it is taken, another continuation of the session is busy.
        raw_caller f(*e.caller_conn, "svc");
        auto again = f.task("F2");
        again.id = a2a::new_id();
        f.send(again);
        auto next2 = a2a_test::start(e.ioc, ch->next());
        REQUIRE(e.wait_count(f, 2));
        check_refusal(f, 0, "F2", "session_busy",
                      "task \"F2\" is still running here; wait for its terminal message before continuing it");

        // Its replies go to the continuation's subjects, keyed by its own id (Amendment 10).
        (void)w->run_context();
        d.cancel();
        REQUIRE(e.wait_count(d, 2));
        CHECK(std::get<a2a::status_block>(d.at_as<a2a::task_event>(1).block).phase == "stopping");
        serve::outcome o;
        o.reason = "suspended";
        e.done(*w, o);
        REQUIRE(e.wait_count(d, 3));
        check_reply_set(d, "F2", session);
    }
    ch->release();
    ch.reset();
    store.reset();
    blocking.join();
    std::filesystem::remove_all(dir);
}
