#include "test_data.hpp"

#include <fiskai/toolkit/argv.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::toolkit;
namespace json = boost::json;

namespace {

derivation note_tools() {
    derive_options o;
    o.global_flags = {"context"};
    o.confirm_tags = {"impact:rw"};
    return derive_tools(parse_fisk_model(fiskai::test::note_example()), o);
}

std::string line(const std::string& tool, const std::string& args) {
    static const auto d = note_tools();
    for (const auto& t : d.tools) {
        if (t.name == tool) return command_line(render_argv(t, json::parse(args)));
    }
    throw std::runtime_error("no tool " + tool);
}

command_spec spec_of(const std::string& model_json) {
    auto app = parse_fisk_model(model_json);
    return derive_tools(app, {}).tools.at(0);
}

}  // namespace

TEST_CASE("the note's argv examples render exactly", "[argv]") {
    CHECK(line("stream_info", R"({"name":"ORDERS","json":true,"context":"prod","account":"A"})") ==
          "stream info --context=prod --account=A --json -- ORDERS");
    CHECK(line("stream_info", R"({"name":"ORDERS","json":false,"account":"A"})") ==
          "stream info --account=A --no-json -- ORDERS");
    CHECK(line("stream_rm", R"({"name":"X","force":false,"account":"A"})") == "stream rm --account=A -- X");
    CHECK(
        line("pub",
             R"({"subject":"o.new","body":["a","b"],"count":3,"header":["X:1","Y:2"],"mode":"async","account":"A"})") ==
        "pub --account=A --count=3 --header=X:1 --header=Y:2 --mode=async -- o.new a b");
    CHECK(line("pub", R"({"account":"A"})") == "pub --account=A");
    CHECK_THROWS_WITH(line("pub", R"({"nope":1})"), "building command line for \"pub\": unknown property \"nope\"");
}

TEST_CASE("null and empty arguments count as {}", "[argv]") {
    auto spec = spec_of(R"({"name":"a","commands":[{"name":"go","restricted_schema":{"type":"object"}}]})");
    CHECK(render_argv(spec, nullptr) == std::vector<std::string>{"go"});
    CHECK(render_argv(spec, json::object{}) == std::vector<std::string>{"go"});
    CHECK_THROWS_WITH(render_argv(spec, json::parse("[1]")),
                      "building command line for \"go\": invalid JSON arguments: expected an object, got array");
}

TEST_CASE("numbers keep their exact text", "[argv]") {
    auto spec = spec_of(R"({"name":"a","commands":[{"name":"n","restricted_schema":{"type":"object"},
        "flags":[{"name":"count","boolean":false,"cumulative":false},{"name":"ratio","boolean":false,"cumulative":false}]}]})");
    CHECK(command_line(render_argv(spec, json::parse(R"({"count":9007199254740993,"ratio":0.25})"))) ==
          "n --count=9007199254740993 --ratio=0.25");
    CHECK(command_line(render_argv(spec, json::parse(R"({"count":18446744073709551615})"))) ==
          "n --count=18446744073709551615");
}

TEST_CASE("boolean flags: types, negation, and non-negatable defaults", "[argv]") {
    auto spec = spec_of(R"({"name":"a","commands":[{"name":"b","restricted_schema":{"type":"object"},
        "flags":[{"name":"neg","boolean":true,"negatable":true,"cumulative":false},
                 {"name":"plain","boolean":true,"cumulative":false},
                 {"name":"ontrue","boolean":true,"default":["true"],"cumulative":false}]}]})");
    CHECK(command_line(render_argv(spec, json::parse(R"({"neg":false,"plain":false})"))) == "b --no-neg");
    CHECK(command_line(render_argv(spec, json::parse(R"({"plain":true,"ontrue":true})"))) == "b --plain --ontrue");
    CHECK_THROWS_WITH(render_argv(spec, json::parse(R"({"neg":"yes"})")),
                      "building command line for \"b\": flag \"neg\": expected boolean, got string");
    CHECK_THROWS_WITH(render_argv(spec, json::parse(R"({"ontrue":false})")),
                      "building command line for \"b\": flag \"ontrue\": cannot be set to false: the flag has no "
                      "negation and defaults to true");
}

TEST_CASE("map values render sorted, null renders empty, nested values are refused", "[argv]") {
    auto spec = spec_of(R"({"name":"a","commands":[{"name":"m","restricted_schema":{"type":"object"},
        "flags":[{"name":"label","boolean":false,"cumulative":true},{"name":"v","boolean":false,"cumulative":false}]}]})");
    CHECK(command_line(render_argv(spec, json::parse(R"({"label":{"z":"1","a":2}})"))) == "m --label=a=2 --label=z=1");
    CHECK(command_line(render_argv(spec, json::parse(R"({"v":null})"))) == "m --v=");
    CHECK_THROWS_WITH(render_argv(spec, json::parse(R"({"v":[[1]]})")),
                      "building command line for \"m\": flag \"v\": unsupported value type array");
}

TEST_CASE("positionals: defaults fill gaps, later args need earlier ones", "[argv]") {
    auto spec = spec_of(R"({"name":"a","commands":[{"name":"p","restricted_schema":{"type":"object"},
        "args":[{"name":"first","default":["d1","d2"],"cumulative":false},{"name":"second","cumulative":false},
                {"name":"rest","cumulative":true}]}]})");
    CHECK(command_line(render_argv(spec, json::parse(R"({"second":"s"})"))) == "p -- d1 d2 s");
    CHECK(command_line(render_argv(spec, json::parse(R"({"first":"","second":"s","rest":["x","y"]})"))) ==
          "p --  s x y");
    CHECK_THROWS_WITH(
        render_argv(spec, json::parse(R"({"first":"f","rest":["x"]})")),
        "building command line for \"p\": argument \"second\" must be set because a later argument is set");
    auto bad = spec_of(R"({"name":"a","commands":[{"name":"q","restricted_schema":{"type":"object"},
        "args":[{"name":"many","cumulative":true},{"name":"last","cumulative":false}]}]})");
    CHECK_THROWS_WITH(render_argv(bad, json::parse("{}")),
                      "building command line for \"q\": argument \"many\" is cumulative but is not the last argument");
}

TEST_CASE("hidden flags are known to the renderer", "[argv]") {
    auto spec = spec_of(R"({"name":"a","commands":[{"name":"h","restricted_schema":{"type":"object"},
        "flags":[{"name":"secret","hidden":true,"boolean":false,"cumulative":false}]}]})");
    CHECK(command_line(render_argv(spec, json::parse(R"({"secret":"s"})"))) == "h --secret=s");
}

TEST_CASE("global flag errors are wrapped separately", "[argv]") {
    CHECK_THROWS_WITH(line("pub", R"({"context":["a",["b"]],"subject":"s"})"),
                      "building global flags for \"pub\": flag \"context\": unsupported value type array");
}

TEST_CASE("a NUL in any string is refused: exec would cut the argument short", "[argv][hostile]") {
    CHECK_THROWS_WITH(line("stream_info", "{\"name\":\"ORD\\u0000ERS\"}"),
                      Catch::Contains("argument \"name\"") &&
                          Catch::Contains("NUL character, which no command-line argument can carry"));
    CHECK_THROWS_WITH(line("stream_info", "{\"name\":\"ORDERS\",\"context\":\"a\\u0000b\"}"),
                      Catch::Contains("building global flags") && Catch::Contains("NUL character"));
}

// The command line a person approves: a value cannot fake argument boundaries or lines.
TEST_CASE("display_command_line quotes every argument a shell or a reader could misread", "[argv]") {
    CHECK(display_command_line({"config", "set", "--", "colour", "blue"}) == "config set -- colour blue");
    CHECK(display_command_line({"stream", "add", "--subjects=orders.>", "ORDERS"}) ==
          "stream add \"--subjects=orders.>\" ORDERS");
    CHECK(display_command_line({"say", "two words", ""}) == "say \"two words\" \"\"");
    // A value carrying a fake prompt line stays one visibly quoted argument.
    CHECK(display_command_line({"config", "set", "--", "colour", "x\n\nGated by: nothing"}) ==
          "config set -- colour \"x\\n\\nGated by: nothing\"");
    CHECK(display_command_line({"echo", "\x1b[2J", "caf\xc3\xa9"}) == "echo \"\\x1b[2J\" \"caf\xc3\xa9\"");
}
