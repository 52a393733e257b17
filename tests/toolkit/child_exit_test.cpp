// Watching a child's exit: through a pidfd, and by polling where pidfd_open is refused. The
// fallback is tested as it happens in the field: a seccomp filter (as Docker's profile before
// 20.10 installed) makes pidfd_open fail, in a forked copy of this test process.

#include "async_test.hpp"

#include <fiskai/toolkit/child_exit.hpp>
#include <fiskai/toolkit/process.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <optional>
#include <string>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace fiskai::toolkit;
using namespace std::chrono_literals;
using fiskai::test::run_awaitable;

namespace {

// Makes pidfd_open fail with `error` in this process and every process it starts.
bool refuse_pidfd_open(int error) {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<unsigned>(error) & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

process_spec shell(const std::string& script, std::chrono::steady_clock::duration timeout = 20s) {
    process_spec s;
    s.executable = "/bin/sh";
    s.arguments = {"-c", script};
    s.environment = {"PATH=/usr/bin:/bin"};
    s.timeout = timeout;
    return s;
}

// Runs `body` in a forked copy of this process and returns its exit status (-1: it did not
// end within the deadline, and was killed). The copy reports a failed check as a non-zero
// exit: Catch's assertions do not cross the fork.
template <typename Body>
int in_forked_process(Body body, std::chrono::seconds deadline = 30s) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(body());
    const auto end = std::chrono::steady_clock::now() + deadline;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > end) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(5ms);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A child that exits with `code` at once, started without the library.
pid_t start_exiting_child(int code) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(code);
    return pid;
}

// Whether `pid` has exited and is still waiting to be reaped.
bool is_zombie(pid_t pid) {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace

TEST_CASE("a child's exit is seen through a pidfd and the child is left to reap", "[process]") {
    const pid_t pid = start_exiting_child(7);
    REQUIRE(pid > 0);
    const bool exited = run_awaitable([](pid_t child) -> boost::asio::awaitable<bool> {
        child_exit_watch watch(co_await boost::asio::this_coro::executor);
        if (auto failed = watch.watch(child)) throw std::runtime_error(*failed);
        if (watch.polling()) throw std::runtime_error("this kernel gives pidfds: the watch should not poll");
        co_return co_await watch.exited();
    }(pid));
    CHECK(exited);
    CHECK(is_zombie(pid));
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WEXITSTATUS(status) == 7);
}

TEST_CASE("where a seccomp profile refuses pidfd_open, exits are found by polling", "[process]") {
    for (const int error : {EPERM, ENOSYS}) {
        INFO("pidfd_open fails with " << error);
        const int status = in_forked_process([error] {
            if (!refuse_pidfd_open(error)) return 10;
            // The refusal is real in this process.
            if (::syscall(SYS_pidfd_open, ::getpid(), 0) >= 0 || errno != error) return 11;

            // The watch itself: it polls, sees the exit, leaves the zombie.
            const pid_t pid = start_exiting_child(5);
            const bool exited = run_awaitable([](pid_t child) -> boost::asio::awaitable<bool> {
                child_exit_watch watch(co_await boost::asio::this_coro::executor);
                if (watch.watch(child) || !watch.polling()) co_return false;
                co_return co_await watch.exited();
            }(pid));
            if (!exited || !is_zombie(pid)) return 12;
            ::waitpid(pid, nullptr, 0);

            // A tool run: its output and exit status, and quickly.
            const auto start = std::chrono::steady_clock::now();
            auto r = run_awaitable(run_process(shell("echo polled; exit 3")));
            if (r.state != process_result::status::exited || r.exit_code != 3 || r.output != "polled\n") return 13;
            if (std::chrono::steady_clock::now() - start > 5s) return 14;

            // A tool that outlives its timeout is still killed and reaped.
            auto t = run_awaitable(run_process(shell("exec sleep 30", 200ms)));
            if (t.state != process_result::status::timed_out) return 15;
            if (::waitpid(-1, nullptr, WNOHANG) != -1 || errno != ECHILD) return 16;  // nothing left unreaped
            return 0;
        });
        CHECK(status == 0);
    }
}

TEST_CASE("a wake of the pidfd while the child still runs is not taken for its exit", "[process]") {
    // Made to happen every time: two pipes turn readable in one reactor turn; the waiter
    // woken first closes the other pipe and, in the same step, watches a new child. The
    // watch's pidfd takes over the closed pipe's reactor slot, and the readiness Asio had
    // already queued for that slot completes the pidfd's wait while the child runs. (In
    // the field: several tools ending and starting at once on one io_context.)
    namespace asio = boost::asio;
    asio::io_context ioc;
    int first[2] = {-1, -1};
    int second[2] = {-1, -1};
    REQUIRE(::pipe2(first, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(second, O_CLOEXEC) == 0);
    REQUIRE(::write(first[1], "x", 1) == 1);
    REQUIRE(::write(second[1], "x", 1) == 1);
    asio::posix::stream_descriptor first_end(ioc, first[0]);
    asio::posix::stream_descriptor second_end(ioc, second[0]);

    pid_t child = -1;
    std::optional<bool> seen_exit;
    auto racer = [&](asio::posix::stream_descriptor& mine,
                     asio::posix::stream_descriptor& other) -> asio::awaitable<void> {
        auto [ec] =
            co_await mine.async_wait(asio::posix::stream_descriptor::wait_read, asio::as_tuple(asio::use_awaitable));
        if (ec || !other.is_open()) co_return;
        other.close();
        child = ::fork();
        if (child == 0) {
            for (;;) ::pause();
        }
        child_exit_watch watch(co_await asio::this_coro::executor);
        if (watch.watch(child)) co_return;
        seen_exit = co_await watch.exited();
    };
    asio::co_spawn(ioc, racer(first_end, second_end), asio::detached);
    asio::co_spawn(ioc, racer(second_end, first_end), asio::detached);
    ioc.run_for(300ms);
    REQUIRE(child > 0);
    CHECK_FALSE(seen_exit.has_value());  // the child is still running
    CHECK_FALSE(is_zombie(child));

    ::kill(child, SIGKILL);
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!seen_exit && std::chrono::steady_clock::now() < end) ioc.run_one_for(50ms);
    CHECK(seen_exit == true);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WTERMSIG(status) == SIGKILL);
    for (int fd : {first[1], second[1]}) ::close(fd);
}
