// One scripted session whose tools come from the two outside sources at once: an MCP
// server (the official server-everything over stdio, pinned in tests/interop) through
// libs/mcpclient, and a peer agent (`fisk-ai-a2a serve` with the demo application over a
// real nats-server) through the remote import. The MCP tool is gated by default: a
// scripted prompter allows it; nobody to ask denies it.

#include "agent_fixture.hpp"

#include <fiskai/a2a_nats/peer_client.hpp>
#include <fiskai/conns/embedded_broker.hpp>
#include <fiskai/mcpclient/session.hpp>
#include <fiskai/mcpclient/tools.hpp>
#include <fiskai/remotetools/remotetools.hpp>

#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char** environ;

using namespace agent_test;
namespace fs = std::filesystem;

namespace {

std::string everything_script() {
    return std::string(FISKAI_SOURCE_DIR) +
           "/tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js";
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `fisk-ai-a2a serve` as a user runs it, stderr in a file; SIGTERM and reaped at the end.
struct peer_process {
    pid_t pid = -1;
    fs::path err;

    peer_process(const fs::path& dir, const std::string& config, const std::vector<std::string>& env_extra)
        : err(dir / "peer.err") {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        std::vector<std::string> args{FISK_AI_A2A_PATH, "serve", "--config", config};
        std::vector<std::string> env;
        for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
        env.insert(env.end(), env_extra.begin(), env_extra.end());
        std::vector<char*> argv, envp;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        const int spawned = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&fa);
        if (spawned != 0) throw std::runtime_error("could not start fisk-ai-a2a serve");
    }
    ~peer_process() {
        if (pid <= 0) return;
        ::kill(pid, SIGTERM);
        int status = 0;
        const auto end = std::chrono::steady_clock::now() + 10s;
        while (::waitpid(pid, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > end) {
                ::kill(pid, SIGKILL);
                ::waitpid(pid, &status, 0);
                break;
            }
            std::this_thread::sleep_for(20ms);
        }
    }
    [[nodiscard]] bool exited() {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            pid = -1;
            return true;
        }
        return false;
    }
    // Waits for the startup banner: the peer serves once it printed `Exposed:`.
    [[nodiscard]] bool ready(std::chrono::seconds limit = 30s) {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < end) {
            if (slurp(err).find("Exposed:") != std::string::npos) return true;
            if (exited()) return false;
            std::this_thread::sleep_for(20ms);
        }
        return false;
    }
};

json::object conversation(std::string_view name, json::array steps) {
    return json::object{{"name", name}, {"when", json::object{{"prompt_contains", name}}}, {"steps", std::move(steps)}};
}

}  // namespace

TEST_CASE("one session calls an MCP server's tool (gated) and a peer agent's tool over NATS", "[agent][mcp][nats]") {
    if (std::string(NODE_PATH).empty() || !fs::exists(everything_script())) {
        WARN("skipped: server-everything is not installed; run `npm ci --prefix tests/interop` (needs node)");
        return;
    }
    conns::embedded_broker broker;
    // No application here: every tool of the session comes from outside.
    fixture f(json::array{text_step("unused")}, [](config::config& c) {
        c.application_path.clear();
        c.identity = "agent";
    });

    // The peer: the demo application served over a2a as `peer`, found through a NATS context.
    fs::create_directories(f.dir.path / "xdg/nats/context");
    std::ofstream(f.dir.path / "xdg/nats/context/local.json") << R"({"url":")" << broker.url() << R"("})";
    const auto peer_config = (f.dir.path / "peer.yaml").string();
    std::ofstream(peer_config) << "application_path: " << FISK_DEMO_PATH
                               << "\nidentity: peer\nnats_context: local\n"
                                  "expose:\n  agent:\n    a2a:\n      serve_tools: true\n      tool_timeout: 20s\n";
    const std::string xdg = (f.dir.path / "xdg").string();
    peer_process peer(f.dir.path, peer_config, {"XDG_CONFIG_HOME=" + xdg, "DEMO_STATE_DIR=" + f.dir.path.string()});
    INFO(slurp(peer.err));
    REQUIRE(peer.ready());

    // The remote import, as the agent does it at start: strict.
    const char* had_xdg = std::getenv("XDG_CONFIG_HOME");
    const std::optional<std::string> saved_xdg = had_xdg ? std::optional<std::string>(had_xdg) : std::nullopt;
    ::setenv("XDG_CONFIG_HOME", xdg.c_str(), 1);
    auto client = a2a_nats::connect_peer_client(f.h->ioc.get_executor(), {"local", "agent", 30s, {}});
    if (saved_xdg) {
        ::setenv("XDG_CONFIG_HOME", saved_xdg->c_str(), 1);
    } else {
        ::unsetenv("XDG_CONFIG_HOME");
    }
    remotetools::host_config host;
    host.name = "peer";
    host.include_tools = {"^stream_info$"};
    auto imported = test::run_on(f.h->ioc, remotetools::discover_and_import(client, {host}, {}));
    REQUIRE_NOTHROW(remotetools::require_complete(imported, "local"));
    REQUIRE(imported.tools.size() == 1);
    CHECK(imported.tools[0]->name() == "stream_info");

    // The MCP server, started once and shared by both sessions below.
    config::mcp_server everything;
    everything.name = "ev";
    everything.command = NODE_PATH;
    everything.args = {everything_script(), "stdio"};
    everything.startup_timeout = 30s;
    everything.tool_timeout = 30s;
    auto opened = test::run_on(f.h->ioc, mcpclient::session::open(everything, {}));
    REQUIRE(opened.has_value());
    auto mcp = *opened;
    auto mcp_tools = mcpclient::make_tools(mcp);
    for (auto& t : mcp_tools) {
        if (t->name() == "ev_echo") f.h->rt->tools.push_back(t);
    }
    REQUIRE(f.h->rt->tools.size() == 1);
    f.h->rt->tools.push_back(imported.tools[0]);

    json::object echo_call = tool_step("ev_echo", json::object{{"message", "hi from the loop"}});
    f.replace_script(json::object{
        {"conversations",
         json::array{
             conversation("approved",
                          json::array{echo_call,
                                      expect_result(tool_step("stream_info", json::object{{"name", "ORDERS"}}),
                                                    "Echo: hi from the loop"),
                                      expect_result(text_step("Echoed, and the peer answered."), "stream info")}),
             conversation("denied", json::array{echo_call, expect_result(text_step("Not allowed."),
                                                                         "no interactive terminal is attached")})}}});

    SECTION("approved by the prompter") {
        test::scripted_prompter operator_once;
        auto r = f.request("approved: echo, then ask the peer");
        r.asker = &operator_once;
        auto result = f.h->run(std::move(r), 120s);
        CHECK(result.reason == "completed");
        CHECK(result.final_text == "Echoed, and the peer answered.");
        CHECK(operator_once.approvals == 1);  // the MCP tool only: remote tools are gated by their peer
        CHECK(result.counters.tool_calls == 2);
        CHECK(result.counters.remote_tool_calls == 1);
        CHECK_FALSE(f.sink.warned("confirm_no_terminal"));

        auto results = f.results();
        REQUIRE(results.size() == 2);
        CHECK(results[0].result.content == "Echo: hi from the loop");
        CHECK_FALSE(results[0].remote);
        CHECK(results[1].remote);
        CHECK(results[1].result.content.find(R"("command":"stream info)") != std::string::npos);

        REQUIRE(f.sink.calls.size() == 2);
        CHECK(f.sink.calls[0].kind == toolkit::tool_kind::mcp);
        CHECK(f.sink.calls[1].agent == "peer");
        REQUIRE(f.sink.results.size() == 2);
        CHECK_FALSE(f.sink.results[0].exec.has_value());
        REQUIRE(f.sink.results[1].exec.has_value());
        CHECK_THAT(f.sink.results[1].exec->command, Catch::StartsWith("stream info") && Catch::EndsWith("ORDERS"));
        CHECK(f.last_terminal()->reason == runstate::terminal_reason::completed);
    }
    SECTION("nobody to ask: the MCP tool is denied and never runs") {
        auto result = f.h->run(f.request("denied: echo without an operator"), 120s);
        CHECK(result.reason == "completed");
        CHECK(f.sink.warned("confirm_no_terminal"));
        CHECK(f.sink.calls.empty());
        auto results = f.results();
        REQUIRE(results.size() == 1);
        CHECK(results[0].result.content ==
              R"({"allowed":false,"reason":"no interactive terminal is attached, so no operator could be asked"})");
    }
    test::run_on(f.h->ioc, mcp->close());
}
