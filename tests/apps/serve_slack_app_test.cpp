// fisk-ai-serve serving Slack for real: the `serve` binary with an expose.agent.slack config
// against fiskai-fake-slack and fiskai-fake-llm, all child processes over real HTTP and
// WebSocket. Tokens come from the environment only. A mention is queued, worked on and
// answered in its thread; the worker is stopped with SIGTERM and started again, and a reply
// in the thread is still a follow-up of the same session.

#include "app_test_support.hpp"
#include "fake_llm_process.hpp"
#include "fake_slack_process.hpp"

#include <fiskai/net/http_client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <csignal>
#include <memory>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace fiskai;
using namespace std::chrono_literals;
using test::child;
using test::wait_until;

namespace {

asio::awaitable<std::string> http_call(std::string method, std::string url, std::string body) {
    net::http_client client(co_await asio::this_coro::executor);
    net::http_request req;
    req.method = std::move(method);
    req.url = std::move(url);
    req.headers.emplace_back("Content-Type", "application/json");
    req.body = std::move(body);
    auto res = co_await client.send(std::move(req), std::chrono::steady_clock::now() + 5s);
    if (!res) throw std::runtime_error(res.error().message);
    co_return std::move(res->body);
}

// One HTTP call to a fake's control API, on a context of its own (bounded).
std::string http(std::string method, std::string url, std::string body = {}) {
    asio::io_context ioc;
    auto done = asio::co_spawn(ioc, http_call(std::move(method), std::move(url), std::move(body)), asio::use_future);
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (done.wait_for(0s) != std::future_status::ready && std::chrono::steady_clock::now() < end)
        ioc.run_one_for(20ms);
    if (done.wait_for(0s) != std::future_status::ready) throw std::runtime_error("no answer from " + url);
    return done.get();
}

struct slack_worker_env {
    test::scratch_dir dir;
    std::unique_ptr<test::fake_llm_process> llm;
    std::unique_ptr<test::fake_slack_process> slack;
    std::string config;
    std::unique_ptr<child> worker;
    int starts = 0;

    slack_worker_env() {
        // The second answer is scripted for the second turn of the same conversation only.
        const auto script = dir.write("script.json", R"({"conversations":[{"name":"chat","steps":[
 {"reply":{"content":[{"type":"text","text":"First **answer**."}],"stop_reason":"end_turn"}},
 {"reply":{"content":[{"type":"text","text":"Second answer."}],"stop_reason":"end_turn"}}]}]})");
        llm = std::make_unique<test::fake_llm_process>(
            FISKAI_FAKE_LLM, std::vector<std::string>{"--script", script, "--port", "0", "--exit-with-parent"});
        slack = std::make_unique<test::fake_slack_process>(FISKAI_FAKE_SLACK);
        // No token in the file: only the names of the variables that hold them.
        config = dir.write("serve.yaml", fmt::format(R"(identity: tester
system_prompt: You help.
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
    slack:
      app_token_env: TEST_SLACK_APP_TOKEN
      bot_token_env: TEST_SLACK_BOT_TOKEN
      api_base_url: http://127.0.0.1:{}/api
)",
                                                     llm->port(), (dir.path / "runs").string(), slack->port()));
    }

    std::unique_ptr<child> spawn(std::vector<std::string> env, const std::string& subcommand = "serve") {
        ++starts;
        return std::make_unique<child>(std::vector<std::string>{FISK_AI_SERVE_PATH, subcommand, "--config", config},
                                       env, dir.path / fmt::format("worker{}.out", starts),
                                       dir.path / fmt::format("worker{}.err", starts));
    }

    // Starts the worker and waits for the end of its banner.
    void start() {
        worker =
            spawn({"TEST_SLACK_APP_TOKEN=xapp-test", "TEST_SLACK_BOT_TOKEN=xoxb-test", "ANTHROPIC_API_KEY=test-key"});
        const bool up = wait_until([&] { return worker->err().find("services:\n") != std::string::npos; }, 20s);
        INFO(worker->err());
        REQUIRE(up);
        CHECK_THAT(worker->err(), Catch::Contains("slack: Socket Mode as <@UBOT> on team T1, any channel"));
    }

    // SIGTERM: the worker drains and exits 0, promptly (nothing idle may hold it: the socket
    // watchdog once kept it alive for its 30 s ping interval after "stopped").
    void stop() {
        worker->signal(SIGTERM);
        const int code = worker->wait(10s);
        INFO(worker->err());
        CHECK(code == 0);
        CHECK_THAT(worker->err(), Catch::Contains("fisk-ai-serve stopped"));
        worker.reset();
    }

    std::string slack_url(std::string_view path) const {
        return fmt::format("http://127.0.0.1:{}{}", slack->port(), path);
    }

    std::string say(json::object event) {
        auto r = json::parse(http("POST", slack_url("/_fake/event"), json::serialize(event)));
        return std::string(r.at("ts").as_string());
    }

    // The thread's posts and edits, as `post: text` / `update: text` lines.
    std::vector<std::string> thread(std::string_view ts) {
        auto r = json::parse(http("GET", slack_url(fmt::format("/_fake/messages?thread_ts={}", ts))));
        std::vector<std::string> lines;
        for (const auto& m : r.at("messages").as_array())
            lines.push_back(fmt::format("{}: {}", m.at("op").as_string().c_str(), m.at("text").as_string().c_str()));
        return lines;
    }

    bool thread_has(std::string_view ts, std::string_view line) {
        const auto lines = thread(ts);
        return std::find(lines.begin(), lines.end(), line) != lines.end();
    }
};

}  // namespace

TEST_CASE(
    "fisk-ai-serve serve answers a Slack mention in its thread, and after a restart a reply there is a "
    "follow-up",
    "[serve_slack]") {
    slack_worker_env e;
    e.start();
    const auto ts =
        e.say(json::object{{"type", "app_mention"}, {"channel", "C1"}, {"user", "U1"}, {"text", "<@UBOT> hello"}});
    REQUIRE(wait_until([&] { return e.thread_has(ts, "update: :white_check_mark: Done"); }, 20s));
    // Queued, then working, then the answer (Markdown as mrkdwn), then done: in this order.
    const std::vector<std::string> first{"post: :hourglass_flowing_sand: Queued", "update: :gear: Working…",
                                         "post: First *answer*.", "update: :white_check_mark: Done"};
    CHECK(e.thread(ts) == first);

    e.stop();
    e.start();
    // No mention: only the journal can tell the new worker that this thread is its session.
    e.say(
        json::object{{"type", "message"}, {"channel", "C1"}, {"user", "U1"}, {"text", "and then?"}, {"thread_ts", ts}});
    REQUIRE(wait_until([&] { return e.thread_has(ts, "post: Second answer."); }, 20s));
    REQUIRE(wait_until([&] { return e.thread(ts).back() == "update: :white_check_mark: Done"; }, 20s));
    // The model saw the whole conversation: the first turn and the reply, in one request.
    auto requests = http("GET", fmt::format("http://127.0.0.1:{}/_fake/requests", e.llm->port()));
    while (!requests.empty() && requests.back() == '\n') requests.pop_back();
    const auto body = requests.substr(requests.rfind('\n') + 1);  // the last of the JSON lines
    CHECK(body.find("hello") != std::string::npos);
    CHECK(body.find("First **answer**.") != std::string::npos);
    CHECK(body.find("and then?") != std::string::npos);
    e.stop();
}

TEST_CASE("fisk-ai-serve serve with Slack refuses to start without the tokens in the environment, check too",
          "[serve_slack]") {
    slack_worker_env e;
    for (const auto* subcommand : {"serve", "check"}) {
        INFO(subcommand);
        auto worker = e.spawn({"TEST_SLACK_APP_TOKEN=xapp-test", "ANTHROPIC_API_KEY=test-key"}, subcommand);
        const int code = worker->wait(20s);
        INFO(worker->err());
        CHECK(code == 1);
        CHECK_THAT(worker->err(), Catch::Contains("slack: environment variable TEST_SLACK_BOT_TOKEN is not set; export "
                                                  "the bot token (xoxb-…)"));
    }
}
