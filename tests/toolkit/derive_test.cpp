#include "test_data.hpp"

#include <fiskai/toolkit/derive.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;

namespace {

fisk_application note_app() { return parse_fisk_model(fiskai::test::note_example()); }

std::vector<std::string> names(const derivation& d) {
    std::vector<std::string> out;
    for (const auto& t : d.tools) out.push_back(t.name);
    return out;
}

const command_spec& find(const derivation& d, const std::string& name) {
    for (const auto& t : d.tools) {
        if (t.name == name) return t;
    }
    throw std::runtime_error("no tool " + name);
}

}  // namespace

TEST_CASE("the note's worked example derives three tools", "[derive]") {
    derive_options o;
    o.global_flags = {"context"};
    o.confirm_tags = {"impact:rw"};
    auto d = derive_tools(note_app(), o);
    CHECK(names(d) == std::vector<std::string>{"stream_info", "stream_rm", "pub"});

    const auto& info = find(d, "stream_info");
    CHECK(info.title == "stream info");
    CHECK(info.path == std::vector<std::string>{"stream", "info"});
    CHECK(info.model_description == "Show stream information\n\nTags: impact:ro, ai:no_defer");
    CHECK(info.confirm.posture == confirm_posture::not_required);

    const auto& rm = find(d, "stream_rm");
    CHECK(rm.model_description ==
          "Remove a stream\n\nRemoves the stream and all its data.\n\nTags: impact:rw, ai:confirm");
    CHECK(rm.description == "Remove a stream");
    CHECK(rm.confirm.posture == confirm_posture::required);
    CHECK(rm.confirm.trigger_tag == "ai:confirm");

    CHECK(find(d, "pub").model_description == "Publish messages");
    CHECK(find(d, "pub").confirm.posture == confirm_posture::not_required);

    // hidden group and ai:deny are reported as dropped
    bool saw_hidden = false, saw_deny = false;
    for (const auto& dc : d.dropped) {
        saw_hidden |= dc.command == "debug" && dc.reason == "hidden";
        saw_deny |= dc.command == "reset" && dc.reason == "tagged ai:deny";
    }
    CHECK(saw_hidden);
    CHECK(saw_deny);
}

TEST_CASE("global flags merge into the schema exactly as the note shows", "[derive]") {
    derive_options o;
    o.global_flags = {"context"};
    auto d = derive_tools(note_app(), o);
    const auto expected = boost::json::parse(R"({"additionalProperties":false,
 "properties":{
   "account":{"description":"Global flag: Account to act in","type":"string"},
   "context":{"description":"Global flag: Configuration context","enum":["prod","dev"],"type":"string"},
   "json":{"description":"Produce JSON output","type":"boolean"},
   "name":{"description":"Stream name","type":"string"}},
 "required":["name","account"],
 "type":"object"})");
    CHECK(boost::json::serialize(find(d, "stream_info").input_schema) == boost::json::serialize(expected));
    // required global `account` is exposed without being listed; hidden `password` never is
    const auto& g = find(d, "pub").global_flags;
    REQUIRE(g.size() == 2);
    CHECK(g[0].name == "context");
    CHECK(g[1].name == "account");
}

TEST_CASE("a confirm tag gates with the first matching tag as trigger", "[derive]") {
    auto app = parse_fisk_model(R"({"name":"a","commands":[
      {"name":"x","tags":["scope:a","impact:rw","danger"],"restricted_schema":{"type":"object"}}]})");
    derive_options o;
    o.confirm_tags = {"danger", "impact:rw"};
    auto d = derive_tools(app, o);
    CHECK(d.tools[0].confirm.posture == confirm_posture::required);
    CHECK(d.tools[0].confirm.trigger_tag == "impact:rw");
}

TEST_CASE("global flag errors name the entry", "[derive]") {
    derive_options o;
    o.global_flags = {"nope"};
    CHECK_THROWS_WITH(derive_tools(note_app(), o),
                      "global_flags entry \"nope\" matches no global flag of application \"demo\"; run `fisk-ai-mcp "
                      "info` to list the exposable global flags");
    o.global_flags = {"password"};
    CHECK_THROWS_WITH(derive_tools(note_app(), o),
                      "global_flags entry \"password\" is a hidden or framework flag and cannot be exposed to the "
                      "model; only application-defined global flags can be exposed");
    // the check runs even for an application with no commands
    auto empty = parse_fisk_model(R"({"name":"e"})");
    o.global_flags = {"x"};
    CHECK_THROWS_AS(derive_tools(empty, o), derive_error);
}

TEST_CASE("a leaf without restricted_schema fails the load", "[derive]") {
    auto app = parse_fisk_model(R"({"name":"a","commands":[{"name":"g","commands":[{"name":"old"}]}]})");
    CHECK_THROWS_WITH(derive_tools(app, {}),
                      "command \"g old\" has no precomputed schema; introspect the application with a current fisk");
}

TEST_CASE("two commands that flatten to one name are refused, naming both", "[derive]") {
    auto app = parse_fisk_model(R"({"name":"a","commands":[
      {"name":"a","commands":[{"name":"b","restricted_schema":{"type":"object"}}]},
      {"name":"a_b","restricted_schema":{"type":"object"}}]})");
    CHECK_THROWS_WITH(derive_tools(app, {}), Catch::Contains("\"a b\"") && Catch::Contains("\"a_b\"") &&
                                                 Catch::Contains("both map to the tool name"));
    // excluding one of them resolves it
    derive_options o;
    o.exclude.tools = {"^a_b$"};
    o.exclude.tags = {};
    auto app2 = parse_fisk_model(R"({"name":"a","commands":[
      {"name":"a","commands":[{"name":"b","tags":["keep"],"restricted_schema":{"type":"object"}}]},
      {"name":"a_b","restricted_schema":{"type":"object"}}]})");
    derive_options o2;
    o2.exclude.tags = {""};  // drop the untagged one
    CHECK(names(derive_tools(app2, o2)) == std::vector<std::string>{"a_b"});
}

TEST_CASE("filters: unanchored regexes on names, exact tags, empty tag means untagged", "[derive]") {
    derive_options o;
    o.include.tools = {"info"};
    CHECK(names(derive_tools(note_app(), o)) == std::vector<std::string>{"stream_info"});

    derive_options space;
    space.include.tools = {"stream info"};  // the space form never matches
    CHECK(derive_tools(note_app(), space).tools.empty());

    derive_options tags;
    tags.include.tags = {""};
    CHECK(names(derive_tools(note_app(), tags)) == std::vector<std::string>{"pub"});

    derive_options ex;
    ex.exclude.tags = {"impact:rw"};
    CHECK(names(derive_tools(note_app(), ex)) == std::vector<std::string>{"stream_info", "pub"});

    derive_options deny;
    deny.include.tools = {"reset"};  // ai:deny can never be re-included
    CHECK(derive_tools(note_app(), deny).tools.empty());

    derive_options serve;
    serve.serve_exclude.tools = {"^pub$"};
    auto d = derive_tools(note_app(), serve);
    CHECK(names(d) == std::vector<std::string>{"stream_info", "stream_rm"});
    CHECK(d.dropped.back().reason == "removed by expose.agent.tools.exclude");
}

TEST_CASE("an invalid filter pattern is reported", "[derive]") {
    derive_options o;
    o.include.tools = {"(unclosed"};
    CHECK_THROWS_WITH(derive_tools(note_app(), o), Catch::StartsWith("invalid tool filter pattern \"(unclosed\": "));
}

TEST_CASE("model description combination rules", "[derive]") {
    CHECK(model_description("", "long", {}) == "long");
    CHECK(model_description("short", "", {}) == "short");
    CHECK(model_description("deploy", "deploy things now", {}) == "deploy things now");
    CHECK(model_description("deploy things now", "things", {}) == "deploy things now");
    CHECK(model_description("a", "b", {"x", "y"}) == "a\n\nb\n\nTags: x, y");
    CHECK(model_description("", "", {"impact:ro"}) == "Tags: impact:ro");
}

TEST_CASE("exposable globals exclude hidden ones", "[derive]") {
    auto g = exposable_global_flags(note_app());
    REQUIRE(g.size() == 2);
    CHECK(g[0].name == "context");
    CHECK(g[1].name == "account");
}
