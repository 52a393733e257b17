#include <fiskai/mcpserver/server.hpp>
#include <fiskai/toolkit/function_tool.hpp>

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

using namespace fiskai;
namespace json = boost::json;

namespace {

toolkit::tool_ptr make(std::string name, toolkit::exposure e = {toolkit::surface::mcp},
                       toolkit::confirm_posture c = toolkit::confirm_posture::not_required,
                       toolkit::tool_kind kind = toolkit::tool_kind::function) {
    return toolkit::make_function_tool(
        {.name = std::move(name),
         .description = "d",
         .exposed = e,
         .confirm = c,
         .kind = kind,
         .handler = [](const json::object&, const toolkit::call_options&) -> boost::asio::awaitable<toolkit::outcome> {
             co_return toolkit::outcome::from_json(nullptr);
         }});
}

// A tool that cannot say whether it needs approval.
class unsure_tool final : public toolkit::tool {
public:
    const std::string& name() const override { return name_; }
    const std::string& title() const override { return name_; }
    const std::string& description() const override { return name_; }
    const std::string& model_description() const override { return name_; }
    const json::object& input_schema() const override { return schema_; }
    const std::vector<std::string>& tags() const override { return tags_; }
    toolkit::exposure exposed() const override { return toolkit::exposure::everywhere(); }
    toolkit::confirm_requirement confirm() const override { return {}; }
    toolkit::tool_kind kind() const override { return toolkit::tool_kind::command; }
    boost::asio::awaitable<toolkit::outcome> call(json::value, toolkit::call_options) override {
        co_return toolkit::outcome::failure("never");
    }

private:
    std::string name_ = "unsure";
    json::object schema_{{"type", "object"}};
    std::vector<std::string> tags_;
};

}  // namespace

TEST_CASE("registration: commands before built-ins, first claim keeps a name", "[mcp][server]") {
    boost::asio::io_context ioc;
    auto cmd = make("search");
    auto builtin = make("search");
    auto other = make("knowledge_search");
    mcpserver::server srv(ioc.get_executor(), {}, {cmd, make("pub")}, {builtin, other});
    const auto& r = srv.registered();
    CHECK(r.served == std::vector<std::string>{"search", "pub", "knowledge_search"});
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0] == "skipping built-in \"search\": a tool registered earlier already exposes that name");
}

TEST_CASE("registration refuses what must not be served", "[mcp][server]") {
    boost::asio::io_context ioc;
    mcpserver::server srv(ioc.get_executor(), {},
                          {make("a2a_only", {toolkit::surface::a2a}), std::make_shared<unsure_tool>(),
                           make("gated", {toolkit::surface::mcp}, toolkit::confirm_posture::required), make("ok")},
                          {});
    const auto& r = srv.registered();
    CHECK(r.served == std::vector<std::string>{"gated", "ok"});
    CHECK(r.confirm_count == 1);
    REQUIRE(r.warnings.size() == 2);
    CHECK(r.warnings[0] == "skipping tool \"a2a_only\": it does not declare MCP exposure");
    CHECK(r.warnings[1] == "skipping tool \"unsure\": it cannot report whether it needs approval");
}

TEST_CASE("a built-in colliding with a command is a hard error when serving starts", "[mcp][server]") {
    CHECK_THROWS_WITH(mcpserver::check_builtin_collisions({make("knowledge_search")}, {make("knowledge_search")}),
                      "cannot expose built-in \"knowledge_search\" over MCP: a wrapped command already exposes a tool "
                      "with that name; exclude or rename it");
    CHECK_NOTHROW(mcpserver::check_builtin_collisions({make("a")}, {make("b")}));
}
