// fisk-ai-serve run as an operator runs it: `check` against real brokers (missing storage,
// credentials, tools), the banner it prints, and `session ls|show|rm` over a file store that
// the agent harness wrote against fiskai-fake-llm.

#include "app_test_support.hpp"
#include "fake_llm_process.hpp"
#include "session_harness.hpp"

#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/runstate/file_store.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;
namespace json = boost::json;
using namespace fiskai;

namespace {

const std::string serve_bin = FISK_AI_SERVE_PATH;

// A JetStream broker, a NATS context `local` naming it, and configs in one scratch dir.
struct serve_env {
    test::scratch_dir dir;
    conns::embedded_broker broker;
    std::string env;  // the environment prefix for the command line

    serve_env() {
        fs::create_directories(dir.path / "xdg/nats/context");
        std::ofstream(dir.path / "xdg/nats/context/local.json") << R"({"url":")" << broker.url() << R"("})";
        env = fmt::format("XDG_CONFIG_HOME={} ANTHROPIC_API_KEY=test-key", (dir.path / "xdg").string());
    }

    // A serve-mode config: the a2a channel, file sessions under the scratch dir, plus `extra`.
    std::string config(const std::string& extra, bool with_app = true, const std::string& llm_extra = "") const {
        std::string text =
            "identity: tester\nsystem_prompt: You help.\nllm:\n  model: fake\n"
            "  base_url: http://127.0.0.1:9\n" +
            llm_extra;
        if (with_app) text += fmt::format("application_path: {}\n", FISK_DEMO_PATH);
        text += "expose:\n  agent:\n    workers: 3\n    a2a:\n      prompts: {}\n";
        text += extra;
        if (text.find("sessions:") == std::string::npos) {
            const auto sessions = fmt::format("  sessions:\n    backend: file\n    options:\n      directory: {}\n",
                                              (dir.path / "runs").string());
            if (const auto at = text.find("harness:\n"); at != std::string::npos) {
                text.insert(at + 9, sessions);
            } else {
                text += "harness:\n" + sessions;
            }
        }
        return dir.write(fmt::format("c{}.yaml", std::hash<std::string>{}(text)), text);
    }

    test::command_output check(const std::string& config_path, const std::string& flags = "") const {
        return test::run_shell(fmt::format("{} {} check --config {} {} 2>&1", env, serve_bin, config_path, flags));
    }
};

}  // namespace

TEST_CASE("check refuses a config whose a2a channel has no NATS context", "[serve_app]") {
    serve_env e;
    const auto r = e.check(e.config(""));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("fisk-ai-serve: error: nats_context is required for fisk-ai-serve when "
                               "expose.agent.a2a.prompts is set"));
}

TEST_CASE("check names the missing session stream and changes nothing", "[serve_app]") {
    serve_env e;
    const auto cfg = e.config(
        "nats_context: local\nharness:\n  sessions:\n    backend: jetstream\n    options:\n      stream: FISK_RUNS\n");
    const auto r = e.check(cfg);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("fisk-ai-serve: error: jetstream session: stream \"FISK_RUNS\" does not "
                               "exist; create it first, e.g. `nats stream add FISK_RUNS"));
    // Nothing provisions storage: the stream is still absent.
    const auto again = e.check(cfg);
    CHECK_THAT(again.out, Contains("stream \"FISK_RUNS\" does not exist"));
}

TEST_CASE("check names the missing memory bucket", "[serve_app]") {
    serve_env e;
    const auto r =
        e.check(e.config("nats_context: local\nharness:\n  memory:\n    enabled: true\n    backend: "
                         "jetstream\n    options:\n      bucket: FISK_MEMORY\n"));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("fisk-ai-serve: error: jetstream memory: KV bucket \"FISK_MEMORY\" does not "
                               "exist; create it first, e.g. `nats kv add FISK_MEMORY"));
}

TEST_CASE("check refuses an unknown provider and a missing credential", "[serve_app]") {
    serve_env e;
    const auto r = e.check(e.config("nats_context: local\n", true, "  provider: nope\n"));
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out,
               Contains("fisk-ai-serve: error: unknown llm provider \"nope\": known providers are [anthropic openai]"));

    const auto keyless =
        test::run_shell(fmt::format("XDG_CONFIG_HOME={} env -u ANTHROPIC_API_KEY {} check --config {} 2>&1",
                                    (e.dir.path / "xdg").string(), serve_bin, e.config("nats_context: local\n")));
    CHECK(keyless.exit_code == 1);
    CHECK_THAT(keyless.out, Contains("fisk-ai-serve: error: llm: no API key: set ANTHROPIC_API_KEY"));
}

TEST_CASE("check refuses a worker without tools", "[serve_app]") {
    serve_env e;
    const auto r = e.check(e.config("", false), "--embedded-broker");
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.out, Contains("fisk-ai-serve: error: no tools available: this agent wraps no application "
                               "(application_path unset)"));
}

TEST_CASE("check names an MCP server that does not start, and exits 1", "[serve_app]") {
    // Each fails inside session::open before its options are moved: the path that crashed
    // when resources built them as a temporary in the co_await expression (GCC 12).
    serve_env e;
    const std::vector<std::pair<std::string, std::string>> servers = {
        {"  - name: gone\n    command: /nonexistent/bin\n",
         "fisk-ai-serve: error: mcp server \"gone\": starting \"/nonexistent/bin\": No such file or directory\n"},
        {"  - name: quits\n    command: /bin/sh\n    args: [\"-c\", \"exit 3\"]\n",
         "fisk-ai-serve: error: mcp server \"quits\": it stopped before answering initialize: the process exited with "
         "status 3\n"},
        {"  - name: web\n    url: http://127.0.0.1:9/mcp\n",
         "fisk-ai-serve: error: mcp server \"web\": initialize failed: connect to 127.0.0.1:9: Connection refused\n"},
    };
    for (const auto& [server, text] : servers) {
        INFO(server);
        const auto r = e.check(e.config("nats_context: local\nmcp_servers:\n" + server));
        CHECK(r.exit_code == 1);
        CHECK(r.out == text);
    }
}

TEST_CASE("check binds everything and prints the banner", "[serve_app]") {
    serve_env e;
    const auto r = e.check(e.config("nats_context: local\n"));
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains(fmt::format("fisk-ai-serve 0.1.0: serving tester on NATS context local ({})\n",
                                           e.broker.url())));
    CHECK_THAT(r.out, Contains(fmt::format("  model: anthropic/fake  workers: 3  sessions: file {}  memory: "
                                           "off\n",
                                           (e.dir.path / "runs").string())));
    CHECK_THAT(r.out, Contains("  tools: 11 (11 application, 0 remote)\nchannels:\n  a2a: requests on "
                               "choria.fisk-ai.request.tester (queue group tester), elicitation off\n"
                               "services:\n  (none)\n"));

    // --embedded-broker: the channel rides a loopback broker of its own.
    const auto embedded = e.check(e.config(""), "--embedded-broker");
    INFO(embedded.out);
    REQUIRE(embedded.exit_code == 0);
    CHECK_THAT(embedded.out,
               Contains("fisk-ai-serve 0.1.0: serving tester on NATS context embedded (nats://127.0.0.1:"));
}

TEST_CASE("session ls, show and rm read the configured store", "[serve_app]") {
    test::scratch_dir dir;
    const auto runs = (dir.path / "runs").string();
    fs::create_directories(runs);
    const std::string long_prompt =
        "Please count the messages in the ORDERS stream and then tell me how many consumers it has today";
    {
        const auto script = dir.write(
            "script.json",
            R"({"conversations":[{"name":"c","when":{"prompt_contains":""},"steps":[{"reply":{"content":[{"type":"text","text":"There are 42."}],"stop_reason":"end_turn"}}]}]})");
        test::fake_llm_process fake(FISKAI_FAKE_LLM, {"--script", script, "--port", "0", "--exit-with-parent"});
        config::config cfg;
        cfg.llm.model = "claude-test";
        cfg.application_path = FISK_DEMO_PATH;
        test::session_harness h(cfg, runs, test::fake_model_provider(fake.port()));
        REQUIRE(h.run(h.request("s1", long_prompt)).reason == "completed");
        REQUIRE(h.run(h.request("s2", "short one")).reason == "completed");
        // An open session: started, never finished.
        auto journal = test::run_on(h.ioc, h.store->create("s3", runstate::meta_record{}));
        REQUIRE(journal.has_value());
        (void)(*journal)->close();
    }
    const auto cfg = dir.write("c.yaml", fmt::format("harness:\n  sessions:\n    backend: file\n    options:\n      "
                                                     "directory: {}\n",
                                                     runs));
    const auto session = [&](const std::string& args) {
        return test::run_shell(fmt::format("{} session {} --config {} 2>&1", serve_bin, args, cfg));
    };

    const auto ls = session("ls");
    INFO(ls.out);
    REQUIRE(ls.exit_code == 0);
    CHECK_THAT(ls.out, StartsWith("ID  CREATED"));
    CHECK_THAT(ls.out, Contains("claude-test  completed  Please count the messages in the ORDERS stream and "
                                "then t...\n"));
    CHECK_THAT(ls.out, Contains("completed  short one\n"));
    CHECK_THAT(ls.out, Contains("open\n"));

    const auto listed = session("ls --json");
    REQUIRE(listed.exit_code == 0);
    const auto array = json::parse(listed.out).as_array();
    REQUIRE(array.size() == 3);
    for (const auto& v : array) {
        const auto& o = v.as_object();
        if (o.at("id") == "s1") {
            CHECK(o.at("status") == "completed");
            CHECK(o.at("prompt").as_string() == long_prompt);
            CHECK(o.at("model") == "claude-test");
        }
        if (o.at("id") == "s3") CHECK(o.at("status") == "open");
    }

    const auto show = session("show s1");
    INFO(show.out);
    REQUIRE(show.exit_code == 0);
    CHECK_THAT(show.out, StartsWith("Session s1\n  Status: completed\n  Model: claude-test\n"));
    CHECK_THAT(show.out, Contains("  LLM calls: 1\n"));
    CHECK_THAT(show.out, !Contains("--- transcript ---"));

    const auto transcript = session("show s1 --transcript");
    REQUIRE(transcript.exit_code == 0);
    CHECK_THAT(transcript.out, Contains("--- transcript ---\n\nuser: " + long_prompt + "\nassistant: There are 42.\n"));

    const auto shown_json = session("show s1 --transcript --json");
    INFO(shown_json.out);
    REQUIRE(shown_json.exit_code == 0);
    const auto summary = json::parse(shown_json.out).as_object();
    CHECK(summary.at("id") == "s1");
    CHECK(summary.at("status") == "completed");
    CHECK(summary.at("model") == "claude-test");
    CHECK(summary.at("llm_calls") == 1);
    CHECK(summary.at("pending") == false);
    CHECK(summary.at("prompt").as_string() == long_prompt);
    const auto& lines = summary.at("transcript").as_array();
    REQUIRE(lines.size() == 2);
    CHECK(lines[1] == json::object{{"role", "assistant"}, {"text", "There are 42."}});

    const auto missing = session("show nope");
    CHECK(missing.exit_code == 1);
    CHECK_THAT(missing.out, StartsWith("fisk-ai-serve: error: "));

    // A journal that cannot be folded is named with where it is; ls leaves it out, as Go does.
    { std::ofstream(fs::path(runs) / "torn.json") << "not a record\n"; }
    const auto unreadable = session("show torn");
    CHECK(unreadable.exit_code == 1);
    CHECK(unreadable.out ==
          fmt::format("fisk-ai-serve: error: session \"torn\" in {} cannot be read: no records\n", runs));
    CHECK(json::parse(session("ls --json").out).as_array().size() == 3);

    const auto rm = session("rm s1");
    CHECK(rm.exit_code == 0);
    CHECK(rm.out == "Removed session s1\n");
    const auto after = session("ls --json");
    CHECK(json::parse(after.out).as_array().size() == 2);
    CHECK(json::parse(session("rm s2 --json").out) == json::object{{"id", "s2"}, {"removed", true}});
    CHECK(json::parse(session("rm s2 --json").out) == json::object{{"id", "s2"}, {"removed", false}});
    const auto again = session("rm s1");
    CHECK(again.exit_code == 0);
    CHECK(again.out == fmt::format("No session s1 in {}; nothing to remove\n", runs));
    const auto hostile = session("rm ../c");
    CHECK(hostile.exit_code == 1);
    CHECK_THAT(hostile.out, Contains("invalid run id"));
    CHECK(fs::exists(cfg));
}

TEST_CASE("fisk-ai-serve answers --help and refuses a bad command line", "[serve_app]") {
    const auto help = test::run_shell(serve_bin + " --help");
    CHECK(help.exit_code == 0);
    CHECK_THAT(help.out, Contains("check"));
    CHECK_THAT(help.out, Contains("session"));
    const auto bad = test::run_shell(serve_bin + " check --no-such-flag 2>&1");
    CHECK(bad.exit_code == 2);
    // A subcommand without --config is a usage error too, naming the flag.
    for (const auto* args : {"check", "session ls", "run hello", ""}) {
        const auto missing = test::run_shell(fmt::format("{} {} 2>&1", serve_bin, args));
        INFO(args);
        CHECK(missing.exit_code == 2);
        CHECK_THAT(missing.out, Contains("--config is required"));
    }
    // A --continue that is no task id is refused before a broker or a tool starts.
    const auto bad_task = test::run_shell(serve_bin + " run --config /nonexistent.yaml --continue a.b hello 2>&1");
    CHECK(bad_task.exit_code == 2);
    CHECK_THAT(bad_task.out, StartsWith("--continue: \"a.b\" is not a task id: use the id a previous ask printed "
                                        "(letters, digits, '-' and '_', at most 64)\n"));
}
