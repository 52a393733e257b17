#include "app_test_support.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

using namespace fiskai::test;
namespace json = boost::json;

namespace {
const std::string mcp = FISK_AI_MCP_PATH;
const std::string demo = FISK_DEMO_PATH;
}  // namespace

TEST_CASE("info --json lists the tools that would be served", "[app][mcp]") {
    scratch_dir dir;
    const auto cfg = dir.write("c.yaml", "application_path: " + demo +
                                             "\nglobal_flags: [--context]\nharness: {confirm_tags: [change:config]}\n"
                                             "expose: {agent: {tools: {exclude: {tools: ['^flood$']}}}}\n");
    auto r = run_shell(mcp + " info --config " + cfg + " --json 2>/dev/null");
    REQUIRE(r.exit_code == 0);
    auto doc = json::parse(r.out).as_object();
    const auto& tools = doc.at("tools").as_array();
    REQUIRE(tools.size() == 10);
    const auto& first = tools[0].as_object();
    CHECK(first.at("name") == "stream_info");
    CHECK(first.at("command") == "stream info");
    CHECK(first.at("description") == "Show stream information\n\nTags: impact:ro, ai:no_defer");
    CHECK(first.at("tags").as_array().size() == 2);
    CHECK(first.at("confirm") == false);
    CHECK(first.at("input_schema").at("properties").as_object().contains("context"));
    bool saw_config_set = false;
    for (const auto& t : tools) {
        CHECK(t.at("name") != "flood");
        if (t.at("name") == "config_set") {
            saw_config_set = true;
            CHECK(t.at("confirm") == true);
        }
    }
    CHECK(saw_config_set);
}

TEST_CASE("info says on stderr why commands were left out", "[app][mcp]") {
    scratch_dir dir;
    const auto cfg = dir.write("c.yaml", "application_path: " + demo + "\n");
    auto r = run_shell(mcp + " info --config " + cfg + " 2>&1 >/dev/null");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out,
               Catch::Contains("left out: debug (hidden)") && Catch::Contains("left out: reset (tagged ai:deny)"));
    auto table = run_shell(mcp + " info --config " + cfg + " 2>/dev/null");
    CHECK_THAT(table.out, Catch::Contains("stream_rm    yes") && Catch::Contains("Identity: fisk-demo"));
}

TEST_CASE("info fails clearly on a bad config or application", "[app][mcp]") {
    scratch_dir dir;
    auto missing = run_shell(mcp + " info --config " + (dir.path / "nope.yaml").string() + " 2>&1");
    CHECK(missing.exit_code == 1);
    CHECK_THAT(missing.out, Catch::StartsWith("fisk-ai-mcp: error: reading config"));

    const auto unknown = dir.write("u.yaml", "application_path: " + demo + "\nhuman_in_the_loop: {enabled: true}\n");
    auto bad = run_shell(mcp + " info --config " + unknown + " 2>&1");
    CHECK(bad.exit_code == 1);
    CHECK_THAT(bad.out, Catch::Contains("human_in_the_loop"));

    const auto noapp = dir.write("n.yaml", "application_path: /nonexistent/app\n");
    auto gone = run_shell(mcp + " info --config " + noapp + " 2>&1");
    CHECK(gone.exit_code == 1);
    CHECK_THAT(gone.out, Catch::Contains("introspecting \"/nonexistent/app\""));

    const auto badglobal = dir.write("g.yaml", "application_path: " + demo + "\nglobal_flags: [password]\n");
    auto hidden = run_shell(mcp + " info --config " + badglobal + " 2>&1");
    CHECK(hidden.exit_code == 1);
    CHECK_THAT(hidden.out, Catch::Contains("hidden or framework flag"));
}

TEST_CASE("--help answers and a missing subcommand is a usage error", "[app][mcp]") {
    auto help = run_shell(mcp + " --help 2>&1");
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Catch::Contains("info"));
    auto info_help = run_shell(mcp + " info --help 2>&1");
    CHECK(info_help.exit_code == 0);
    CHECK_THAT(info_help.out, Catch::Contains("--json"));
    auto none = run_shell(mcp + " 2>&1");
    CHECK(none.exit_code != 0);
}
