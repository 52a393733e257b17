// examples/a2a-agent as a user gets it: fiskai installed into a scratch prefix, the example
// built against it with find_package(fiskai), then run on a real NATS server next to a
// served agent (fisk-ai-serve on fiskai-fake-llm). A peer discovers the example's own tool,
// and the example's --ask streams the agent's reply set and prints its final text.

#include "app_test_support.hpp"
#include "fake_llm_process.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;
using namespace fiskai;
using namespace std::chrono_literals;

namespace {

using test::child;
using test::slurp;
using test::wait_until;

// Installs fiskai and builds the example against it; returns the example's binary.
std::string build_example_against_install() {
    const auto built = test::run_shell(fmt::format("'{}' -DBUILD_DIR='{}' '-DCONSUMER_FLAGS={}' -DEXAMPLE_SOURCE='{}' "
                                                   "-DWORK_DIR='{}' '-DGENERATOR={}' -P '{}' 2>&1",
                                                   CMAKE_COMMAND_PATH, FISKAI_BINARY_DIR, CONSUMER_FLAGS,
                                                   EXAMPLE_SOURCE, EXAMPLE_WORK_DIR, GENERATOR, BUILD_EXAMPLE_SCRIPT),
                                       540s);
    INFO(built.out);
    REQUIRE(built.exit_code == 0);
    return std::string(EXAMPLE_WORK_DIR) + "/build/a2a-agent";
}

}  // namespace

TEST_CASE("the installed a2a-agent example serves its tool to peers and streams a served agent's reply",
          "[install][example]") {
    const auto example = build_example_against_install();

    // The served agent: fisk-ai-serve over the demo application, its LLM a one-line script.
    test::scratch_dir dir;
    const auto script = dir.write("script.json", R"({"conversations":[{"name":"answer","steps":[
 {"reply":{"content":[{"type":"text","text":"Forty-two."}],"stop_reason":"end_turn"}}]}]})");
    test::fake_llm_process fake(FISKAI_FAKE_LLM,
                                std::vector<std::string>{"--script", script, "--port", "0", "--exit-with-parent"});
    const auto config = dir.write("serve.yaml", fmt::format(R"(identity: oracle
system_prompt: You help.
application_path: {}
llm:
  model: fake
  base_url: http://127.0.0.1:{}
  max_retries: 0
harness:
  sessions:
    backend: file
    options:
      directory: {}
expose:
  agent:
    workers: 1
    a2a:
      prompts: {{}}
)",
                                                            FISK_DEMO_PATH, fake.port(), (dir.path / "runs").string()));
    child worker({FISK_AI_SERVE_PATH, "--config", config, "--embedded-broker"}, {"ANTHROPIC_API_KEY=test-key"},
                 dir.path / "worker.out", dir.path / "worker.err");
    REQUIRE(wait_until([&] { return worker.err().find("services:\n") != std::string::npos; }, 20s));
    const auto banner = worker.err();
    const auto at = banner.find("(nats://");
    REQUIRE(at != std::string::npos);
    const auto url = banner.substr(at + 1, banner.find(')', at) - at - 1);

    {  // A peer discovers the example's own tool while it serves.
        child serving({example, "--server", url, "--identity", "dicer"}, {}, dir.path / "dicer.out",
                      dir.path / "dicer.err");
        REQUIRE(wait_until([&] { return serving.err().find("serving dice_roll") != std::string::npos; }, 20s));
        fs::create_directories(dir.path / "xdg/nats/context");
        std::ofstream(dir.path / "xdg/nats/context/w.json") << R"({"url":")" << url << R"("})";
        const auto discovered = test::run_shell(fmt::format("XDG_CONFIG_HOME='{}' '{}' discover dicer --context w 2>&1",
                                                            (dir.path / "xdg").string(), FISK_AI_A2A_PATH),
                                                30s);
        INFO(discovered.out);
        CHECK(discovered.exit_code == 0);
        CHECK_THAT(discovered.out, Catch::Contains("dice_roll"));

        // It serves until told to stop, then exits cleanly.
        serving.signal(SIGTERM);
        CHECK(serving.wait(15s) == 0);
    }

    {  // --ask streams the reply set, prints the final text and exits with the task's outcome.
        child asker({example, "--server", url, "--identity", "asker", "--ask", "oracle", "what is the answer?"}, {},
                    dir.path / "asker.out", dir.path / "asker.err");
        const int code = asker.wait(30s);
        const auto streamed = asker.err();
        INFO(streamed);
        CHECK(code == 0);
        CHECK(asker.out() == "Forty-two.\n");
        // One line per message, in the order they streamed.
        const auto accepted = streamed.find(" accepted\n");
        const auto status = streamed.find("\nevent {\"iteration\":1,\"phase\":\"calling-llm\",\"type\":\"status\"");
        const auto text = streamed.find("\nevent {\"text\":\"Forty-two.\",\"type\":\"text\"}\n");
        const auto result = streamed.find("\nresult end_turn\n");
        REQUIRE(accepted != std::string::npos);
        REQUIRE(status != std::string::npos);
        REQUIRE(text != std::string::npos);
        REQUIRE(result != std::string::npos);
        CHECK(accepted < status);
        CHECK(status < text);
        CHECK(text < result);
    }
}
