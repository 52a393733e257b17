// fisk-ai-serve check with expose.agent.queue against a real nats-server with JetStream:
// each missing or different piece of the operator's storage is named with the `nats …`
// command that creates it (§7.2, Amendments 1 and 4), nothing is created, and once all is
// there the banner carries the queue channel's line.

#include "app_test_support.hpp"
#include "js_fixture.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>

using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using namespace fiskai;
using namespace std::chrono_literals;

namespace {

struct queue_env {
    test::js_fixture nats;
    test::scratch_dir dir;
    std::string env;

    queue_env() {
        fs::create_directories(dir.path / "xdg/nats/context");
        std::ofstream(dir.path / "xdg/nats/context/local.json") << R"({"url":")" << nats.broker.url() << R"("})";
        env = fmt::format("XDG_CONFIG_HOME={} ANTHROPIC_API_KEY=test-key", (dir.path / "xdg").string());
    }

    std::string config(const std::string& queue_block = "{}") const {
        const auto text = fmt::format(
            "identity: tester\nsystem_prompt: You help.\nnats_context: local\nllm:\n  model: fake\n"
            "  base_url: http://127.0.0.1:9\napplication_path: {}\nexpose:\n  agent:\n    queue: {}\n"
            "harness:\n  sessions:\n    backend: file\n    options:\n      directory: {}\n",
            FISK_DEMO_PATH, queue_block, (dir.path / "runs").string());
        return dir.write(fmt::format("c{}.yaml", std::hash<std::string>{}(text)), text);
    }

    test::command_output check(const std::string& config_path) const {
        return test::run_shell(fmt::format("{} {} check --config {} 2>&1", env, FISK_AI_SERVE_PATH, config_path));
    }

    void add_consumer(std::chrono::nanoseconds ack_wait) {
        jsConsumerConfig cfg;
        jsConsumerConfig_Init(&cfg);
        cfg.Durable = "tester";
        cfg.FilterSubject = "choria.fisk-ai.work.tester";
        cfg.AckPolicy = js_AckExplicit;
        cfg.AckWait = ack_wait.count();
        cfg.MaxDeliver = 5;
        cfg.MaxAckPending = 1000;
        REQUIRE(js_AddConsumer(nullptr, nats.raw_js(), "FISK_WORK", &cfg, nullptr, nullptr) == NATS_OK);
    }
};

}  // namespace

TEST_CASE("check names each missing piece of the queue's storage, then prints the queue's banner line",
          "[serve_app][queue]") {
    queue_env e;
    const auto cfg = e.config();

    auto r = e.check(cfg);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("fisk-ai-serve: error: queue: work queue stream \"FISK_WORK\" does not exist; create it "
                               "first, e.g. `nats stream add FISK_WORK --subjects 'choria.fisk-ai.work.>' "
                               "--retention=work --max-msg-size=1048576`"));

    test::stream_spec s;
    s.name = "FISK_WORK";
    s.subjects = {"choria.fisk-ai.work.>"};
    s.max_msgs_per_subject = -1;
    s.discard_new = false;
    s.discard_new_per_subject = false;
    s.work_queue = true;
    s.max_msg_size = 1048576;
    e.nats.add_stream(s);
    r = e.check(cfg);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("queue: task store KV bucket \"FISK_TASKS\" does not exist; create it first, e.g. `nats "
                               "kv add FISK_TASKS --history=1 --max-value-size=786432 --ttl=168h`"));

    e.nats.add_kv("FISK_TASKS", 786432);
    r = e.check(cfg);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("queue: consumer \"tester\" on stream \"FISK_WORK\" does not exist; create it first, "
                               "e.g. `nats consumer add FISK_WORK tester --pull --filter 'choria.fisk-ai.work.tester' "
                               "--ack explicit --wait 30s --max-deliver 5 --max-pending 1000 --deliver all --replay "
                               "instant`"));

    e.add_consumer(10s);
    r = e.check(cfg);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("queue: consumer \"tester\" on stream \"FISK_WORK\" has AckWait 10s, want 30s; remove "
                               "it (nats consumer rm FISK_WORK tester) or set expose.agent.queue.consumer"));
    // The config asserts what the consumer holds: naming its 10s binds.
    r = e.check(e.config("{ack_wait: 10s}"));
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("channels:\n  queue: jobs on choria.fisk-ai.work.tester from stream FISK_WORK (consumer "
                               "tester, ack wait 10s, max deliver 5), answers in KV FISK_TASKS\n"));
    CHECK_THAT(r.out, Contains("no dead-letter stream configured"));

    r = e.check(e.config("{ack_wait: 10s, dead_letter: FISK_DEAD}"));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("queue: dead-letter stream \"FISK_DEAD\" does not exist; create it first"));
}
