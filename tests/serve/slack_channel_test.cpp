// The Slack channel end to end: fiskai-fake-slack over real HTTP and WebSocket, the real
// server and agent on fiskai-fake-llm, the file journal in a temp directory. Every wait is a
// condition with a deadline.

#include "slack_support.hpp"

#include <random>

using namespace slack_test;

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

TEST_CASE("slack: a second click on an answered question says already decided and makes no turn", "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.question_timeout = 20s; });
    const auto ts = f.say("<@UBOT> CONFIRM once");
    std::optional<json::object> q;
    REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
    f.click(q->at("ts").as_string(), 0);
    REQUIRE(f.pump_until([&] { return f.has_text(ts, std::string(rules::text::done)); }));
    CHECK(f.has_text(ts, "Yes — answered by <@U1>"));
    const auto model_calls = [&] {
        const auto log = f.llm_requests();
        return std::count(log.begin(), log.end(), '\n');
    };
    CHECK(model_calls() == 2);
    // "No" from a client still showing the buttons.
    f.control("/_fake/click",
              json::object{{"message_ts", q->at("ts")}, {"action_index", 1}, {"user", "U1"}, {"stale", true}});
    REQUIRE(f.pump_until([&] { return f.has_text(ts, "already decided — answered by <@U1>"); }));
    f.pump_for(500ms);
    CHECK(f.count_text(std::string(rules::text::queued)) == 1);
    CHECK(model_calls() == 2);
    CHECK(f.llm_requests().find("The operator answered your earlier question") == std::string::npos);
}

TEST_CASE("slack: closed questions are remembered up to a bound, a click on a forgotten one is a late click",
          "[slack]") {
    slack_fixture f([](serve::slack_channel_options& o) { o.closed_questions_kept = 2; });  // a 600 ms window
    std::vector<std::string> threads;
    std::vector<std::string> questions;
    for (int i = 0; i < 3; ++i) {
        const auto ts = f.say(fmt::format("<@UBOT> CONFIRM number {}", i));
        std::optional<json::object> q;
        REQUIRE(f.pump_until([&] { return (q = f.question_in(ts)).has_value(); }));
        // Given up: the message says it can still be answered.
        REQUIRE(f.pump_until([&] {
            auto latest = f.question_in(ts);
            return latest && latest->at("blocks").as_array().size() == 3;
        }));
        threads.push_back(ts);
        questions.emplace_back(q->at("ts").as_string());
    }
    CHECK(f.ch->open_questions() == 0);
    CHECK(f.ch->known_questions() == 2);
    // The first was forgotten: its click is handled as after a restart, a resume turn.
    f.click(questions[0], 0);
    REQUIRE(f.pump_until([&] { return f.has_text(threads[0], "Yes — answered by <@U1>"); }));
    REQUIRE(f.pump_until([&] {
        std::size_t queued = 0;
        for (const auto& m : f.thread_messages(threads[0]))
            if (m.at("op") == "post" && m.at("text").as_string() == rules::text::queued) ++queued;
        return queued == 2;
    }));
    // The third is remembered: a first late click resumes, a second one is already decided.
    f.click(questions[2], 0);
    REQUIRE(f.pump_until([&] { return f.has_text(threads[2], "Yes — answered by <@U1>"); }));
    f.control("/_fake/click",
              json::object{{"message_ts", questions[2]}, {"action_index", 1}, {"user", "U1"}, {"stale", true}});
    REQUIRE(f.pump_until([&] { return f.has_text(threads[2], "already decided — answered by <@U1>"); }));
}
