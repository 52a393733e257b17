// The Anthropic request bytes (the Go SDK's field order and escaping), the response
// decoding and the error texts.

#include <fiskai/llm/anthropic_codec.hpp>

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::llm;
namespace json = boost::json;

namespace {

request basic_request() {
    request r;
    r.model = "claude-sonnet-4-5";
    r.system = {"You are an operator.", "Note: be brief."};
    r.messages = {message{role::user, {text_block{"How many messages in ORDERS?"}}}};
    return r;
}

tool_def stream_info_tool(bool deferred) {
    tool_def t;
    t.name = "stream_info";
    t.description = "Shows a stream <info> & more";
    t.input_schema = json::parse(R"({"type":"object","required":["stream"],"additionalProperties":false,
        "properties":{"stream":{"type":"string","description":"Stream name"},
                      "json":{"type":"boolean","description":"Emit JSON"},
                      "limit":{"type":"integer"}}})")
                         .as_object();
    t.defer_loading = deferred;
    return t;
}

}  // namespace

TEST_CASE("anthropic request: cache markers on, no tools", "[llm][anthropic]") {
    CHECK(anthropic::encode_request(basic_request()) ==
          R"({"max_tokens":8192,"messages":[{"content":[{"text":"How many messages in ORDERS?","type":"text"}],)"
          R"("role":"user"}],"model":"claude-sonnet-4-5","cache_control":{"type":"ephemeral"},)"
          R"("system":[{"text":"You are an operator.","type":"text"},{"text":"Note: be brief.",)"
          R"("cache_control":{"type":"ephemeral"},"type":"text"}],"tools":[]})");
}

TEST_CASE("anthropic request: cache markers off, and interactive ttl", "[llm][anthropic]") {
    auto r = basic_request();
    r.prompt_cache = false;
    CHECK(anthropic::encode_request(r) ==
          R"({"max_tokens":8192,"messages":[{"content":[{"text":"How many messages in ORDERS?","type":"text"}],)"
          R"("role":"user"}],"model":"claude-sonnet-4-5","system":[{"text":"You are an operator.","type":"text"},)"
          R"({"text":"Note: be brief.","type":"text"}],"tools":[]})");
    r.prompt_cache = true;
    r.interactive = true;
    const auto body = anthropic::encode_request(r);
    CHECK(body.find(R"("model":"claude-sonnet-4-5","cache_control":{"ttl":"1h","type":"ephemeral"},)") !=
          std::string::npos);
    CHECK(body.find(R"({"text":"Note: be brief.","cache_control":{"ttl":"1h","type":"ephemeral"},"type":"text"})") !=
          std::string::npos);
    // The neutral system list is untouched.
    CHECK(r.system == std::vector<std::string>{"You are an operator.", "Note: be brief."});
}

TEST_CASE("anthropic request: output caps and thinking", "[llm][anthropic]") {
    auto r = basic_request();
    CHECK(anthropic::output_cap(r) == 8192);
    r.thinking = true;
    CHECK(anthropic::output_cap(r) == 16384);
    r.max_output_tokens = 1000;
    CHECK(anthropic::output_cap(r) == 1000);
    const auto body = anthropic::encode_request(r);
    CHECK(body.starts_with(R"({"max_tokens":1000,)"));
    CHECK(body.ends_with(R"("thinking":{"display":"summarized","type":"adaptive"},"tools":[]})"));
}

TEST_CASE("anthropic tool: schema rendering, optional notes, defer_loading always", "[llm][anthropic]") {
    CHECK(anthropic::encode_tool(stream_info_tool(true)) ==
          R"j({"input_schema":{"properties":{"json":{"description":"Emit JSON (optional)","type":"boolean"},)j"
          R"("limit":{"description":"Optional.","type":"integer"},"stream":{"description":"Stream name",)"
          R"("type":"string"}},"required":["stream"],"type":"object","additionalProperties":false},)"
          R"("name":"stream_info","defer_loading":true,"description":"Shows a stream \u003cinfo\u003e \u0026 more",)"
          R"("type":"custom"})");
    auto t = stream_info_tool(false);
    CHECK(anthropic::encode_tool(t).find(R"("defer_loading":false)") != std::string::npos);
    // The neutral schema is unchanged by the annotation.
    CHECK(t.input_schema.at("properties").at("json").at("description") == "Emit JSON");

    tool_def bare{"ping", "", json::object{{"type", "string"}}, false};
    CHECK(anthropic::encode_tool(bare) ==
          R"({"input_schema":{"type":"object"},"name":"ping","defer_loading":false,"description":"","type":"custom"})");
}

TEST_CASE("anthropic request: tool search appended only when asked", "[llm][anthropic]") {
    auto r = basic_request();
    r.prompt_cache = false;
    r.tools = {stream_info_tool(true)};
    CHECK(anthropic::encode_request(r).find("tool_search_tool_bm25") == std::string::npos);
    r.tool_search = true;
    CHECK(anthropic::encode_request(r).ends_with(
        R"("type":"custom"},{"type":"tool_search_tool_bm25","name":"tool_search_tool_bm25"}]})"));
}

namespace {
int tool_set_encodings = 0;
std::string count_tools(const std::vector<tool_def>& tools) {
    ++tool_set_encodings;
    return std::to_string(tools.size());
}
std::string name_tools(const std::vector<tool_def>& tools) {
    ++tool_set_encodings;
    return tools.empty() ? std::string() : tools.front().name;
}
}  // namespace

TEST_CASE("a tool set is encoded once per encoder and shared by every request that holds it", "[llm][anthropic]") {
    const tool_set tools{stream_info_tool(false), stream_info_tool(true)};
    tool_set_encodings = 0;
    const std::string& first = tools.encoded(&count_tools);
    const tool_set copy = tools;  // a request's copy: the same list, not a new one
    CHECK(&copy.encoded(&count_tools) == &first);
    CHECK(first == "2");
    CHECK(tool_set_encodings == 1);
    CHECK(copy.encoded(&name_tools) == "stream_info");  // another encoder has its own text
    CHECK(tool_set_encodings == 2);
    CHECK(&tools.encoded(&count_tools) == &first);
    CHECK(tool_set{}.empty());

    // Requests holding one set encode to the same bytes as one built for each, and the
    // other encoders' texts do not leak into the wire.
    auto shared = basic_request();
    shared.tools = tools;
    auto again = basic_request();
    again.tools = tools;
    auto fresh = basic_request();
    fresh.tools = {stream_info_tool(false), stream_info_tool(true)};
    const auto bytes = anthropic::encode_request(shared);
    CHECK(bytes.find(anthropic::encode_tool(stream_info_tool(true))) != std::string::npos);
    CHECK(anthropic::encode_request(again) == bytes);
    CHECK(anthropic::encode_request(fresh) == bytes);
}

TEST_CASE("anthropic blocks: thinking echoed byte-for-byte, tool use, results, provider raw", "[llm][anthropic]") {
    const std::string signature = "EqQBCkgIARABGAIiQL+/=\\u0000\"sig\xe2\x80\xa8";
    CHECK(anthropic::encode_block(thinking_block{"Let me think <carefully>.", signature}) ==
          R"({"signature":"EqQBCkgIARABGAIiQL+/=\\u0000\"sig\u2028","thinking":"Let me think \u003ccarefully\u003e.",)"
          R"("type":"thinking"})");
    CHECK(anthropic::encode_block(tool_use_block{"toolu_1", "stream_info", R"({"stream":"ORDERS"})", std::nullopt}) ==
          R"({"id":"toolu_1","input":{"stream":"ORDERS"},"name":"stream_info","type":"tool_use"})");
    CHECK(anthropic::encode_block(tool_result_block{"toolu_1", "12 messages", false}) ==
          R"({"tool_use_id":"toolu_1","is_error":false,"content":[{"text":"12 messages","type":"text"}],)"
          R"("type":"tool_result"})");
    CHECK(anthropic::encode_block(tool_result_block{"toolu_1", "boom", true}).find(R"("is_error":true)") !=
          std::string::npos);
    const std::string raw =
        R"({"type":"tool_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"stream_info"}]}})";
    CHECK(anthropic::encode_block(provider_block{"tool_search_tool_result", raw}) == raw);

    // A response's thinking block decodes and re-encodes to the same signature bytes.
    auto decoded = anthropic::decode_response(
        R"({"content":[{"type":"thinking","thinking":"hmm","signature":"c2lnbmF0dXJl+/=="}],"stop_reason":"end_turn"})");
    REQUIRE(decoded.has_value());
    CHECK(anthropic::encode_block(decoded->content.at(0)) ==
          R"({"signature":"c2lnbmF0dXJl+/==","thinking":"hmm","type":"thinking"})");
}

TEST_CASE("anthropic response decoding", "[llm][anthropic]") {
    auto decoded = anthropic::decode_response(R"({"id":"msg_1","type":"message","role":"assistant",
        "content":[{"type":"text","text":"Checking."},
                   {"type":"tool_use","id":"toolu_a","name":"stream_info","input":{"stream":"ORDERS","n":1.5}},
                   {"type":"server_tool_use","id":"srv_1","name":"tool_search_tool_bm25","input":{"query":"x"}},
                   {"type":"redacted_thinking","data":"abc"}],
        "stop_reason":"pause_turn_new",
        "usage":{"input_tokens":1200,"output_tokens":80,"cache_read_input_tokens":7,"cache_creation_input_tokens":9}})");
    REQUIRE(decoded.has_value());
    REQUIRE(decoded->content.size() == 4);
    CHECK(std::get<text_block>(decoded->content[0]).text == "Checking.");
    const auto& use = std::get<tool_use_block>(decoded->content[1]);
    CHECK(use.id == "toolu_a");
    CHECK(use.input == R"({"stream":"ORDERS","n":1.5})");
    CHECK_FALSE(use.input_error);
    CHECK(std::get<provider_block>(decoded->content[2]).kind == "server_tool_use");
    CHECK(std::get<provider_block>(decoded->content[2]).raw ==
          R"({"type":"server_tool_use","id":"srv_1","name":"tool_search_tool_bm25","input":{"query":"x"}})");
    CHECK(std::get<provider_block>(decoded->content[3]).kind == "redacted_thinking");
    CHECK(decoded->stop_reason == "pause_turn_new");
    CHECK(decoded->used == usage{1200, 80, 7, 9});
}

TEST_CASE("anthropic response: bad bodies are clear errors", "[llm][anthropic]") {
    auto not_json = anthropic::decode_response("<html>502 Bad Gateway</html>");
    REQUIRE_FALSE(not_json.has_value());
    CHECK(not_json.error().starts_with("anthropic: response body is not JSON"));
    CHECK(not_json.error().find("<html>502") != std::string::npos);

    auto no_type = anthropic::decode_response(R"({"content":[{"text":"x"}]})");
    REQUIRE_FALSE(no_type.has_value());
    CHECK(no_type.error() == "anthropic: response content block 0 has no type");

    auto array = anthropic::decode_response("[1]");
    REQUIRE_FALSE(array.has_value());
    CHECK(array.error() == "anthropic: response body is array, not a JSON object");

    auto bad_input =
        anthropic::decode_response(R"({"content":[{"type":"tool_use","id":"t1","name":"x","input":"s"}]})");
    REQUIRE(bad_input.has_value());
    const auto& use = std::get<tool_use_block>(bad_input->content[0]);
    CHECK(use.input == "{}");
    CHECK(use.input_error ==
          std::optional<std::string>(R"(the arguments of tool call "t1" are string, not a JSON object)"));
}

TEST_CASE("anthropic status error text", "[llm][anthropic]") {
    CHECK(anthropic::status_error_text(
              400, R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}})",
              "req_011") == "anthropic: HTTP 400 invalid_request_error: max_tokens: too large (request req_011)");
    CHECK(anthropic::status_error_text(502, "Bad Gateway", std::nullopt) == R"(anthropic: HTTP 502: "Bad Gateway")");
}

TEST_CASE("anthropic usage: token counts are clamped to zero and the cap", "[llm][anthropic]") {
    auto decoded = anthropic::decode_response(
        R"({"content":[],"usage":{"input_tokens":-1,"output_tokens":9223372036854775807,
            "cache_read_input_tokens":1e300,"cache_creation_input_tokens":18446744073709551615}})");
    REQUIRE(decoded.has_value());
    CHECK(decoded->used == usage{0, max_token_count, max_token_count, max_token_count});

    auto odd = anthropic::decode_response(
        R"({"content":[],"usage":{"input_tokens":-1e300,"output_tokens":12.9,"cache_read_input_tokens":"7",
            "cache_creation_input_tokens":-9223372036854775807}})");
    REQUIRE(odd.has_value());
    CHECK(odd->used == usage{0, 12, 0, 0});
}

TEST_CASE("anthropic status error text: a huge message or type is bounded", "[llm][anthropic]") {
    const std::string huge(5'000'000, 'x');
    const auto text = anthropic::status_error_text(
        500, R"({"type":"error","error":{"type":")" + huge + R"(","message":")" + huge + R"("}})", "req_1");
    CHECK(text.size() < 600);
    CHECK(text.starts_with(R"(anthropic: HTTP 500 "xxx)"));
    CHECK(text.ends_with(R"(xxx"... (request req_1))"));
}

TEST_CASE("anthropic response: repeated tool_use ids are refused", "[llm][anthropic]") {
    auto dup = anthropic::decode_response(
        R"({"content":[{"type":"tool_use","id":"dup","name":"a","input":{}},
                       {"type":"tool_use","id":"dup","name":"b","input":{}}],"stop_reason":"tool_use"})");
    REQUIRE_FALSE(dup.has_value());
    CHECK(dup.error() == R"(anthropic: response has more than one tool call with id "dup")");
}

TEST_CASE("anthropic response: tool input nested as deep as Go accepts is kept, deeper is refused",
          "[llm][anthropic]") {
    // Boost.JSON's default bound is 32 levels; Go's is 10000, and a model's tool input is the
    // model's to shape.
    const auto nested = [](std::size_t depth) {
        std::string input;
        for (std::size_t i = 0; i < depth; ++i) input += R"({"a":)";
        input += "1";
        input.append(depth, '}');
        return input;
    };
    const auto body = [](const std::string& input) {
        return R"({"content":[{"type":"tool_use","id":"t","name":"x","input":)" + input + "}]}";
    };
    // The body's own two levels and the content array's one come on top of the input's.
    const std::string deep = nested(9'990);
    auto decoded = anthropic::decode_response(body(deep));
    REQUIRE(decoded.has_value());
    CHECK(std::get<tool_use_block>(decoded->content[0]).input == deep);

    auto too_deep = anthropic::decode_response(body(nested(10'001)));
    REQUIRE_FALSE(too_deep.has_value());
    CHECK(too_deep.error().starts_with("anthropic: response body is not JSON"));
}
