// Sessions against real servers: the official server-everything over stdio and streamable
// HTTP, our own fisk-ai-mcp serving the demo over HTTP, and faults (a child killed from
// outside, one that dies mid-call, one that never answers initialize).

#include "async_test.hpp"
#include "process_probe.hpp"
#include "test_server.hpp"

#include <fiskai/mcpclient/session.hpp>
#include <fiskai/mcpclient/tools.hpp>
#include <fiskai/toolkit/confirm_gate.hpp>
#include <fiskai/toolkit/process.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <regex>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mc = fiskai::mcpclient;
using namespace std::chrono_literals;
using namespace std::string_literals;
using fiskai::test::run_awaitable;

namespace {

std::string everything_script() {
    return fiskai::test::source_path(
        "tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
}

// server-everything comes from `npm ci --prefix tests/interop`; without it the interop
// cases cannot run, and say so.
bool have_everything() {
    if (std::string(NODE_PATH).empty() || !std::filesystem::exists(everything_script())) {
        WARN("skipped: server-everything is not installed; run `npm ci --prefix tests/interop` (needs node)");
        return false;
    }
    return true;
}

fiskai::config::mcp_server everything_stdio(std::string name = "ev") {
    fiskai::config::mcp_server s;
    s.name = std::move(name);
    s.command = NODE_PATH;
    s.args = {everything_script(), "stdio"};
    s.startup_timeout = 30s;
    s.tool_timeout = 30s;
    return s;
}

asio::awaitable<void> pause(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
}

// Polls on the io_context (so the session's own coroutines keep running) until `condition`.
template <class Condition>
asio::awaitable<bool> until(Condition condition, std::chrono::milliseconds limit = 10s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > end) co_return false;
        co_await pause(20ms);
    }
    co_return true;
}

bool group_gone(int pgid) { return ::kill(-pgid, 0) != 0 && errno == ESRCH; }

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

// A server child for the HTTP cases, started with the project's launcher; killed (group)
// and reaped on destruction. Waits for `ready` on its stdout or stderr.
struct server_child {
    fiskai::toolkit::piped_child child;
    std::string seen;
    std::smatch match;

    server_child(std::string exe, std::vector<std::string> args, std::vector<std::string> extra_env,
                 const std::regex& ready) {
        fiskai::toolkit::process_spec spec;
        spec.executable = std::move(exe);
        spec.arguments = std::move(args);
        spec.environment = fiskai::toolkit::scrubbed_environment();
        for (auto& e : extra_env) spec.environment.push_back(std::move(e));
        std::string error;
        child = fiskai::toolkit::start_piped_child(spec, error);
        if (child.pid < 0) throw std::runtime_error("starting " + spec.executable + ": " + error);
        const auto end = std::chrono::steady_clock::now() + 20s;
        while (!std::regex_search(seen, match, ready)) {
            if (std::chrono::steady_clock::now() > end) throw std::runtime_error("server did not start:\n" + seen);
            pollfd fds[2] = {{child.stdout_fd, POLLIN, 0}, {child.stderr_fd, POLLIN, 0}};
            ::poll(fds, 2, 100);
            for (auto& p : fds) {
                if ((p.revents & (POLLIN | POLLHUP)) == 0) continue;
                char buf[4096];
                const auto n = ::read(p.fd, buf, sizeof buf);
                if (n > 0) seen.append(buf, static_cast<std::size_t>(n));
            }
        }
        // The pipes stay open (unread) until stop: a server writing to a closed pipe dies of
        // EPIPE (node does). The servers here log a line or two per request, far below a
        // pipe's buffer.
    }
    ~server_child() { stop(); }
    void stop() {
        if (child.pid < 0) return;
        ::kill(-child.pid, SIGKILL);
        ::waitpid(child.pid, nullptr, 0);
        for (int fd : {child.stdin_fd, child.stdout_fd, child.stderr_fd}) ::close(fd);
        child.pid = -1;
    }
};

struct demo_mcp {
    std::filesystem::path dir;
    std::unique_ptr<server_child> server;
    std::string url;

    explicit demo_mcp(int port = 0) {
        char tmpl[] = "/tmp/fiskai-mcpclient-XXXXXX";
        dir = ::mkdtemp(tmpl);
        start(port);
    }
    void start(int port) {
        std::ofstream(dir / "fisk-ai.yaml") << "application_path: \"" << FISK_DEMO_PATH << "\"\n"
                                            << "expose:\n  agent:\n    mcp: {}\n";
        server = std::make_unique<server_child>(
            FISK_AI_MCP_PATH,
            std::vector<std::string>{"--config", (dir / "fisk-ai.yaml").string(), "--port", std::to_string(port)},
            std::vector<std::string>{"DEMO_STATE_DIR=" + dir.string()}, std::regex(R"(over MCP on (http://\S+/mcp))"));
        url = server->match[1];
    }
    ~demo_mcp() {
        server.reset();
        std::filesystem::remove_all(dir);
    }
};

fiskai::config::mcp_server http_server(std::string name, std::string url) {
    fiskai::config::mcp_server s;
    s.name = std::move(name);
    s.url = std::move(url);
    s.startup_timeout = 20s;
    s.tool_timeout = 20s;
    return s;
}

// Built outside the co_await expression: GCC 12 miscompiles an initializer list holding
// string literals inside one ("array used as initializer").
mc::session_options no_options() { return {}; }

json::value message_args(std::string_view text) { return json::object{{"message", text}}; }

const fiskai::toolkit::tool* find_tool(const fiskai::toolkit::tool_list& tools, std::string_view name) {
    for (const auto& t : tools) {
        if (t->name() == name) return t.get();
    }
    return nullptr;
}

}  // namespace

TEST_CASE("stdio: server-everything listed, prefixed, gated, called N times by one child, no orphan",
          "[mcpclient][stdio]") {
    if (!have_everything()) return;
    run_awaitable([]() -> asio::awaitable<void> {
        auto opened = co_await mc::session::open(everything_stdio(), no_options());
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto s = *opened;
        CHECK(s->transport_name() == "stdio"s);
        CHECK(s->identity().protocol_version == "2025-11-25"s);
        const int pid = s->child_pid();
        REQUIRE(pid > 0);

        auto tools = mc::make_tools(s);
        const auto* echo = find_tool(tools, "ev_echo");
        const auto* sum = find_tool(tools, "ev_get-sum");
        REQUIRE(echo != nullptr);
        REQUIRE(sum != nullptr);
        for (const auto& t : tools) CHECK(t->name().rfind("ev_", 0) == 0);
        CHECK(echo->kind() == fiskai::toolkit::tool_kind::mcp);
        // The agent loop's model only: never re-served over MCP or a2a.
        CHECK(echo->exposed().on(fiskai::toolkit::surface::agent));
        CHECK_FALSE(echo->exposed().on(fiskai::toolkit::surface::mcp));
        CHECK_FALSE(echo->exposed().on(fiskai::toolkit::surface::a2a));
        CHECK(echo->confirm().posture == fiskai::toolkit::confirm_posture::required);
        CHECK(echo->confirm().trigger_tag == "mcp:ev"s);
        CHECK(echo->input_schema().at("properties").as_object().contains("message"));
        CHECK(sum->describe_call(json::parse(R"({"a":2,"b":3})")) == R"(ev get-sum {"a":2,"b":3})"s);

        // Gated by default: the default-deny prompter (servers, the a2a tool server) denies.
        fiskai::toolkit::confirm_gate gate;
        auto decision = co_await gate.check(*echo, echo->describe_call(json::object{}), "c1",
                                            fiskai::toolkit::default_deny_prompter());
        CHECK_FALSE(decision.allowed);

        auto echo_tool = tools[0];
        for (const auto& t : tools) {
            if (t->name() == "ev_echo"s) echo_tool = t;
        }
        for (int i = 0; i < 5; ++i) {
            const auto text = fmt::format("hi {}", i);
            fiskai::toolkit::call_options options;  // a local: a `{}` temporary in co_await breaks GCC 12
            auto out = co_await echo_tool->call(message_args(text), options);
            CHECK_FALSE(out.is_error());
            CHECK(out.render() == fmt::format("Echo: hi {}", i));
        }
        auto sum_out = co_await s->call("get-sum", json::parse(R"({"a":2,"b":40})"), 10s);
        CHECK_FALSE(sum_out.is_error());
        CHECK(sum_out.render().find("42") != std::string::npos);
        auto unknown = co_await s->call("no-such-tool", json::object{}, 10s);
        CHECK(unknown.is_error());

        // One child for every call.
        CHECK(s->child_pid() == pid);
        CHECK_FALSE(fiskai::test::process_gone(pid));
        CHECK_FALSE(s->fault());

        co_await s->close();
        CHECK(fiskai::test::process_gone(pid));
        CHECK(group_gone(pid));
        CHECK(fiskai::test::zombie_children().empty());
        auto after = co_await s->call("echo", message_args("late"), 10s);
        CHECK(after.error_message() == R"(mcp server "ev" is not running: the session was closed)"s);
    }());
}

TEST_CASE("stdio: server requests refused -32601 on the wire, paging, invalid names skipped, older revision",
          "[mcpclient][stdio]") {
    if (std::string(NODE_PATH).empty()) {
        WARN("skipped: node is not installed");
        return;
    }
    run_awaitable([]() -> asio::awaitable<void> {
        fiskai::config::mcp_server cfg;
        cfg.name = "fake";
        cfg.command = NODE_PATH;
        cfg.args = {fiskai::test::source_path("tests/mcpclient/fake_stdio_server.cjs")};
        auto warnings = std::make_shared<std::vector<std::string>>();
        mc::session_options options;
        options.log = [warnings](fiskai::gocompat::log_level level, std::string_view message,
                                 fiskai::gocompat::log_fields) {
            if (level == fiskai::gocompat::log_level::warn) warnings->emplace_back(message);
        };
        auto opened = co_await mc::session::open(cfg, options);
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto s = *opened;
        CHECK(s->identity().protocol_version == "2025-06-18"s);
        auto tools = mc::make_tools(s);
        std::vector<std::string> names;
        for (const auto& t : tools) names.push_back(t->name());
        CHECK(names == std::vector<std::string>{"fake_one", "fake_two", "fake_three"});
        CHECK(std::find(warnings->begin(), warnings->end(),
                        R"(mcp server "fake": skipping tool "bad name": not a valid tool name)"s) != warnings->end());
        auto out = co_await s->call("one", json::object(), 10s);
        auto reply = json::parse(out.render());
        CHECK(reply.at("id") == "srv1");
        CHECK(reply.at("error").at("code") == -32601);

        // A call given up on, by its timeout or by cancelling the caller, is cancelled on
        // the server too.
        auto timed_out = co_await s->call("slow", json::object(), 200ms);
        CHECK(timed_out.error_message() == R"(mcp server "fake" tool "slow": no answer within 200ms)"s);
        auto ex = co_await asio::this_coro::executor;
        asio::cancellation_signal cancel;
        asio::steady_timer canceller(ex, 200ms);
        canceller.async_wait([&cancel](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
        auto cancelled = co_await asio::co_spawn(ex, s->call("slow", json::object(), 30s),
                                                 asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
        CHECK(cancelled.error_message() == R"(mcp server "fake" tool "slow": cancelled)"s);
        auto cancels = json::parse((co_await s->call("cancels", json::object(), 10s)).render());
        REQUIRE(cancels.as_array().size() == 2);
        CHECK(cancels.at(0).at("reason") == "the call timed out");
        CHECK(cancels.at(1).at("reason") == "the caller cancelled the call");
        CHECK(cancels.at(0).at("requestId").is_number());
        CHECK_FALSE(s->fault());
        co_await s->close();
    }());
}

TEST_CASE("stdio: confirm false ungates, alias, include and exclude pick the tools", "[mcpclient][stdio]") {
    if (!have_everything()) return;
    run_awaitable([]() -> asio::awaitable<void> {
        auto cfg = everything_stdio("everything");
        cfg.alias = "ev2";
        cfg.confirm = false;
        cfg.include.tools = {"^get-"};
        cfg.exclude.tools = {"tiny"};
        auto opened = co_await mc::session::open(cfg, no_options());
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto tools = mc::make_tools(*opened);
        REQUIRE_FALSE(tools.empty());
        CHECK(find_tool(tools, "ev2_get-sum") != nullptr);
        CHECK(find_tool(tools, "ev2_echo") == nullptr);
        CHECK(find_tool(tools, "ev2_get-tiny-image") == nullptr);
        for (const auto& t : tools) {
            CHECK(t->name().rfind("ev2_get-", 0) == 0);
            CHECK(t->confirm().posture == fiskai::toolkit::confirm_posture::not_required);
        }
        co_await (*opened)->close();
    }());
}

TEST_CASE("stdio: a child killed from outside is a fault, and calls say so", "[mcpclient][stdio][fault]") {
    if (!have_everything()) return;
    run_awaitable([]() -> asio::awaitable<void> {
        auto opened = co_await mc::session::open(everything_stdio(), no_options());
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto s = *opened;
        std::vector<std::string> faults;
        s->on_fault([&](const std::string& why) { faults.push_back(why); });
        const int pid = s->child_pid();
        ::kill(pid, SIGKILL);
        CHECK(co_await until([&] { return !faults.empty(); }));
        REQUIRE(faults.size() == 1);
        CHECK(faults[0] == "the process was killed by signal 9 (Killed)"s);
        auto out = co_await s->call("echo", message_args("x"), 5s);
        CHECK(out.error_message() == R"(mcp server "ev" is not running: the process was killed by signal 9 (Killed))"s);
        co_await s->close();
        CHECK(faults.size() == 1);  // closing a dead session is not a second fault
        CHECK(fiskai::test::zombie_children().empty());
    }());
}

TEST_CASE("stdio: a session dropped without close still kills and reaps its child", "[mcpclient][stdio]") {
    if (!have_everything()) return;
    run_awaitable([]() -> asio::awaitable<void> {
        int pid = -1;
        {
            auto opened = co_await mc::session::open(everything_stdio(), no_options());
            REQUIRE(opened.has_value());
            pid = (*opened)->child_pid();
        }
        CHECK(co_await until([pid] { return fiskai::test::process_gone(pid); }));
        CHECK(co_await until([] { return fiskai::test::zombie_children().empty(); }));
        CHECK(group_gone(pid));
    }());
}

TEST_CASE("stdio: a server that dies mid-call ends the call with the fault text", "[mcpclient][stdio][fault]") {
    if (!have_everything()) return;
    run_awaitable([]() -> asio::awaitable<void> {
        auto opened = co_await mc::session::open(everything_stdio(), no_options());
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto s = *opened;
        bool faulted = false;
        s->on_fault([&](const std::string&) { faulted = true; });
        const int pid = s->child_pid();
        auto ex = co_await asio::this_coro::executor;
        asio::steady_timer killer(ex, 500ms);
        killer.async_wait([pid](boost::system::error_code) { ::kill(pid, SIGTERM); });
        const auto started = std::chrono::steady_clock::now();
        auto out = co_await s->call("trigger-long-running-operation", json::parse(R"({"duration":20,"steps":4})"), 30s);
        CHECK(std::chrono::steady_clock::now() - started < 10s);
        CHECK(out.is_error());
        CHECK(out.error_message().rfind(R"(mcp server "ev" is not running: )", 0) == 0);
        CHECK(faulted);
        co_await s->close();
        CHECK(fiskai::test::process_gone(pid));
    }());
}

TEST_CASE("stdio: tool_timeout ends a slow call, cancels it, and the session goes on", "[mcpclient][stdio]") {
    if (!have_everything()) return;
    run_awaitable([]() -> asio::awaitable<void> {
        auto opened = co_await mc::session::open(everything_stdio(), no_options());
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto s = *opened;
        auto slow =
            co_await s->call("trigger-long-running-operation", json::parse(R"({"duration":20,"steps":4})"), 300ms);
        CHECK(slow.error_message() ==
              R"(mcp server "ev" tool "trigger-long-running-operation": no answer within 300ms)"s);
        auto fine = co_await s->call("echo", message_args("still here"), 10s);
        CHECK(fine.render() == "Echo: still here"s);
        CHECK_FALSE(s->fault());
        co_await s->close();
    }());
}

TEST_CASE("stdio: a server that never answers initialize times out with the text, no child left",
          "[mcpclient][stdio][fault]") {
    run_awaitable([]() -> asio::awaitable<void> {
        fiskai::config::mcp_server cfg;
        cfg.name = "mute";
        cfg.command = "sleep";
        cfg.args = {"60"};
        cfg.startup_timeout = 300ms;
        const auto started = std::chrono::steady_clock::now();
        auto opened = co_await mc::session::open(cfg, no_options());
        REQUIRE_FALSE(opened.has_value());
        CHECK(opened.error() == R"(mcp server "mute": no answer to initialize within 300ms)"s);
        // close: stdin closed, then SIGTERM after 2 s at the latest.
        CHECK(std::chrono::steady_clock::now() - started < 5s);
        CHECK(fiskai::test::zombie_children().empty());
    }());
}

TEST_CASE("stdio: a command that does not start and one that exits at once", "[mcpclient][stdio][fault]") {
    run_awaitable([]() -> asio::awaitable<void> {
        fiskai::config::mcp_server cfg;
        cfg.name = "nope";
        cfg.command = "/nonexistent/mcp-server";
        auto missing = co_await mc::session::open(cfg, no_options());
        REQUIRE_FALSE(missing.has_value());
        CHECK(missing.error() ==
              R"(mcp server "nope": starting "/nonexistent/mcp-server": No such file or directory)"s);

        // A bare name is looked up on $PATH first, with Go's text when it is not there.
        cfg.command = "fiskai-no-such-mcp-server";
        auto unfound = co_await mc::session::open(cfg, no_options());
        REQUIRE_FALSE(unfound.has_value());
        CHECK(
            unfound.error() ==
            R"(mcp server "nope": starting "fiskai-no-such-mcp-server": exec: "fiskai-no-such-mcp-server": executable file not found in $PATH)"s);

        cfg.command = "false";
        cfg.startup_timeout = 10s;
        auto quits = co_await mc::session::open(cfg, no_options());
        REQUIRE_FALSE(quits.has_value());
        CHECK(quits.error() ==
              R"(mcp server "nope": it stopped before answering initialize: the process exited with status 1)"s);

        // One line without end: refused at the line cap (64 MiB arrive in well under a second),
        // before a startup timeout that a search of the whole line at every read (quadratic:
        // 11.8 s here) would pass.
        cfg.command = "/bin/sh";
        cfg.args = {"-c", "tr -d '\\n' < /dev/zero"};
        cfg.startup_timeout = 5s;
        const auto start = std::chrono::steady_clock::now();
        auto endless = co_await mc::session::open(cfg, no_options());
        REQUIRE_FALSE(endless.has_value());
        CHECK(
            endless.error() ==
            R"(mcp server "nope": it stopped before answering initialize: it wrote a line over 67108864 bytes on stdout)"s);
        CHECK(std::chrono::steady_clock::now() - start < 5s);
    }());
}

TEST_CASE("http: server-everything over streamable HTTP", "[mcpclient][http]") {
    if (!have_everything()) return;
    const int port = free_port();
    server_child server(NODE_PATH, {everything_script(), "streamableHttp"}, {"PORT=" + std::to_string(port)},
                        std::regex("listening on port"));
    run_awaitable([port]() -> asio::awaitable<void> {
        auto opened =
            co_await mc::session::open(http_server("evh", fmt::format("http://127.0.0.1:{}/mcp", port)), no_options());
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto s = *opened;
        CHECK(s->transport_name() == "http"s);
        CHECK(s->child_pid() == -1);
        auto tools = mc::make_tools(s);
        CHECK(find_tool(tools, "evh_echo") != nullptr);
        CHECK(find_tool(tools, "evh_get-sum") != nullptr);
        auto out = co_await s->call("echo", message_args("over http"), 10s);
        CHECK(out.render() == "Echo: over http"s);
        auto sum = co_await s->call("get-sum", json::parse(R"({"a":1,"b":2})"), 10s);
        CHECK(sum.render().find('3') != std::string::npos);
        co_await s->close();
        auto after = co_await s->call("echo", message_args("late"), 10s);
        CHECK(after.is_error());
    }());
}

TEST_CASE("http: fisk-ai-mcp serving the demo, a restarted server is initialized again once", "[mcpclient][http]") {
    demo_mcp demo;
    const std::smatch& m = demo.server->match;
    const std::string port = std::regex_replace(m[1].str(), std::regex(R"(^http://[^:]+:(\d+)/mcp$)"), "$1");
    run_awaitable([&demo, &port]() -> asio::awaitable<void> {
        auto infos = std::make_shared<std::vector<std::string>>();
        mc::session_options options;
        options.log = [infos](fiskai::gocompat::log_level, std::string_view message, fiskai::gocompat::log_fields) {
            infos->emplace_back(message);
        };
        auto opened = co_await mc::session::open(http_server("demo", demo.url), options);
        if (!opened) FAIL_CHECK(opened.error());
        REQUIRE(opened.has_value());
        auto s = *opened;
        auto tools = mc::make_tools(s);
        REQUIRE(find_tool(tools, "demo_echo") != nullptr);
        auto out = co_await s->call("echo", json::parse(R"({"text":["hello"]})"), 20s);
        CHECK_FALSE(out.is_error());
        CHECK(out.render().find("hello") != std::string::npos);

        // The server restarts on the same port: our session id is unknown to it (404),
        // so the client initializes again and the call goes through.
        demo.server.reset();
        demo.start(std::stoi(port));
        auto again = co_await s->call("echo", json::parse(R"({"text":["again"]})"), 20s);
        CHECK_FALSE(again.is_error());
        CHECK(again.render().find("again") != std::string::npos);
        CHECK(std::count(infos->begin(), infos->end(),
                         "mcp client: the server lost the session; initializing again"s) == 1);
        CHECK_FALSE(s->fault());
        co_await s->close();
    }());
}

TEST_CASE("http: a URL nobody listens on fails at start with the cause", "[mcpclient][http][fault]") {
    const int port = free_port();
    run_awaitable([port]() -> asio::awaitable<void> {
        auto opened =
            co_await mc::session::open(http_server("gone", fmt::format("http://127.0.0.1:{}/mcp", port)), no_options());
        REQUIRE_FALSE(opened.has_value());
        CHECK(opened.error().rfind(R"(mcp server "gone": initialize failed: )", 0) == 0);
        CHECK(opened.error().find("refused") != std::string::npos);
    }());
}

TEST_CASE("http: a header from a missing environment variable is a startup error", "[mcpclient][http]") {
    run_awaitable([]() -> asio::awaitable<void> {
        auto cfg = http_server("auth", "http://127.0.0.1:1/mcp");
        cfg.headers_env = {{"Authorization", "FISKAI_TEST_SURELY_UNSET_TOKEN"}};
        auto opened = co_await mc::session::open(cfg, no_options());
        REQUIRE_FALSE(opened.has_value());
        CHECK(opened.error().find("FISKAI_TEST_SURELY_UNSET_TOKEN") != std::string::npos);
    }());
}

TEST_CASE("http: a server that sends nothing but junk ends at the startup deadline, logged a few times",
          "[mcpclient][http][fault]") {
    // An answer stream of events that are not JSON-RPC, without end: the read must stop at
    // the deadline (the bytes are always there, so no read waits for its timer), and the
    // log must not get a line for each one.
    std::atomic<bool> stop{false};
    fiskai::test::http_test_server junk([&](fiskai::test::http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
        std::string burst;
        for (int i = 0; i < 200; ++i) burst += "12\r\ndata: {\"ping\":1}\n\n\r\n";
        while (!stop) co_await s.write_raw(burst);
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto warnings = std::make_shared<std::vector<std::string>>();
        mc::session_options options;
        options.log = [warnings](fiskai::gocompat::log_level level, std::string_view message,
                                 fiskai::gocompat::log_fields) {
            if (level == fiskai::gocompat::log_level::warn) warnings->emplace_back(message);
        };
        auto cfg = http_server("junk", fmt::format("http://127.0.0.1:{}/mcp", junk.port()));
        cfg.startup_timeout = 1s;
        const auto start = std::chrono::steady_clock::now();
        auto opened = co_await mc::session::open(cfg, options);
        REQUIRE_FALSE(opened.has_value());
        CHECK(opened.error() == R"(mcp server "junk": no answer to initialize within 1s)");
        CHECK(std::chrono::steady_clock::now() - start < 10s);
        REQUIRE(warnings->size() == 6);
        CHECK(std::count(warnings->begin(), warnings->end(), "mcp client: a message that is not JSON-RPC"s) == 5);
        CHECK(warnings->back() == "mcp client: more messages that are not JSON-RPC; no longer logging them");
    }());
    stop = true;
}

TEST_CASE("http: a JSON answer over the message cap is refused", "[mcpclient][http][fault]") {
    fiskai::test::http_test_server huge([](fiskai::test::http_test_server::session& s) -> asio::awaitable<void> {
        co_await s.write_raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
        const std::string piece(1 << 20, ' ');
        const std::string chunk = fmt::format("{:x}\r\n{}\r\n", piece.size(), piece);
        for (int i = 0; i < 70; ++i) co_await s.write_raw(chunk);
        co_await s.write_raw("0\r\n\r\n");
    });
    run_awaitable([&]() -> asio::awaitable<void> {
        auto opened = co_await mc::session::open(
            http_server("huge", fmt::format("http://127.0.0.1:{}/mcp", huge.port())), no_options());
        REQUIRE_FALSE(opened.has_value());
        CHECK(opened.error() == R"(mcp server "huge": initialize failed: the JSON answer is over 67108864 bytes)");
    }());
}
