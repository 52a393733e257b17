// fisk-ai-a2a serve, discover and info as a user runs them: real processes, a real broker,
// the demo application; signals for shutdown, SIGKILL for a peer that vanishes.

#include "nats_support.hpp"

#include <boost/json/parse.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>

extern char** environ;

using namespace nats_test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A child process with stdout and stderr in files of a scratch directory.
struct process {
    pid_t pid = -1;
    fs::path out, err;
    int status = -1;

    process(const fs::path& dir, const std::string& name, std::vector<std::string> args,
            std::vector<std::string> env_extra = {})
        : out(dir / (name + ".out")), err(dir / (name + ".err")) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        env.insert(env.end(), env_extra.begin(), env_extra.end());
        std::vector<char*> argv, envp;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) == 0);
        posix_spawn_file_actions_destroy(&fa);
    }
    ~process() {
        if (pid > 0 && status == -1) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
        }
    }
    bool exited() {
        if (status != -1) return true;
        if (::waitpid(pid, &status, WNOHANG) == pid) return true;
        status = -1;
        return false;
    }
    // Waits for exit while `ioc` keeps running; returns the exit code (128+signal if killed).
    int wait(asio::io_context& ioc, std::chrono::seconds limit = 30s) {
        REQUIRE(run_until(
            ioc, [&] { return exited(); }, limit));
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    int wait(std::chrono::seconds limit = 30s) {
        asio::io_context idle;
        return wait(idle, limit);
    }
    std::string stdout_text() const { return slurp(out); }
    std::string stderr_text() const { return slurp(err); }
};

struct app_env {
    asio::io_context ioc;
    conns::embedded_broker broker;
    fs::path dir;
    std::string xdg;
    std::unique_ptr<conns::connection> client_conn = conns::connection::dial_url(broker.url(), test_options("client"));

    app_env() {
        char tmpl[] = "/tmp/fiskai-a2a-app-XXXXXX";
        dir = ::mkdtemp(tmpl);
        fs::create_directories(dir / "xdg/nats/context");
        std::ofstream(dir / "xdg/nats/context/local.json") << R"({"url":")" << broker.url() << R"("})";
        xdg = "XDG_CONFIG_HOME=" + (dir / "xdg").string();
    }
    ~app_env() { fs::remove_all(dir); }

    std::string config(const std::string& extra, bool serve = true, bool app = true) const {
        std::string text;
        if (app) text += std::string("application_path: ") + FISK_DEMO_PATH + "\n";
        text += "identity: demo\nharness:\n  confirm_tags: [\"change:config\"]\n";
        if (serve) text += "expose:\n  agent:\n    a2a:\n      serve_tools: true\n      tool_timeout: 20s\n";
        text += extra;
        const auto path = dir / ("config-" + std::to_string(std::hash<std::string>{}(text)) + ".yaml");
        std::ofstream(path) << text;
        return path.string();
    }

    std::unique_ptr<process> run(const std::string& name, std::vector<std::string> args) const {
        args.insert(args.begin(), FISK_AI_A2A_PATH);
        return std::make_unique<process>(dir, name, std::move(args),
                                         std::vector<std::string>{xdg, "DEMO_STATE_DIR=" + dir.string()});
    }

    // Starts `serve` and waits for its banner.
    std::unique_ptr<process> serve(std::vector<std::string> extra = {}) {
        std::vector<std::string> args = {"serve", "--config", config("nats_context: local\n")};
        args.insert(args.end(), extra.begin(), extra.end());
        auto p = run("serve", args);
        REQUIRE(run_until(
            ioc, [&] { return p->stderr_text().find("Exposed:") != std::string::npos || p->exited(); }, 30s));
        INFO(p->stderr_text());
        REQUIRE_FALSE(p->exited());
        return p;
    }
};

}  // namespace

TEST_CASE("serve refuses to start without its opt-in and its requirements, naming them", "[a2a-nats][app]") {
    app_env env;
    auto no_opt_in = env.run("a", {"serve", "--config", env.config("nats_context: local\n", false)});
    CHECK(no_opt_in->wait() != 0);
    CHECK(no_opt_in->stderr_text().find(
              "a2a serving is not enabled: add 'expose: {agent: {a2a: {serve_tools: true}}}' to the config") !=
          std::string::npos);

    auto no_context = env.run("b", {"serve", "--config", env.config("")});
    CHECK(no_context->wait() != 0);
    CHECK(no_context->stderr_text().find("nats_context is required for the a2a server") != std::string::npos);

    auto no_app = env.run("c", {"serve", "--config", env.config("", true, false), "--embedded-broker"});
    CHECK(no_app->wait() != 0);
    CHECK(no_app->stderr_text().find("application_path is required for the a2a server") != std::string::npos);

    auto unknown_context = env.run("d", {"serve", "--config", env.config("nats_context: nope\n")});
    CHECK(unknown_context->wait() != 0);
    CHECK(unknown_context->stderr_text().find("unknown context \"nope\"") != std::string::npos);

    for (const char* sub : {"serve", "discover", "info"}) {
        auto help = env.run(std::string("help-") + sub, {sub, "--help"});
        CHECK(help->wait() == 0);
        CHECK_FALSE(help->stdout_text().empty());
    }
}

TEST_CASE("serve, discover and info work together, SIGTERM stops serve cleanly", "[a2a-nats][app]") {
    app_env env;
    auto server = env.serve();
    const auto banner = server->stderr_text();
    CHECK(banner.find("Serving 9 tools over a2a as demo/0.1.0 on NATS context local") != std::string::npos);
    CHECK(banner.find("Discovery: choria.fisk-ai.discovery.demo") != std::string::npos);
    CHECK(banner.find("Tools: choria.fisk-ai.tool.demo") != std::string::npos);
    // Each dropped tool, with its reason.
    CHECK(banner.find("confirmation-gated commands are not served over a2a (no operator to approve); use ai:deny to "
                      "suppress this tool=stream_rm") != std::string::npos);
    CHECK(banner.find("tool=config_set") != std::string::npos);

    auto text = env.run("discover", {"discover", "demo", "--context", "local"});
    REQUIRE(text->wait(env.ioc) == 0);
    const auto card = text->stdout_text();
    CHECK(card.find("Agent Card for demo") != std::string::npos);
    CHECK(card.find("Version: 0.1.0") != std::string::npos);
    CHECK(card.find("Protocols: io.choria.fisk-ai.v1") != std::string::npos);
    CHECK(card.find("echo ") != std::string::npos);

    auto json = env.run("discover-json", {"discover", "demo", "--context", "local", "--json"});
    REQUIRE(json->wait(env.ioc) == 0);
    const auto doc = boost::json::parse(json->stdout_text());
    CHECK(doc.at("name") == "demo");
    CHECK(doc.at("tools").as_array().size() == 9);

    auto missing = env.run("discover-missing", {"discover", "ghost", "--context", "local"});
    CHECK(missing->wait(env.ioc) != 0);
    CHECK(missing->stderr_text().find("remote agent unavailable") != std::string::npos);
    // An identity that would shape the subject is a wrong command line, refused before the
    // request is built (the client's own check, `invalid outgoing request`, stays behind it).
    auto bad = env.run("discover-bad", {"discover", "a.b", "--context", "local"});
    CHECK(bad->wait(env.ioc) == 2);
    CHECK(bad->stderr_text().find("identity: \"a.b\" is not an identity: use letters, digits, '-' and '_' (at most "
                                  "128)\n") != std::string::npos);

    auto info = env.run(
        "info",
        {"info", "--config",
         env.config("nats_context: local\nremote_tools:\n  - name: demo\n  - name: ghost\n    alias: g\n"), "--json"});
    REQUIRE(info->wait(env.ioc) == 0);
    const auto i = boost::json::parse(info->stdout_text());
    // Its own 9 tools, and the 9 imported from `demo`, prefixed since the names are taken.
    const auto& tools = i.at("tools").as_array();
    CHECK(tools.size() == 18);
    std::size_t remote = 0;
    for (const auto& t : tools) {
        CHECK(t.as_object().contains("input_schema"));
        if (t.at("remote") == true) {
            ++remote;
            CHECK(t.at("host") == "demo");
            CHECK(std::string_view(t.at("name").as_string()).starts_with("demo_"));
        }
    }
    CHECK(remote == 9);
    const auto& hosts = i.at("hosts").as_array();
    REQUIRE(hosts.size() == 2);
    CHECK(hosts[0].at("name") == "demo");
    CHECK(hosts[0].at("status") == "reachable");
    CHECK(hosts[0].at("advertised") == 9);
    CHECK(hosts[0].at("imported") == 9);
    CHECK(hosts[1].at("name") == "ghost");
    CHECK(hosts[1].at("alias") == "g");
    CHECK(hosts[1].at("status") == "unavailable");

    ::kill(server->pid, SIGTERM);
    CHECK(server->wait(env.ioc) == 0);
    CHECK(server->stderr_text().find("a2a server stopped") != std::string::npos);
}

TEST_CASE("the first signal lets a running call finish, a second cancels it and exits 130",
          "[a2a-nats][app][shutdown]") {
    app_env env;
    a2a_nats::nats_transport t(*env.client_conn, env.ioc.get_executor());
    a2a::client client(t, {"caller"});

    SECTION("one signal: the call is answered, then serve exits 0") {
        auto server = env.serve();
        auto call = a2a_test::start(env.ioc, client.invoke("demo", "sleep", R"({"duration":"1500ms"})", 20s));
        REQUIRE(
            run_until(env.ioc, [&] { return server->stderr_text().find("Running tool call") != std::string::npos; }));
        ::kill(server->pid, SIGTERM);
        REQUIRE(run_until(
            env.ioc, [&] { return call->has_value(); }, 20s));
        REQUIRE(**call);
        CHECK((**call)->output == "slept 1.5s\n");
        CHECK(server->wait(env.ioc) == 0);
    }
    SECTION("two signals: the running call is cancelled and still answered, then serve exits 130") {
        auto server = env.serve();
        auto call = a2a_test::start(env.ioc, client.invoke("demo", "sleep", R"({"duration":"30s"})", 20s));
        REQUIRE(
            run_until(env.ioc, [&] { return server->stderr_text().find("Running tool call") != std::string::npos; }));
        ::kill(server->pid, SIGTERM);
        REQUIRE(run_until(env.ioc, [&] { return server->stderr_text().find("shutting down") != std::string::npos; }));
        const auto t0 = std::chrono::steady_clock::now();
        ::kill(server->pid, SIGTERM);
        CHECK(server->wait(env.ioc) == 130);
        CHECK(std::chrono::steady_clock::now() - t0 < 5s);
        // Answered in-band, long before the caller's own 20 s deadline: nobody waits it out.
        REQUIRE(run_until(
            env.ioc, [&] { return call->has_value(); }, 10s));
        REQUIRE(**call);
        CHECK((**call)->is_error);
        CHECK((**call)->output == "running command \"sleep\": context canceled");
    }
}

TEST_CASE("a serving process killed mid-call: the caller gets unavailable, its embedded broker goes too",
          "[a2a-nats][app][resilience]") {
    app_env env;
    // With an external broker: the caller survives the peer.
    {
        auto server = env.serve();
        a2a_nats::nats_transport t(*env.client_conn, env.ioc.get_executor());
        a2a::client client(t, {"caller"});
        auto call = a2a_test::start(env.ioc, client.invoke("demo", "sleep", R"({"duration":"8s"})", 2s));
        REQUIRE(
            run_until(env.ioc, [&] { return server->stderr_text().find("Running tool call") != std::string::npos; }));
        ::kill(server->pid, SIGKILL);
        REQUIRE(run_until(
            env.ioc, [&] { return call->has_value(); }, 10s));
        REQUIRE_FALSE(**call);
        CHECK((**call).error().message ==
              "remote agent unavailable: no reply on \"choria.fisk-ai.tool.demo\": context deadline exceeded");
        server->wait(env.ioc);
        // Once the broker has seen the connection go, nobody serves it: no responders.
        const auto end = std::chrono::steady_clock::now() + 10s;
        std::string last;
        while (std::chrono::steady_clock::now() < end) {
            auto after = a2a_test::run(env.ioc, client.discover("demo", 500ms));
            REQUIRE_FALSE(after);
            last = after.error().message;
            if (last.find("no responders") != std::string::npos) break;
        }
        CHECK(last.find("no responders") != std::string::npos);
    }
    // With --embedded-broker: no nats-server is left behind.
    {
        auto server = env.run("embedded", {"serve", "--config", env.config(""), "--embedded-broker"});
        REQUIRE(run_until(
            env.ioc, [&] { return server->stderr_text().find("Exposed:") != std::string::npos; }, 30s));
        const auto text = server->stderr_text();
        const auto at = text.find("nats-server pid ");
        REQUIRE(at != std::string::npos);
        const pid_t broker_pid = std::stoi(text.substr(at + 16));
        CHECK(::kill(broker_pid, 0) == 0);
        ::kill(server->pid, SIGKILL);
        server->wait(env.ioc);
        CHECK(run_until(
            env.ioc, [&] { return ::kill(broker_pid, 0) != 0; }, 10s));
        // Nobody was left to remove the broker's temporary directory: the test does.
        const auto js = text.find("JetStream in ");
        REQUIRE(js != std::string::npos);
        const fs::path store = text.substr(js + 13, text.find(')', js) - js - 13);
        REQUIRE(store.filename() == "jetstream");
        fs::remove_all(store.parent_path());
    }
}
