// The queue channel on the real server and agent (fiskai-fake-llm, the file journal) over a
// real nats-server with JetStream: answers stored, invalid jobs terminated, heartbeats past
// the ack wait, a finished job replayed without a model call, a nak taken by another worker,
// in_flight across release (a done() cut short, an invalid job), and the startup texts when
// the operator's storage is missing or different.
#include "queue_support.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>

#include <memory>
#include <optional>

using namespace queue_test;

TEST_CASE("queue: a job's answer lands in the task store and the job leaves the stream, a redelivery replays it",
          "[serve][queue][nats]") {
    world w;
    worker a(w, w.options());
    CHECK(a.channel->description() ==
          "queue: jobs on choria.fisk-ai.work.svc from stream FISK_WORK (consumer svc, ack wait 30s, max deliver 5), "
          "answers in KV FISK_TASKS");
    w.enqueue("Q1", "hello there");
    auto got = w.answer("Q1");
    REQUIRE(got);
    auto result = stored_as<a2a::task_result>(*got);
    CHECK(result.text == "first answer");
    CHECK(result.stop_reason == "end_turn");
    CHECK(result.request == "Q1");
    CHECK(result.sequence == 1);
    CHECK(result.conversation == serve::queue_session_id("svc", "Q1"));
    CHECK(result.recipient->name == "producer");
    REQUIRE(w.until([&] { return a.channel->in_flight() == 0; }));
    CHECK(w.stream().state.msgs == 0);
    CHECK(w.llm_requests() == 1);

    // The same task again (a producer retry past the duplicate window, or a lost ack): the
    // session already has its outcome, so the answer is stored again from the journal.
    w.enqueue("Q1", "hello there", "Q1-again");
    auto again = w.answer("Q1", 30s, got->revision);
    REQUIRE(again);
    CHECK(stored_as<a2a::task_result>(*again).text == "first answer");
    CHECK(w.llm_requests() == 1);
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
}

TEST_CASE("queue: invalid jobs are terminated with their error stored, an oversized job too", "[serve][queue][nats]") {
    world w;
    worker a(w, w.options());
    w.nats.raw_publish("choria.fisk-ai.work.svc", "this is not a request", "BAD1");
    auto bad = w.answer("BAD1");
    REQUIRE(bad);
    auto e = stored_as<a2a::task_error>(*bad);
    CHECK(e.code == "invalid_request");
    CHECK(e.stop_reason == "error");
    CHECK(e.request == "BAD1");

    // 786,433 bytes: one over the a2a cap, inside the stream's limit (Amendment 4).
    std::string big = w.job_body("BIG1", "x");
    big.insert(big.find("\"prompt\":\"x") + 10, std::string(786433 - big.size(), 'y'));
    REQUIRE(big.size() == 786433);
    w.nats.raw_publish("choria.fisk-ai.work.svc", big, "BIG1");
    auto big_answer = w.answer("BIG1");
    REQUIRE(big_answer);
    CHECK(stored_as<a2a::task_error>(*big_answer).code == "invalid_request");

    // A continuation cannot be a queue job (Amendment 17).
    a2a::task_request cont;
    a2a::stamp_request(cont, "producer", "svc", "C1");
    cont.id = "C1-next";
    cont.prompt = "more";
    w.nats.raw_publish("choria.fisk-ai.work.svc", a2a::encode(cont).value(), "C1-next");
    auto c = w.answer("C1");
    REQUIRE(c);
    CHECK(stored_as<a2a::task_error>(*c).error ==
          R"(a queue job must be a new task: its request "C1" differs from its id "C1-next")");

    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
    CHECK(w.llm_requests() == 0);
}

TEST_CASE("queue: an invalid job is answered under the task its body names, and never replaces an answer",
          "[serve][queue][nats]") {
    world w;
    worker a(w, w.logged_options());
    // No Nats-Msg-Id: the body's own request names the task.
    const std::string bad_sequence = R"({"protocol":"io.choria.fisk-ai.v1.request","id":"OWN1","request":"OWN1",)"
                                     R"("sequence":"one","prompt":"hello"})";
    w.nats.raw_publish("choria.fisk-ai.work.svc", bad_sequence);
    auto own = w.answer("OWN1");
    REQUIRE(own);
    CHECK(stored_as<a2a::task_error>(*own).code == "invalid_request");

    // A task answered, then a malformed job naming it under another Nats-Msg-Id (a producer's
    // bad retry): the job is terminated and the answer stays as it was.
    w.enqueue("Q2", "hello there");
    auto good = w.answer("Q2");
    REQUIRE(good);
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
    w.nats.raw_publish("choria.fisk-ai.work.svc", R"({"request":"Q2","prompt":7})", "Q2-retry");
    // Terminated only after its answer was settled: once the stream is empty, the store is decided.
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
    auto still = w.answer("Q2");
    REQUIRE(still);
    CHECK(still->revision == good->revision);
    CHECK(stored_as<a2a::task_result>(*still).text == "first answer");
    CHECK(w.logged_count("queue: kept the answer already stored for the invalid job's task task=Q2") == 1);
}

TEST_CASE("queue: heartbeats keep a job past its 3 s ack wait on one worker", "[serve][queue][nats]") {
    world w(provision{3s});
    worker a(w, w.options(3s));
    const auto started = std::chrono::steady_clock::now();
    w.enqueue("S1", "SLOW please");
    auto got = w.answer("S1");
    REQUIRE(got);
    CHECK(std::chrono::steady_clock::now() - started > 3s);
    CHECK(stored_as<a2a::task_result>(*got).text == "slow answer");
    REQUIRE(w.until([&] { return a.channel->in_flight() == 0; }));
    auto c = w.consumer();
    CHECK(c.num_redelivered == 0);
    CHECK(c.num_ack_pending == 0);
    CHECK(w.llm_requests("slow") == 1);
}

TEST_CASE("queue: an abandoned job is handed back at once and another worker answers it", "[serve][queue][nats]") {
    world w;
    // Worker A takes the job and reports it abandoned (its server was cancelled before a slot).
    auto a = w.open(w.options());
    w.enqueue("N1", "hello");
    auto taken = fiskai::test::run_on(w.h->ioc, a->next(), 30s);
    REQUIRE(taken);
    CHECK(taken->session_id == serve::queue_session_id("svc", "N1"));
    CHECK_FALSE(taken->follow_up);
    CHECK(taken->prompter == nullptr);
    CHECK(taken->label == "queue job N1 (delivery 1)");
    serve::outcome abandoned;
    abandoned.abandoned = true;
    abandoned.error = std::string(serve::text::abandoned);
    fiskai::test::run_on(w.h->ioc, taken->done(abandoned), 30s);
    taken.reset();
    a->release();

    // Worker B gets it well inside the 30 s ack wait: the nak handed it back.
    const auto started = std::chrono::steady_clock::now();
    worker b(w, w.options());
    auto got = w.answer("N1", 10s);
    REQUIRE(got);
    CHECK(std::chrono::steady_clock::now() - started < 10s);
    CHECK(stored_as<a2a::task_result>(*got).text == "first answer");
    CHECK(w.llm_requests() == 1);
}

TEST_CASE("queue: an LLM 429 storm longer than the retries stores the error answer", "[serve][queue][nats]") {
    world w;
    worker a(w, w.options());
    w.enqueue("R1", "STORM ahead");
    auto got = w.answer("R1");
    REQUIRE(got);
    auto e = stored_as<a2a::task_error>(*got);
    CHECK(e.code == "run_failed");
    CHECK(e.error.find("429") != std::string::npos);
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
    CHECK(w.llm_requests("storm") == 2);  // the call and its one retry
}

TEST_CASE("queue: release stops fetching, a job in flight still settles", "[serve][queue][nats]") {
    world w(provision{3s});
    auto a = w.open(w.options(3s));
    w.enqueue("D1", "hello");
    auto taken = fiskai::test::run_on(w.h->ioc, a->next(), 30s);
    REQUIRE(taken);
    a->release();
    CHECK(fiskai::test::run_on(w.h->ioc, a->next(), 30s) == nullptr);
    CHECK(a->in_flight() == 1);
    // Heartbeats continue after release: past the ack wait the job is still ours.
    const auto until = std::chrono::steady_clock::now() + 4s;
    w.until([&] { return std::chrono::steady_clock::now() >= until; }, 5s);
    CHECK(w.consumer().num_redelivered == 0);
    serve::outcome done;
    done.reason = "completed";
    done.text = "by hand";
    fiskai::test::run_on(w.h->ioc, taken->done(done), 30s);
    CHECK(a->in_flight() == 0);
    auto got = w.answer("D1");
    REQUIRE(got);
    CHECK(stored_as<a2a::task_result>(*got).text == "by hand");
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
}

TEST_CASE("queue: a done() cut short by the report timeout counts its job out, and release unbinds",
          "[serve][queue][nats]") {
    world w;
    auto a = w.open(w.options());
    w.enqueue("C1", "hello");
    auto taken = fiskai::test::run_on(w.h->ioc, a->next(), 30s);
    REQUIRE(taken);
    a->release();
    CHECK(a->in_flight() == 1);
    // Cancelled as the server's report timeout cancels it: the emission is queued behind the
    // start of done(), so it lands while the answer put is in flight.
    serve::outcome done;
    done.reason = "completed";
    done.text = "by hand";
    asio::cancellation_signal report_timeout;
    auto ended = std::make_shared<std::optional<std::exception_ptr>>();
    asio::co_spawn(w.h->ioc, taken->done(done),
                   asio::bind_cancellation_slot(report_timeout.slot(), [ended](std::exception_ptr e) { *ended = e; }));
    report_timeout.emit(asio::cancellation_type::terminal);
    REQUIRE(w.until([&] { return ended->has_value(); }, 20s));
    CHECK(**ended != nullptr);  // cut short, not settled
    CHECK(a->in_flight() == 0);
}

TEST_CASE("queue: an invalid job being settled is in flight, and a release meanwhile unbinds after it",
          "[serve][queue][nats]") {
    world w;
    auto a = w.open(w.options());
    w.nats.raw_publish("choria.fisk-ai.work.svc", "this is not a request", "BAD2");
    auto taken = asio::co_spawn(w.h->ioc, a->next(), asio::use_future);
    // Its error answer and its Term take round trips: released meanwhile.
    REQUIRE(w.until([&] { return a->in_flight() == 1; }, 20s));
    a->release();
    REQUIRE(w.until([&] { return taken.wait_for(0s) == std::future_status::ready; }, 20s));
    CHECK(taken.get() == nullptr);
    CHECK(a->in_flight() == 0);
    auto bad = w.answer("BAD2");
    REQUIRE(bad);
    CHECK(stored_as<a2a::task_error>(*bad).code == "invalid_request");
    // Terminated after the release: it leaves the work queue.
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
}

TEST_CASE("queue: startup names each missing or different piece of storage with its command", "[serve][queue][nats]") {
    SECTION("no stream") {
        world w(provision{.stream = false});
        CHECK(w.open_error(w.options()) ==
              "queue: work queue stream \"FISK_WORK\" does not exist; create it first, e.g. `nats stream add FISK_WORK "
              "--subjects 'choria.fisk-ai.work.>' --retention=work --max-msg-size=1048576`");
    }
    SECTION("no bucket") {
        world w(provision{.bucket = false});
        CHECK(
            w.open_error(w.options()) ==
            "queue: task store KV bucket \"FISK_TASKS\" does not exist; create it first, e.g. `nats kv add FISK_TASKS "
            "--history=1 --max-value-size=786432 --ttl=168h`");
    }
    SECTION("no consumer") {
        world w(provision{.consumer = false});
        CHECK(
            w.open_error(w.options()) ==
            "queue: consumer \"svc\" on stream \"FISK_WORK\" does not exist; create it first, e.g. `nats consumer add "
            "FISK_WORK svc --pull --filter 'choria.fisk-ai.work.svc' --ack explicit --wait 30s --max-deliver 5 "
            "--max-pending 1000 --deliver all --replay instant`");
        // Nothing was created by the attempt.
        auto info = fiskai::test::run_on(w.h->ioc, w.nats.js.get_consumer_info("FISK_WORK", "svc"), 10s);
        CHECK_FALSE(info.has_value());
    }
    SECTION("a stream too small for a capped job") {
        world w(provision{.max_msg_size = 786432});
        CHECK(w.open_error(w.options()) ==
              "queue: stream \"FISK_WORK\" max message size is 786432 bytes, below the 787456 bytes a capped job and "
              "its Nats-Msg-Id need; recreate it with --max-msg-size=1048576");
    }
    SECTION("a consumer with another ack wait") {
        world w(provision{10s});
        CHECK(w.open_error(w.options()) ==
              "queue: consumer \"svc\" on stream \"FISK_WORK\" has AckWait 10s, want 30s; remove it (nats consumer rm "
              "FISK_WORK svc) or set expose.agent.queue.consumer");
    }
    SECTION("a consumer on another subject") {
        world w(provision{.consumer = false});
        w.add_consumer("svc", "choria.fisk-ai.work.other", 30s, 5);
        CHECK(w.open_error(w.options()) ==
              "queue: consumer \"svc\" on stream \"FISK_WORK\" has FilterSubject \"choria.fisk-ai.work.other\", want "
              "\"choria.fisk-ai.work.svc\"; remove it (nats consumer rm FISK_WORK svc) or set "
              "expose.agent.queue.consumer");
    }
}

TEST_CASE("queue: a job past max deliveries gets the crashed answer from the advisory and leaves the stream",
          "[serve][queue][nats]") {
    world w(provision{3s, 1});
    auto o = w.options(3s);
    o.max_deliver = 1;
    auto a = w.open(o);
    w.enqueue("M1", "hello");
    // Taken, then dropped without settling (its heartbeats stop, as a killed worker's
    // would): its one delivery runs out after the ack wait.
    auto taken = fiskai::test::run_on(w.h->ioc, a->next(), 30s);
    REQUIRE(taken);
    taken.reset();
    // The server looks at a pull consumer's expired deliveries when a fetch comes: the
    // fleet keeps fetching.
    worker b(w, o);
    auto got = w.answer("M1", 20s);
    REQUIRE(got);
    auto e = stored_as<a2a::task_error>(*got);
    CHECK(e.code == "crashed");
    CHECK(e.error == "the job was delivered 1 times without finishing");
    REQUIRE(w.until([&] { return w.stream().state.msgs == 0; }));
    CHECK(a->advisories_handled() + b.channel->advisories_handled() == 1);
    CHECK(w.llm_requests() == 0);
}

TEST_CASE("queue: jobs that fail for good are filed in the dead-letter stream with their record",
          "[serve][queue][nats]") {
    world w(provision{3s, 1});
    w.add_dead_letter_stream();
    auto o = w.options(3s);
    o.max_deliver = 1;
    o.dead_letter = "FISK_DEAD";
    const auto bad_seq = w.nats.raw_publish("choria.fisk-ai.work.svc", "this is not a request", "BAD1");
    const auto job_seq = w.enqueue("M1", "hello");
    auto a = w.open(o);
    // BAD1 is terminated and filed by next(); M1 is taken, then dropped unsettled.
    auto taken = fiskai::test::run_on(w.h->ioc, a->next(), 30s);
    REQUIRE(taken);
    CHECK(taken->session_id == serve::queue_session_id("svc", "M1"));
    taken.reset();
    worker b(w, o);
    REQUIRE(w.answer("M1", 20s));
    auto dead = w.dead_letters(2);
    REQUIRE(dead.size() == 2);
    CHECK(dead[0].header("Fisk-Task") == "BAD1");
    CHECK(dead[0].header("Fisk-Stream-Seq") == std::to_string(bad_seq));
    CHECK(dead[0].header("Fisk-Deliveries") == "1");
    CHECK(dead[0].data == "this is not a request");
    CHECK_FALSE(dead[0].header("Fisk-Error")->empty());
    CHECK(dead[1].header("Fisk-Task") == "M1");
    CHECK(dead[1].header("Fisk-Stream-Seq") == std::to_string(job_seq));
    CHECK(dead[1].header("Fisk-Deliveries") == "1");
    CHECK(dead[1].header("Fisk-Error") == "the job was delivered 1 times without finishing");
    auto job = a2a::default_validator().check_as<a2a::task_request>(dead[1].data);
    REQUIRE(job.has_value());
    CHECK(job->request == "M1");
    CHECK(job->prompt == "hello");
}

TEST_CASE("queue: a configured dead-letter stream must exist and bind the agent's subject", "[serve][queue][nats]") {
    world w;
    auto o = w.options();
    o.dead_letter = "FISK_DEAD";
    CHECK(w.open_error(o) ==
          "queue: dead-letter stream \"FISK_DEAD\" does not exist; create it first, e.g. `nats stream add FISK_DEAD "
          "--subjects 'choria.fisk-ai.dead.>' --retention=limits --max-msg-size=1048576 --max-age=720h`");
    w.add_dead_letter_stream();
    CHECK(w.open_error(o).empty());
}
