#pragma once
// The Slack channel end to end, shared by the slack tests: fiskai-fake-slack over real HTTP
// and WebSocket, the real server and agent on fiskai-fake-llm, the file journal in a temp
// directory. Every wait is a condition with a deadline.

#include "temp_dir.hpp"
#include "fake_llm_process.hpp"
#include "fake_slack_process.hpp"
#include "session_harness.hpp"

#include <fiskai/serve/serve.hpp>
#include <fiskai/serve/slack_channel.hpp>
#include <fiskai/serve/slack_rules.hpp>
#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace slack_test {

using namespace fiskai;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace json = boost::json;
namespace rules = serve::slack_rules;

using fiskai::test::temp_dir;

struct guarded_state {
    int ran = 0;
};

inline toolkit::tool_ptr guarded_tool(const std::shared_ptr<guarded_state>& state) {
    toolkit::function_tool_spec spec;
    spec.name = "guarded";
    spec.description = "Changes something; needs approval.";
    spec.exposed = toolkit::exposure::everywhere();
    spec.confirm = toolkit::confirm_posture::required;
    spec.handler = [state](const json::object&, const toolkit::call_options&) -> asio::awaitable<toolkit::outcome> {
        ++state->ran;
        co_return toolkit::outcome::from_json(json::value("changed"));
    };
    return toolkit::make_function_tool(std::move(spec));
}

inline json::object text_reply(std::string_view text) {
    return json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                               {"stop_reason", "end_turn"}}}};
}

inline json::object tool_reply(std::string_view name, json::object input = {}) {
    return json::object{
        {"reply", json::object{{"content", json::array{json::object{
                                               {"type", "tool_use"}, {"name", name}, {"input", std::move(input)}}}},
                               {"stop_reason", "tool_use"}}}};
}

inline json::object expect_then(std::string_view contains, std::string_view text) {
    return json::object{{"expect", json::object{{"last_tool_result_contains", contains}}},
                        {"reply", text_reply(text)["reply"]}};
}

inline json::object conversation(std::string_view name, std::string_view prompt, json::array steps) {
    return json::object{
        {"name", name}, {"when", json::object{{"prompt_contains", prompt}}}, {"steps", std::move(steps)}};
}

inline std::string script() {
    auto expect_changed = json::object{{"expect", json::object{{"last_tool_result_contains", "changed"}}},
                                       {"reply", text_reply("allowed as expected")["reply"]}};
    json::array conversations{
        conversation("guard", "GUARD", json::array{tool_reply("guarded"), expect_changed}),
        conversation("confirm", "CONFIRM",
                     json::array{tool_reply("ask_human_confirm", {{"question", "Sure?"}}),
                                 expect_then("true", "confirmed as expected")}),
        conversation("select", "SELECT",
                     json::array{tool_reply("ask_human_select",
                                            {{"question", "Which?"}, {"options", json::array{"red", "green", "blue"}}}),
                                 expect_then("green", "picked green")}),
        conversation("many", "MANY",
                     json::array{tool_reply("ask_human_select",
                                            {{"question", "Which one?"},
                                             {"options", json::array{"o0", "o1", "o2", "o3", "o4", "o5", "o6"}}}),
                                 expect_then("o3", "picked o3")}),
        conversation(
            "input", "INPUT",
            json::array{tool_reply("ask_human_input", {{"question", "Your name?"}}), expect_then("Ada", "hello Ada")}),
        conversation("slow", "SLOW",
                     json::array{json::object{{"faults", json::array{json::object{{"delay_ms", 1500}}}},
                                              {"reply", text_reply("slow answer")["reply"]}}}),
        // A first answer 1.5 s late, then a prompt second one (the report-timeout tests).
        conversation("laggy", "LAGGY",
                     json::array{json::object{{"faults", json::array{json::object{{"delay_ms", 1500}}}},
                                              {"reply", text_reply("laggy first")["reply"]}},
                                 text_reply("laggy second")}),
        // A run that holds its slot for 6 s.
        conversation("linger", "LINGER",
                     json::array{json::object{{"faults", json::array{json::object{{"delay_ms", 6000}}}},
                                              {"reply", text_reply("lingered")["reply"]}}}),
        conversation("plain", "", json::array{text_reply("first **answer**"), text_reply("second answer")}),
    };
    return json::serialize(json::object{{"conversations", std::move(conversations)}});
}

struct slack_fixture {
    temp_dir dir;
    std::unique_ptr<test::fake_llm_process> llm;
    std::unique_ptr<test::fake_slack_process> slack;
    std::unique_ptr<test::session_harness> h;
    std::shared_ptr<guarded_state> guarded = std::make_shared<guarded_state>();
    std::vector<std::string> log_lines;
    std::shared_ptr<serve::slack_channel> ch;
    std::unique_ptr<serve::server> server;
    std::future<void> finished;
    std::function<void(serve::slack_channel_options&)> adjust;

    std::size_t workers = 2;
    std::chrono::nanoseconds report_timeout = 30s;

    explicit slack_fixture(std::function<void(serve::slack_channel_options&)> adjust_options = {},
                           std::vector<std::string> fake_args = {"--resend-ms", "300"}, std::size_t server_workers = 2,
                           std::chrono::nanoseconds server_report_timeout = 30s)
        : adjust(std::move(adjust_options)), workers(server_workers), report_timeout(server_report_timeout) {
        llm = test::start_scripted_fake_llm(FISKAI_FAKE_LLM, dir.path, script());
        slack = std::make_unique<test::fake_slack_process>(FISKAI_FAKE_SLACK, std::move(fake_args));
        config::config cfg;
        cfg.llm.model = "claude-test";
        cfg.harness.human_in_the_loop_enabled = true;
        std::filesystem::create_directories(dir.path / "runs");
        h = std::make_unique<test::session_harness>(cfg, (dir.path / "runs").string(),
                                                    test::fake_model_provider(llm->port()));
        h->rt->tools.push_back(guarded_tool(guarded));
        start_worker();
    }

    ~slack_fixture() {
        if (server) {
            server->cancel();
            pump_until([this] { return run_finished(); }, 10s);
        }
    }

    void start_worker() {
        serve::slack_channel_options o;
        o.identity = "worker-1";
        o.tokens = {"xapp-test", "xoxb-test"};
        o.api_base_url = fmt::format("http://127.0.0.1:{}/api", slack->port());
        o.question_timeout = 600ms;
        o.question_timeout_floor = 100ms;
        o.status_interval = 100ms;
        o.ping_interval = 400ms;
        o.pong_timeout = 300ms;
        o.reconnect_backoff = 100ms;
        o.log = [this](gocompat::log_level level, std::string_view message, gocompat::log_fields fields) {
            log_lines.push_back(gocompat::format_text_line(level, message, fields));
        };
        if (adjust) adjust(o);
        ch = std::make_shared<serve::slack_channel>(h->ioc.get_executor(), h->store, std::move(o));
        test::run_on(h->ioc, ch->start(), 20s);
        serve::server_options options;
        options.workers = workers;
        options.report_timeout = report_timeout;
        options.log = [this](gocompat::log_level level, std::string_view message, gocompat::log_fields fields) {
            log_lines.push_back(gocompat::format_text_line(level, message, fields));
        };
        server = std::make_unique<serve::server>(h->ioc.get_executor(), h->rt, std::move(options));
        server->add(ch, serve::channel_options{false});
        finished = asio::co_spawn(h->ioc, server->run(), asio::use_future);
    }

    // Drains the worker and waits until it has ended (a restart is this, then start_worker()).
    void stop_worker() {
        server->drain();
        REQUIRE(pump_until([this] { return run_finished(); }, 20s));
        finished.get();
        server.reset();
        REQUIRE(pump_until([this] { return !ch->socket_open(); }, 5s));
        ch.reset();
    }

    [[nodiscard]] bool run_finished() const {
        return finished.valid() && finished.wait_for(0s) == std::future_status::ready;
    }

    bool pump_until(const std::function<bool()>& condition, std::chrono::steady_clock::duration deadline = 20s) {
        const auto end = std::chrono::steady_clock::now() + deadline;
        while (!condition() && std::chrono::steady_clock::now() < end) {
            if (h->ioc.stopped()) h->ioc.restart();
            h->ioc.run_one_for(20ms);
        }
        return condition();
    }

    // Lets the io_context run for a while (to show that something does not happen).
    void pump_for(std::chrono::steady_clock::duration d) {
        const auto end = std::chrono::steady_clock::now() + d;
        pump_until([&] { return std::chrono::steady_clock::now() >= end; }, d + 1s);
    }

    json::value control(std::string path, json::object body, std::string method = "POST") {
        net::http_request req;
        req.method = std::move(method);
        req.url = fmt::format("http://127.0.0.1:{}{}", slack->port(), path);
        req.headers.emplace_back("Content-Type", "application/json");
        req.body = json::serialize(body);
        auto res = test::run_on(h->ioc, h->client.send(std::move(req), std::chrono::steady_clock::now() + 5s), 10s);
        if (!res) throw std::runtime_error(res.error().message);
        return json::parse(res->body);
    }

    // Every post and edit the bot made, in order.
    json::array messages() { return control("/_fake/messages", {}, "GET").at("messages").as_array(); }
    // Those in one thread.
    json::array thread_messages(std::string_view thread) {
        return control(fmt::format("/_fake/messages?thread_ts={}", thread), {}, "GET").at("messages").as_array();
    }

    // A human message: an app_mention by default.
    std::string say(std::string text, json::object extra = {}) {
        json::object body{{"type", "app_mention"}, {"channel", "C1"}, {"user", "U1"}, {"text", std::move(text)}};
        for (auto& [k, v] : extra) body[k] = v;
        auto r = control("/_fake/event", std::move(body));
        return std::string(r.at("ts").as_string());
    }

    // Whether the bot's messages in `thread` include a post or edit whose text is `text`.
    bool has_text(std::string_view thread, std::string_view text) {
        for (const auto& m : messages()) {
            const auto& o = m.as_object();
            const auto* t = o.if_contains("thread_ts");
            if (t != nullptr && t->as_string() == thread && o.at("text").as_string() == text) return true;
        }
        return false;
    }

    std::size_t count_text(std::string_view text) {
        std::size_t n = 0;
        for (const auto& m : messages())
            if (m.at("text").as_string() == text) ++n;
        return n;
    }

    // The latest version of the first message in `thread` carrying an actions block.
    std::optional<json::object> question_in(std::string_view thread) {
        std::optional<json::object> found;
        for (const auto& m : messages()) {
            const auto& o = m.as_object();
            const auto* t = o.if_contains("thread_ts");
            if (t == nullptr || t->as_string() != thread || !o.contains("blocks")) continue;
            for (const auto& b : o.at("blocks").as_array())
                if (b.at("type") == "actions" && (!found || found->at("ts") == o.at("ts"))) found = o;
            if (found && found->at("ts") == o.at("ts")) found = o;
        }
        return found;
    }

    json::value click(std::string_view message_ts, int index, std::string user = "U1") {
        return control("/_fake/click",
                       json::object{{"message_ts", message_ts}, {"action_index", index}, {"user", std::move(user)}});
    }

    // The fake LLM's request log: one JSON line per request.
    std::string llm_requests() {
        net::http_request req;
        req.method = "GET";
        req.url = fmt::format("http://127.0.0.1:{}/_fake/requests", llm->port());
        auto res = test::run_on(h->ioc, h->client.send(std::move(req), std::chrono::steady_clock::now() + 5s), 10s);
        if (!res) throw std::runtime_error(res.error().message);
        return res->body;
    }

    [[nodiscard]] bool logged(std::string_view text) const {
        return std::any_of(log_lines.begin(), log_lines.end(),
                           [&](const std::string& l) { return l.find(text) != std::string::npos; });
    }
};

}  // namespace slack_test
