#include "async_test.hpp"

#include <fiskai/toolkit/builtins.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;
using fiskai::test::run_awaitable;
namespace json = boost::json;

namespace {

function_tool_spec echo_spec(std::string name = "echo") {
    function_tool_spec s;
    s.name = std::move(name);
    s.description = "Echo the text back";
    s.tags = {"impact:ro"};
    s.input_schema =
        json::parse(R"({"type":"object","required":["text"],"properties":{"text":{"type":"string"}}})").as_object();
    s.exposed = exposure{surface::mcp};
    s.confirm = confirm_posture::not_required;
    s.handler = [](const json::object& args, const call_options&) -> boost::asio::awaitable<outcome> {
        if (args.at("text").as_string() == "throw") throw std::runtime_error("handler failed");
        co_return outcome::from_json(json::object{{"echo", args.at("text")}});
    };
    return s;
}

}  // namespace

TEST_CASE("a function tool validates, runs and returns verbatim JSON", "[function_tool]") {
    auto t = make_function_tool(echo_spec());
    CHECK(t->title() == "echo");
    // Go's function tools carry no Tags: line (it would change the fingerprint's tools hash).
    CHECK(t->model_description() == "Echo the text back");
    CHECK(t->kind() == tool_kind::function);
    auto ok = run_awaitable(t->call(json::parse(R"({"text":"hi"})"), {}));
    CHECK(ok.render() == R"({"echo":"hi"})");
    auto bad = run_awaitable(t->call(json::parse(R"({"text":1})"), {}));
    REQUIRE(bad.is_error());
    CHECK_THAT(bad.error_message(), Catch::StartsWith("invalid arguments for tool \"echo\": property \"text\""));
    auto missing = run_awaitable(t->call(nullptr, {}));
    CHECK(missing.is_error());
    auto thrown = run_awaitable(t->call(json::parse(R"({"text":"throw"})"), {}));
    CHECK(thrown.error_message() == "handler failed");
    CHECK(run_awaitable(t->call(json::parse("[]"), {})).is_error());
}

TEST_CASE("a function tool must declare exposure and confirm posture", "[function_tool]") {
    auto s = echo_spec();
    s.exposed.reset();
    CHECK_THROWS_WITH(make_function_tool(s), Catch::Contains("has not declared where it may be served"));
    s = echo_spec();
    s.confirm.reset();
    CHECK_THROWS_WITH(make_function_tool(s), Catch::Contains("has not declared whether it needs approval"));
    CHECK_THROWS_WITH(make_function_tool(echo_spec("bad name")), Catch::Contains("is invalid"));
    s = echo_spec();
    s.kind = tool_kind::remote;
    s.confirm = confirm_posture::required;
    CHECK_THROWS_WITH(make_function_tool(s),
                      "tool \"echo\" is remote and cannot be confirm-gated; a remote tool is "
                      "gated by its serving agent");
    s = echo_spec();
    s.handler = nullptr;
    CHECK_THROWS_WITH(make_function_tool(s), Catch::Contains("has no handler"));
}

TEST_CASE("the built-in registry: declaration is the ceiling, allowlist narrows", "[builtins]") {
    builtin_registry r;
    r.add(echo_spec("knowledge_search"));
    auto hidden = echo_spec("memory_write");
    hidden.exposed = exposure::none();
    r.add(hidden);
    CHECK_THROWS_WITH(r.add(echo_spec("knowledge_search")), Catch::Contains("registered twice"));
    CHECK(r.find("knowledge_search")->kind() == tool_kind::builtin);

    CHECK(r.served_on(surface::mcp, {"knowledge_search", "memory_write"}).size() == 1);
    CHECK(r.served_on(surface::mcp, {}).empty());
    CHECK(r.served_on(surface::a2a, {"knowledge_search"}).empty());
}

TEST_CASE("exposure is a set of surfaces, none by default", "[tool]") {
    constexpr exposure nothing;
    STATIC_REQUIRE(nothing.empty());
    STATIC_REQUIRE(nothing == exposure::none());
    constexpr exposure mcp_only{surface::mcp};
    STATIC_REQUIRE(mcp_only.on(surface::mcp));
    STATIC_REQUIRE_FALSE(mcp_only.on(surface::a2a));
    STATIC_REQUIRE_FALSE(mcp_only.on(surface::agent));
    STATIC_REQUIRE(mcp_only.with(surface::agent).on(surface::agent));
    STATIC_REQUIRE(exposure::everywhere().without(surface::a2a) == exposure{surface::mcp, surface::agent});
    for (const auto s : {surface::mcp, surface::a2a, surface::agent}) CHECK(exposure::everywhere().on(s));
}
