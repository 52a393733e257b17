// The Slack channel's I/O-free rules (serve.md §8, Amendments 14 and 18).
#include <fiskai/config/config.hpp>
#include <fiskai/gocompat/utf8.hpp>
#include <fiskai/runstate/state.hpp>
#include <fiskai/serve/slack_channel.hpp>
#include <fiskai/serve/slack_rules.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace json = boost::json;
namespace rules = fiskai::serve::slack_rules;
using namespace std::chrono_literals;

namespace {
const rules::self_identity me{"UBOT", "B1", "T1"};

json::object event_payload(json::object event) {
    return json::object{
        {"type", "event_callback"}, {"team_id", "T1"}, {"event_id", "Ev1"}, {"event", std::move(event)}};
}
}  // namespace

TEST_CASE("slack frames: hello, disconnect, envelope, junk", "[slack]") {
    CHECK(rules::parse_frame(R"({"type":"hello"})")->what == rules::frame::kind::hello);
    auto d = rules::parse_frame(R"({"type":"disconnect","reason":"refresh_requested"})");
    CHECK(d->what == rules::frame::kind::disconnect);
    CHECK(d->reason == "refresh_requested");
    auto e = rules::parse_frame(R"({"envelope_id":"e1","type":"events_api","payload":{"a":1},"retry_attempt":2})");
    CHECK(e->what == rules::frame::kind::envelope);
    CHECK(e->envelope_id == "e1");
    CHECK(e->retry_attempt == 2);
    CHECK_FALSE(rules::parse_frame("not json"));
    CHECK(rules::ack_text("e1") == R"({"envelope_id":"e1"})");
    CHECK(rules::fatal_disconnect("link_disabled"));
    CHECK_FALSE(rules::fatal_disconnect("warning"));
}

TEST_CASE("slack dedupe: ids seen once within their ttl, bounded", "[slack]") {
    rules::seen_ids seen(3, std::chrono::seconds(60));
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(seen.first_time("a", t0));
    CHECK_FALSE(seen.first_time("a", t0 + 1s));
    CHECK(seen.first_time("a", t0 + 61s));
    CHECK(seen.first_time("b", t0 + 62s));
    CHECK(seen.first_time("c", t0 + 62s));
    CHECK(seen.first_time("d", t0 + 62s));
    CHECK(seen.size() == 3);
    CHECK(seen.first_time("", t0));
    CHECK(seen.first_time("", t0));
}

TEST_CASE("slack intake: mentions, DMs, thread replies, the bot, subtypes and empty text ignored", "[slack]") {
    std::string why;
    auto m = rules::classify_event(
        event_payload(
            {{"type", "app_mention"}, {"user", "U1"}, {"channel", "C1"}, {"ts", "1.1"}, {"text", "<@UBOT>  hi "}}),
        me, {}, why);
    REQUIRE(m);
    CHECK(m->what == rules::human_message::kind::mention);
    CHECK(m->prompt == "hi");
    CHECK(m->thread_ts == "1.1");
    CHECK_FALSE(m->in_thread);

    auto in_thread = rules::classify_event(event_payload({{"type", "app_mention"},
                                                          {"user", "U1"},
                                                          {"channel", "C1"},
                                                          {"ts", "1.5"},
                                                          {"thread_ts", "1.1"},
                                                          {"text", "<@UBOT> more"}}),
                                           me, {}, why);
    REQUIRE(in_thread);
    CHECK(in_thread->thread_ts == "1.1");
    CHECK(in_thread->in_thread);

    auto dm = rules::classify_event(event_payload({{"type", "message"},
                                                   {"user", "U1"},
                                                   {"channel", "D1"},
                                                   {"ts", "2.1"},
                                                   {"channel_type", "im"},
                                                   {"text", "hello"}}),
                                    me, {"C9"}, why);
    REQUIRE(dm);
    CHECK(dm->what == rules::human_message::kind::direct);

    auto reply = rules::classify_event(event_payload({{"type", "message"},
                                                      {"user", "U1"},
                                                      {"channel", "C1"},
                                                      {"ts", "1.6"},
                                                      {"thread_ts", "1.1"},
                                                      {"text", "and this"}}),
                                       me, {}, why);
    REQUIRE(reply);
    CHECK(reply->what == rules::human_message::kind::thread_reply);

    CHECK_FALSE(rules::classify_event(event_payload({{"type", "message"},
                                                     {"user", "UBOT"},
                                                     {"channel", "C1"},
                                                     {"ts", "1.7"},
                                                     {"thread_ts", "1.1"},
                                                     {"text", "me"}}),
                                      me, {}, why));
    CHECK_FALSE(rules::classify_event(event_payload({{"type", "message"},
                                                     {"user", "U2"},
                                                     {"bot_id", "B9"},
                                                     {"channel", "C1"},
                                                     {"ts", "1.7"},
                                                     {"thread_ts", "1.1"},
                                                     {"text", "x"}}),
                                      me, {}, why));
    CHECK_FALSE(rules::classify_event(
        event_payload(
            {{"type", "app_mention"}, {"user", "U1"}, {"channel", "C1"}, {"ts", "1.8"}, {"text", "<@UBOT>   "}}),
        me, {}, why));
    CHECK(why == "an empty message");
    CHECK_FALSE(rules::classify_event(
        event_payload(
            {{"type", "app_mention"}, {"user", "U1"}, {"channel", "C2"}, {"ts", "1.9"}, {"text", "<@UBOT> x"}}),
        me, {"C1"}, why));
    CHECK(why == "channel C2 is not in expose.agent.slack.channels");
    // A top-level channel message without a mention is not ours.
    CHECK_FALSE(rules::classify_event(
        event_payload({{"type", "message"}, {"user", "U1"}, {"channel", "C1"}, {"ts", "3.1"}, {"text", "chatter"}}), me,
        {}, why));
}

TEST_CASE("slack thread context: earlier human lines, newest kept under the cap", "[slack]") {
    json::value replies = json::array{json::object{{"user", "U1"}, {"text", "first"}, {"ts", "1.1"}},
                                      json::object{{"user", "UBOT"}, {"text", "bot"}, {"ts", "1.2"}, {"bot_id", "B1"}},
                                      json::object{{"user", "U2"}, {"text", "second"}, {"ts", "1.3"}},
                                      json::object{{"user", "U1"}, {"text", "<@UBOT> now"}, {"ts", "1.4"}}};
    CHECK(rules::thread_context(replies, "1.4", me) == "<@U1>: first\n<@U2>: second");
    CHECK(rules::thread_context(replies, "1.4", me, 20) == "<@U2>: second");
    CHECK(rules::compose_prompt("now", "") == "now");
    CHECK(rules::compose_prompt("now", "a") == "now\n\n<context>\na\n</context>");
}

TEST_CASE("slack text: escaping and minimal mrkdwn", "[slack]") {
    CHECK(rules::escape("a<b>&c") == "a&lt;b&gt;&amp;c");
    CHECK(rules::to_mrkdwn("# Title\nsome **bold** and [link](https://x.y)\n1 < 2") ==
          "*Title*\nsome *bold* and <https://x.y|link>\n1 &lt; 2");
}

TEST_CASE("slack text: markdown links become Slack links only for web and mail targets", "[slack]") {
    CHECK(rules::to_mrkdwn("[site](http://a.b/c) [mail](mailto:x@y.z)") == "<http://a.b/c|site> <mailto:x@y.z|mail>");
    // Anything else would be a mention, a broadcast or a channel link once in angle brackets.
    for (const std::string target : {"@U0ADMIN", "!channel", "!here", "!subteam^S1", "#C1", "javascript:x"}) {
        INFO(target);
        const auto out = rules::to_mrkdwn(fmt::format("see [x]({}) now", target));
        CHECK(out == fmt::format("see [x]({}) now", target));
        CHECK(out.find('<') == std::string::npos);
    }
}

TEST_CASE("slack answers split under the limit at paragraph and line boundaries, at most 10 parts", "[slack]") {
    CHECK(rules::split_answer("short") == std::vector<std::string>{"short"});
    const std::string para(3000, 'a');
    auto parts = rules::split_answer(para + "\n\n" + para);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0] == para);
    const std::string big(100 * 1024, 'x');
    auto many = rules::split_answer(big);
    REQUIRE(many.size() == 10);
    for (std::size_t i = 0; i + 1 < many.size(); ++i) CHECK(many[i].size() <= 3900);
    CHECK(many.back().ends_with("[answer trimmed: 63400 more characters]"));
    // UTF-8 is never cut inside a rune.
    std::string runes;
    for (int i = 0; i < 2000; ++i) runes += "é";
    for (const auto& p : rules::split_answer(runes, 101)) CHECK((static_cast<unsigned char>(p[0]) & 0xC0) != 0x80);
}

TEST_CASE("slack status texts per outcome", "[slack]") {
    fiskai::serve::outcome o;
    o.reason = "completed";
    CHECK(rules::status_for(o) == rules::text::done);
    o.reason = "suspended";
    CHECK(rules::status_for(o) == rules::text::stopped);
    o.reason = "error";
    o.error = "boom";
    CHECK(rules::status_for(o) == ":x: Failed: boom");
    fiskai::serve::outcome a;
    a.abandoned = true;
    CHECK(rules::status_for(a) == rules::text::not_started);
    fiskai::serve::outcome d;
    d.reason = "completed";
    d.deferred.emplace_back();
    CHECK(rules::status_for(d) == rules::text::waiting);
}

TEST_CASE("slack action values round-trip, foreign values refused", "[slack]") {
    rules::action_value v{"q1", "approval", "once", "call-1"};
    CHECK(rules::encode_value(v) == R"({"v":1,"q":"q1","k":"approval","c":"once","call":"call-1"})");
    CHECK(rules::decode_value(rules::encode_value(v)) == v);
    CHECK_FALSE(rules::decode_value(R"({"v":2,"q":"q1","k":"confirm","c":"yes"})"));
    CHECK_FALSE(rules::decode_value(R"({"v":1,"q":"q1","k":"evil","c":"yes"})"));
    CHECK_FALSE(rules::decode_value("nope"));
}

TEST_CASE("slack question blocks per kind, within Slack's limits", "[slack]") {
    fiskai::toolkit::question confirm{fiskai::toolkit::question::kind::confirm, "Proceed?", {}, "", "c1", "t"};
    auto m = rules::tool_question_message(confirm, "q1");
    const auto& actions = m.blocks.as_array()[1].as_object().at("elements").as_array();
    REQUIRE(actions.size() == 2);
    CHECK(actions[0].at("action_id") == "fiskai.answer.0");
    CHECK(rules::decode_value(actions[1].at("value").as_string())->choice == "no");

    fiskai::toolkit::question few{fiskai::toolkit::question::kind::select, "Pick", {"a", "b", "c"}, "", "c1", "t"};
    CHECK(rules::tool_question_message(few, "q2").blocks.as_array()[1].at("elements").as_array().size() == 3);

    std::vector<std::string> options;
    for (int i = 0; i < 12; ++i) options.push_back(std::string(200, 'o'));
    fiskai::toolkit::question many{fiskai::toolkit::question::kind::select, "Pick", options, "", "c1", "t"};
    const auto select = rules::tool_question_message(many, "q3").blocks.as_array()[1].at("elements").as_array()[0];
    CHECK(select.at("type") == "static_select");
    for (const auto& o : select.at("options").as_array()) {
        CHECK(o.at("value").as_string().size() <= 150);
        CHECK(o.at("text").at("text").as_string().size() <= 75 * 4);
        CHECK(rules::decode_value(o.at("value").as_string())->call_id.empty());
    }

    fiskai::toolkit::question input{fiskai::toolkit::question::kind::input, "Name?", {}, "", "c1", "t"};
    const auto input_blocks = rules::tool_question_message(input, "q4").blocks.as_array();
    CHECK(input_blocks.size() == 2);
    CHECK(input_blocks[1].at("type") == "context");

    fiskai::toolkit::approval_request r{"shell", std::string(10000, 'x'), "writes", "call-9"};
    auto a = rules::approval_message(r, "q5");
    CHECK(a.blocks.as_array()[0].at("text").at("text").as_string().size() <= 3000);
    const auto& buttons = a.blocks.as_array()[1].at("elements").as_array();
    REQUIRE(buttons.size() == 3);
    CHECK(buttons[1].at("text").at("text") == "Allow for this turn");
    CHECK(rules::decode_value(buttons[2].at("value").as_string())->call_id == "call-9");
}

TEST_CASE("slack question and approval texts are escaped like their sections", "[slack]") {
    // chat.postMessage's text is mrkdwn: unescaped, <!channel> in a question would notify
    // the whole channel, and the answered edit puts the text back into a section.
    fiskai::toolkit::question q{
        fiskai::toolkit::question::kind::confirm, "Ping <!channel> & <@U0ADMIN>?", {}, "", "c1", "t"};
    const auto m = rules::tool_question_message(q, "q1");
    CHECK(m.text == "Ping &lt;!channel&gt; &amp; &lt;@U0ADMIN&gt;?");
    CHECK(m.text == m.blocks.as_array()[0].at("text").at("text").as_string());
    const auto answered = rules::answered_message(m.text, "Yes", "U1");
    CHECK(answered.blocks.as_array()[0].at("text").at("text").as_string() == m.text);

    fiskai::toolkit::approval_request r{"<!here>", "rm -rf /", "writes", "call-1"};
    CHECK(rules::approval_message(r, "q2").text == "Approval needed for &lt;!here&gt;");
}

TEST_CASE("slack question sections stay within 3000 characters once escaped, cut between entities", "[slack]") {
    const auto runes = [](std::string_view s) {
        return static_cast<std::size_t>(
            std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
    };
    fiskai::toolkit::approval_request r{std::string(100, '<'), std::string(2000, '&'), std::string(200, '>'), "call-1"};
    const auto a = rules::approval_message(r, "q1");
    const std::string section(a.blocks.as_array()[0].at("text").at("text").as_string());
    CHECK(runes(section) <= 3000);
    // The command's code span holds whole entities only.
    const auto open = section.find(":\n`") + 3;
    const auto command = section.substr(open, section.find('`', open) - open);
    REQUIRE(!command.empty());
    CHECK(command.size() % 5 == 0);
    CHECK(command.find_first_not_of("&amp;") == std::string::npos);
    CHECK(command.substr(command.size() - 5) == "&amp;");

    fiskai::toolkit::question amps{fiskai::toolkit::question::kind::confirm, std::string(2900, '&'), {}, "", "c1", "t"};
    const std::string question(
        rules::tool_question_message(amps, "q2").blocks.as_array()[0].at("text").at("text").as_string());
    CHECK(runes(question) <= 3000);
    CHECK(question.substr(question.size() - 5) == "&amp;");

    // Runes of several bytes are never split, and count once.
    std::string mixed;
    for (int i = 0; i < 1500; ++i) mixed += "\xc3\xa9<";
    fiskai::toolkit::question accents{fiskai::toolkit::question::kind::confirm, mixed, {}, "", "c1", "t"};
    const std::string accented(
        rules::tool_question_message(accents, "q3").blocks.as_array()[0].at("text").at("text").as_string());
    CHECK(runes(accented) <= 2900);
    CHECK(runes(accented) >= 2895);
    CHECK(fiskai::gocompat::is_valid_utf8(accented));
    CHECK(rules::escape_capped("a&b", 5) == "a");
    CHECK(rules::escape_capped("a&b", 6) == "a&amp;");
    CHECK(rules::escape_capped("\xc3\xa9x", 1) == "\xc3\xa9");
}

TEST_CASE("slack clicks: thread from container then message, foreign controls ignored", "[slack]") {
    rules::action_value v{"q1", "confirm", "yes", "c1"};
    json::object payload{
        {"type", "block_actions"},
        {"user", {{"id", "U1"}}},
        {"team", {{"id", "T1"}}},
        {"container", {{"type", "message"}, {"message_ts", "5.5"}, {"channel_id", "C1"}}},
        {"message",
         {{"ts", "5.5"},
          {"thread_ts", "1.1"},
          {"blocks",
           json::array{json::object{{"type", "section"}, {"text", {{"type", "mrkdwn"}, {"text", "Proceed?"}}}}}}}},
        {"actions", json::array{json::object{{"type", "button"},
                                             {"action_id", "fiskai.answer.0"},
                                             {"value", rules::encode_value(v)},
                                             {"text", {{"type", "plain_text"}, {"text", "Yes"}}}}}}};
    std::string why;
    auto c = rules::parse_click(payload, why);
    REQUIRE(c);
    CHECK(c->thread_ts == "1.1");
    CHECK(c->channel == "C1");
    CHECK(c->question_text == "Proceed?");
    CHECK(c->choice_text == "Yes");
    CHECK(c->value == v);
    payload["container"].as_object()["thread_ts"] = "0.9";
    CHECK(rules::parse_click(payload, why)->thread_ts == "0.9");
    payload["actions"].as_array()[0].as_object()["action_id"] = "other.thing";
    CHECK_FALSE(rules::parse_click(payload, why));
    CHECK(rules::resume_prompt("Proceed?", "Yes") == "The operator answered your earlier question \"Proceed?\": Yes.");
    CHECK(rules::answered_message("Q", "Yes", "U1").text == "Yes — answered by <@U1>");
}

TEST_CASE("slack options from expose.agent.slack: tokens from the environment only, the URL policy, the floor",
          "[slack]") {
    fiskai::config::slack_settings s;
    s.app_token_env = "FISKAI_TEST_SLACK_APP";
    s.bot_token_env = "FISKAI_TEST_SLACK_BOT";
    ::unsetenv("FISKAI_TEST_SLACK_APP");
    ::unsetenv("FISKAI_TEST_SLACK_BOT");
    auto missing = fiskai::serve::slack_channel_options_from(s, "w", {});
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error() ==
          "slack: environment variable FISKAI_TEST_SLACK_BOT is not set; export the bot token (xoxb-…)");
    ::setenv("FISKAI_TEST_SLACK_BOT", "xoxb-1", 1);
    CHECK(fiskai::serve::slack_channel_options_from(s, "w", {}).error() ==
          "slack: environment variable FISKAI_TEST_SLACK_APP is not set; export the app-level token (xapp-…)");
    ::setenv("FISKAI_TEST_SLACK_APP", "xapp-1", 1);
    s.api_base_url = "http://slack.example.com/api";
    auto refused = fiskai::serve::slack_channel_options_from(s, "w", {});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().find("expose.agent.slack.api_base_url") != std::string::npos);
    s.api_base_url = "http://127.0.0.1:9/api/";
    s.question_timeout = std::chrono::seconds(5);
    auto ok = fiskai::serve::slack_channel_options_from(s, "w", {});
    REQUIRE(ok.has_value());
    CHECK(ok->tokens.bot_token == "xoxb-1");
    CHECK(ok->api_base_url == "http://127.0.0.1:9/api");
    CHECK(ok->question_timeout == std::chrono::seconds(5));  // floored by the question window
}

TEST_CASE("slack late approval: the journal says whether the gated call still awaits a decision", "[slack]") {
    namespace llm = fiskai::llm;
    fiskai::runstate::run_state session;
    // No pending batch: everything the model asked for has its result (or was never asked).
    CHECK_FALSE(rules::awaiting_decision(session, "toolu_1"));

    fiskai::runstate::pending_turn pending;
    pending.assistant.who = llm::role::assistant;
    pending.assistant.content.push_back(llm::text_block{"let me check"});
    pending.assistant.content.push_back(llm::tool_use_block{"toolu_1", "guarded", "{}", std::nullopt});
    pending.assistant.content.push_back(llm::tool_use_block{"toolu_2", "other", "{}", std::nullopt});
    session.pending = pending;
    // The gate aborted on toolu_1: no result, so a late click decides it.
    CHECK(rules::awaiting_decision(session, "toolu_1"));
    CHECK(rules::awaiting_decision(session, "toolu_2"));
    // A call of another batch, or no call id at all, is not this session's pending call.
    CHECK_FALSE(rules::awaiting_decision(session, "toolu_9"));
    CHECK_FALSE(rules::awaiting_decision(session, ""));
    // Once its result is journaled (allowed, denied or run), the decision was taken.
    session.pending->answered.insert("toolu_1");
    CHECK_FALSE(rules::awaiting_decision(session, "toolu_1"));
    CHECK(rules::awaiting_decision(session, "toolu_2"));
}

TEST_CASE("slack clicks during a restart keep the controls and say why", "[slack]") {
    json::array blocks{
        json::object{{"type", "section"}, {"text", json::object{{"type", "mrkdwn"}, {"text", "Run `rm`?"}}}},
        json::object{{"type", "actions"}, {"elements", json::array{json::object{{"type", "button"}}}}},
        json::object{{"type", "context"},
                     {"elements", json::array{json::object{{"type", "mrkdwn"}, {"text", "old"}}}}}};
    const auto noted = rules::noted_blocks(blocks, rules::text::restarting_click);
    REQUIRE(noted.as_array().size() == 3);
    CHECK(noted.as_array()[0] == blocks[0]);
    CHECK(noted.as_array()[1] == blocks[1]);
    CHECK(noted.as_array()[2].at("elements").at(0).at("text").as_string() == rules::text::restarting_click);
    // A click payload without blocks still gets the note.
    CHECK(rules::noted_blocks(nullptr, "x").as_array().size() == 1);

    // The clicked message's blocks travel with the click, as the person saw them.
    json::object payload{
        {"type", "block_actions"},
        {"user", json::object{{"id", "U1"}}},
        {"team", json::object{{"id", "T1"}}},
        {"container", json::object{{"channel_id", "C1"}, {"message_ts", "2.0"}, {"thread_ts", "1.0"}}},
        {"message", json::object{{"ts", "2.0"}, {"blocks", blocks}}},
        {"actions", json::array{json::object{{"action_id", "fiskai.answer.0"},
                                             {"value", rules::encode_value({"q1", "approval", "once", "toolu_1"})},
                                             {"text", json::object{{"type", "plain_text"}, {"text", "Allow once"}}}}}}};
    std::string why;
    auto c = rules::parse_click(payload, why);
    REQUIRE(c);
    CHECK(c->message_blocks == json::value(blocks));
}
