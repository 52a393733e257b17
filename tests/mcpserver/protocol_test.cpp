#include <fiskai/mcpserver/protocol.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::mcpserver;
namespace json = boost::json;

TEST_CASE("protocol versions: negotiation and header acceptance", "[mcp][protocol]") {
    CHECK(negotiate_protocol_version("2025-11-25") == "2025-11-25");
    CHECK(negotiate_protocol_version("2025-06-18") == "2025-06-18");
    CHECK(negotiate_protocol_version("2025-03-26") == "2025-03-26");
    CHECK(negotiate_protocol_version("2024-11-05") == "2025-11-25");
    CHECK(negotiate_protocol_version("") == "2025-11-25");
    CHECK_FALSE(is_supported_protocol_version("2026-07-28"));
}

TEST_CASE("JSON-RPC messages are classified", "[mcp][protocol]") {
    auto req = parse_message(R"({"jsonrpc":"2.0","id":"a","method":"ping"})");
    REQUIRE(std::holds_alternative<rpc_request>(req));
    CHECK(std::get<rpc_request>(req).id == "a");
    auto num = parse_message(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}})");
    REQUIRE(std::holds_alternative<rpc_request>(num));
    CHECK(std::get<rpc_request>(num).params.at("cursor") == "x");
    CHECK(std::holds_alternative<rpc_notification>(
        parse_message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})")));
    auto resp = parse_message(R"({"jsonrpc":"2.0","id":3,"result":{"action":"accept"}})");
    REQUIRE(std::holds_alternative<rpc_response>(resp));
    CHECK(std::get<rpc_response>(resp).result->at("action") == "accept");
    auto err = parse_message(R"({"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}})");
    REQUIRE(std::holds_alternative<rpc_response>(err));
    CHECK(std::get<rpc_response>(err).error);
}

TEST_CASE("malformed messages carry the right JSON-RPC error", "[mcp][protocol]") {
    auto code = [](std::string_view body) {
        auto m = parse_message(body);
        REQUIRE(std::holds_alternative<rpc_invalid>(m));
        return std::get<rpc_invalid>(m).code;
    };
    CHECK(code("{") == rpc_error::parse_error);
    CHECK(code("[]") == rpc_error::invalid_request);
    CHECK(code(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])") == rpc_error::invalid_request);
    CHECK(code("null") == rpc_error::invalid_request);
    CHECK(code(R"({"id":1,"method":"ping"})") == rpc_error::invalid_request);
    CHECK(code(R"({"jsonrpc":"2.0","id":null,"method":"ping"})") == rpc_error::invalid_request);
    CHECK(code(R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})") == rpc_error::invalid_request);
    CHECK(code(R"({"jsonrpc":"2.0","id":1,"method":7})") == rpc_error::invalid_request);
    CHECK(code(R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})") == rpc_error::invalid_params);
    CHECK(code(R"({"jsonrpc":"2.0","id":1})") == rpc_error::invalid_request);
    CHECK(code(std::string(100000, '[')) == rpc_error::parse_error);
    // the id survives into the error when it could be read
    auto m = parse_message(R"({"jsonrpc":"2.0","id":9,"method":"x","params":"p"})");
    CHECK(std::get<rpc_invalid>(m).id == 9);
}

TEST_CASE("Origin and Host checks", "[mcp][protocol]") {
    const std::vector<std::string> extra = {"https://app.example.com"};
    CHECK(origin_allowed("http://localhost", {}));
    CHECK(origin_allowed("http://localhost:5173", {}));
    CHECK(origin_allowed("https://127.0.0.1:8443", {}));
    CHECK(origin_allowed("http://[::1]:80", {}));
    CHECK(origin_allowed("HTTP://LOCALHOST", {}));
    CHECK(origin_allowed("https://app.example.com", extra));
    CHECK_FALSE(origin_allowed("https://app.example.com", {}));
    CHECK_FALSE(origin_allowed("http://evil.example.com", {}));
    CHECK_FALSE(origin_allowed("http://localhost.evil.com", {}));
    CHECK_FALSE(origin_allowed("http://127.0.0.1.nip.io", {}));
    CHECK_FALSE(origin_allowed("null", {}));
    CHECK_FALSE(origin_allowed("http://localhost/path", {}));
    CHECK_FALSE(origin_allowed("http://localhost:80x", {}));

    CHECK(host_is_loopback("localhost"));
    CHECK(host_is_loopback("127.0.0.1:8080"));
    CHECK(host_is_loopback("[::1]:8080"));
    CHECK_FALSE(host_is_loopback("evil.example.com"));
    CHECK_FALSE(host_is_loopback("127.0.0.2"));
    CHECK_FALSE(host_is_loopback(""));
    CHECK_FALSE(host_is_loopback("localhost:abc"));
    CHECK_FALSE(host_is_loopback("[::1]x"));
}

TEST_CASE("Accept and Content-Type parsing", "[mcp][protocol]") {
    CHECK(accepts_json_and_sse("application/json, text/event-stream"));
    CHECK(accepts_json_and_sse("text/event-stream;q=0.9, application/json;q=1"));
    CHECK(accepts_json_and_sse("*/*"));
    CHECK(accepts_json_and_sse("application/*, text/*"));
    CHECK_FALSE(accepts_json_and_sse("application/json"));
    CHECK_FALSE(accepts_json_and_sse(""));
    CHECK(accepts_sse("text/event-stream"));
    CHECK_FALSE(accepts_sse("application/json"));
    CHECK(is_json_content_type("application/json"));
    CHECK(is_json_content_type("Application/JSON; charset=utf-8"));
    CHECK_FALSE(is_json_content_type("text/plain"));
    CHECK_FALSE(is_json_content_type(""));
}

namespace {
fiskai::toolkit::tool_ptr tagged(std::vector<std::string> tags) {
    return fiskai::toolkit::make_function_tool({.name = "t",
                                                .title = "the t",
                                                .description = "does t",
                                                .tags = std::move(tags),
                                                .exposed = fiskai::toolkit::exposure{fiskai::toolkit::surface::mcp},
                                                .confirm = fiskai::toolkit::confirm_posture::required,
                                                .handler = [](const json::object&, const fiskai::toolkit::call_options&)
                                                    -> boost::asio::awaitable<fiskai::toolkit::outcome> {
                                                    co_return fiskai::toolkit::outcome::from_json(1);
                                                }});
}
}  // namespace

TEST_CASE("annotations follow the impact tags and never express the gate", "[mcp][protocol]") {
    CHECK(json::serialize(tool_annotations(*tagged({"impact:ro"}))) == R"({"title":"the t","readOnlyHint":true})");
    CHECK(json::serialize(tool_annotations(*tagged({"impact:rw", "ai:confirm"}))) ==
          R"({"title":"the t","readOnlyHint":false})");
    CHECK(json::serialize(tool_annotations(*tagged({}))) == R"({"title":"the t"})");
    auto d = tool_descriptor(*tagged({"x"}));
    CHECK(d.at("name") == "t");
    CHECK(d.at("description") == "does t");  // a function tool: no Tags: line (Go)
    CHECK(d.at("inputSchema").at("type") == "object");
}

TEST_CASE("call results for each outcome kind", "[mcp][protocol]") {
    using fiskai::toolkit::outcome;
    auto cmd = call_result(outcome::from_command({"fail --code=3", 3, "boom\n", false}));
    CHECK(
        json::serialize(cmd) ==
        R"({"content":[{"type":"text","text":"{\"command\":\"fail --code=3\",\"exit_code\":3,\"output\":\"boom\\n\"}"}],)"
        R"("structuredContent":{"command":"fail --code=3","exit_code":3,"output":"boom\n"}})");
    CHECK_FALSE(cmd.contains("isError"));
    auto js = call_result(outcome::from_json(json::parse(R"({"hits":[]})")));
    CHECK(js.at("content").at(0).at("text") == R"({"hits":[]})");
    CHECK_FALSE(js.contains("structuredContent"));
    auto err = call_result(outcome::failure("it broke"));
    CHECK(err.at("isError") == true);
    CHECK(err.at("content").at(0).at("text") == "it broke");
}

TEST_CASE("the approval elicitation and its answers", "[mcp][protocol]") {
    auto p = approval_elicitation("svc", "stream rm -- X", "ai:confirm");
    CHECK(p.at("mode") == "form");
    CHECK(p.at("message") ==
          "svc wants to run a command that requires your approval.\n\nCommand: stream rm -- X\nGated by: "
          "ai:confirm\n\nApprove to run it now, or refuse to skip it.");
    CHECK(
        json::serialize(p.at("requestedSchema")) ==
        R"({"properties":{"approve":{"type":"boolean","title":"Approve this command","description":"Set to true to run the command now, or false to refuse it."}},"required":["approve"],"type":"object"})");

    const std::string cmd = "stream rm -- X";
    CHECK_FALSE(interpret_approval(json::parse(R"({"action":"accept","content":{"approve":true}})"), cmd));
    CHECK(*interpret_approval(json::parse(R"({"action":"accept","content":{"approve":false}})"), cmd) ==
          "Not approved: the user reviewed \"stream rm -- X\" and chose not to run it. This was their decision, not an "
          "error; do not retry.");
    CHECK_THAT(*interpret_approval(json::parse(R"({"action":"accept","content":{"approve":"true"}})"), cmd),
               Catch::StartsWith("Not approved: requesting approval to run \"stream rm -- X\" failed: elicitation "
                                 "result content does not match requested schema"));
    CHECK_THAT(*interpret_approval(json::parse(R"({"action":"accept"})"), cmd), Catch::Contains("does not match"));
    CHECK_THAT(*interpret_approval(json::parse(R"({"action":"decline"})"), cmd),
               Catch::StartsWith("Not approved: the user declined to run \"stream rm -- X\""));
    CHECK_THAT(*interpret_approval(json::parse(R"({"action":"cancel"})"), cmd),
               Catch::StartsWith("Approval not completed: the user dismissed"));
    CHECK_THAT(*interpret_approval(json::parse(R"({"action":"maybe"})"), cmd),
               Catch::StartsWith("Approval not completed"));
    CHECK_THAT(*interpret_approval(json::parse("[1]"), cmd), Catch::StartsWith("Not approved: requesting approval"));
}

TEST_CASE("client elicitation capability", "[mcp][protocol]") {
    CHECK(client_can_elicit_form(json::parse(R"({"elicitation":{}})").as_object()));
    CHECK(client_can_elicit_form(json::parse(R"({"elicitation":{"form":{}}})").as_object()));
    CHECK_FALSE(client_can_elicit_form(json::parse(R"({"elicitation":{"url":{}}})").as_object()));
    CHECK_FALSE(client_can_elicit_form(json::parse(R"({"sampling":{}})").as_object()));
    CHECK_FALSE(client_can_elicit_form(json::parse(R"({"elicitation":true})").as_object()));
}

TEST_CASE("log levels, cursors and the Claude Code hint", "[mcp][protocol]") {
    CHECK(parse_log_level("warning") == log_level::warning);
    CHECK_FALSE(parse_log_level("loud"));
    CHECK(log_level::error > log_level::info);
    CHECK(decode_cursor(encode_cursor(42)) == 42u);
    CHECK_FALSE(decode_cursor("offset:"));
    CHECK_FALSE(decode_cursor("offset:12x"));
    CHECK_FALSE(decode_cursor("x"));
    CHECK(claude_add_hint("svc", "127.0.0.1", 9000, "/mcp") ==
          "claude mcp add --transport http svc http://127.0.0.1:9000/mcp");
    CHECK(claude_add_hint("", "0.0.0.0", 8080, "/mcp") ==
          "claude mcp add --transport http fisk-ai http://localhost:8080/mcp");
    CHECK(claude_add_hint("svc", "::", 8080, "/mcp") ==
          "claude mcp add --transport http svc http://localhost:8080/mcp");
    CHECK(claude_add_hint("svc", "::1", 8080, "/mcp") == "claude mcp add --transport http svc http://[::1]:8080/mcp");
}

TEST_CASE("initialize params are checked before a session opens", "[mcp][protocol]") {
    const auto check = [](std::string_view params) { return check_initialize_params(json::parse(params).as_object()); };
    CHECK_FALSE(check(R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}})"));
    CHECK_FALSE(check(R"({"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"c"}})"));
    CHECK(check(R"({"capabilities":{},"clientInfo":{"name":"c"}})") ==
          "Invalid params: initialize needs protocolVersion, a string such as \"2025-11-25\"");
    CHECK(check(R"({"protocolVersion":20251125,"capabilities":{},"clientInfo":{"name":"c"}})") ==
          "Invalid params: protocolVersion must be a string such as \"2025-11-25\", not 20251125");
    CHECK(check(R"({"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"c"}})") ==
          "Invalid params: capabilities must be an object (send {} for none), not []");
    CHECK(check(R"({"protocolVersion":"2025-11-25","clientInfo":{"name":"c"}})") ==
          "Invalid params: capabilities must be an object (send {} for none), not missing");
    CHECK(check(R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":"c"})") ==
          "Invalid params: clientInfo must be an object with a string name and version, not \"c\"");
    CHECK(check(R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":7}})") ==
          "Invalid params: clientInfo.name must be a string naming the client");
    CHECK(check(R"({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":1}})") ==
          "Invalid params: clientInfo.version must be a string, not 1");
    CHECK(allowed_before_initialized("ping"));
    CHECK(allowed_before_initialized("initialize"));
    CHECK_FALSE(allowed_before_initialized("tools/call"));
    CHECK_FALSE(allowed_before_initialized("tools/list"));
}

TEST_CASE("elicitation: URL-only is declared but cannot approve", "[mcp][protocol]") {
    const auto caps = [](std::string_view c) { return json::parse(c).as_object(); };
    CHECK(client_declares_elicitation(caps(R"({"elicitation":{"url":{}}})")));
    CHECK_FALSE(client_can_elicit_form(caps(R"({"elicitation":{"url":{}}})")));
    CHECK(client_can_elicit_form(caps(R"({"elicitation":{}})")));
    CHECK(client_can_elicit_form(caps(R"({"elicitation":{"form":{},"url":{}}})")));
    CHECK_FALSE(client_declares_elicitation(caps(R"({"sampling":{}})")));
}

TEST_CASE("progress values are integers when integral, on the wire", "[mcp][protocol]") {
    // Boost.JSON writes a double 0 as 0E0; a client shows that verbatim.
    CHECK(
        json::serialize(progress_notification(json::value("tok"), 0, std::nullopt, "running sleep")) ==
        R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":0,"message":"running sleep"}})");
    CHECK(
        json::serialize(progress_notification(json::value(7), 3, 10.0, "")) ==
        R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":3,"total":10}})");
    CHECK(json::serialize(progress_number(1.5)) == json::serialize(json::value(1.5)));
    CHECK(progress_number(1.5).is_double());
    CHECK(progress_number(-2).as_int64() == -2);
    CHECK(progress_number(1e300).is_double());
}

TEST_CASE("Last-Event-ID values are parsed as <stream>-<seq>", "[mcp][protocol]") {
    const auto id = parse_event_id("12-7");
    REQUIRE(id);
    CHECK(id->stream == "12");
    CHECK(id->seq == 7);
    CHECK(parse_event_id("a-b-0")->stream == "a-b");
    CHECK_FALSE(parse_event_id(""));
    CHECK_FALSE(parse_event_id("12"));
    CHECK_FALSE(parse_event_id("-3"));
    CHECK_FALSE(parse_event_id("12-"));
    CHECK_FALSE(parse_event_id("12-x"));
    CHECK_FALSE(parse_event_id("12-99999999999999999999999"));
}
