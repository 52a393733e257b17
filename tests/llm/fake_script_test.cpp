// fiskai-fake-llm's logic: script validation, conversation and step choice, faults
// consumed one per attempt, expectations, and replies rendered in both wire shapes.

#include "script.hpp"

#include <fiskai/llm/anthropic_codec.hpp>
#include <fiskai/llm/openai_codec.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::fake_llm;
namespace json = boost::json;
namespace llm = fiskai::llm;

namespace {

const char* const orders_script = R"({"conversations": [
  {"name": "orders", "when": {"prompt_contains": "ORDERS"},
   "steps": [
     {"expect": {"tools_include": ["stream_info"]},
      "faults": [{"status": 529, "body": {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}},
                 {"status": 429, "headers": {"retry-after": "0"}}, {"close": true}, {"hang": true}],
      "reply": {"content": [{"type":"text","text":"Checking."},
                            {"type":"tool_use","name":"stream_info","input":{"stream":"ORDERS"}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 1200, "output_tokens": 80}}},
     {"expect": {"last_tool_result_contains": "ORDERS"},
      "reply": {"content": [{"type":"text","text":"ORDERS holds 12 messages."}], "stop_reason": "end_turn"}}]},
  {"name": "think", "steps": [{"reply": {"content": [{"type":"thinking","thinking":"hmm","signature":"c2ln"},
                                                     {"type":"text","text":"ok"}]}}]}],
 "unmatched": {"status": 500, "body": {"type":"error","error":{"type":"api_error","message":"no scripted conversation matches"}}}})";

std::string anthropic_body(const std::string& prompt, int assistant_turns, const std::string& tool_result = "") {
    llm::request r;
    r.model = "m";
    r.messages.push_back(llm::message{llm::role::user, {llm::text_block{prompt}}});
    for (int i = 0; i < assistant_turns; ++i) {
        r.messages.push_back(llm::message{
            llm::role::assistant, {llm::tool_use_block{"t" + std::to_string(i), "stream_info", "{}", std::nullopt}}});
        r.messages.push_back(
            llm::message{llm::role::user, {llm::tool_result_block{"t" + std::to_string(i), tool_result, false}}});
    }
    r.tools = {llm::tool_def{"stream_info", "d", json::object{{"type", "object"}}, false}};
    return llm::anthropic::encode_request(r);
}

}  // namespace

TEST_CASE("fake script: bad scripts name the bad value", "[llm][fake]") {
    CHECK(parse_script("{").error().starts_with("script is not JSON"));
    CHECK(parse_script(R"({"conversation":[]})").error() ==
          R"(script has an unknown key "conversation" (known: conversations, unmatched))");
    CHECK(parse_script(R"({"conversations":[{"steps":[]}]})").error() ==
          "conversations[0].name must be a non-empty string");
    CHECK(parse_script(R"({"conversations":[{"name":"a","steps":[{"faults":[{"status":99}]}]}]})").error() ==
          "conversations[0].steps[0].faults[0].status must be an HTTP status (100-599), got 99");
    CHECK(parse_script(R"({"conversations":[{"name":"a","steps":[{"faults":[{}]}]}]})").error() ==
          "conversations[0].steps[0].faults[0] does nothing: give status, delay_ms, hang or close");
    CHECK(parse_script(R"({"conversations":[{"name":"a","steps":[{"reply":{"content":[{"text":"x"}]}}]}]})").error() ==
          "conversations[0].steps[0].reply.content[0] needs a type of text, thinking, tool_use or provider");
}

TEST_CASE("fake engine: faults one per attempt, then the reply, steps by assistant turns", "[llm][fake]") {
    auto parsed = parse_script(orders_script);
    REQUIRE(parsed.has_value());
    engine e(std::move(*parsed));
    const auto body = anthropic_body("How is ORDERS?", 0);

    auto a1 = e.handle(endpoint::anthropic, body);
    CHECK(a1.status == 529);
    CHECK(a1.conversation == std::optional<std::string>("orders"));
    CHECK(a1.step == 0);
    CHECK(a1.attempt == 1);
    CHECK(a1.body == R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
    auto a2 = e.handle(endpoint::anthropic, body);
    CHECK(a2.status == 429);
    CHECK(std::find(a2.headers.begin(), a2.headers.end(), std::pair<std::string, std::string>{"retry-after", "0"}) !=
          a2.headers.end());
    CHECK(e.handle(endpoint::anthropic, body).what == action::kind::close);
    CHECK(e.handle(endpoint::anthropic, body).what == action::kind::hang);
    auto a5 = e.handle(endpoint::anthropic, body);
    CHECK(a5.what == action::kind::respond);
    CHECK(a5.status == 200);
    CHECK(a5.attempt == 5);

    auto decoded = llm::anthropic::decode_response(a5.body);
    REQUIRE(decoded.has_value());
    CHECK(decoded->stop_reason == "tool_use");
    CHECK(std::get<llm::tool_use_block>(decoded->content.at(1)).id == "toolu_orders_0_1");
    CHECK(decoded->used.in == 1200);

    // Step 1: the expectation on the tool result.
    auto wrong = e.handle(endpoint::anthropic, anthropic_body("How is ORDERS?", 1, "nothing here"));
    CHECK(wrong.status == 400);
    CHECK(wrong.step == 1);
    CHECK(wrong.body.find(R"(expect last_tool_result_contains \"ORDERS\" failed)") != std::string::npos);
    auto right = e.handle(endpoint::anthropic, anthropic_body("How is ORDERS?", 1, "ORDERS: 12"));
    CHECK(right.status == 200);
    CHECK(right.body.find("ORDERS holds 12 messages.") != std::string::npos);

    // Beyond the last step.
    auto beyond = e.handle(endpoint::anthropic, anthropic_body("How is ORDERS?", 2, "ORDERS"));
    CHECK(beyond.status == 500);
    CHECK(beyond.body.find(R"(conversation \"orders\" has no step 2)") != std::string::npos);
}

TEST_CASE("fake engine: expectations, unmatched and the openai shape", "[llm][fake]") {
    auto parsed = parse_script(orders_script);
    REQUIRE(parsed.has_value());
    engine e(std::move(*parsed));
    llm::request r;
    r.model = "qwen";
    r.messages = {llm::message{llm::role::user, {llm::text_block{"ORDERS please"}}}};
    // No stream_info tool: the expectation fails once the faults are spent.
    for (int i = 0; i < 4; ++i) (void)e.handle(endpoint::openai, llm::openai::encode_request(r));
    auto missing = e.handle(endpoint::openai, llm::openai::encode_request(r));
    CHECK(missing.status == 400);
    CHECK(missing.body.find(R"(expect tools_include \"stream_info\" failed)") != std::string::npos);

    r.tools = {llm::tool_def{"stream_info", "d", json::object{{"type", "object"}}, false}};
    auto ok = e.handle(endpoint::openai, llm::openai::encode_request(r));
    REQUIRE(ok.status == 200);
    auto decoded = llm::openai::decode_response(ok.body);
    REQUIRE(decoded.has_value());
    CHECK(decoded->stop_reason == "tool_use");
    CHECK(std::get<llm::tool_use_block>(decoded->content.at(1)) ==
          llm::tool_use_block{"call_orders_0_1", "stream_info", R"({"stream":"ORDERS"})", std::nullopt});
    CHECK(std::find(ok.headers.begin(), ok.headers.end(),
                    std::pair<std::string, std::string>{"x-request-id", "req_fake_6"}) != ok.headers.end());

    r.messages = {llm::message{llm::role::user, {llm::text_block{"hello"}}}};
    // "think" has no `when`: it matches anything that "orders" did not.
    auto think = e.handle(endpoint::anthropic, llm::anthropic::encode_request(r));
    REQUIRE(think.status == 200);
    auto thought = llm::anthropic::decode_response(think.body);
    REQUIRE(thought.has_value());
    CHECK(std::get<llm::thinking_block>(thought->content.at(0)) == llm::thinking_block{"hmm", "c2ln"});

    e.replace(*parse_script(R"({"conversations":[]})"));
    auto unmatched = e.handle(endpoint::anthropic, llm::anthropic::encode_request(r));
    CHECK(unmatched.status == 500);
    CHECK(unmatched.body.find("no scripted conversation matches") != std::string::npos);
}
