// Faults of the queue channel against a real nats-server (serve.md §12 fault scenario 3 and
// issue 16): the broker restarting mid-run (same port and store), the broker gone past the
// reconnect limit, two workers drained at once, and the answer store refusing a put.
//
// Scenario 3 also names "during an open question": the queue path has none. A queue work
// carries no prompter (§7.3), so a question tool is denied by default-deny and nothing can
// be open on the broker while a queue job runs.
#include "queue_child.hpp"
#include "queue_support.hpp"

#include <fiskai/runstate/state.hpp>

#include <boost/asio/thread_pool.hpp>

using namespace queue_test;

namespace {

const std::string gate_conversation = R"("conversation":"gate")";

std::size_t gate_requests(const world& w, int step) {
    return count_lines(w.llm_log, {gate_conversation, fmt::format(R"("step":{})", step)});
}

std::shared_ptr<gate_state> add_gate(world& w) {
    auto g = std::make_shared<gate_state>();
    w.h->rt->tools.push_back(gate_tool(g));
    return g;
}

}  // namespace

TEST_CASE("queue fault: the broker restarts while a job runs, the worker reconnects and the job is answered once",
          "[serve][queue][nats][fault]") {
    world w(provision{.restartable = true}, fault_script());
    auto g = add_gate(w);
    worker b(w, w.logged_options(30s));
    w.enqueue("R1", "GATE please");
    REQUIRE(w.until([&] { return g->entered == 1; }, 30s));

    // Mid-run (the job taken, its run in the gate tool): the broker goes away and comes back
    // on the same port with the same store.
    w.stop_broker();
    w.start_broker();
    g->open = true;

    auto got = w.answer("R1", 60s);
    REQUIRE(got);
    CHECK(stored_as<a2a::task_result>(*got).text == "gate answer");
    REQUIRE(w.until([&] { return b.channel->in_flight() == 0; }));
    // Acked: the work queue holds nothing, and the job was never delivered again.
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }, 30s));
    CHECK(w.consumer().num_redelivered == 0);
    CHECK(w.logged_count("queue: took a job") == 1);
    // Stored once (revision 1 of a fresh bucket), no step asked twice, the tool run once.
    CHECK(w.answer("R1", 1s)->revision == 1);
    CHECK(gate_requests(w, 0) == 1);
    CHECK(gate_requests(w, 1) == 1);
    CHECK(g->passed == 1);
}

TEST_CASE("queue fault: the broker is down when a run ends, the answer lands once it is back, the work not repeated",
          "[serve][queue][nats][fault]") {
    world w(provision{.ack_wait = 3s, .restartable = true}, fault_script());
    auto g = add_gate(w);
    worker b(w, w.logged_options(3s));
    w.enqueue("R2", "GATE please");
    REQUIRE(w.until([&] { return g->entered == 1; }, 30s));

    w.stop_broker();
    g->open = true;
    // The run ends with the broker gone: its last step asked, its terminal journaled.
    const auto session = serve::queue_session_id("svc", "R2");
    REQUIRE(w.until(
        [&] {
            auto state = fiskai::test::run_on(w.h->ioc, w.h->store->load(session), 10s);
            return state && state->terminal.has_value();
        },
        30s));
    w.start_broker();

    // Its answer put either waited for the reconnect or failed and the job came again
    // (then replayed from the journal); either way it is answered, acked, and no work repeats.
    auto got = w.answer("R2", 60s);
    REQUIRE(got);
    CHECK(stored_as<a2a::task_result>(*got).text == "gate answer");
    REQUIRE(w.until([&] { return b.channel->in_flight() == 0 && w.stream().state.msgs == 0; }, 60s));
    CHECK(gate_requests(w, 0) == 1);
    CHECK(gate_requests(w, 1) == 1);
    CHECK(g->passed == 1);
    CAPTURE(*w.logged);
    // A second delivery, if there was one, was a replay.
    CHECK(w.logged_count("queue: answered a job") >= 1);
    CHECK(w.logged_count("replayed=false") <= 1);
}

TEST_CASE("queue fault: the broker stays down past the reconnect limit, the channel fails and the server drains",
          "[serve][queue][nats][fault]") {
    world w(provision{}, fault_script());
    // The worker's own connection gives up after 3 reconnects 100 ms apart (the app's is Go's
    // 60 × 2 s); the world's keeps trying, as a bystander's would.
    auto co = fiskai::test::js_test_connect_options();
    co.max_reconnect = 3;
    co.reconnect_wait = 100ms;
    auto conn = conns::connection::dial_url(w.nats.broker.url(), co);
    asio::thread_pool pool(2);
    {
        js::context jsctx(*conn, pool.get_executor());
        auto ch = fiskai::test::run_on(
            w.h->ioc, serve::queue_channel::open(*conn, jsctx, w.h->ioc.get_executor(), w.options()), 30s);
        serve::server server(w.h->ioc.get_executor(), w.h->rt, serve::server_options{1});
        server.add(ch, serve::channel_options{true});
        auto finished = asio::co_spawn(w.h->ioc, server.run(), asio::use_future);
        w.enqueue("F1", "hello");
        REQUIRE(w.answer("F1", 30s));

        w.nats.broker.stop();
        REQUIRE(w.until([&] { return finished.wait_for(0s) == std::future_status::ready; }, 60s));
        // serve::fault: fisk-ai-serve maps it to exit 2 so a supervisor restarts the worker.
        CHECK_THROWS_WITH(finished.get(), Catch::Contains("channel \"queue\" failed: the NATS connection closed"));
        CHECK(conn->is_closed());
    }
    pool.join();
}

TEST_CASE("queue fault: two workers drained at once finish their jobs, the jobs still queued go to a third",
          "[serve][queue][nats][fault]") {
    world w(provision{.ack_wait = 3s}, fault_script());
    const std::vector<std::string> args{w.nats.broker.url(), std::to_string(w.llm_port), (w.dir / "runs").string(),
                                        "3"};
    child_worker a(args);
    child_worker b(args);
    const std::vector<std::string> tasks{"D1", "D2", "D3", "D4"};
    for (const auto& t : tasks) w.enqueue(t, "SLOW job " + t);
    // Each worker (one slot) runs one job, its model call held 5 s; two jobs wait in the stream.
    REQUIRE(w.until([&] { return w.llm_requests("slow") == 2; }, 30s));
    CHECK(w.consumer().num_ack_pending == 2);

    a.terminate();
    b.terminate();
    CHECK(a.wait_exit(60s) == std::optional<int>(0));
    CHECK(b.wait_exit(60s) == std::optional<int>(0));

    // The running jobs finished and were answered and acked; the waiting ones were never
    // taken by a draining worker and are still queued.
    std::vector<std::string> answered;
    std::vector<std::string> queued;
    for (const auto& t : tasks) (w.answer(t, 0s) ? answered : queued).push_back(t);
    REQUIRE(answered.size() == 2);
    for (const auto& t : answered) CHECK(stored_as<a2a::task_result>(*w.answer(t, 0s)).text == "slow answer");
    CHECK(w.stream().state.msgs == 2);
    const auto c = w.consumer();
    CHECK(c.num_ack_pending == 0);
    CHECK(c.num_redelivered == 0);
    CHECK(c.num_pending == 2);

    worker third(w, w.options(3s));
    for (const auto& t : queued) {
        auto got = w.answer(t, 30s);
        REQUIRE(got);
        CHECK(stored_as<a2a::task_result>(*got).text == "slow answer");
    }
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }, 30s));
    // Every job answered once (four puts in the bucket's stream), none run twice.
    CHECK(w.stream("KV_FISK_TASKS").state.last_seq == 4);
    CHECK(w.llm_requests("slow") == 4);
    CHECK(w.consumer().num_redelivered == 0);
}

TEST_CASE("queue fault: the answer store refuses a put, the job is not acked, comes again and is replayed",
          "[serve][queue][nats][fault]") {
    world w(provision{.max_deliver = 10}, fault_script());
    auto g = add_gate(w);
    g->open = true;
    auto o = w.logged_options(30s);
    o.max_deliver = 10;
    o.put_retry_delay = 1000ms;
    worker b(w, o);
    // The operator lowers the bucket's max value size under a running worker: nats-server
    // refuses every answer put (error 10054, message size exceeds maximum allowed).
    w.set_max_msg_size("KV_FISK_TASKS", 64);
    w.enqueue("A1", "GATE please");
    REQUIRE(w.until([&] { return w.logged_count("queue: could not store an answer") >= 2; }, 60s));
    CAPTURE(*w.logged);
    // Refused twice: the job was handed back (not acked) and delivered again; nothing stored.
    CHECK(w.logged_count("delivery=2") >= 1);
    CHECK(w.stream().state.msgs == 1);
    CHECK_FALSE(w.answer("A1", 0s));
    // The server's reason, without nats.c's source location.
    CHECK(w.logged_count("queue: could not store an answer key=svc.A1 error=message size exceeds maximum allowed") >=
          1);

    w.set_max_msg_size("KV_FISK_TASKS", 786432);
    auto got = w.answer("A1", 30s);
    REQUIRE(got);
    CHECK(stored_as<a2a::task_result>(*got).text == "gate answer");
    CHECK(got->revision == 1);
    REQUIRE(w.until([&] { return b.channel->in_flight() == 0 && w.stream().state.msgs == 0; }, 30s));
    // The work ran once: one request per step, the tool once; the stored answer came from
    // the journal on a later delivery.
    CHECK(gate_requests(w, 0) == 1);
    CHECK(gate_requests(w, 1) == 1);
    CHECK(g->passed == 1);
    CHECK(w.logged_count("replayed=true") == 1);
    CHECK(w.logged_count("queue: answered a job") == 1);
}
