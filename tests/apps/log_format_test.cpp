// --log-format on both executables: JSON lines a log shipper can read, the text default,
// and a bad value refused naming it and the choices.

#include "app_test_support.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

#include <sstream>

using namespace fiskai::test;
namespace json = boost::json;

namespace {

const std::string mcp = FISK_AI_MCP_PATH;
const std::string a2a = FISK_AI_A2A_PATH;
const std::string demo = FISK_DEMO_PATH;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// Every stderr line is one JSON object with a time, a known level and a message; returns them.
std::vector<json::object> json_lines(const std::string& text) {
    std::vector<json::object> out;
    for (const auto& line : lines_of(text)) {
        INFO(line);
        boost::system::error_code ec;
        auto v = json::parse(line, ec);
        REQUIRE_FALSE(ec);
        REQUIRE(v.is_object());
        auto& o = v.as_object();
        REQUIRE(o.contains("time"));
        CHECK(o.at("time").as_string().size() == std::string_view("2026-12-01T14:29:54.123Z").size());
        const auto level = o.at("level").as_string();
        CHECK((level == "debug" || level == "info" || level == "warn" || level == "error"));
        CHECK(o.at("msg").is_string());
        out.push_back(o);
    }
    return out;
}

bool has_msg(const std::vector<json::object>& records, std::string_view msg) {
    for (const auto& r : records) {
        if (r.at("msg").as_string() == msg) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("fisk-ai-mcp --log-format json writes one JSON object per stderr line", "[app][mcp][log]") {
    scratch_dir dir;
    const auto cfg = dir.write("c.yaml", "application_path: " + demo + "\n");
    for (const auto& args :
         {" info --config " + cfg + " --log-format json", " --log-format json info --config " + cfg}) {
        INFO(args);
        auto r = run_shell(mcp + args + " 2>&1 >/dev/null");
        REQUIRE(r.exit_code == 0);
        const auto records = json_lines(r.out);
        CHECK(records.size() >= 2);
        CHECK(has_msg(records, "left out: debug (hidden)"));
        CHECK(has_msg(records, "left out: reset (tagged ai:deny)"));
    }
    // The default and an explicit text are the plain lines.
    for (const auto& flag : {"", " --log-format text"}) {
        auto text = run_shell(mcp + " info --config " + cfg + flag + " 2>&1 >/dev/null");
        CHECK(text.exit_code == 0);
        CHECK_THAT(text.out, Catch::StartsWith("left out: "));
    }
}

TEST_CASE("fisk-ai-a2a --log-format json carries the engine's fields", "[app][a2a][log]") {
    scratch_dir dir;
    const auto cfg = dir.write("c.yaml", "application_path: " + demo + "\n");
    auto r = run_shell(a2a + " info --config " + cfg + " --log-format json 2>&1 >/dev/null");
    REQUIRE(r.exit_code == 0);
    const auto records = json_lines(r.out);
    CHECK(has_msg(records, "left out: debug (hidden)"));
    bool saw_field = false;
    for (const auto& rec : records) {
        if (rec.at("msg").as_string().starts_with("Skipping tool: confirmation-gated") && rec.contains("tool")) {
            saw_field = rec.at("tool") == "stream_rm" && rec.at("level") == "warn";
        }
    }
    CHECK(saw_field);
    // The same record as text: the warning prefix and the field after the message.
    auto text = run_shell(a2a + " info --config " + cfg + " 2>&1 >/dev/null");
    CHECK_THAT(text.out, Catch::Contains("warning: Skipping tool: confirmation-gated commands are not served over a2a "
                                         "(no operator to approve); use ai:deny to suppress this tool=stream_rm\n"));
}

TEST_CASE("a bad --log-format is refused, naming the value and the choices", "[app][log]") {
    scratch_dir dir;
    const auto cfg = dir.write("c.yaml", "application_path: " + demo + "\n");
    for (const auto& app : {mcp, a2a}) {
        INFO(app);
        auto r = run_shell(app + " info --config " + cfg + " --log-format yaml 2>&1");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.out, Catch::Contains("invalid log format \"yaml\": choose one of text, json"));
        CHECK_THAT(r.out, !Catch::Contains("left out"));  // refused before any work
    }
}
