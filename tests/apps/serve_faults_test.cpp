// Fault scenarios of serve.md §12 at the level of the executables: `fisk-ai-serve serve`
// workers on a real nats-server with JetStream, `fisk-ai-a2a ask` / `enqueue` / `answer` as
// callers, fiskai-fake-llm over real HTTP (its request log tells which steps the model was
// asked), and the demo application's commands as the tools.
//
// - scenario 2: kill -9 of the worker mid-run; the caller's idle limit reports it (exit 5)
//   and `ask --continue` on the other worker of the queue group finishes the same session;
// - scenario 7: one slot, a run and an acked task waiting for the slot; one SIGTERM lets
//   both finish, two cancel the run (one terminal) and abandon the waiting task (exit 130);
// - a caller that vanishes mid-run: the worker finishes and journals the run and keeps
//   serving.

#include "app_test_support.hpp"
#include "fake_llm_process.hpp"
#include "js_fixture.hpp"

#include <fiskai/serve/session_ids.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace fiskai;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

using test::child;
using test::slurp;
using test::wait_until;

json::object text_step(std::string_view text, json::array faults = {}) {
    json::object step{{"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                             {"stop_reason", "end_turn"}}}};
    if (!faults.empty()) step["faults"] = std::move(faults);
    return step;
}

json::object tool_step(std::string_view tool, json::object input) {
    return json::object{
        {"reply", json::object{{"content", json::array{json::object{
                                               {"type", "tool_use"}, {"name", tool}, {"input", std::move(input)}}}},
                               {"stop_reason", "tool_use"}}}};
}

json::object conversation(std::string_view name, std::string_view prompt, json::array steps) {
    return json::object{
        {"name", name}, {"when", json::object{{"prompt_contains", prompt}}}, {"steps", std::move(steps)}};
}

// KILL: a tool call, then (after its result) a model call that hangs the first time it is
// asked; HANG: a call that never answers the first time; SLOW: one answered after 4 s;
// anything else answers at once.
std::string script() {
    const json::array hang_once{json::object{{"hang", true}}};
    const json::array slow{json::object{{"delay_ms", 4000}}};
    json::array conversations{
        conversation("kill", "KILL",
                     json::array{tool_step("stream_info", json::object{{"name", "ORDERS"}}),
                                 text_step("resumed answer", hang_once)}),
        conversation("hang", "HANG", json::array{text_step("hung answer", hang_once)}),
        conversation("slow", "SLOW", json::array{text_step("slow answer", slow)}),
        json::object{{"name", "quick"}, {"steps", json::array{text_step("quick answer")}}},
    };
    return json::serialize(json::object{{"conversations", std::move(conversations)}});
}

// One line per message of a reply set (`ask --json`), decoded.
std::vector<json::object> json_lines(const std::string& out) {
    std::vector<json::object> lines;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) continue;
        lines.push_back(json::parse(line).as_object());
    }
    return lines;
}

bool is_terminal(const json::object& m) {
    const auto& p = m.at("protocol").as_string();
    return p == "io.choria.fisk-ai.v1.result" || p == "io.choria.fisk-ai.v1.error";
}

std::size_t terminals(const std::vector<json::object>& lines) {
    std::size_t n = 0;
    for (const auto& m : lines) n += is_terminal(m) ? 1 : 0;
    return n;
}

// Lines of the fake LLM's request log that carry every needle.
std::size_t count_lines(const fs::path& path, const std::vector<std::string>& needles) {
    std::ifstream in(path);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
        bool all = true;
        for (const auto& s : needles) all = all && line.find(s) != std::string::npos;
        n += all ? 1 : 0;
    }
    return n;
}

std::size_t occurrences(const std::string& text, std::string_view needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
}

// A nats-server with JetStream and the operator's storage, the fake LLM, a NATS context
// naming the server, and the workers' config.
struct fleet {
    test::js_fixture nats;
    test::scratch_dir dir;
    fs::path llm_log = dir.path / "llm.log";
    std::unique_ptr<test::fake_llm_process> fake;
    std::string config;
    std::vector<std::string> env;
    int children = 0;

    // `workers` slots per worker; `queue` adds the queue channel beside a2a.
    explicit fleet(int workers, bool queue = false, bool jetstream_sessions = false) {
        const auto script_path = dir.write("script.json", script());
        fake = std::make_unique<test::fake_llm_process>(
            FISKAI_FAKE_LLM, std::vector<std::string>{"--script", script_path, "--port", "0", "--log", llm_log.string(),
                                                      "--exit-with-parent"});
        fs::create_directories(dir.path / "xdg/nats/context");
        std::ofstream(dir.path / "xdg/nats/context/w.json") << R"({"url":")" << nats.broker.url() << R"("})";
        env = {"XDG_CONFIG_HOME=" + (dir.path / "xdg").string(), "ANTHROPIC_API_KEY=test-key"};

        std::string sessions =
            fmt::format("    backend: file\n    options:\n      directory: {}\n", (dir.path / "runs").string());
        if (jetstream_sessions) {
            test::stream_spec s;  // what `nats stream add FISK_RUNS --subjects 'fisk-runs.>' ...` makes
            s.name = "FISK_RUNS";
            s.subjects = {"fisk-runs.>"};
            nats.add_stream(s);
            sessions = "    backend: jetstream\n    options:\n      stream: FISK_RUNS\n";
        }
        std::string queue_block;
        if (queue) {
            test::stream_spec s;
            s.name = "FISK_WORK";
            s.subjects = {"choria.fisk-ai.work.>"};
            s.max_msgs_per_subject = -1;
            s.discard_new = false;
            s.discard_new_per_subject = false;
            s.work_queue = true;
            s.max_msg_size = 1048576;
            nats.add_stream(s);
            nats.add_kv("FISK_TASKS", 786432);
            jsConsumerConfig cfg;
            jsConsumerConfig_Init(&cfg);
            cfg.Durable = "tester";
            cfg.FilterSubject = "choria.fisk-ai.work.tester";
            cfg.AckPolicy = js_AckExplicit;
            cfg.AckWait = std::chrono::nanoseconds(30s).count();
            cfg.MaxDeliver = 5;
            cfg.MaxAckPending = 1000;
            cfg.DeliverPolicy = js_DeliverAll;
            REQUIRE(js_AddConsumer(nullptr, nats.raw_js(), "FISK_WORK", &cfg, nullptr, nullptr) == NATS_OK);
            queue_block = "    queue: {}\n";
        }
        config = dir.write("serve.yaml", fmt::format(R"(identity: tester
system_prompt: You help.
application_path: {}
nats_context: w
llm:
  model: fake
  base_url: http://127.0.0.1:{}
  max_retries: 0
harness:
  sessions:
{}expose:
  agent:
    workers: {}
    a2a:
      prompts: {{}}
{})",
                                                     FISK_DEMO_PATH, fake->port(), sessions, workers, queue_block));
    }

    // A worker; returns once its banner is out (it has joined the queue group).
    std::unique_ptr<child> worker(const std::string& name) {
        auto w = std::make_unique<child>(std::vector<std::string>{FISK_AI_SERVE_PATH, "serve", "--config", config}, env,
                                         dir.path / (name + ".out"), dir.path / (name + ".err"));
        const bool ready = wait_until([&] { return w->err().find("services:\n") != std::string::npos; }, 30s);
        INFO(w->err());
        REQUIRE(ready);
        return w;
    }

    std::unique_ptr<child> ask(const std::string& name, std::vector<std::string> args) {
        std::vector<std::string> argv{FISK_AI_A2A_PATH, "ask", "tester", "--context", "w", "--json"};
        argv.insert(argv.end(), args.begin(), args.end());
        return std::make_unique<child>(std::move(argv), env, dir.path / (name + ".out"), dir.path / (name + ".err"));
    }

    test::command_output a2a(const std::string& args) const {
        return test::run_shell(
            fmt::format("XDG_CONFIG_HOME={} {} {} 2>&1", (dir.path / "xdg").string(), FISK_AI_A2A_PATH, args));
    }

    // `session ls --json`: one object per session.
    std::vector<json::object> sessions() const {
        const auto r = test::run_shell(fmt::format("XDG_CONFIG_HOME={} {} session ls --json --config {} 2>/dev/null",
                                                   (dir.path / "xdg").string(), FISK_AI_SERVE_PATH, config));
        INFO(r.out);
        REQUIRE(r.exit_code == 0);
        std::vector<json::object> out;
        const auto parsed = json::parse(r.out);  // kept: a range-for would drop the temporary
        for (const auto& s : parsed.as_array()) out.push_back(s.as_object());
        return out;
    }

    std::string session_status(const std::string& id) const {
        for (const auto& s : sessions())
            if (s.at("id").as_string() == id) return std::string(s.at("status").as_string());
        return "<none>";
    }
};

// The task id a reply set belongs to (its `request` header).
std::string task_of(const std::vector<json::object>& lines) {
    REQUIRE_FALSE(lines.empty());
    return std::string(lines.front().at("request").as_string());
}

bool has_block(const std::vector<json::object>& lines, std::string_view type) {
    for (const auto& m : lines) {
        if (m.at("protocol").as_string() != "io.choria.fisk-ai.v1.event") continue;
        if (const auto* b = m.if_contains("block"); b && b->as_object().at("type").as_string() == type) return true;
    }
    return false;
}

}  // namespace

TEST_CASE(
    "fault 2: kill -9 of the worker mid-run: the caller's idle limit says how to continue, and --continue on "
    "the other worker finishes the same session",
    "[serve_faults][fault]") {
    fleet f(2, false, true);
    auto first = f.worker("w1");
    auto second = f.worker("w2");

    auto ask = f.ask("ask", {"--idle-timeout", "4s", "--idle-floor", "1s", "KILL the stream check"});
    // The first tool result is out; the model's next call hangs in the worker that took it.
    REQUIRE(wait_until([&] { return has_block(json_lines(ask->out()), "tool_result"); }, 30s));
    REQUIRE(wait_until([&] { return count_lines(f.llm_log, {R"("conversation":"kill")", R"("step":1)"}) == 1; }, 20s));
    const bool first_took = first->err().find("work started") != std::string::npos;
    auto& taker = first_took ? *first : *second;
    auto& survivor = first_took ? *second : *first;
    CHECK(survivor.err().find("work started") == std::string::npos);
    taker.signal(SIGKILL);
    CHECK(taker.wait(10s) == 128 + SIGKILL);

    const int idle = ask->wait(30s);
    INFO(ask->err());
    CHECK(idle == 5);
    const auto before = json_lines(ask->out());
    CHECK(terminals(before) == 0);
    const auto task = task_of(before);
    CHECK_THAT(ask->err(), Contains(fmt::format("no message from \"tester\" for 4s; the task may still be running "
                                                "(wait, then continue it with --continue {})",
                                                task)));
    const auto session = serve::a2a_session_id("tester", "fisk-ai-cli", task);
    for (const auto& m : before) CHECK(m.at("conversation").as_string() == session);

    auto cont = f.ask("continue", {"--continue", task, "go on"});
    const int resumed = cont->wait(30s);
    INFO(cont->err());
    INFO(survivor.err());
    CHECK(resumed == 0);
    const auto after = json_lines(cont->out());
    REQUIRE(terminals(after) == 1);
    CHECK(after.back().at("protocol").as_string() == "io.choria.fisk-ai.v1.result");
    CHECK(after.back().at("text").as_string() == "resumed answer");
    for (const auto& m : after) {
        CHECK(m.at("conversation").as_string() == session);
        CHECK(m.at("request").as_string() == task);
    }
    CHECK_THAT(survivor.err(), Contains("work started"));
    // The tool call was asked for once; the step after it twice (the hung call in the killed
    // worker, the resumed one here): nothing was repeated, and the tool ran in the first
    // worker only (no second tool result reached the caller).
    CHECK(count_lines(f.llm_log, {R"("conversation":"kill")", R"("step":0)"}) == 1);
    CHECK(count_lines(f.llm_log, {R"("conversation":"kill")", R"("step":1)"}) == 2);
    CHECK_FALSE(has_block(after, "tool_result"));
    // One session in the shared journal, completed.
    const auto all = f.sessions();
    CHECK(all.size() == 1);
    CHECK(f.session_status(session) == "completed");

    survivor.signal(SIGTERM);
    CHECK(survivor.wait(20s) == 0);
}

TEST_CASE("fault 7: one slot, a run and an acked task waiting for it: one SIGTERM lets both finish and exits 0",
          "[serve_faults][fault]") {
    fleet f(1, true);
    auto w = f.worker("w");
    // A comes through the queue and takes the slot; B is acked by the a2a channel, whose puller
    // was already waiting in next(), and waits for the slot (work first, slot second: §5.2).
    const auto queued = f.a2a("enqueue tester --context w --id JOBA SLOW job");
    INFO(queued.out);
    REQUIRE(queued.exit_code == 0);
    REQUIRE(wait_until([&] { return w->err().find("work started") != std::string::npos; }, 20s));
    CHECK_THAT(w->err(), Contains("queue job JOBA"));
    auto b = f.ask("b", {"what now?"});
    REQUIRE(wait_until([&] { return w->err().find("a2a: accepted a task") != std::string::npos; }, 20s));
    REQUIRE(wait_until([&] { return !json_lines(b->out()).empty(); }, 10s));
    CHECK(json_lines(b->out()).front().at("accepted").as_bool());
    CHECK(occurrences(w->err(), "work started") == 1);

    w->signal(SIGTERM);
    REQUIRE(wait_until([&] { return w->err().find("shutting down") != std::string::npos; }, 10s));
    // Drain runs what was taken: A answers, then B gets the slot and answers.
    const int b_code = b->wait(30s);
    INFO(b->err());
    CHECK(b_code == 0);
    const auto b_lines = json_lines(b->out());
    CHECK(terminals(b_lines) == 1);
    CHECK(b_lines.back().at("text").as_string() == "quick answer");
    const int code = w->wait(20s);
    INFO(w->err());
    CHECK(code == 0);
    const auto answer = f.a2a("answer tester JOBA --context w");
    INFO(answer.out);
    CHECK(answer.exit_code == 0);
    CHECK_THAT(answer.out, Contains("slow answer"));
}

TEST_CASE(
    "fault 7: SIGTERM then SIGTERM: the run ends with one interrupted terminal, the waiting task abandoned, "
    "exit 130, and the job is taken again elsewhere",
    "[serve_faults][fault]") {
    fleet f(1, true);
    auto w = f.worker("w");
    const auto queued = f.a2a("enqueue tester --context w --id JOBH HANG job");
    REQUIRE(queued.exit_code == 0);
    REQUIRE(wait_until([&] { return w->err().find("work started") != std::string::npos; }, 20s));
    auto b = f.ask("b", {"what now?"});
    REQUIRE(wait_until([&] { return !json_lines(b->out()).empty(); }, 20s));
    CHECK(json_lines(b->out()).front().at("accepted").as_bool());

    w->signal(SIGTERM);
    REQUIRE(wait_until([&] { return w->err().find("shutting down") != std::string::npos; }, 10s));
    // Drained, not cancelled: B still waits (no terminal), A still runs.
    CHECK(terminals(json_lines(b->out())) == 0);
    w->signal(SIGTERM);
    const int code = w->wait(20s);
    INFO(w->err());
    CHECK(code == 130);

    const int b_code = b->wait(20s);
    INFO(b->err());
    CHECK(b_code == 1);
    const auto b_lines = json_lines(b->out());
    REQUIRE(terminals(b_lines) == 1);
    const auto& terminal = b_lines.back();
    CHECK(terminal.at("protocol").as_string() == "io.choria.fisk-ai.v1.error");
    CHECK(terminal.at("code").as_string() == "abandoned");
    CHECK(terminal.at("stop_reason").as_string() == "canceled");
    CHECK(terminal.at("error").as_string() == "the worker stopped before this work started");
    // B never ran: no session was opened for it.
    const auto b_session = serve::a2a_session_id("tester", "fisk-ai-cli", task_of(b_lines));
    CHECK(f.session_status(b_session) == "<none>");
    // A was interrupted: journaled suspended, its job nak'd (no answer stored) ...
    const auto a_session = serve::queue_session_id("tester", "JOBH");
    CHECK(f.session_status(a_session) == "suspended");
    const auto none = f.a2a("answer tester JOBH --context w");
    CHECK(none.exit_code == 6);
    // ... and taken by the next worker, which resumes it (the model answers the second call).
    auto next = f.worker("w2");
    const auto answer = f.a2a("answer tester JOBH --context w --wait 30s");
    INFO(answer.out);
    CHECK(answer.exit_code == 0);
    CHECK_THAT(answer.out, Contains("hung answer"));
    CHECK(f.session_status(a_session) == "completed");
    next->signal(SIGTERM);
    CHECK(next->wait(20s) == 0);
}

TEST_CASE("a caller that vanishes mid-run: the worker finishes and journals the run and keeps serving",
          "[serve_faults][fault]") {
    fleet f(1);
    auto w = f.worker("w");
    auto gone = f.ask("gone", {"SLOW question"});
    REQUIRE(wait_until([&] { return w->err().find("work started") != std::string::npos; }, 20s));
    REQUIRE(wait_until([&] { return !json_lines(gone->out()).empty(); }, 10s));
    const auto session = serve::a2a_session_id("tester", "fisk-ai-cli", task_of(json_lines(gone->out())));
    gone->signal(SIGKILL);
    CHECK(gone->wait(10s) == 128 + SIGKILL);

    // The run goes on without anybody listening, ends and is journaled.
    REQUIRE(wait_until([&] { return w->err().find("work ended") != std::string::npos; }, 30s));
    CHECK(f.session_status(session) == "completed");
    // The worker is healthy: the next task is answered.
    auto next = f.ask("next", {"anything"});
    const int code = next->wait(30s);
    INFO(next->err());
    CHECK(code == 0);
    CHECK(json_lines(next->out()).back().at("text").as_string() == "quick answer");
    // And it stops cleanly (under the sanitizers a leak would make this exit non-zero).
    w->signal(SIGTERM);
    const int stopped = w->wait(20s);
    INFO(w->err());
    CHECK(stopped == 0);
}
