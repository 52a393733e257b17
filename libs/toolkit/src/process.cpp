#include <fiskai/toolkit/output_capture.hpp>
#include <fiskai/toolkit/process.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect_pipe.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/process/v2/environment.hpp>
#include <boost/process/v2/process.hpp>
#include <boost/process/v2/stdio.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fiskai::toolkit {
namespace {

namespace asio = boost::asio;
// Linux's MAX_ARG_STRLEN (32 pages): execve refuses any single argument or environment
// entry this long or longer (counting its terminating NUL) with E2BIG.
constexpr std::size_t max_single_argument_bytes = 32 * 4096;
namespace bp2 = boost::process::v2;
using namespace asio::experimental::awaitable_operators;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// Marks every descriptor from 3 up close-on-exec, so the child gets stdin, stdout and
// stderr and nothing else: libraries such as nats.c open sockets without close-on-exec,
// and a tool holding the server's NATS socket would keep a dead server looking alive.
void cloexec_from_3() {
    if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
    // Kernels before 5.11: walk the descriptor table (bounded; no allocation here).
    const long max_fd = std::min<long>(::sysconf(_SC_OPEN_MAX), 65536);
    for (int fd = 3; fd < max_fd; ++fd) {
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

// Runs in the child between fork and exec (async-signal-safe calls only): a process
// group of its own, so one kill(-pgid) reaches every descendant that stayed in it; death
// with the server, should the server die without cleaning up; no inherited descriptors;
// and the working directory.
struct child_setup {
    const std::string* work_dir;
    pid_t parent;

    template <typename Launcher>
    bp2::error_code on_exec_setup(Launcher&, const bp2::filesystem::path&, const char* const*) {
        if (::setpgid(0, 0) != 0) return {errno, bp2::system_category()};
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the server died before the prctl took
        cloexec_from_3();
        if (!work_dir->empty() && ::chdir(work_dir->c_str()) != 0) return {errno, bp2::system_category()};
        return {};
    }

    // Exec failed: the error has gone to the parent through the launcher's pipe. Leave at
    // once with _exit, not the launcher's exit(): exit handlers of a forked multithreaded
    // server may block on locks held by threads that do not exist here, and the parent
    // waits for this child to be reaped.
    template <typename Launcher>
    void on_exec_error(Launcher&, const bp2::filesystem::path&, const char* const*, const bp2::error_code&) {
        ::_exit(127);
    }

    // Also set from the parent, so a kill issued before the child reaches exec still
    // finds the group (the classic double-setpgid idiom). A failure here is harmless.
    template <typename Launcher>
    void on_success(Launcher& launcher, const bp2::filesystem::path&, const char* const*) {
        ::setpgid(launcher.pid, launcher.pid);
    }
};

// The OS error, and for an argument over the kernel's per-argument limit which argument
// and what to do, since "Argument list too long" alone suggests too many arguments.
std::string describe_start_failure(const bp2::error_code& ec, const process_spec& spec) {
    std::string text = ec.message();
    if (ec.value() == E2BIG) {
        std::size_t longest = 0;
        for (const auto& a : spec.arguments) longest = std::max(longest, a.size());
        if (longest >= max_single_argument_bytes) {
            text += " (an argument of " + std::to_string(longest) + " bytes is over the kernel's limit of " +
                    std::to_string(max_single_argument_bytes - 1) + " bytes per argument; pass less data in one argument)";
        } else {
            text += " (the arguments and environment together are over the kernel's limit; pass less data)";
        }
    }
    return text;
}

void kill_group(pid_t pgid) {
    if (pgid > 0) ::kill(-pgid, SIGKILL);  // ESRCH (group already gone) is fine
}

}  // namespace

const std::vector<std::string>& provider_secret_names() {
    static const std::vector<std::string> names = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                                                   "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_IDENTITY_TOKEN",
                                                   "ANTHROPIC_WEBHOOK_SIGNING_KEY"};
    return names;
}

std::vector<std::string> scrubbed_environment(const std::vector<std::string>& extra_secret_names) {
    auto is_secret = [&](std::string_view name) {
        for (const auto& n : provider_secret_names()) {
            if (n == name) return true;
        }
        for (const auto& n : extra_secret_names) {
            if (n == name) return true;
        }
        return false;
    };
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view entry(*e);
        const auto eq = entry.find('=');
        const auto name = eq == std::string_view::npos ? entry : entry.substr(0, eq);
        if (eq != std::string_view::npos && is_secret(name)) continue;
        if (name == "LLMFORMAT") continue;  // replaced below
        env.emplace_back(entry);
    }
    env.emplace_back("LLMFORMAT=1");
    return env;
}

asio::awaitable<process_result> run_process(process_spec spec) {
    // Cleanup (killing and reaping the group) must still run after a cancellation, so
    // operations after it must not throw.
    co_await asio::this_coro::throw_if_cancelled(false);
    auto ex = co_await asio::this_coro::executor;
    auto cancel_state = co_await asio::this_coro::cancellation_state;

    process_result result;

    bp2::filesystem::path exe = spec.executable;
    if (spec.executable.find('/') == std::string::npos) {
        exe = bp2::environment::find_executable(spec.executable);
        if (exe.empty()) {
            result.error = "exec: \"" + spec.executable + "\": executable file not found in $PATH";
            co_return result;
        }
    }

    asio::readable_pipe reader(ex);
    asio::writable_pipe writer(ex);
    asio::connect_pipe(reader, writer);

    bp2::error_code ec;
    bp2::default_process_launcher launcher;
    auto proc = launcher(ex, ec, exe, spec.arguments, bp2::process_stdio{nullptr, writer, writer},
                         bp2::process_environment(spec.environment), child_setup{&spec.work_dir, ::getpid()});
    writer.close();  // the child holds its own copy; ours would keep the pipe open forever
    if (ec) {
        // The launcher reports a failed exec (E2BIG, ENOENT, EACCES...) but leaves the
        // forked child unreaped: reap it here, or every failed call leaves a zombie. The
        // child has already reported and is in _exit, so this wait is immediate.
        if (launcher.pid > 0) {
            while (::waitpid(launcher.pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        }
        result.error = describe_start_failure(ec, spec);
        co_return result;
    }
    const pid_t pgid = proc.id();

    output_capture capture(spec.capture, spec.output_cap);
    asio::steady_timer grace(ex);
    bool reader_done = false;
    bool timed_out = false;
    bool exited = false;

    auto read_loop = [&]() -> asio::awaitable<void> {
        std::array<char, 16384> buf;
        for (;;) {
            auto [read_ec, n] = co_await reader.async_read_some(asio::buffer(buf), tuple_awaitable);
            if (n > 0) capture.write(std::string_view(buf.data(), n));
            if (read_ec) break;
        }
        reader_done = true;
        grace.cancel();
    };

    auto supervise = [&]() -> asio::awaitable<void> {
        co_await asio::this_coro::throw_if_cancelled(false);
        asio::steady_timer deadline(ex);
        if (spec.timeout.count() > 0) {
            deadline.expires_after(spec.timeout);
        } else {
            deadline.expires_at(asio::steady_timer::time_point::max());
        }
        auto first = co_await (proc.async_wait(tuple_awaitable) || deadline.async_wait(tuple_awaitable));
        if (first.index() == 0) {
            exited = !std::get<0>(std::get<0>(first));
        } else {
            timed_out = !std::get<0>(std::get<1>(first));
        }
        // Whatever ended the wait, nothing of the group may outlive the call.
        kill_group(pgid);
        if (!exited) co_await proc.async_wait(tuple_awaitable);  // reap the leader
        // A descendant that left the group could still hold the pipe: give it a grace
        // period, then stop reading.
        if (!reader_done) {
            grace.expires_after(spec.drain_grace);
            co_await grace.async_wait(tuple_awaitable);
            if (!reader_done) reader.close();
        }
    };

    co_await (read_loop() && supervise());

    result.total_bytes = capture.total();
    result.output = capture.result();
    result.truncated = capture.exceeded();
    if (timed_out) {
        result.state = process_result::status::timed_out;
    } else if (!exited || cancel_state.cancelled() != asio::cancellation_type::none) {
        result.state = process_result::status::cancelled;
    } else {
        result.state = process_result::status::exited;
        const int status = proc.native_exit_code();
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    co_return result;
}

}  // namespace fiskai::toolkit
