// Integration tests that run the demo fisk application for real: introspection,
// derivation, argument validation, execution, caps, timeouts and process groups.

#include "temp_dir.hpp"
#include "async_test.hpp"
#include "process_probe.hpp"

#include <fiskai/toolkit/application.hpp>
#include <fiskai/toolkit/command_tool.hpp>
#include <fiskai/toolkit/output_capture.hpp>
#include <fiskai/toolkit/process.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace fiskai::toolkit;
using namespace std::chrono_literals;
using fiskai::test::process_gone;
using fiskai::test::run_awaitable;
using fiskai::test::wait_until;
using fiskai::test::zombie_children;
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

const std::string demo = FISK_DEMO_PATH;

using fiskai::test::temp_dir;

// Sets an environment variable for the lifetime of the object (the child inherits it).
struct scoped_env {
    std::string name;
    scoped_env(std::string n, const std::string& value) : name(std::move(n)) {
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    ~scoped_env() { ::unsetenv(name.c_str()); }
};

application_tools load(derive_options d = {}) {
    application_options o;
    o.application_path = demo;
    o.derive = std::move(d);
    return run_awaitable(load_application_tools(o));
}

tool_ptr find(const application_tools& a, const std::string& name) {
    for (const auto& t : a.tools) {
        if (t->name() == name) return t;
    }
    throw std::runtime_error("no tool " + name);
}

outcome call(const tool_ptr& t, const std::string& args, std::chrono::steady_clock::duration timeout = 20s) {
    call_options o;
    o.timeout = timeout;
    return run_awaitable(t->call(json::parse(args), o));
}

std::string introspect_error(const std::string& mode, std::chrono::steady_clock::duration timeout = 30s) {
    scoped_env env("FISK_DEMO_INTROSPECT", mode);
    try {
        (void)run_awaitable(introspect(demo, {}, timeout));
    } catch (const introspection_error& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("the demo application becomes its tools", "[demo]") {
    auto a = load();
    CHECK(a.model.name == "fisk-demo");
    std::vector<std::string> names;
    for (const auto& t : a.tools) names.push_back(t->name());
    CHECK(names == std::vector<std::string>{"stream_info", "stream_rm", "pub", "sleep", "flood", "fail", "spawn",
                                            "echo", "env", "config_get", "config_set"});
    CHECK(find(a, "stream_rm")->confirm().posture == confirm_posture::required);
    CHECK(find(a, "config_set")->confirm().posture == confirm_posture::not_required);

    derive_options d;
    d.confirm_tags = {"change:config"};
    CHECK(find(load(d), "config_set")->confirm().trigger_tag == "change:config");
}

TEST_CASE("a command runs and returns the CommandResult envelope", "[demo]") {
    auto a = load();
    auto r = call(find(a, "stream_info"), R"({"name":"ORDERS","json":true})");
    REQUIRE_FALSE(r.is_error());
    REQUIRE(r.command());
    CHECK(r.command()->command == "stream info --json -- ORDERS");
    CHECK(r.command()->exit_code == 0);
    auto parsed = json::parse(r.command()->output);
    CHECK(parsed.at("name") == "ORDERS");

    auto pub =
        call(find(a, "pub"), R"({"subject":"o.new","body":["a","b"],"count":2,"header":["X:1"],"mode":"async"})");
    REQUIRE(pub.command());
    CHECK(pub.command()->command == "pub --count=2 --header=X:1 --mode=async -- o.new a b");
    CHECK_THAT(pub.command()->output, Catch::Contains("published 2/2 to o.new"));
}

TEST_CASE("a non-zero exit is a normal result carrying the exit code", "[demo]") {
    auto r = call(find(load(), "fail"), R"({"code":3})");
    REQUIRE_FALSE(r.is_error());
    CHECK(r.command()->exit_code == 3);
    CHECK(r.render() == R"({"command":"fail --code=3","exit_code":3,"output":"failing with code 3\n"})");
}

TEST_CASE("invalid arguments are refused before anything is spawned", "[demo]") {
    temp_dir state;
    scoped_env env("DEMO_STATE_DIR", state.path.string());
    auto a = load();
    auto set = find(a, "config_set");
    auto bad = call(set, R"({"key":"colour","value":7})");
    REQUIRE(bad.is_error());
    CHECK_THAT(bad.error_message(), Catch::StartsWith("invalid arguments for tool \"config_set\": property \"value\""));
    auto missing = call(set, R"({"key":"colour"})");
    REQUIRE(missing.is_error());
    CHECK_THAT(missing.error_message(), Catch::Contains("value"));
    auto unknown = call(set, R"({"key":"colour","value":"red","force":true})");
    REQUIRE(unknown.is_error());
    CHECK_THAT(unknown.error_message(), Catch::Contains("force"));
    // had any of them run, the value would be stored
    auto get = call(find(a, "config_get"), R"({"key":"colour"})");
    CHECK_THAT(get.command()->output, !Catch::Contains("red"));
    CHECK(fs::is_empty(state.path));
    // and a valid call does store it
    CHECK_FALSE(call(set, R"({"key":"colour","value":"red"})").is_error());
    CHECK_THAT(call(find(a, "config_get"), R"({"key":"colour"})").command()->output, Catch::Contains("red"));
}

TEST_CASE("output over 64 KiB keeps its head and tail", "[demo]") {
    auto r = call(find(load(), "flood"), R"({"bytes":200000})");
    REQUIRE(r.command());
    CHECK(r.command()->truncated);
    CHECK(r.command()->output.size() == 65562);
    CHECK_THAT(r.command()->output, Catch::Contains("BEGIN") && Catch::Contains(std::string(truncation_marker)));
    CHECK_THAT(r.command()->output, Catch::EndsWith("\nEND\n"));
    CHECK_THAT(r.render(), Catch::EndsWith(R"(,"truncated":true})"));
}

TEST_CASE("the timeout kills the command and its grandchild", "[demo]") {
    temp_dir dir;
    const auto marker = dir.path / "marker";
    // run_process directly, to read the pid the command printed before it was killed
    process_spec s;
    s.executable = demo;
    s.arguments = {"spawn", "--marker=" + marker.string(), "--delay=20s", "--linger=30s"};
    s.environment = scrubbed_environment();
    s.timeout = 500ms;
    auto r = run_awaitable(run_process(s));
    CHECK(r.state == process_result::status::timed_out);
    const auto at = r.output.find("started background pid ");
    REQUIRE(at != std::string::npos);
    const pid_t grandchild = std::stoi(r.output.substr(at + 23));
    CHECK(wait_until([&] { return process_gone(grandchild); }, 5s));
    CHECK_FALSE(fs::exists(marker));

    // through the tool, a timeout is an error outcome naming the command
    auto t = call(find(load(), "sleep"), R"({"duration":"30s"})", 300ms);
    REQUIRE(t.is_error());
    CHECK(t.error_message() == "running command \"sleep\": context deadline exceeded (timed out after 300ms)");
}

TEST_CASE("a grandchild left behind by a finished command is killed", "[demo]") {
    temp_dir dir;
    auto r = call(find(load(), "spawn"), R"({"marker":")" + (dir.path / "m").string() + R"(","delay":"20s"})");
    REQUIRE(r.command());
    const auto at = r.command()->output.find("started background pid ");
    REQUIRE(at != std::string::npos);
    const pid_t grandchild = std::stoi(r.command()->output.substr(at + 23));
    CHECK(wait_until([&] { return process_gone(grandchild); }, 5s));
}

TEST_CASE("credentials never reach the wrapped application", "[demo]") {
    scoped_env key("ANTHROPIC_API_KEY", "sk-test-secret");
    auto r = call(find(load(), "env"), R"({"name":"ANTHROPIC_API_KEY"})");
    CHECK_THAT(r.command()->output, !Catch::Contains("sk-test-secret"));
    auto f = call(find(load(), "env"), R"({"name":"LLMFORMAT"})");
    CHECK_THAT(f.command()->output, Catch::Contains("LLMFORMAT=1"));
}

TEST_CASE("bad introspection output gives each clear error", "[demo]") {
    const std::string q = "\"" + demo + "\"";
    CHECK_THAT(introspect_error("garbage"),
               Catch::StartsWith("introspecting " + q + ": decoding the introspection document: "));
    CHECK_THAT(introspect_error("stderr"),
               Catch::StartsWith("introspecting " + q + ": decoding the introspection document: "));
    CHECK(introspect_error("huge") == "introspecting " + q +
                                          " produced more than 16777216 bytes; the binary must emit a bounded "
                                          "introspection document");
    // A binary that never stops writing is stopped at the cap, long before the timeout.
    const auto flooding = std::chrono::steady_clock::now();
    CHECK(introspect_error("flood", 120s) == "introspecting " + q +
                                                 " produced more than 16777216 bytes; the binary must emit a bounded "
                                                 "introspection document");
    CHECK(std::chrono::steady_clock::now() - flooding < 60s);
    CHECK(introspect_error("fail") == "introspecting " + q + ": exit status 2");
    const auto start = std::chrono::steady_clock::now();
    CHECK(introspect_error("hang", 1s) ==
          "introspecting " + q + " timed out after 1s; the binary must respond within this window");
    CHECK(std::chrono::steady_clock::now() - start < 10s);

    scoped_env env("FISK_DEMO_INTROSPECT", "noschema");
    application_options o;
    o.application_path = demo;
    CHECK_THROWS_WITH(run_awaitable(load_application_tools(o)),
                      "command \"echo\" has no precomputed schema; introspect the application with a current fisk");
}

TEST_CASE("a missing application binary is reported", "[demo]") {
    try {
        (void)run_awaitable(introspect("/nonexistent/fisk-app"));
        FAIL("expected an error");
    } catch (const introspection_error& e) {
        CHECK_THAT(e.what(), Catch::StartsWith("introspecting \"/nonexistent/fisk-app\": "));
    }
}

TEST_CASE("a failed start is an error outcome naming the cause, and leaves no zombie", "[demo]") {
    const auto no_zombies = [] { return wait_until([] { return zombie_children().empty(); }, 5s); };
    REQUIRE(no_zombies());
    // A copy of the demo, so it can be taken away after its tools were derived from it.
    temp_dir dir;
    const auto app = dir.path / "fisk-demo";
    fs::copy_file(demo, app);
    application_options o;
    o.application_path = app.string();
    auto a = run_awaitable(load_application_tools(o));
    auto echo = find(a, "echo");

    auto big = call(echo, R"({"text":[")" + std::string(200 * 1024, 'x') + R"("]})");
    REQUIRE(big.is_error());
    CHECK_THAT(big.error_message(), Catch::StartsWith("running command \"echo\": Argument list too long") &&
                                        Catch::Contains("an argument of 204800 bytes"));
    CHECK(no_zombies());

    fs::permissions(app, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::remove);
    auto denied = call(echo, R"({"text":["hi"]})");
    REQUIRE(denied.is_error());
    CHECK_THAT(denied.error_message(), Catch::StartsWith("running command \"echo\": Permission denied"));
    CHECK(no_zombies());

    fs::remove(app);
    auto missing = call(echo, R"({"text":["hi"]})");
    REQUIRE(missing.is_error());
    CHECK_THAT(missing.error_message(), Catch::StartsWith("running command \"echo\": No such file"));
    CHECK(no_zombies());
}
