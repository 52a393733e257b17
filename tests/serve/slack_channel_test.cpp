// The Slack channel end to end: fiskai-fake-slack over real HTTP and WebSocket, the real
// server and agent on fiskai-fake-llm, the file journal in a temp directory. Every wait is a
// condition with a deadline.

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
#include <fstream>
#include <random>

using namespace fiskai;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace json = boost::json;
namespace rules = serve::slack_rules;

namespace {

struct temp_dir {
    std::filesystem::path path;
    temp_dir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "fiskai-slack-XXXXXX").string();
        path = ::mkdtemp(pattern.data());
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

struct guarded_state {
    int ran = 0;
};

toolkit::tool_ptr guarded_tool(const std::shared_ptr<guarded_state>& state) {
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

json::object text_reply(std::string_view text) {
    return json::object{{"reply", json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                               {"stop_reason", "end_turn"}}}};
}

json::object tool_reply(std::string_view name, json::object input = {}) {
    return json::object{
        {"reply", json::object{{"content", json::array{json::object{
                                               {"type", "tool_use"}, {"name", name}, {"input", std::move(input)}}}},
                               {"stop_reason", "tool_use"}}}};
}

json::object expect_then(std::string_view contains, std::string_view text) {
    return json::object{{"expect", json::object{{"last_tool_result_contains", contains}}},
                        {"reply", text_reply(text)["reply"]}};
}

json::object conversation(std::string_view name, std::string_view prompt, json::array steps) {
    return json::object{
        {"name", name}, {"when", json::object{{"prompt_contains", prompt}}}, {"steps", std::move(steps)}};
}

std::string script() {
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

    explicit slack_fixture(std::function<void(serve::slack_channel_options&)> adjust_options = {},
                           std::vector<std::string> fake_args = {"--resend-ms", "300"})
        : adjust(std::move(adjust_options)) {
        const auto script_path = (dir.path / "script.json").string();
        std::ofstream(script_path) << script();
        llm = std::make_unique<test::fake_llm_process>(
            FISKAI_FAKE_LLM, std::vector<std::string>{"--script", script_path, "--port", "0", "--exit-with-parent"});
        slack = std::make_unique<test::fake_slack_process>(FISKAI_FAKE_SLACK, std::move(fake_args));
        config::config cfg;
        cfg.llm.model = "claude-test";
        cfg.harness.human_in_the_loop_enabled = true;
        llm::provider_config p;
        p.name = "anthropic";
        p.base_url = fmt::format("http://127.0.0.1:{}", llm->port());
        p.api_key = "test-key";
        p.max_retries = 0;
        std::filesystem::create_directories(dir.path / "runs");
        h = std::make_unique<test::session_harness>(cfg, (dir.path / "runs").string(), p);
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
        options.workers = 2;
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

    [[nodiscard]] bool logged(std::string_view text) const {
        return std::any_of(log_lines.begin(), log_lines.end(),
                           [&](const std::string& l) { return l.find(text) != std::string::npos; });
    }
};

}  // namespace

TEST_CASE("slack: a mention is queued, worked on and answered in its thread, the status ends Done", "[slack]") {
    slack_fixture f;
    const auto ts = f.say("<@UBOT> hello there");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::done)); }));
    CHECK(f.has_text(ts, std::string(rules::text::queued)));
    CHECK(f.has_text(ts, std::string(rules::text::working)));
    // Markdown became mrkdwn.
    CHECK(f.has_text(ts, "first *answer*"));
    // The status message was posted first, then edited: queued → working → done, in order.
    std::vector<std::string> status_texts;
    for (const auto& m : f.messages()) {
        const auto& o = m.as_object();
        if (o.at("op") == "post" && o.at("text").as_string() == rules::text::queued) status_texts.push_back("post");
        if (o.at("op") == "update") status_texts.push_back(std::string(o.at("text").as_string()));
    }
    REQUIRE(status_texts.size() >= 3);
    CHECK(status_texts.front() == "post");
    CHECK(status_texts.back() == std::string(rules::text::done));
    const auto acks = f.control("/_fake/acks", {}, "GET");
    CHECK(acks.at("acks").as_array().size() == 1);
}

TEST_CASE("slack: a thread reply after a worker restart is a follow-up because the store holds the thread", "[slack]") {
    slack_fixture f;
    const auto ts = f.say("<@UBOT> remember this");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "first *answer*"); }));
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::done)); }));
    f.stop_worker();
    f.start_worker();
    // No mention: only the store can say this thread is ours.
    f.say("and then?", json::object{{"type", "message"}, {"thread_ts", ts}});
    // The second scripted answer only comes to a conversation that already has the first.
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "second answer"); }));
    // A reply in a thread the store does not hold is not ours.
    const auto other = f.say("just chatting", json::object{{"type", "message"}, {"thread_ts", "1690000000.000001"}});
    f.pump_for(500ms);
    CHECK_FALSE(f.has_text("1690000000.000001", std::string(rules::text::queued)));
    (void)other;
}

TEST_CASE("slack: a direct message is a turn", "[slack]") {
    slack_fixture f;
    const auto ts =
        f.say("hi in private", json::object{{"type", "message"}, {"channel", "D1"}, {"channel_type", "im"}});
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "first *answer*"); }));
}

TEST_CASE("slack: an approval is a message with buttons, the click is delivered and the call runs", "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.question_timeout = 20s; });
    const auto ts = f.say("<@UBOT> GUARD please");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    const auto& buttons = q->at("blocks").as_array()[1].at("elements").as_array();
    REQUIRE(buttons.size() == 3);
    CHECK(buttons[0].at("text").at("text") == "Allow once");
    CHECK(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::waiting)); }));
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "allowed as expected"); }));
    CHECK(f.guarded->ran == 1);
    CHECK(f.has_text(ts, "Allow once — answered by <@U1>"));
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::done)); }));
    CHECK(f.ch->open_questions() == 0);
}

TEST_CASE("slack: a click from someone not in approvers is ignored", "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) {
        o.question_timeout = 20s;
        o.approvers = {"UBOSS"};
    });
    const auto ts = f.say("<@UBOT> GUARD please");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    f.click(q->at("ts").as_string(), 0, "UINTRUDER");
    REQUIRE(f.pump_until(
        [&] { return f.logged("slack: ignoring approval click by UINTRUDER: not in expose.agent.slack.approvers"); }));
    CHECK(f.guarded->ran == 0);
    CHECK(f.ch->open_questions() == 1);
    f.click(q->at("ts").as_string(), 0, "UBOSS");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "allowed as expected"); }));
}

TEST_CASE("slack: an approval given up, then clicked late, resumes the conversation from the held decision",
          "[slack]") {
    slack_fixture f;  // a 600 ms window
    const auto ts = f.say("<@UBOT> GUARD later");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    // The window closes: the question message says it can still be answered, controls kept.
    REQUIRE(f.pump_until([&] {
        auto latest = f.question_in(ts);
        return latest && latest->at("blocks").as_array().size() == 3;
    }));
    REQUIRE(f.pump_until([&] { return f.count_text(std::string(rules::text::waiting)) >= 2; }));
    CHECK(f.guarded->ran == 0);
    f.click(q->at("ts").as_string(), 0);
    // A resume turn: the gated call is re-dispatched and answered from the click, not asked again.
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "allowed as expected"); }));
    CHECK(f.guarded->ran == 1);
    CHECK(f.has_text(ts, "Allow once — answered by <@U1>"));
    // A second click on a decided approval only edits the message.
    f.control("/_fake/click",
              json::object{{"message_ts", q->at("ts")}, {"action_index", 2}, {"user", "U1"}, {"stale", true}});
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "already decided — answered by <@U1>"); }));
    f.pump_for(300ms);
    CHECK(f.guarded->ran == 1);
    CHECK(f.count_text(std::string(rules::text::queued)) == 2);
}

TEST_CASE("slack: a mention inside a thread the worker does not hold brings the thread's earlier messages", "[slack]") {
    slack_fixture f;
    const auto top = f.say("we need the quarterly numbers", json::object{{"type", "message"}, {"user", "U7"}});
    f.say("CONTEXT-LINE from U8", json::object{{"type", "message"}, {"user", "U8"}, {"thread_ts", top}});
    f.say("<@UBOT> can you help?", json::object{{"thread_ts", top}});
    REQUIRE(f.pump_until([&] { return f.has_text(top, "first *answer*"); }));
    // The model saw the context block (the fake LLM logs each request).
    net::http_request req;
    req.method = "GET";
    req.url = fmt::format("http://127.0.0.1:{}/_fake/requests", f.llm->port());
    auto res = test::run_on(f.h->ioc, f.h->client.send(std::move(req), std::chrono::steady_clock::now() + 5s), 10s);
    REQUIRE(res.has_value());
    CHECK(res->body.find("<@U7>: we need the quarterly numbers") != std::string::npos);
    CHECK(res->body.find("<@U8>: CONTEXT-LINE from U8") != std::string::npos);
    CHECK(res->body.find("<context>") != std::string::npos);
}

TEST_CASE("slack: a click racing the window's end is delivered or given up, never both", "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.question_timeout = 300ms; });
    std::mt19937 rng(17);
    for (int round = 0; round < 4; ++round) {
        const auto ts = f.say(fmt::format("<@UBOT> GUARD race {}", round));
        std::optional<json::object> q;
        REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
        f.pump_for(std::chrono::milliseconds(200 + rng() % 200));
        f.click(q->at("ts").as_string(), 0);
        REQUIRE(f.pump_until([&] { return f.has_text(ts, "allowed as expected"); }));
        f.pump_for(300ms);
        // Either the click was delivered in the run (one LLM turn each) or it resumed the
        // session; in both cases the call ran exactly once per round.
        CHECK(f.guarded->ran == round + 1);
    }
}

TEST_CASE("slack: a duplicated envelope and an envelope never acked each make one turn", "[slack]") {
    slack_fixture f;
    const auto ts = f.say("<@UBOT> twice", json::object{{"repeat", 1}});
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::done)); }));
    f.control("/_fake/drop_acks", json::object{{"count", 1}});
    const auto ts2 = f.say("<@UBOT> unacked");
    // The fake re-sends the envelope (retry_attempt 1) because the first ack was lost.
    REQUIRE(f.pump_until([&] {
        const auto acks = f.control("/_fake/acks", {}, "GET");
        for (const auto& a : acks.at("acks").as_array())
            if (a.at("retry_attempt") == 1) return true;
        return false;
    }));
    REQUIRE(f.pump_until([&] { return f.has_text(ts2, std::string(rules::text::done)); }));
    f.pump_for(300ms);
    CHECK(f.count_text(std::string(rules::text::queued)) == 2);
}

TEST_CASE("slack: disconnects with refresh_requested and warning reconnect, link_disabled is a fault", "[slack]") {
    slack_fixture f;
    for (const auto* reason : {"refresh_requested", "warning"}) {
        const auto before = f.ch->connections();
        f.control("/_fake/disconnect", json::object{{"reason", reason}});
        REQUIRE(f.pump_until([&] { return f.ch->connections() == before + 1 && f.ch->socket_open(); }));
        CHECK(f.logged(fmt::format("slack: disconnect; reconnecting reason={}", reason)));
    }
    const auto ts = f.say("<@UBOT> still there?");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "first *answer*"); }));
    f.control("/_fake/disconnect", json::object{{"reason", "link_disabled"}});
    const bool ended = f.pump_until([&] { return f.run_finished(); });
    for (const auto& l : f.log_lines) UNSCOPED_INFO(l);
    REQUIRE(ended);
    CHECK_THROWS_WITH(f.finished.get(), Catch::Contains("link_disabled"));
    f.server.reset();
}

TEST_CASE("slack: a socket that goes silent is found by ping and replaced", "[slack]") {
    slack_fixture f;
    f.control("/_fake/silence", {});
    REQUIRE(f.pump_until([&] { return f.ch->connections() == 2 && f.ch->socket_open(); }, 10s));
    CHECK(f.logged("slack: the socket answered no ping; reconnecting"));
    const auto ts = f.say("<@UBOT> after silence");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "first *answer*"); }));
}

TEST_CASE("slack: 429 on chat.update is retried after Retry-After", "[slack]") {
    slack_fixture f;
    f.control("/_fake/rate_limit", json::object{{"method", "chat.update"}, {"count", 2}, {"retry_after", 1}});
    const auto ts = f.say("<@UBOT> rate limited");
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::done)); }));
    CHECK(f.logged("slack: rate limited"));
}

TEST_CASE("slack: the bot's own message and an empty mention make no turn, a 100 KB message does", "[slack]") {
    slack_fixture f;
    const auto own = f.say("<@UBOT> me", json::object{{"user", "UBOT"}, {"bot_id", "B1"}});
    const auto empty = f.say("<@UBOT>   ");
    const auto big = f.say("<@UBOT> " + std::string(100 * 1024, 'x'));
    REQUIRE(f.pump_until([&] { return f.has_text(big, "first *answer*"); }));
    CHECK_FALSE(f.has_text(own, std::string(rules::text::queued)));
    CHECK_FALSE(f.has_text(empty, std::string(rules::text::queued)));
}

TEST_CASE("slack: drain refuses new messages, marks queued turns Not started, and a running turn still gets its click",
          "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.question_timeout = 20s; });
    const auto ts = f.say("<@UBOT> GUARD during drain");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    f.server->drain();
    const auto late = f.say("<@UBOT> too late");
    REQUIRE(f.pump_until([&] { return f.has_text(late, std::string(rules::text::restarting)); }));
    CHECK(f.ch->socket_open());
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "allowed as expected"); }));
    REQUIRE(f.pump_until([&] { return f.run_finished(); }));
    f.finished.get();
    f.server.reset();
    // The socket closes last, once the running turn has reported.
    REQUIRE(f.pump_until([&] { return !f.ch->socket_open(); }));
}

TEST_CASE("slack: confirm, select (buttons and a drop-down) and input questions are answered in Slack", "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.question_timeout = 20s; });
    std::optional<json::object> q;

    const auto confirm = f.say("<@UBOT> CONFIRM it");
    REQUIRE(f.pump_until([&] { return (q = f.question_in(confirm)).has_value(); }));
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(confirm, "confirmed as expected"); }));
    CHECK(f.has_text(confirm, "Yes — answered by <@U1>"));

    const auto select = f.say("<@UBOT> SELECT one");
    REQUIRE(f.pump_until([&] { return (q = f.question_in(select)).has_value(); }));
    CHECK(q->at("blocks").as_array()[1].at("elements").as_array().size() == 3);
    f.click(q->at("ts").as_string(), 1);
    REQUIRE(f.pump_until([&] { return f.has_text(select, "picked green"); }));

    const auto many = f.say("<@UBOT> MANY options");
    REQUIRE(f.pump_until([&] { return (q = f.question_in(many)).has_value(); }));
    CHECK(q->at("blocks").as_array()[1].at("elements").as_array()[0].at("type") == "static_select");
    f.control("/_fake/click", json::object{{"message_ts", q->at("ts")}, {"choice", 3}, {"user", "U1"}});
    REQUIRE(f.pump_until([&] { return f.has_text(many, "picked o3"); }));

    const auto input = f.say("<@UBOT> INPUT please");
    REQUIRE(f.pump_until([&] { return f.has_text(input, "Your name?"); }));
    // The next human message in the thread is the answer, not a new turn.
    f.say("Ada", json::object{{"type", "message"}, {"thread_ts", input}});
    REQUIRE(f.pump_until([&] { return f.has_text(input, "hello Ada"); }));
    CHECK(f.count_text(std::string(rules::text::queued)) == 4);
}

TEST_CASE("slack: a confirm given up and clicked late resumes the conversation with the answer as a prompt",
          "[slack]") {
    slack_fixture f;  // a 600 ms window
    const auto ts = f.say("<@UBOT> CONFIRM later");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    REQUIRE(f.pump_until([&] {
        auto latest = f.question_in(ts);
        return latest && latest->at("blocks").as_array().size() == 3;
    }));
    REQUIRE(f.pump_until([&] {
        return f.count_text(std::string(rules::text::queued)) == 1 &&
               f.count_text(std::string(rules::text::working)) >= 1 && f.ch->open_questions() == 0;
    }));
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.count_text(std::string(rules::text::queued)) == 2; }));
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "Yes — answered by <@U1>"); }));
}
