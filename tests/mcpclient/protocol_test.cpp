// The client's protocol decisions, without I/O.

#include <fiskai/mcpclient/protocol.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <chrono>

namespace mc = fiskai::mcpclient;
namespace json = boost::json;

namespace {
json::value answer(std::string_view result) {
    return json::parse(std::string(R"({"jsonrpc":"2.0","id":1,"result":)") + std::string(result) + "}");
}
}  // namespace

TEST_CASE("initialize asks for 2025-11-25 with no capabilities", "[mcpclient][protocol]") {
    auto r = mc::initialize_request(7, "1.2.3");
    CHECK(r.at("id") == 7);
    CHECK(r.at("method") == "initialize");
    const auto& p = r.at("params").as_object();
    CHECK(p.at("protocolVersion") == "2025-11-25");
    CHECK(p.at("capabilities").as_object().empty());
    CHECK(p.at("clientInfo") == json::object{{"name", "fisk-ai"}, {"version", "1.2.3"}});
    CHECK(json::serialize(mc::initialized_notification()) ==
          R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
}

TEST_CASE("initialize answers: three revisions accepted, others refused with the text", "[mcpclient][protocol]") {
    for (const char* v : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
        auto id = mc::read_initialize_response(
            "fs", answer(std::string(R"({"protocolVersion":")") + v + R"(","serverInfo":{"name":"x","version":"9"}})"));
        REQUIRE(id.has_value());
        CHECK(id->protocol_version == v);
        CHECK(id->name == "x");
    }
    auto old = mc::read_initialize_response("fs", answer(R"({"protocolVersion":"2024-11-05"})"));
    REQUIRE_FALSE(old.has_value());
    CHECK(old.error() == R"(mcp server "fs": unsupported protocol version "2024-11-05")");
    auto none = mc::read_initialize_response("fs", answer("{}"));
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error() == R"(mcp server "fs": unsupported protocol version "")");
    auto err = mc::read_initialize_response(
        "fs", json::parse(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad params"}})"));
    REQUIRE_FALSE(err.has_value());
    CHECK(err.error() == R"(mcp server "fs": initialize failed: -32602 bad params)");
}

TEST_CASE("tools/list pages: cursor passed on, schema defaulted, empty cursor ends", "[mcpclient][protocol]") {
    CHECK_FALSE(mc::tools_list_request(1, std::nullopt).at("params").as_object().contains("cursor"));
    CHECK(mc::tools_list_request(2, std::string("c2")).at("params").at("cursor") == "c2");

    auto page = mc::read_tools_page(
        "fs",
        answer(R"({"tools":[{"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{}}},
                                  {"name":"odd","inputSchema":"nope"}],"nextCursor":"p2"})"));
    REQUIRE(page.has_value());
    REQUIRE(page->tools.size() == 2);
    CHECK(page->tools[0].description == "Echoes");
    CHECK(page->tools[0].input_schema.contains("properties"));
    CHECK(page->tools[1].input_schema == json::object{{"type", "object"}});
    CHECK(page->next_cursor == std::optional<std::string>("p2"));

    auto last = mc::read_tools_page("fs", answer(R"({"tools":[],"nextCursor":""})"));
    REQUIRE(last.has_value());
    CHECK_FALSE(last->next_cursor);

    auto bad = mc::read_tools_page("fs", answer(R"({"tools":[{"description":"no name"}]})"));
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().find("a tool without a name") != std::string::npos);
    CHECK_FALSE(mc::read_tools_page("fs", answer("{}")).has_value());
}

TEST_CASE("local names are always prefixed and must be valid", "[mcpclient][protocol]") {
    CHECK(mc::local_tool_name("ev", "get-sum") == std::optional<std::string>("ev_get-sum"));
    CHECK_FALSE(mc::local_tool_name("ev", "has space"));
    CHECK_FALSE(mc::local_tool_name("ev", "dotted.name"));
    CHECK_FALSE(mc::local_tool_name("ev", std::string(126, 'a')));  // 129 with the prefix
    CHECK(mc::local_tool_name("ev", std::string(125, 'a')));
    CHECK(mc::skipping_tool_text("ev", "a b") == R"(mcp server "ev": skipping tool "a b": not a valid tool name)");
}

TEST_CASE("tools/call results become outcomes", "[mcpclient][protocol]") {
    auto req = mc::tools_call_request(3, "echo", json::parse(R"({"message":"hi"})"));
    CHECK(json::serialize(req) ==
          R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}})");
    CHECK(mc::tools_call_request(4, "t", nullptr).at("params").at("arguments").as_object().empty());

    auto ok = mc::call_outcome("ev", "echo", answer(R"({"content":[{"type":"text","text":"Echo: hi"}]})"));
    CHECK(ok.type() == fiskai::toolkit::outcome::kind::content);
    CHECK_FALSE(ok.is_error());
    CHECK(ok.render() == "Echo: hi");

    auto structured = mc::call_outcome(
        "ev", "sum", answer(R"({"content":[{"type":"text","text":"3"}],"structuredContent":{"result":3}})"));
    REQUIRE(structured.structured() != nullptr);
    CHECK(structured.structured()->at("result") == 3);

    auto tool_error =
        mc::call_outcome("ev", "x", answer(R"({"content":[{"type":"text","text":"boom"}],"isError":true})"));
    CHECK(tool_error.is_error());
    CHECK(tool_error.render() == "boom");

    auto rpc = mc::call_outcome(
        "ev", "x", json::parse(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: x"}})"));
    CHECK(rpc.type() == fiskai::toolkit::outcome::kind::error);
    CHECK(rpc.error_message() == R"(mcp server "ev" tool "x": -32602 Unknown tool: x)");
}

TEST_CASE("server requests are refused with -32601, answers and notifications sorted", "[mcpclient][protocol]") {
    auto sampling = mc::classify(R"({"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}})");
    REQUIRE(sampling.what == mc::incoming::kind::request);
    CHECK(
        json::serialize(sampling.reply) ==
        R"({"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"Method not found: sampling/createMessage"}})");
    auto roots = mc::classify(R"({"jsonrpc":"2.0","id":9,"method":"roots/list"})");
    REQUIRE(roots.what == mc::incoming::kind::request);
    CHECK(roots.reply.at("id") == 9);
    CHECK(roots.reply.at("error").at("code") == -32601);

    auto response = mc::classify(R"({"jsonrpc":"2.0","id":5,"result":{"tools":[]}})");
    REQUIRE(response.what == mc::incoming::kind::response);
    CHECK(response.id == std::optional<std::int64_t>(5));
    CHECK(response.message.at("result").at("tools").as_array().empty());
    CHECK_FALSE(mc::classify(R"({"jsonrpc":"2.0","id":"x","result":{}})").id);

    auto changed = mc::classify(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    CHECK(changed.what == mc::incoming::kind::notification);
    CHECK(changed.method == "notifications/tools/list_changed");

    CHECK(mc::classify("not json").what == mc::incoming::kind::invalid);
    CHECK(mc::classify(R"([1,2])").what == mc::incoming::kind::invalid);
}

TEST_CASE("texts", "[mcpclient][protocol]") {
    using namespace std::chrono_literals;
    CHECK(mc::not_running_text("ev", "the process exited with status 1") ==
          R"(mcp server "ev" is not running: the process exited with status 1)");
    CHECK(mc::no_answer_text("ev", "initialize", 30s) == R"(mcp server "ev": no answer to initialize within 30s)");
    CHECK(mc::call_timeout_text("ev", "echo", 1500ms) == R"(mcp server "ev" tool "echo": no answer within 1.5s)");
    CHECK(mc::describe_call("ev", "get-sum", json::parse(R"({"a":1,"b":2})")) == R"(ev get-sum {"a":1,"b":2})");
    CHECK(
        json::serialize(mc::cancelled_notification(4, "the call timed out")) ==
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"the call timed out"}})");
}
