// `fisk-ai-a2a enqueue` and `answer` (serve.md §9.3) run as a user would, against a real
// nats-server with JetStream; the test provisions the stream and the bucket as an operator
// would and plays the worker by storing answers the way the queue channel does.
#include "app_test_support.hpp"
#include "js_fixture.hpp"

#include <fiskai/a2a/codec.hpp>
#include <fiskai/a2a/stamp.hpp>
#include <fiskai/a2a/validator.hpp>
#include <fiskai/serve/queue_rules.hpp>
#include <fiskai/serve/session_ids.hpp>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <future>

namespace {

namespace a2a = fiskai::a2a;
namespace rules = fiskai::serve::queue_rules;
using namespace std::chrono_literals;

struct cli_world {
    fiskai::test::js_fixture nats;
    fiskai::test::scratch_dir scratch;
    kvStore* kv = nullptr;

    explicit cli_world(std::int32_t max_msg_size = 1048576) {
        fiskai::test::stream_spec s;
        s.name = "FISK_WORK";
        s.subjects = {"choria.fisk-ai.work.svc"};
        s.max_msgs_per_subject = -1;
        s.discard_new = false;
        s.discard_new_per_subject = false;
        s.work_queue = true;
        s.max_msg_size = max_msg_size;
        nats.add_stream(s);
        nats.add_kv("FISK_TASKS", 786432);
        REQUIRE(js_KeyValue(&kv, nats.raw_js(), "FISK_TASKS") == NATS_OK);
        scratch.write("placeholder", "");
        std::filesystem::create_directories(scratch.path / "nats" / "context");
        scratch.write("nats/context/test.json", fmt::format(R"({{"url":"{}"}})", nats.broker.url()));
    }
    ~cli_world() {
        if (kv) kvStore_Destroy(kv);
    }

    fiskai::test::command_output run(const std::string& args) const {
        return fiskai::test::run_shell(
            fmt::format("XDG_CONFIG_HOME={} {} {} --context test", scratch.path.string(), FISK_AI_A2A_PATH, args), 60s);
    }
    fiskai::test::command_output run_split(const std::string& args) const {
        return fiskai::test::run_shell(
            fmt::format("XDG_CONFIG_HOME={} {} {} --context test 2>{}/err", scratch.path.string(), FISK_AI_A2A_PATH,
                        args, scratch.path.string()),
            60s);
    }
    std::string err() const {
        std::ifstream in(scratch.path / "err");
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }

    // What a worker stores for `task`.
    void store(const std::string& task, a2a::message terminal) {
        a2a::header request;
        request.id = task;
        request.request = task;
        request.sender.name = "fisk-ai-cli";
        auto body =
            rules::encode_answer(std::move(terminal), request, "svc", fiskai::serve::queue_session_id("svc", task));
        REQUIRE(kvStore_PutString(nullptr, kv, ("svc." + task).c_str(), body.c_str()) == NATS_OK);
    }
};

a2a::task_result result(std::string text) {
    a2a::task_result r;
    r.stop_reason = "end_turn";
    r.text = std::move(text);
    return r;
}

}  // namespace

TEST_CASE("fisk-ai-a2a enqueue puts a validated request on the work queue with its task id", "[apps][queue][nats]") {
    cli_world w;
    auto out = w.run_split("enqueue svc count the orders --id T1 --max-iterations 3");
    INFO(out.out << w.err());
    REQUIRE(out.exit_code == 0);
    CHECK(out.out == "T1\n");
    CHECK(w.err().find("queued T1 (stream FISK_WORK seq 1)") != std::string::npos);

    natsMsg* msg = nullptr;
    REQUIRE(js_GetMsg(&msg, w.nats.raw_js(), "FISK_WORK", 1, nullptr, nullptr) == NATS_OK);
    const char* msg_id = nullptr;
    REQUIRE(natsMsgHeader_Get(msg, "Nats-Msg-Id", &msg_id) == NATS_OK);
    CHECK(std::string(msg_id) == "T1");
    auto request = a2a::default_validator().check_as<a2a::task_request>(
        std::string(natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg))));
    natsMsg_Destroy(msg);
    REQUIRE(request.has_value());
    CHECK(request->prompt == "count the orders");
    CHECK(request->request == "T1");
    CHECK(request->id == "T1");
    CHECK(request->budget->max_iterations == 3);

    // A fresh KSUID when no --id; the prompt from stdin.
    auto second = w.run_split("enqueue svc < /dev/null");
    CHECK(second.exit_code == 1);
    CHECK(w.err().find("no prompt") != std::string::npos);
    auto third =
        fiskai::test::run_shell(fmt::format("echo 'from stdin' | XDG_CONFIG_HOME={} {} enqueue svc --context test",
                                            w.scratch.path.string(), FISK_AI_A2A_PATH));
    REQUIRE(third.exit_code == 0);
    CHECK(third.out.find("queued ") != std::string::npos);
}

TEST_CASE("fisk-ai-a2a answer prints the stored answer, waits for it, or exits 6", "[apps][queue][nats]") {
    cli_world w;
    auto none = w.run_split("answer svc A1");
    CHECK(none.exit_code == 6);
    CHECK(w.err() == "no answer for A1 yet\n");

    w.store("A1", result("forty-two"));
    auto got = w.run_split("answer svc A1");
    CHECK(got.exit_code == 0);
    CHECK(got.out == "forty-two\n");
    auto as_json = w.run_split("answer svc A1 --json");
    CHECK(as_json.exit_code == 0);
    auto parsed = a2a::default_validator().check_as<a2a::task_result>(as_json.out.substr(0, as_json.out.size() - 1));
    REQUIRE(parsed.has_value());
    CHECK(parsed->text == "forty-two");

    a2a::task_error e;
    e.stop_reason = "error";
    e.code = "invalid_request";
    e.error = "not a request";
    w.store("A2", e);
    auto failed = w.run_split("answer svc A2");
    CHECK(failed.exit_code == 1);
    CHECK(w.err() == "invalid_request: not a request\n");

    // --wait watches the key until a worker stores it.
    auto waiting = std::async(std::launch::async, [&] { return w.run_split("answer svc A3 --wait 20s"); });
    std::this_thread::sleep_for(1s);  // the answer comes later than the command starts; either order passes
    w.store("A3", result("late but here"));
    auto late = waiting.get();
    CHECK(late.exit_code == 0);
    CHECK(late.out == "late but here\n");

    auto timed_out = w.run_split("answer svc A4 --wait 300ms");
    CHECK(timed_out.exit_code == 6);

    auto bad = w.run_split("answer svc 'no good'");
    CHECK(bad.exit_code == 1);
    CHECK(w.err() == "fisk-ai-a2a: error: invalid task \"no good\": it must match ^[a-zA-Z0-9_-]{1,64}$\n");
}

TEST_CASE("fisk-ai-a2a enqueue names what is wrong: no stream, a job too large, a bad id", "[apps][queue][nats]") {
    cli_world w(2048);
    auto nobody = w.run_split("enqueue nobody hello");
    CHECK(nobody.exit_code == 2);
    CHECK(w.err() ==
          "fisk-ai-a2a: error: no JetStream stream takes \"choria.fisk-ai.work.nobody\"; create the work queue stream "
          "(see fisk-ai-serve check)\n");

    const auto ctx = w.scratch.write("big.txt", std::string(4000, 'c'));
    auto big = w.run_split(fmt::format("enqueue svc hello --id BIG --context-file {}", ctx));
    CHECK(big.exit_code == 1);
    CHECK(w.err().find("is over the stream \"FISK_WORK\" max message size") != std::string::npos);
    CHECK(w.err().rfind("fisk-ai-a2a: error: job of ", 0) == 0);

    auto bad = w.run_split("enqueue svc hello --id 'a.b'");
    CHECK(bad.exit_code == 1);
    CHECK(w.err() == "fisk-ai-a2a: error: invalid --id \"a.b\": it must match ^[a-zA-Z0-9_-]{1,64}$\n");

    // enqueue --wait: the answer of the job it queued, stored only once the job is in the
    // stream (as a worker would), so the command has to wait for it.
    auto waited = std::async(std::launch::async, [&] { return w.run_split("enqueue svc hello --id W1 --wait 20s"); });
    REQUIRE(fiskai::test::wait_until([&] {
        natsMsg* job = nullptr;
        if (js_GetLastMsg(&job, w.nats.raw_js(), "FISK_WORK", "choria.fisk-ai.work.svc", nullptr, nullptr) != NATS_OK)
            return false;
        const std::string body(natsMsg_GetData(job), static_cast<std::size_t>(natsMsg_GetDataLength(job)));
        natsMsg_Destroy(job);
        return body.find("\"W1\"") != std::string::npos;
    }));
    w.store("W1", result("done waiting"));
    auto got = waited.get();
    CHECK(got.exit_code == 0);
    CHECK(got.out == "W1\ndone waiting\n");
}

TEST_CASE("fisk-ai-a2a enqueue, answer and dead-letters say when the server has no JetStream", "[apps][queue][nats]") {
    fiskai::conns::broker_options without;
    without.jetstream = false;
    fiskai::conns::embedded_broker broker(without);
    fiskai::test::scratch_dir scratch;
    std::filesystem::create_directories(scratch.path / "nats" / "context");
    scratch.write("nats/context/plain.json", fmt::format(R"({{"url":"{}"}})", broker.url()));
    const auto run = [&](const std::string& args) {
        return fiskai::test::run_shell(
            fmt::format("XDG_CONFIG_HOME={} {} {} --context plain 2>&1", scratch.path.string(), FISK_AI_A2A_PATH, args),
            60s);
    };
    const auto want = fmt::format(
        "fisk-ai-a2a: error: JetStream is not enabled on the NATS server at {}; start it with -js (or jetstream {{}} "
        "in its configuration)\n",
        broker.url());
    for (const auto* args : {"enqueue svc hello", "answer svc T1", "dead-letters svc"}) {
        INFO(args);
        const auto r = run(args);
        CHECK(r.exit_code == 2);
        CHECK(r.out == want);
    }
}

TEST_CASE("fisk-ai-a2a dead-letters lists an agent's dead letters and re-enqueues one", "[apps][queue][nats]") {
    cli_world w;
    fiskai::test::stream_spec s;
    s.name = "FISK_DEAD";
    s.subjects = {"choria.fisk-ai.dead.>"};
    s.max_msgs_per_subject = -1;
    s.discard_new = false;
    s.discard_new_per_subject = false;
    w.nats.add_stream(s);

    auto empty = w.run_split("dead-letters svc");
    CHECK(empty.exit_code == 0);
    CHECK(w.err() == "no dead letters for svc\n");

    // What the queue channel files (queue_rules): the job's bytes, the record in headers.
    a2a::task_request job;
    a2a::stamp_request(job, "fisk-ai-cli", "svc", "T9");
    job.prompt = "try again";
    const auto body = a2a::encode(job).value();
    natsMsg* msg = nullptr;
    REQUIRE(natsMsg_Create(&msg, "choria.fisk-ai.dead.svc", nullptr, body.data(), static_cast<int>(body.size())) ==
            NATS_OK);
    for (const auto& [k, v] :
         rules::dead_letter_headers({"T9", 17, 5, "the job was delivered 5 times without finishing"}))
        REQUIRE(natsMsgHeader_Add(msg, k.c_str(), v.c_str()) == NATS_OK);
    REQUIRE(js_PublishMsg(nullptr, w.nats.raw_js(), msg, nullptr, nullptr) == NATS_OK);
    natsMsg_Destroy(msg);

    auto listed = w.run_split("dead-letters svc");
    CHECK(listed.exit_code == 0);
    CHECK(listed.out == "T9  seq 17  deliveries 5  the job was delivered 5 times without finishing\n");
    auto as_json = w.run_split("dead-letters svc --json");
    CHECK(
        as_json.out ==
        R"({"task":"T9","stream_seq":17,"deliveries":5,"error":"the job was delivered 5 times without finishing","dead_letter_seq":1})"
        "\n");

    auto unknown = w.run_split("dead-letters svc --retry NOPE");
    CHECK(unknown.exit_code == 1);
    CHECK(w.err() == "fisk-ai-a2a: error: no dead letter for task NOPE on svc\n");

    auto retried = w.run_split("dead-letters svc --retry T9");
    INFO(w.err());
    REQUIRE(retried.exit_code == 0);
    CHECK(retried.out == "T9\n");
    CHECK(w.err() == "requeued T9 (stream FISK_WORK seq 1)\n");
    natsMsg* requeued = nullptr;
    REQUIRE(js_GetMsg(&requeued, w.nats.raw_js(), "FISK_WORK", 1, nullptr, nullptr) == NATS_OK);
    CHECK(std::string(natsMsg_GetData(requeued), static_cast<std::size_t>(natsMsg_GetDataLength(requeued))) == body);
    natsMsg_Destroy(requeued);
    auto after = w.run_split("dead-letters svc");
    CHECK(after.out.empty());
    CHECK(w.err() == "no dead letters for svc\n");
}
