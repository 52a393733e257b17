// The OpenAI chat-completions mapping: request shape, tool calls, reasoning, finish reasons,
// usage and the error text.

#include <fiskai/llm/openai_codec.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::llm;
namespace json = boost::json;

TEST_CASE("openai request mapping", "[llm][openai]") {
    request r;
    r.model = "qwen3";
    r.system = {"You are an operator.", "Be brief."};
    r.thinking = true;  // no effect here
    r.messages = {
        message{role::user, {text_block{"Check ORDERS"}, text_block{"please"}}},
        message{role::assistant,
                {thinking_block{"hmm", "sig"}, text_block{"Checking."},
                 tool_use_block{"call_1", "stream_info", R"({"stream":"ORDERS"})", std::nullopt},
                 provider_block{"server_tool_use", "{}"}}},
        message{role::user,
                {tool_result_block{"call_1", "12 messages", false}, tool_result_block{"call_2", "nope", true}}},
        message{role::assistant, {tool_use_block{"call_3", "x", "{}", std::nullopt}}},
    };
    r.tools = {tool_def{"stream_info", "Shows <a> stream",
                        json::parse(R"({"type":"object","properties":{"stream":{"type":"string"}}})").as_object(),
                        true}};
    CHECK(
        openai::encode_request(r) ==
        R"({"model":"qwen3","messages":[{"role":"system","content":"You are an operator.\n\nBe brief."},)"
        R"({"role":"user","content":"Check ORDERS\n\nplease"},)"
        R"({"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function",)"
        R"("function":{"name":"stream_info","arguments":"{\"stream\":\"ORDERS\"}"}}]},)"
        R"({"role":"tool","tool_call_id":"call_1","content":"12 messages"},)"
        R"({"role":"tool","tool_call_id":"call_2","content":"ERROR: nope"},)"
        R"({"role":"assistant","content":null,"tool_calls":[{"id":"call_3","type":"function",)"
        R"("function":{"name":"x","arguments":"{}"}}]}],)"
        R"("tools":[{"type":"function","function":{"name":"stream_info","description":"Shows \u003ca\u003e stream",)"
        R"("parameters":{"properties":{"stream":{"type":"string"}},"type":"object"}}}],"max_tokens":8192,"stream":false})");
}

TEST_CASE("openai request without tools or system", "[llm][openai]") {
    request r;
    r.model = "m";
    r.max_output_tokens = 100;
    r.messages = {message{role::user, {text_block{"hi"}}}};
    CHECK(openai::encode_request(r) ==
          R"({"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":100,"stream":false})");
}

TEST_CASE("openai finish_reason table", "[llm][openai]") {
    const std::vector<std::pair<std::string, std::string>> table{
        {"stop", "end_turn"},
        {"length", "max_tokens"},
        {"tool_calls", "tool_use"},
        {"function_call", "tool_use"},
        {"content_filter", "refusal"},
        {"eos", "eos"},
        {"", ""},
    };
    for (const auto& [in, out] : table) {
        INFO(in);
        CHECK(openai::map_finish_reason(in) == out);
    }
}

TEST_CASE("openai response decoding", "[llm][openai]") {
    auto decoded = openai::decode_response(R"({"choices":[{"index":0,"finish_reason":"stop","message":{
        "role":"assistant","content":"Checking.","reasoning_content":"I should look.",
        "tool_calls":[{"id":"call_a","type":"function","function":{"name":"stream_info","arguments":"{\"stream\":\"ORDERS\"}"}},
                      {"type":"function","function":{"name":"ping","arguments":""}},
                      {"id":"call_c","type":"function","function":{"name":"bad","arguments":"[1,2]"}},
                      {"id":"call_d","type":"function","function":{"name":"worse","arguments":"{\"a\":"}},
                      {"id":"call_e","type":"function","function":{"name":"obj","arguments":{"k":1}}}]}}],
        "usage":{"prompt_tokens":1000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":400}}})");
    REQUIRE(decoded.has_value());
    REQUIRE(decoded->content.size() == 7);
    CHECK(std::get<thinking_block>(decoded->content[0]) == thinking_block{"I should look.", ""});
    CHECK(std::get<text_block>(decoded->content[1]).text == "Checking.");
    CHECK(std::get<tool_use_block>(decoded->content[2]) ==
          tool_use_block{"call_a", "stream_info", R"({"stream":"ORDERS"})", std::nullopt});
    // A missing id is synthesised from the call's index; empty arguments mean none.
    CHECK(std::get<tool_use_block>(decoded->content[3]) == tool_use_block{"call_1", "ping", "{}", std::nullopt});
    const auto& array_args = std::get<tool_use_block>(decoded->content[4]);
    CHECK(array_args.input == "{}");
    CHECK(array_args.input_error ==
          std::optional<std::string>(R"(the arguments of tool call "call_c" are array, not a JSON object)"));
    const auto& broken = std::get<tool_use_block>(decoded->content[5]);
    CHECK(broken.input == "{}");
    REQUIRE(broken.input_error);
    CHECK(broken.input_error->starts_with(R"(the arguments of tool call "call_d" are not JSON)"));
    CHECK(std::get<tool_use_block>(decoded->content[6]).input == R"({"k":1})");
    // Any tool call forces tool_use whatever finish_reason said.
    CHECK(decoded->stop_reason == "tool_use");
    CHECK(decoded->used == usage{600, 50, 400, 0});
}

TEST_CASE("openai response: text only, null content, errors", "[llm][openai]") {
    auto text = openai::decode_response(
        R"({"choices":[{"finish_reason":"length","message":{"role":"assistant","content":"partial"}}]})");
    REQUIRE(text.has_value());
    CHECK(text->stop_reason == "max_tokens");
    CHECK(text->content.size() == 1);

    auto empty = openai::decode_response(R"({"choices":[{"finish_reason":"stop","message":{"content":null}}]})");
    REQUIRE(empty.has_value());
    CHECK(empty->content.empty());

    auto none = openai::decode_response(R"({"choices":[]})");
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error() == "openai: response has no choices[0]");
    auto bad = openai::decode_response("not json");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().starts_with("openai: response body is not JSON"));
}

TEST_CASE("openai response: arguments nested past Boost's default depth are kept", "[llm][openai]") {
    std::string arguments;
    for (int i = 0; i < 100; ++i) arguments += R"({\"a\":)";
    arguments += "1";
    arguments.append(100, '}');
    auto decoded = openai::decode_response(
        R"({"choices":[{"finish_reason":"tool_calls","message":{"tool_calls":[{"id":"c","type":"function",
            "function":{"name":"x","arguments":")" +
        arguments + R"("}}]}}]})");
    REQUIRE(decoded.has_value());
    const auto& use = std::get<tool_use_block>(decoded->content.at(0));
    CHECK_FALSE(use.input_error);
    CHECK(use.input.starts_with(R"({"a":{"a":)"));
    CHECK(use.input.size() == 100 * 5 + 1 + 100);
}

TEST_CASE("openai status error text", "[llm][openai]") {
    CHECK(openai::status_error_text(400, R"({"error":{"message":"model not found","type":"invalid_request_error"}})") ==
          "openai: HTTP 400: model not found");
    CHECK(openai::status_error_text(404, R"({"error":"model \"x\" not found, try pulling it first"})") ==
          R"(openai: HTTP 404: model "x" not found, try pulling it first)");
    CHECK(openai::status_error_text(503, "") == "openai: HTTP 503: (empty body)");
}

TEST_CASE("openai usage: token counts are clamped and cached never exceeds the prompt", "[llm][openai]") {
    const auto with_usage = [](const std::string& u) {
        auto decoded = openai::decode_response(
            R"({"choices":[{"finish_reason":"stop","message":{"content":"hi"}}],"usage":)" + u + "}");
        REQUIRE(decoded.has_value());
        return decoded->used;
    };
    CHECK(with_usage(R"({"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":10}})") ==
          usage{0, 1, 10, 0});
    CHECK(
        with_usage(
            R"({"prompt_tokens":9223372036854775807,"completion_tokens":-4,"prompt_tokens_details":{"cached_tokens":-9223372036854775807}})") ==
        usage{max_token_count, 0, 0, 0});
    CHECK(
        with_usage(R"({"prompt_tokens":1e300,"completion_tokens":1e19,"prompt_tokens_details":{"cached_tokens":3}})") ==
        usage{max_token_count - 3, max_token_count, 3, 0});
}

TEST_CASE("openai status error text: a huge message is bounded", "[llm][openai]") {
    const std::string huge(5'000'000, 'y');
    const auto text = openai::status_error_text(500, R"({"error":{"message":")" + huge + R"("}})");
    CHECK(text.size() < 300);
    CHECK(text.starts_with(R"(openai: HTTP 500: "yyy)"));
    CHECK(text.ends_with(R"(y"...)"));
    const auto plain = openai::status_error_text(500, R"({"error":")" + huge + R"("})");
    CHECK(plain.size() < 300);
}

TEST_CASE("openai response: repeated tool call ids are refused", "[llm][openai]") {
    auto dup = openai::decode_response(R"({"choices":[{"message":{"tool_calls":[
        {"id":"call_1","type":"function","function":{"name":"a","arguments":"{}"}},
        {"type":"function","function":{"name":"b","arguments":"{}"}}]}}]})");
    REQUIRE_FALSE(dup.has_value());
    CHECK(dup.error() == R"(openai: response has more than one tool call with id "call_1")");
}
