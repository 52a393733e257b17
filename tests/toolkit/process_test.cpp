#include "temp_dir.hpp"
#include "async_test.hpp"
#include "process_probe.hpp"

#include <fiskai/toolkit/output_capture.hpp>
#include <fiskai/toolkit/process.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace fiskai::toolkit;
using namespace std::chrono_literals;
using fiskai::test::process_gone;
using fiskai::test::run_awaitable;
using fiskai::test::wait_until;
using fiskai::test::zombie_children;

namespace {

process_spec shell(const std::string& script, std::chrono::steady_clock::duration timeout = 20s) {
    process_spec s;
    s.executable = "/bin/sh";
    s.arguments = {"-c", script};
    s.environment = scrubbed_environment();
    s.timeout = timeout;
    return s;
}

pid_t read_pid(const std::filesystem::path& p) {
    std::ifstream in(p);
    pid_t pid = 0;
    in >> pid;
    return pid;
}

bool no_zombie_children() {
    return wait_until([] { return zombie_children().empty(); }, 5s);
}

using fiskai::test::temp_dir;

}  // namespace

TEST_CASE("stdout and stderr are merged in arrival order", "[process]") {
    auto r = run_awaitable(run_process(shell("echo first; echo second >&2; echo third")));
    CHECK(r.state == process_result::status::exited);
    CHECK(r.exit_code == 0);
    CHECK(r.output == "first\nsecond\nthird\n");
}

TEST_CASE("a non-zero exit is reported with its code", "[process]") {
    auto r = run_awaitable(run_process(shell("echo boom; exit 3")));
    CHECK(r.state == process_result::status::exited);
    CHECK(r.exit_code == 3);
    CHECK(r.output == "boom\n");
}

TEST_CASE("a process killed by a signal we did not send reports -1", "[process]") {
    auto r = run_awaitable(run_process(shell("kill -9 $$")));
    CHECK(r.state == process_result::status::exited);
    CHECK(r.exit_code == -1);
}

TEST_CASE("the timeout kills the whole group, grandchildren included", "[process]") {
    temp_dir dir;
    const auto pidfile = dir.path / "grandchild.pid";
    const auto start = std::chrono::steady_clock::now();
    auto r = run_awaitable(run_process(shell("sleep 30 & echo $! > " + pidfile.string() + "; wait", 300ms)));
    CHECK(r.state == process_result::status::timed_out);
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    const pid_t grandchild = read_pid(pidfile);
    REQUIRE(grandchild > 0);
    CHECK(wait_until([&] { return process_gone(grandchild); }, 5s));
}

TEST_CASE("a descendant still running when the leader exits is killed too", "[process]") {
    temp_dir dir;
    const auto pidfile = dir.path / "bg.pid";
    const auto start = std::chrono::steady_clock::now();
    auto r = run_awaitable(run_process(shell("sleep 30 & echo $! > " + pidfile.string() + "; echo started")));
    CHECK(r.state == process_result::status::exited);
    CHECK(r.output == "started\n");
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    const pid_t bg = read_pid(pidfile);
    REQUIRE(bg > 0);
    CHECK(wait_until([&] { return process_gone(bg); }, 5s));
}

TEST_CASE("cancelling the awaiting coroutine kills the group", "[process]") {
    temp_dir dir;
    const auto pidfile = dir.path / "child.pid";
    boost::asio::io_context ioc;
    boost::asio::cancellation_signal cancel;
    std::optional<process_result> result;
    boost::asio::co_spawn(
        ioc, run_process(shell("sleep 30 & echo $! > " + pidfile.string() + "; wait")),
        boost::asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, process_result r) {
            if (!e) result = std::move(r);
        }));
    boost::asio::steady_timer t(ioc);
    // cancel once the child has written its pid, not after a guessed delay
    std::function<void()> poll = [&] {
        if (read_pid(pidfile) > 0) {
            cancel.emit(boost::asio::cancellation_type::terminal);
            return;
        }
        t.expires_after(10ms);
        t.async_wait([&](auto) { poll(); });
    };
    poll();
    ioc.run_for(20s);
    REQUIRE(result);
    CHECK(result->state == process_result::status::cancelled);
    const pid_t child = read_pid(pidfile);
    CHECK(wait_until([&] { return process_gone(child); }, 5s));
}

TEST_CASE("a call torn down unfinished with its io_context kills and reaps the child", "[process]") {
    REQUIRE(no_zombie_children());
    temp_dir dir;
    const auto pidfile = dir.path / "child.pid";
    {
        boost::asio::io_context ioc;
        boost::asio::co_spawn(ioc, run_process(shell("echo $$ > " + pidfile.string() + "; exec sleep 30")),
                              [](std::exception_ptr, process_result) {});
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (read_pid(pidfile) <= 0 && std::chrono::steady_clock::now() < deadline) ioc.run_for(10ms);
        REQUIRE(read_pid(pidfile) > 0);
    }  // the io_context goes, and the suspended call's frame with it
    const pid_t child = read_pid(pidfile);
    CHECK(process_gone(child));
    CHECK(no_zombie_children());
}

TEST_CASE("output past the cap keeps head and tail", "[process]") {
    auto spec = shell("printf BEGIN; head -c 200000 /dev/zero | tr '\\000' a; printf END");
    spec.output_cap = max_tool_output_bytes;
    auto r = run_awaitable(run_process(spec));
    CHECK(r.total_bytes == 200008);
    CHECK(r.truncated);
    CHECK(r.output.size() == 65562);
    CHECK(r.output.rfind("BEGIN", 0) == 0);
    CHECK(r.output.substr(r.output.size() - 3) == "END");
    CHECK(r.output.find(truncation_marker) == 32768);
}

TEST_CASE("a binary that cannot start is reported", "[process]") {
    process_spec s;
    s.executable = "/nonexistent/tool";
    auto r = run_awaitable(run_process(s));
    CHECK(r.state == process_result::status::start_failed);
    CHECK_THAT(r.error, Catch::Contains("No such file"));
    s.executable = "fiskai-no-such-binary";
    r = run_awaitable(run_process(s));
    CHECK(r.state == process_result::status::start_failed);
    CHECK(r.error == "exec: \"fiskai-no-such-binary\": executable file not found in $PATH");
}

TEST_CASE("an argument over the kernel's per-argument limit is refused clearly and leaves no zombie", "[process]") {
    REQUIRE(no_zombie_children());
    auto spec = shell("echo never", 20s);
    spec.arguments.push_back(std::string(200 * 1024, 'a'));
    auto r = run_awaitable(run_process(spec));
    CHECK(r.state == process_result::status::start_failed);
    CHECK_THAT(r.error, Catch::Contains("Argument list too long"));
    CHECK_THAT(r.error, Catch::Contains("an argument of 204800 bytes"));
    CHECK_THAT(r.error, Catch::Contains("131071 bytes per argument"));
    CHECK(no_zombie_children());
}

TEST_CASE("a binary that is missing or not executable at run time leaves no zombie", "[process]") {
    REQUIRE(no_zombie_children());
    temp_dir dir;
    const auto tool = dir.path / "tool";
    {
        std::ofstream out(tool);
        out << "#!/bin/sh\necho ran\n";
    }
    ::chmod(tool.c_str(), 0755);
    process_spec s;
    s.executable = tool.string();
    s.environment = scrubbed_environment();
    auto r = run_awaitable(run_process(s));
    REQUIRE(r.state == process_result::status::exited);
    CHECK(r.output == "ran\n");

    // Permissions taken away after start, as an upgrade in progress might.
    ::chmod(tool.c_str(), 0644);
    r = run_awaitable(run_process(s));
    CHECK(r.state == process_result::status::start_failed);
    CHECK_THAT(r.error, Catch::Contains("Permission denied"));
    CHECK(no_zombie_children());

    // Removed after start.
    std::filesystem::remove(tool);
    for (int i = 0; i < 3; ++i) {
        r = run_awaitable(run_process(s));
        CHECK(r.state == process_result::status::start_failed);
        CHECK_THAT(r.error, Catch::Contains("No such file"));
    }
    CHECK(no_zombie_children());
}

TEST_CASE("a working directory that cannot be entered fails the start and leaves no zombie", "[process]") {
    REQUIRE(no_zombie_children());
    auto spec = shell("echo never");
    spec.work_dir = "/nonexistent/fiskai-work-dir";
    auto r = run_awaitable(run_process(spec));
    CHECK(r.state == process_result::status::start_failed);
    CHECK_THAT(r.error, Catch::Contains("No such file"));
    CHECK(no_zombie_children());
}

TEST_CASE("the environment is scrubbed of credentials and carries LLMFORMAT=1", "[process]") {
    ::setenv("ANTHROPIC_API_KEY", "sk-secret", 1);
    ::setenv("MY_EMBED_KEY", "embed-secret", 1);
    ::setenv("LLMFORMAT", "0", 1);
    ::setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1", 1);
    auto spec = shell("echo ${ANTHROPIC_API_KEY:-unset} ${MY_EMBED_KEY:-unset} $LLMFORMAT $ANTHROPIC_BASE_URL");
    spec.environment = scrubbed_environment({"MY_EMBED_KEY"});
    auto r = run_awaitable(run_process(spec));
    CHECK(r.output == "unset unset 1 http://127.0.0.1:1\n");
    ::unsetenv("ANTHROPIC_API_KEY");
    ::unsetenv("MY_EMBED_KEY");
    ::unsetenv("LLMFORMAT");
    ::unsetenv("ANTHROPIC_BASE_URL");
}

TEST_CASE("stdin is the null device and the working directory is honoured", "[process]") {
    temp_dir dir;
    auto spec = shell("cat; pwd");
    spec.work_dir = dir.path.string();
    auto r = run_awaitable(run_process(spec));
    CHECK(r.output == std::filesystem::canonical(dir.path).string() + "\n");
}

TEST_CASE("a work dir becomes the child's PWD, replacing the inherited one (Go)", "[process]") {
    temp_dir dir;
    const char* was = std::getenv("PWD");
    const std::optional<std::string> saved = was != nullptr ? std::optional<std::string>(was) : std::nullopt;
    ::setenv("PWD", "/somewhere/else", 1);
    auto spec = shell("printf '%s\\n' \"$PWD\"; env | grep -c '^PWD='");
    spec.work_dir = dir.path.string();
    spec.environment = scrubbed_environment({}, dir.path.string());
    auto r = run_awaitable(run_process(spec));
    CHECK(r.output == dir.path.string() + "\n1\n");
    // Without a work dir the inherited PWD stays.
    auto inherited = scrubbed_environment();
    CHECK(std::find(inherited.begin(), inherited.end(), "PWD=/somewhere/else") != inherited.end());
    if (saved) {
        ::setenv("PWD", saved->c_str(), 1);
    } else {
        ::unsetenv("PWD");
    }
}

TEST_CASE("the child starts with the server's signal mask, not the one blocked around the start", "[process]") {
    std::ifstream status("/proc/self/status");
    std::string line, blocked;
    while (std::getline(status, line)) {
        if (line.rfind("SigBlk:", 0) == 0) blocked = line;
    }
    REQUIRE_FALSE(blocked.empty());
    // grep, not sh: dash clears its signal mask at startup and would hide a wrong one.
    process_spec s;
    s.executable = "grep";
    s.arguments = {"SigBlk:", "/proc/self/status"};
    s.environment = scrubbed_environment();
    auto r = run_awaitable(run_process(s));
    CHECK(r.output == blocked + "\n");
}

TEST_CASE("a tool's process dies with the server that started it", "[process]") {
    temp_dir dir;
    const auto pidfile = dir.path / "tool.pid";
    // A stand-in server: a child of this test that starts a long tool and then is killed
    // without any chance to clean up.
    const pid_t server = ::fork();
    REQUIRE(server >= 0);
    if (server == 0) {
        try {
            (void)run_awaitable(run_process(shell("echo $$ > " + pidfile.string() + "; exec sleep 30", 60s)));
        } catch (...) {}
        ::_exit(0);
    }
    pid_t tool = 0;
    CHECK(wait_until([&] { return (tool = read_pid(pidfile)) > 0; }, 10s));
    ::kill(server, SIGKILL);
    ::waitpid(server, nullptr, 0);
    REQUIRE(tool > 0);
    CHECK(wait_until([&] { return process_gone(tool); }, 5s));
}

TEST_CASE("the child inherits no descriptor beyond stdin, stdout and stderr", "[process]") {
    // A descriptor opened without close-on-exec, as nats.c opens its sockets.
    const int leaky = ::open("/dev/null", O_RDONLY);
    REQUIRE(leaky > 2);
    auto r = run_awaitable(run_process(shell("ls /proc/$$/fd")));
    ::close(leaky);
    CHECK(r.output == "0\n1\n2\n");
}
