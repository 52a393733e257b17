// The queue channel's I/O-free rules (serve.md §7, Amendments 1, 4, 13, 17).
#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/protocol.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/serve/queue_rules.hpp>
#include <fiskai/serve/session_ids.hpp>

#include <catch2/catch.hpp>

namespace a2a = fiskai::a2a;
namespace serve = fiskai::serve;
namespace rules = fiskai::serve::queue_rules;
namespace js = fiskai::jetstream;

namespace {

a2a::task_request request(std::string task, std::string prompt = "count the orders") {
    a2a::task_request r;
    a2a::stamp_request(r, "producer", "svc", std::move(task));
    r.prompt = std::move(prompt);
    return r;
}

std::string body(const a2a::task_request& r) { return a2a::encode(r).value(); }

rules::storage_names names() { return {"svc", "FISK_WORK", "FISK_TASKS", "svc", "prod"}; }

js::stream_info good_stream() {
    js::stream_info i;
    i.config.name = "FISK_WORK";
    i.config.subjects = {"choria.fisk-ai.work.>"};
    i.config.retention = js::retention_policy::work_queue;
    i.config.max_msg_size = 1048576;
    return i;
}

js::consumer_info good_consumer() {
    js::consumer_info c;
    c.config.durable = "svc";
    c.config.filter_subject = "choria.fisk-ai.work.svc";
    c.config.ack = js::ack_policy::explicit_ack;
    c.config.ack_wait = std::chrono::seconds(30);
    c.config.max_deliver = 5;
    c.config.max_ack_pending = 1000;
    return c;
}

}  // namespace

TEST_CASE("queue rules: a job is a new task request, its session is the queue's", "[serve][queue][unit]") {
    const std::vector<std::string> tools{"orders"};
    auto r = request("T1");
    r.context = "ctx";
    r.tool_hints = {"orders", "missing"};
    r.budget = a2a::budget{100, 3, "5s"};
    auto decoded = rules::decode_job(body(r), std::string("T1"), "svc", tools);
    REQUIRE(std::holds_alternative<rules::job>(decoded));
    const auto& j = std::get<rules::job>(decoded);
    CHECK(j.task == "T1");
    CHECK(j.session_id == serve::queue_session_id("svc", "T1"));
    CHECK(j.prompt == "count the orders\n\n<context>\nctx\n</context>\n\nThe caller suggests these tools: orders.");
    CHECK(j.limits.max_tokens == 100);
    CHECK(j.limits.max_iterations == 3);
    CHECK(j.limits.call_timeout == std::chrono::seconds(5));
}

TEST_CASE("queue rules: an old job is still a job (no accept window)", "[serve][queue][unit]") {
    auto r = request("OLD");
    r.time = a2a::timestamp();  // Go's zero time, year 1
    auto decoded = rules::decode_job(body(r), std::nullopt, "svc", {});
    CHECK(std::holds_alternative<rules::job>(decoded));
}

TEST_CASE("queue rules: invalid jobs name their task when one can be read", "[serve][queue][unit]") {
    SECTION("not JSON: the Nats-Msg-Id names the task") {
        auto d = rules::decode_job("not json", std::string("BAD1"), "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(d));
        CHECK(std::get<rules::invalid_job>(d).task == "BAD1");
        CHECK_FALSE(std::get<rules::invalid_job>(d).error.empty());
    }
    SECTION("JSON that is not a valid request: its own request names the task, before the Nats-Msg-Id") {
        auto d = rules::decode_job(R"({"protocol":"io.choria.fisk-ai.v1.request","request":"OWN1","sequence":"x"})",
                                   std::string("HDR1"), "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(d));
        CHECK(std::get<rules::invalid_job>(d).task == "OWN1");
        // An unpaired surrogate escape in another field (Go reads it as U+FFFD) hides nothing.
        auto e = rules::decode_job(R"({"request":"OWN3","time":"\ud800"})", std::string("HDR1"), "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(e));
        CHECK(std::get<rules::invalid_job>(e).task == "OWN3");
    }
    SECTION("a request that is no key, or not a string, leaves the Nats-Msg-Id") {
        for (const char* body :
             {R"({"request":"a.b>"})", R"({"request":7})", R"(["request","OWN2"])", R"({"request":""})"}) {
            auto d = rules::decode_job(body, std::string("HDR2"), "svc", {});
            REQUIRE(std::holds_alternative<rules::invalid_job>(d));
            CHECK(std::get<rules::invalid_job>(d).task == "HDR2");
        }
    }
    SECTION("a hostile Nats-Msg-Id is not a key") {
        auto d = rules::decode_job("not json", std::string("a.b>"), "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(d));
        CHECK(std::get<rules::invalid_job>(d).task.empty());
    }
    SECTION("a body over the cap") {
        std::string big(a2a::max_message_size + 1, 'x');
        auto d = rules::decode_job(big, std::string("BIG"), "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(d));
        CHECK(std::get<rules::invalid_job>(d).task == "BIG");
    }
    SECTION("a continuation (request != id)") {
        auto r = request("T2");
        r.id = "OTHER";
        auto d = rules::decode_job(body(r), std::nullopt, "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(d));
        CHECK(std::get<rules::invalid_job>(d).task == "T2");
        CHECK(std::get<rules::invalid_job>(d).error ==
              R"(a queue job must be a new task: its request "T2" differs from its id "OTHER")");
    }
    SECTION("a bad call_timeout") {
        auto r = request("T3");
        r.budget = a2a::budget{0, 0, "soon"};
        auto d = rules::decode_job(body(r), std::nullopt, "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(d));
        CHECK(std::get<rules::invalid_job>(d).error.rfind(R"(invalid budget.call_timeout "soon": )", 0) == 0);
    }
    SECTION("another message type") {
        a2a::task_cancel c;
        a2a::stamp_request(c, "producer", "svc", "T4");
        auto d = rules::decode_job(a2a::encode(c).value(), std::string("T4"), "svc", {});
        REQUIRE(std::holds_alternative<rules::invalid_job>(d));
        CHECK(std::get<rules::invalid_job>(d).task == "T4");
    }
}

TEST_CASE("queue rules: how a job is settled (Amendment 13)", "[serve][queue][unit]") {
    serve::outcome done;
    done.reason = "completed";
    done.text = "42";
    auto d = rules::decide(done, 1, 5);
    CHECK(d.action == rules::settle::store_then_ack);
    CHECK(std::get<a2a::task_result>(d.answer).text == "42");

    serve::outcome abandoned;
    abandoned.abandoned = true;
    CHECK(rules::decide(abandoned, 1, 5).action == rules::settle::nak);
    CHECK(rules::decide(abandoned, 4, 5).action == rules::settle::nak);
    auto last = rules::decide(abandoned, 5, 5);
    CHECK(last.action == rules::settle::store_then_ack);
    CHECK(std::get<a2a::task_error>(last.answer).code == "abandoned");

    serve::outcome stopped;
    stopped.reason = "suspended";
    stopped.interrupted = true;
    CHECK(rules::decide(stopped, 2, 5).action == rules::settle::nak);
    CHECK(std::get<a2a::task_error>(rules::decide(stopped, 5, 5).answer).code == "interrupted");

    serve::outcome crashed;
    crashed.crashed = true;
    crashed.error = "boom";
    CHECK(rules::decide(crashed, 1, 5).action == rules::settle::nak_with_delay);
    auto crashed_last = rules::decide(crashed, 5, 5);
    CHECK(crashed_last.action == rules::settle::store_then_ack);
    CHECK(std::get<a2a::task_error>(crashed_last.answer).code == "crashed");
    CHECK(std::get<a2a::task_error>(crashed_last.answer).error == "boom");

    serve::outcome failed;
    failed.reason = "error";
    failed.error = "anthropic: HTTP 429";
    auto f = rules::decide(failed, 1, 5);
    CHECK(f.action == rules::settle::store_then_ack);
    CHECK(std::get<a2a::task_error>(f.answer).code == "run_failed");

    // A suspension that is not a hard stop is an answer, not a retry.
    serve::outcome parked;
    parked.reason = "suspended";
    parked.text = "approval not given";
    CHECK(rules::decide(parked, 1, 5).action == rules::settle::store_then_ack);

    // Unlimited deliveries never store a crash.
    CHECK(rules::decide(crashed, 50, -1).action == rules::settle::nak_with_delay);
}

TEST_CASE("queue rules: the stored answer is the task's stamped terminal", "[serve][queue][unit]") {
    auto r = request("T5");
    const auto session = serve::queue_session_id("svc", "T5");
    a2a::task_result result;
    result.stop_reason = "end_turn";
    result.text = "done";
    auto stored = rules::encode_answer(result, r, "svc", session);
    auto back = a2a::default_validator().check_as<a2a::task_result>(stored);
    REQUIRE(back.has_value());
    CHECK(back->request == "T5");
    CHECK(back->sequence == 1);
    CHECK(back->conversation == session);
    CHECK(back->sender.name == "svc");
    CHECK(back->text == "done");

    // An invalid job has only its task id: the answer still validates.
    a2a::header bare;
    bare.id = "BAD";
    bare.request = "BAD";
    auto err = rules::encode_answer(rules::invalid_answer("not json"), bare, "svc", "q-x");
    auto e = a2a::default_validator().check_as<a2a::task_error>(err);
    REQUIRE(e.has_value());
    CHECK(e->code == "invalid_request");
    CHECK(e->error == "not json");

    auto md = rules::max_deliveries_answer(5);
    CHECK(md.code == "crashed");
    CHECK(md.stop_reason == "error");
    CHECK(md.error == "the job was delivered 5 times without finishing");
}

TEST_CASE("queue rules: the startup texts (§7.2, Amendments 1 and 4)", "[serve][queue][unit]") {
    const auto n = names();
    CHECK(rules::text::stream_missing(n) ==
          "queue: work queue stream \"FISK_WORK\" does not exist; create it first, e.g. `nats stream add FISK_WORK "
          "--subjects 'choria.fisk-ai.work.>' --retention=work --max-msg-size=1048576`");
    CHECK(rules::text::bucket_missing(n) ==
          "queue: task store KV bucket \"FISK_TASKS\" does not exist; create it first, e.g. `nats kv add FISK_TASKS "
          "--history=1 --max-value-size=786432 --ttl=168h`");
    CHECK(rules::text::consumer_missing(n) ==
          "queue: consumer \"svc\" on stream \"FISK_WORK\" does not exist; create it first, e.g. `nats consumer add "
          "FISK_WORK svc --pull --filter 'choria.fisk-ai.work.svc' --ack explicit --wait 30s --max-deliver 5 "
          "--max-pending 1000 --deliver all --replay instant`");
    CHECK(
        rules::text::consumer_taken(n) ==
        "queue: stream \"FISK_WORK\" already has another consumer on \"choria.fisk-ai.work.svc\" (a work-queue stream "
        "allows one consumer per subject); use it as expose.agent.queue.consumer or remove it");
    CHECK(rules::text::jetstream_disabled(n) ==
          "queue: JetStream is not enabled on the NATS server of context \"prod\"");
    CHECK(rules::text::dropped_invalid(7, "bad") == "queue: dropped an invalid job (stream seq 7): bad");

    CHECK_FALSE(rules::check_stream(n, good_stream()));
    auto s = good_stream();
    s.config.retention = js::retention_policy::limits;
    CHECK(rules::check_stream(n, s) ==
          "queue: stream \"FISK_WORK\" has limits retention, not work queue; jobs would be kept after they are done. "
          "Recreate it with --retention=work");
    s = good_stream();
    s.config.subjects = {"choria.fisk-ai.work.other"};
    CHECK(rules::check_stream(n, s) ==
          "queue: stream \"FISK_WORK\" does not bind subject \"choria.fisk-ai.work.svc\"; add it, e.g. --subjects "
          "'choria.fisk-ai.work.>'");
    s = good_stream();
    s.config.max_msg_size = 786432;
    CHECK(rules::check_stream(n, s) ==
          "queue: stream \"FISK_WORK\" max message size is 786432 bytes, below the 787456 bytes a capped job and its "
          "Nats-Msg-Id need; recreate it with --max-msg-size=1048576");
    s.config.max_msg_size = -1;
    CHECK_FALSE(rules::check_stream(n, s));

    js::kv_status kv;
    kv.max_value_size = 1024;
    CHECK(rules::check_bucket(n, kv) ==
          "queue: task store KV bucket \"FISK_TASKS\" max value size is 1024 bytes, below the 786432-byte a2a message "
          "cap; recreate it with --max-value-size=786432");
    kv.max_value_size = -1;
    CHECK_FALSE(rules::check_bucket(n, kv));

    rules::consumer_expectation want;
    CHECK_FALSE(rules::check_consumer(n, good_consumer(), want));
    auto c = good_consumer();
    c.config.ack_wait = std::chrono::seconds(10);
    CHECK(rules::check_consumer(n, c, want) ==
          "queue: consumer \"svc\" on stream \"FISK_WORK\" has AckWait 10s, want 30s; remove it (nats consumer rm "
          "FISK_WORK svc) or set expose.agent.queue.consumer");
    c = good_consumer();
    c.config.filter_subject = "choria.fisk-ai.work.x";
    CHECK(rules::check_consumer(n, c, want) ==
          "queue: consumer \"svc\" on stream \"FISK_WORK\" has FilterSubject \"choria.fisk-ai.work.x\", want "
          "\"choria.fisk-ai.work.svc\"; remove it (nats consumer rm FISK_WORK svc) or set expose.agent.queue.consumer");
    c = good_consumer();
    c.config.max_deliver = 3;
    CHECK(rules::check_consumer(n, c, want)->find("has MaxDeliver 3, want 5") != std::string::npos);
    c = good_consumer();
    c.config.ack = js::ack_policy::none;
    CHECK(rules::check_consumer(n, c, want)->find("has AckPolicy none, want explicit") != std::string::npos);
    c = good_consumer();
    c.config.max_ack_pending = 20000;
    CHECK(rules::check_consumer(n, c, want)->find("has MaxAckPending 20000, want 1000") != std::string::npos);
}

TEST_CASE("queue rules: subjects and the MAX_DELIVERIES advisory", "[serve][queue][unit]") {
    CHECK(rules::subject_matches("choria.fisk-ai.work.>", "choria.fisk-ai.work.svc"));
    CHECK(rules::subject_matches("choria.*.work.svc", "choria.fisk-ai.work.svc"));
    CHECK(rules::subject_matches("choria.fisk-ai.work.svc", "choria.fisk-ai.work.svc"));
    CHECK_FALSE(rules::subject_matches("choria.fisk-ai.work", "choria.fisk-ai.work.svc"));
    CHECK_FALSE(rules::subject_matches("choria.fisk-ai.work.*.x", "choria.fisk-ai.work.svc"));
    CHECK_FALSE(rules::subject_matches("choria.fisk-ai.work.svc.>", "choria.fisk-ai.work.svc"));

    CHECK(rules::max_deliveries_subject("FISK_WORK", "svc") ==
          "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.FISK_WORK.svc");
    auto a = rules::parse_max_deliveries(
        R"({"type":"io.nats.jetstream.advisory.v1.max_deliver","id":"x","timestamp":"2026-01-01T00:00:00Z",)"
        R"("stream":"FISK_WORK","consumer":"svc","stream_seq":12,"deliveries":5})");
    REQUIRE(a);
    CHECK(a->stream_seq == 12);
    CHECK(a->deliveries == 5);
    CHECK(a->consumer == "svc");
    CHECK_FALSE(rules::parse_max_deliveries(R"({"type":"io.nats.jetstream.advisory.v1.terminated","stream_seq":1})"));
    CHECK_FALSE(rules::parse_max_deliveries("garbage"));
}
