// fisk-ai-serve serving for real: the worker on an embedded broker with fiskai-fake-llm and
// the demo application, a caller (`fisk-ai-a2a ask`) sending it a task, and the two-stage
// signals of §5.5 (one SIGTERM drains and exits 0; two during a run cancel it, the session
// is parked `suspended`, and the worker exits 130).

#include "app_test_support.hpp"
#include "fake_llm_process.hpp"

#include <fiskai/a2a/client.hpp>
#include <fiskai/a2a_nats/transport.hpp>
#include <fiskai/conns/connection.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>
#include <nats/nats.h>

#include <future>
#include <set>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <functional>
#include <iterator>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;
using namespace fiskai;
using namespace std::chrono_literals;

namespace {

using test::child;
using test::slurp;
using test::wait_until;

// The fake LLM (a conversation that answers at once, one that never answers), the worker's
// config, and the worker itself on an embedded broker.
struct worker_env {
    test::scratch_dir dir;
    std::unique_ptr<test::fake_llm_process> fake;
    std::string config;
    std::unique_ptr<child> worker;

    explicit worker_env(bool serve_tools = false) {
        const auto script = dir.write("script.json", R"({"conversations":[
 {"name":"slow","when":{"prompt_contains":"slowly"},"steps":[{"faults":[{"hang":true}],
  "reply":{"content":[{"type":"text","text":"never"}],"stop_reason":"end_turn"}}]},
 {"name":"ask","when":{"prompt_contains":"permission"},"steps":[
  {"reply":{"content":[{"type":"tool_use","name":"ask_human_confirm","input":{"question":"Proceed?"}}],
   "stop_reason":"tool_use"}},
  {"expect":{"last_tool_result_contains":"true"},
   "reply":{"content":[{"type":"text","text":"You said yes."}],"stop_reason":"end_turn"}}]},
 {"name":"escapes","when":{"prompt_contains":"escape"},"steps":[
  {"reply":{"content":[{"type":"text","text":"\u001b]0;PWNED\u0007\u001b[2Jshown\rhidden"}],"stop_reason":"end_turn"}}]},
 {"name":"quick","steps":[{"reply":{"content":[{"type":"text","text":"Forty-two."}],"stop_reason":"end_turn"}},
  {"reply":{"content":[{"type":"text","text":"Still forty-two."}],"stop_reason":"end_turn"}}]}]})");
        fake = std::make_unique<test::fake_llm_process>(
            FISKAI_FAKE_LLM, std::vector<std::string>{"--script", script, "--port", "0", "--exit-with-parent"});
        config = dir.write("serve.yaml", fmt::format(R"(identity: tester
system_prompt: You help.
application_path: {}
llm:
  model: fake
  base_url: http://127.0.0.1:{}
  max_retries: 0
harness:
  human_in_the_loop:
    enabled: true
  sessions:
    backend: file
    options:
      directory: {}
expose:
  agent:
    workers: 1
    a2a:
      prompts: {{}}
{}
)",
                                                     FISK_DEMO_PATH, fake->port(), (dir.path / "runs").string(),
                                                     serve_tools ? "      serve_tools: true" : ""));
    }

    // Starts the worker and waits for the end of its banner; returns the broker URL.
    std::string start() {
        worker = std::make_unique<child>(
            std::vector<std::string>{FISK_AI_SERVE_PATH, "--config", config, "--embedded-broker"},
            std::vector<std::string>{"ANTHROPIC_API_KEY=test-key"}, dir.path / "worker.out", dir.path / "worker.err");
        REQUIRE(wait_until([&] { return worker->err().find("services:\n") != std::string::npos; }, 20s));
        const auto err = worker->err();
        const auto at = err.find("(nats://");
        REQUIRE(at != std::string::npos);
        const auto url = err.substr(at + 1, err.find(')', at) - at - 1);
        fs::create_directories(dir.path / "xdg/nats/context");
        std::ofstream(dir.path / "xdg/nats/context/w.json") << R"({"url":")" << url << R"("})";
        return url;
    }

    std::unique_ptr<child> ask(const std::string& prompt, const std::string& name) {
        return std::make_unique<child>(
            std::vector<std::string>{FISK_AI_A2A_PATH, "ask", "tester", "--context", "w", prompt},
            std::vector<std::string>{"XDG_CONFIG_HOME=" + (dir.path / "xdg").string()}, dir.path / (name + ".out"),
            dir.path / (name + ".err"));
    }
};

}  // namespace

TEST_CASE("serve answers a task, and one SIGTERM drains and exits 0", "[serve_run]") {
    worker_env e;
    e.start();
    auto caller = e.ask("what is the answer?", "ask");
    const int asked = caller->wait(30s);
    INFO(caller->err());
    CHECK(asked == 0);
    CHECK(caller->out() == "Forty-two.\n");

    e.worker->signal(SIGTERM);
    const int code = e.worker->wait(20s);
    INFO(e.worker->err());
    CHECK(code == 0);
    CHECK_THAT(e.worker->err(), Catch::Contains("fisk-ai-serve stopped"));
}

// A model's (or a worker's) text cannot drive the operator's terminal: control characters
// on stderr are shown in caret notation. stdout, here a file, keeps the answer as written.
TEST_CASE("ask shows control characters in a worker's text instead of sending them to the terminal", "[serve_run]") {
    worker_env e;
    e.start();
    auto caller = e.ask("escape the screen", "escapes");
    const int asked = caller->wait(30s);
    INFO(caller->err());
    CHECK(asked == 0);
    CHECK_THAT(caller->err(), Catch::Contains("^[]0;PWNED^G^[[2Jshown^Mhidden"));
    CHECK(caller->err().find('\x1b') == std::string::npos);
    CHECK(caller->out() == "\x1b]0;PWNED\x07\x1b[2Jshown\rhidden\n");
}

TEST_CASE("two SIGTERMs during a run cancel it, park the session suspended and exit 130", "[serve_run]") {
    worker_env e;
    e.start();
    auto caller = e.ask("do it slowly", "slow");
    REQUIRE(wait_until([&] { return e.worker->err().find("work started") != std::string::npos; }, 20s));

    e.worker->signal(SIGTERM);
    // The first signal only drains: the run goes on.
    REQUIRE(wait_until([&] { return e.worker->err().find("shutting down") != std::string::npos; }, 10s));
    e.worker->signal(SIGTERM);
    const int code = e.worker->wait(15s);
    INFO(e.worker->err());
    CHECK(code == 130);

    // The caller hears the terminal (§6.4): error, code interrupted (exit 1).
    const int heard = caller->wait(20s);
    INFO(caller->err());
    CHECK(heard == 1);
    CHECK_THAT(caller->err(), Catch::Contains("interrupted"));

    const auto cfg = e.config;
    const auto ls = test::run_shell(fmt::format("{} session ls --json --config {}", FISK_AI_SERVE_PATH, cfg));
    INFO(ls.out);
    CHECK_THAT(ls.out, Catch::Contains("\"status\":\"suspended\""));
}

TEST_CASE("run hosts the agent on its own broker: the answer on stdout, events on stderr, --continue resumes",
          "[serve_run]") {
    worker_env e;
    const auto first =
        test::run_shell(fmt::format("ANTHROPIC_API_KEY=test-key {} run --config {} what is the answer "
                                    "2>{}",
                                    FISK_AI_SERVE_PATH, e.config, (e.dir.path / "run.err").string()));
    const auto err = slurp(e.dir.path / "run.err");
    INFO(err);
    CHECK(first.exit_code == 0);
    CHECK(first.out == "Forty-two.\n");
    CHECK_THAT(err, Catch::Contains("· calling-llm (iteration 1)"));
    // The hosted worker's own records stay out of the terminal without -v.
    CHECK_THAT(err, !Catch::Contains("work started"));

    // One session, opened by the terminal's identity; a continuation lands in it.
    const auto ls = test::run_shell(fmt::format("{} session ls --json --config {}", FISK_AI_SERVE_PATH, e.config));
    REQUIRE(ls.exit_code == 0);
    const auto id_at = ls.out.find("\"id\":\"a2a-");
    REQUIRE(id_at != std::string::npos);

    // The task id is the request id the caller chose: read it back from --json.
    const auto json_run = test::run_shell(fmt::format(
        "ANTHROPIC_API_KEY=test-key {} run --json --config {} again 2>/dev/null", FISK_AI_SERVE_PATH, e.config));
    REQUIRE(json_run.exit_code == 0);
    const auto req_at = json_run.out.find("\"request\":\"");
    REQUIRE(req_at != std::string::npos);
    const auto task = json_run.out.substr(req_at + 11, json_run.out.find('"', req_at + 11) - req_at - 11);
    const auto before = test::run_shell(fmt::format("{} session ls --json --config {}", FISK_AI_SERVE_PATH, e.config));
    const auto cont = test::run_shell(fmt::format(
        "ANTHROPIC_API_KEY=test-key {} run --config {} --continue {} more 2>&1", FISK_AI_SERVE_PATH, e.config, task));
    INFO(cont.out);
    CHECK(cont.exit_code == 0);
    // The model saw the earlier turn: the fake answered its second step.
    CHECK_THAT(cont.out, Catch::Contains("Still forty-two.\n"));
    const auto after = test::run_shell(fmt::format("{} session ls --json --config {}", FISK_AI_SERVE_PATH, e.config));
    // The continuation opened no new session.
    CHECK(std::count(after.out.begin(), after.out.end(), '{') == std::count(before.out.begin(), before.out.end(), '{'));
}

TEST_CASE("run without system_prompt says it is the config's prompt that is missing, not the task's", "[serve_run]") {
    test::scratch_dir dir;
    const auto cfg =
        dir.write("no-prompt.yaml", fmt::format("application_path: {}\nllm:\n  model: fake\n", FISK_DEMO_PATH));
    const auto r = test::run_shell(
        fmt::format("ANTHROPIC_API_KEY=test-key {} run --config {} how many messages 2>&1", FISK_AI_SERVE_PATH, cfg));
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out == fmt::format("fisk-ai-serve: error: prompt is required unless exposed over MCP: set system_prompt in "
                               "{} (the prompt given to run is the task, not the agent's system prompt)\n",
                               cfg));
    // Any other config error is printed as it is.
    const auto bad = dir.write("bad.yaml", "llm: 5\n");
    const auto r2 =
        test::run_shell(fmt::format("ANTHROPIC_API_KEY=test-key {} run --config {} hi 2>&1", FISK_AI_SERVE_PATH, bad));
    CHECK(r2.exit_code == 2);
    CHECK(r2.out == "fisk-ai-serve: error: parsing config: line 1: llm must be a mapping, got \"5\"\n");
}

TEST_CASE("serve: a SIGTERM while the worker starts drains it once it is up, and exits 0", "[serve_run]") {
    worker_env e;
    // The application, read at startup, answers slowly: the stop comes while it is read.
    const auto started = e.dir.path / "app-started";
    const auto app = e.dir.write("slow-app", fmt::format("#!/bin/sh\n/bin/touch {}\n/bin/sleep 2\nexec {} \"$@\"\n",
                                                         started.string(), FISK_DEMO_PATH));
    fs::permissions(app, fs::perms::owner_all);
    auto text = slurp(e.config);
    text.replace(text.find(FISK_DEMO_PATH), std::string_view(FISK_DEMO_PATH).size(), app);
    const auto config = e.dir.write("slow.yaml", text);
    child worker({FISK_AI_SERVE_PATH, "--config", config, "--embedded-broker"}, {"ANTHROPIC_API_KEY=test-key"},
                 e.dir.path / "slow.out", e.dir.path / "slow.err");
    REQUIRE(wait_until([&] { return fs::exists(started); }, 20s));
    worker.signal(SIGTERM);
    const int code = worker.wait(30s);
    INFO(worker.err());
    CHECK(code == 0);
    CHECK_THAT(worker.err(), Catch::Contains("shutting down: a stop came during startup; taking no work"));
    CHECK_THAT(worker.err(), Catch::Contains("fisk-ai-serve stopped"));
}

TEST_CASE("run replaces the config's expose: a worker's work_dir does not reach the hosted run", "[serve_run]") {
    worker_env e;
    // A work_dir no run could use (a regular file): serve would fail every task with it.
    const auto not_a_dir = e.dir.write("not-a-dir", "x");
    auto text = slurp(e.config);
    text.replace(text.find("    workers: 1\n"), 15, "    workers: 1\n    work_dir: " + not_a_dir + "\n");
    const auto config = e.dir.write("work-dir.yaml", text);
    const auto r = test::run_shell(fmt::format("ANTHROPIC_API_KEY=test-key {} run --config {} what is the answer 2>&1",
                                               FISK_AI_SERVE_PATH, config));
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("Forty-two."));
}

TEST_CASE("run -v --log-format json writes the hosted worker's records as JSON lines", "[serve_run]") {
    worker_env e;
    const auto r = test::run_shell(
        fmt::format("ANTHROPIC_API_KEY=test-key {} run -v --log-format json --config {} what is the answer 2>{}",
                    FISK_AI_SERVE_PATH, e.config, (e.dir.path / "json.err").string()));
    const auto err = slurp(e.dir.path / "json.err");
    INFO(err);
    CHECK(r.exit_code == 0);
    bool seen = false;
    std::size_t at = 0;
    while (at < err.size()) {
        const auto end = err.find('\n', at);
        const auto line = err.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? err.size() : end + 1;
        if (line.find("work started") == std::string::npos) continue;
        boost::system::error_code ec;
        const auto v = boost::json::parse(line, ec);
        INFO(line);
        REQUIRE_FALSE(ec);
        CHECK(v.at("msg") == "work started");
        seen = true;
    }
    CHECK(seen);
}

TEST_CASE("run: the first Ctrl-C sends cancel, the second cancels the hosted run and exits 130", "[serve_run]") {
    worker_env e;
    child run({FISK_AI_SERVE_PATH, "run", "--config", e.config, "do it slowly"}, {"ANTHROPIC_API_KEY=test-key"},
              e.dir.path / "run.out", e.dir.path / "run.err");
    REQUIRE(wait_until([&] { return run.err().find("calling-llm") != std::string::npos; }, 20s));
    run.signal(SIGINT);
    REQUIRE(wait_until([&] { return run.err().find("cancelling;") != std::string::npos; }, 10s));
    run.signal(SIGINT);
    const int code = run.wait(20s);
    INFO(run.err());
    CHECK(code == 130);
    // The hosted run was parked, not lost: its session is suspended.
    const auto ls = test::run_shell(fmt::format("{} session ls --json --config {}", FISK_AI_SERVE_PATH, e.config));
    CHECK_THAT(ls.out, Catch::Contains("\"status\":\"suspended\""));
}

TEST_CASE("run at a terminal answers the agent's question from the keyboard", "[serve_run]") {
    worker_env e;
    // The answer is typed ahead: the pseudo-terminal holds it until the prompter reads.
    const auto r = test::run_shell(fmt::format(
        "printf 'y\\r' | ANTHROPIC_API_KEY=test-key script -qfec \"{} run --config {} 'ask permission'\" /dev/null",
        FISK_AI_SERVE_PATH, e.config));
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("? Proceed? [y/N]"));
    CHECK_THAT(r.out, Catch::Contains("ask_human_confirm ok: {\"confirmed\":true}"));
    CHECK_THAT(r.out, Catch::Contains("You said yes."));
}

namespace {

// A peer on the worker's broker: raw requests (as `nats micro info` sends them) and a2a
// tool calls through the a2a client.
struct peer {
    boost::asio::io_context ioc;
    std::unique_ptr<conns::connection> conn;
    std::unique_ptr<a2a_nats::nats_transport> transport;
    std::unique_ptr<a2a::client> client;

    explicit peer(const std::string& url) {
        conns::connect_options o;
        o.name = conns::connection_name("peer");
        conn = conns::connection::dial_url(url, o);
        transport = std::make_unique<a2a_nats::nats_transport>(*conn, ioc.get_executor());
        client = std::make_unique<a2a::client>(*transport, a2a::client_options{"peer"});
    }

    // The reply's body; nullopt for no responders (REQUIREs any other failure away).
    std::optional<std::string> request(const std::string& subject) {
        natsMsg* reply = nullptr;
        const natsStatus s = natsConnection_RequestString(&reply, conn->native_handle(), subject.c_str(), "", 5000);
        if (s == NATS_NO_RESPONDERS) return std::nullopt;
        INFO(natsStatus_GetText(s));
        REQUIRE(s == NATS_OK);
        std::string body(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply)));
        natsMsg_Destroy(reply);
        return body;
    }

    template <typename T>
    T run(boost::asio::awaitable<T> op, std::chrono::seconds limit) {
        auto f = boost::asio::co_spawn(ioc, std::move(op), boost::asio::use_future);
        const auto end = std::chrono::steady_clock::now() + limit;
        while (f.wait_for(0s) != std::future_status::ready) {
            REQUIRE(std::chrono::steady_clock::now() < end);
            ioc.restart();
            ioc.run_for(20ms);
        }
        return f.get();
    }
};

std::map<std::string, std::string> endpoint_subjects(const std::string& info) {
    std::map<std::string, std::string> out;
    const auto parsed = boost::json::parse(info);  // kept: a range-for would drop the temporary
    for (const auto& ep : parsed.at("endpoints").as_array()) {
        out[std::string(ep.at("name").as_string())] = std::string(ep.at("subject").as_string());
    }
    return out;
}

}  // namespace

TEST_CASE("serve_tools: one micro service lists discovery, tool and request, tools and tasks are served",
          "[serve_run][serve_tools]") {
    worker_env e(true);
    const auto url = e.start();
    CHECK_THAT(e.worker->err(), Catch::Contains("a2a tools: discovery choria.fisk-ai.discovery.tester, tools "
                                                "choria.fisk-ai.tool.tester (micro service tester,"));
    CHECK_THAT(e.worker->err(), !Catch::Contains("is not served by this build"));
    peer p(url);

    const auto info = p.request("$SRV.INFO.tester");
    REQUIRE(info);
    const auto endpoints = endpoint_subjects(*info);
    CHECK(endpoints == std::map<std::string, std::string>{{"discovery", "choria.fisk-ai.discovery.tester"},
                                                          {"request", "choria.fisk-ai.request.tester"},
                                                          {"tool", "choria.fisk-ai.tool.tester"}});

    // A peer calls a tool...
    auto called = p.run(p.client->invoke("tester", "sleep", R"({"duration":"10ms"})", 20s), 30s);
    REQUIRE(called.has_value());
    CHECK_FALSE(called->is_error);
    CHECK(called->output == "slept 10ms\n");

    // ...and a task arrives through the request endpoint.
    auto caller = e.ask("what is the answer?", "ask");
    const int asked = caller->wait(30s);
    INFO(caller->err());
    CHECK(asked == 0);
    CHECK(caller->out() == "Forty-two.\n");
    const auto stats = p.request("$SRV.STATS.tester");
    REQUIRE(stats);
    const auto stats_json = boost::json::parse(*stats);
    for (const auto& ep : stats_json.at("endpoints").as_array()) {
        if (ep.at("name") == "request") CHECK(ep.at("num_requests").to_number<std::int64_t>() == 1);
        if (ep.at("name") == "tool") CHECK(ep.at("num_requests").to_number<std::int64_t>() == 1);
    }

    // SIGTERM while a tool call runs: the call finishes, a task sent meanwhile is refused
    // or finds nobody, and the worker exits 0.
    auto running = boost::asio::co_spawn(p.ioc, p.client->invoke("tester", "sleep", R"({"duration":"2s"})", 20s),
                                         boost::asio::use_future);
    REQUIRE(wait_until(
        [&] {
            p.ioc.restart();
            p.ioc.run_for(20ms);
            // The first call logged one already: this is the second.
            const auto err = e.worker->err();
            const auto first = err.find("Running tool call");
            return first != std::string::npos && err.find("Running tool call", first + 1) != std::string::npos;
        },
        20s));
    e.worker->signal(SIGTERM);
    REQUIRE(wait_until([&] { return e.worker->err().find("shutting down") != std::string::npos; }, 10s));
    auto late = e.ask("what is the answer?", "late");
    const int late_code = late->wait(30s);
    INFO(late->err());
    CHECK(late_code != 0);
    CHECK(late->out().empty());
    REQUIRE(wait_until(
        [&] {
            p.ioc.restart();
            p.ioc.run_for(20ms);
            return running.wait_for(0s) == std::future_status::ready;
        },
        20s));
    auto finished = running.get();
    REQUIRE(finished.has_value());
    CHECK(finished->output == "slept 2s\n");
    const int code = e.worker->wait(20s);
    INFO(e.worker->err());
    CHECK(code == 0);
}

TEST_CASE("without serve_tools the request subject is a plain subscription: no micro service answers INFO",
          "[serve_run][serve_tools]") {
    worker_env e;
    const auto url = e.start();
    peer p(url);
    CHECK_FALSE(p.request("$SRV.INFO.tester"));
    CHECK_FALSE(p.request("$SRV.PING"));
    auto caller = e.ask("what is the answer?", "ask");
    CHECK(caller->wait(30s) == 0);
    CHECK(caller->out() == "Forty-two.\n");
}
