// The HITL built-ins in isolation: every prompter reply maps to Go's result shape and text;
// malformed input is an error result; silence is a deferral.

#include "session_harness.hpp"

#include <fiskai/agent/hitl.hpp>
#include <fiskai/toolkit/tool_call.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "async_test.hpp"

using namespace fiskai;
namespace json = boost::json;

namespace {

toolkit::tool_ptr tool_named(const std::string& name) {
    for (auto& t : agent::hitl_tools()) {
        if (t->name() == name) return t;
    }
    throw std::logic_error("no tool " + name);
}

toolkit::outcome call(const std::string& name, const std::string& args, toolkit::prompter& asker) {
    toolkit::tool_call_policy policy;
    policy.timeout = std::chrono::seconds(10);
    policy.carries_deferral = true;
    policy.call.asker = &asker;
    return test::run_awaitable(toolkit::run_tool_call(tool_named(name), json::parse(args), std::move(policy)));
}

}  // namespace

TEST_CASE("ask_human_confirm maps every reply", "[hitl]") {
    test::scripted_prompter p;
    CHECK(call("ask_human_confirm", R"({"question":"Delete?"})", p).render() == R"({"confirmed":true})");
    p.answer.confirmed = false;
    CHECK(call("ask_human_confirm", R"({"question":"Delete?"})", p).render() == R"({"confirmed":false})");
    p.answer.status = toolkit::reply_status::declined;
    p.answer.reason = "EOF";
    CHECK(call("ask_human_confirm", R"({"question":"Delete?"})", p).render() ==
          R"({"confirmed":false,"reason":"the operator did not confirm: EOF"})");
    p.answer.status = toolkit::reply_status::cancelled;
    p.answer.reason = "context canceled";
    CHECK(call("ask_human_confirm", R"({"question":"Delete?"})", p).render() ==
          R"({"confirmed":false,"reason":"the run ended before the operator could answer: context canceled"})");
    p.reachable = false;
    CHECK(call("ask_human_confirm", R"({"question":"Delete?"})", p).render() ==
          R"({"confirmed":false,"reason":"no interactive terminal is attached, so no operator could be asked"})");
    auto empty = call("ask_human_confirm", R"({"question":"  "})", p);
    CHECK(empty.is_error());
    CHECK(empty.render() == "ask_human_confirm requires a non-empty question");
}

TEST_CASE("ask_human_select validates its options and never picks by itself", "[hitl]") {
    test::scripted_prompter p;
    p.answer.selected = 1;
    CHECK(call("ask_human_select", R"({"question":"Which?","options":["a","b"]})", p).render() ==
          R"({"selected":"b"})");
    p.answer.selected = 7;
    CHECK(call("ask_human_select", R"({"question":"Which?","options":["a","b"]})", p).render() ==
          R"({"selected":null,"reason":"no option was chosen"})");
    CHECK(call("ask_human_select", R"({"question":"Which?","options":[]})", p).render() ==
          "ask_human_select requires at least one option");
    json::array many;
    for (int i = 0; i < 26; ++i) many.push_back(json::value(std::to_string(i)));
    auto args = json::serialize(json::object{{"question", "Which?"}, {"options", many}});
    CHECK(call("ask_human_select", args, p).render() == "ask_human_select supports at most 25 options, got 26");
    p.answer.status = toolkit::reply_status::cancelled;
    p.answer.reason = "stopped";
    CHECK(call("ask_human_select", R"({"question":"Which?","options":["a"]})", p).render() ==
          R"({"selected":null,"reason":"the run ended before the operator could choose: stopped"})");
}

TEST_CASE("ask_human_input: an empty answer is a value, silence is a deferral", "[hitl]") {
    test::scripted_prompter p;
    p.answer.value = "";
    CHECK(call("ask_human_input", R"({"question":"Name?"})", p).render() == R"({"value":""})");
    p.answer.status = toolkit::reply_status::silent;
    p.answer.question_id = "q7";
    auto deferred = call("ask_human_input", R"({"question":"Name?"})", p);
    CHECK(deferred.is_deferral());
    CHECK_FALSE(deferred.is_error());
    CHECK(deferred.render() ==
          R"({"value":null,"deferred":true,"question_id":"q7","reason":")" + agent::deferral_reason() + "\"}");
    auto bad = call("ask_human_input", R"({"question":5})", p);
    CHECK(bad.is_error());
    // The schema check of the call pipeline refuses it first, naming the field.
    CHECK(bad.render().find("question") != std::string::npos);
}

TEST_CASE("the HITL note names the tools", "[hitl]") {
    CHECK(agent::hitl_system_note({}).empty());
    auto note = agent::hitl_system_note({"ask_human_confirm", "ask_human_input"});
    CHECK(note.find("call one of these tools: ask_human_confirm, ask_human_input. Use them") != std::string::npos);
}
