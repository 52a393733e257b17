#include <fiskai/toolkit/child_exit.hpp>
#include <fiskai/toolkit/output_capture.hpp>
#include <fiskai/toolkit/process.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/process/v2/environment.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace fiskai::toolkit {
namespace {

namespace asio = boost::asio;
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

// What the child does between vfork and exec, prepared entirely by the parent: the child
// shares the parent's memory until it execs, so it may not allocate, lock or throw.
struct launch_plan {
    const char* path = nullptr;
    char* const* argv = nullptr;
    char* const* envp = nullptr;
    const char* work_dir = nullptr;  // nullptr: inherit
    int input_fd = -1;               // the child's stdin; -1: /dev/null
    int output_fd = -1;              // the pipe's write end, for stdout (and stderr when error_fd is -1)
    int error_fd = -1;               // the child's stderr; -1: the same as stdout
    pid_t parent = 0;
    const sigset_t* restore_mask = nullptr;
    // Written by a child that fails before or at exec, read by the parent once vfork
    // returns: the shared memory is the error channel.
    enum step : int { none = 0, group, parent_gone, stdio, work_dir_step, exec };
    volatile int failed_step = none;
    volatile int error = 0;
};

// The child (async-signal-safe calls only): a process group of its own, so one
// kill(-pgid) reaches every descendant that stayed in it; death with the server, should
// the server die without cleaning up; default signal handlers (a handler of the server
// must not run in a child that shares its memory); stdin from /dev/null, stdout and
// stderr to the pipe; no other inherited descriptors; the working directory; the
// server's signal mask back; exec.
[[noreturn]] void exec_child(launch_plan& plan) noexcept {
    const auto fail = [&plan](int step) {
        plan.error = errno;
        plan.failed_step = step;
        ::_exit(127);
    };
    if (::setpgid(0, 0) != 0) fail(launch_plan::group);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != plan.parent) fail(launch_plan::parent_gone);  // died before the prctl took

    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction action {};
        if (sig == SIGKILL || sig == SIGSTOP || ::sigaction(sig, nullptr, &action) != 0) continue;
        if (action.sa_handler == SIG_IGN || action.sa_handler == SIG_DFL) continue;
        action = {};
        action.sa_handler = SIG_DFL;
        ::sigaction(sig, &action, nullptr);
    }

    // Each descriptor moved to 3 or above first, so one dup2 cannot overwrite another.
    const auto above_stdio = [&](int fd) {
        if (fd >= 0 && fd < 3 && (fd = ::fcntl(fd, F_DUPFD, 3)) < 0) fail(launch_plan::stdio);
        return fd;
    };
    int in = above_stdio(plan.input_fd);
    const int out = above_stdio(plan.output_fd);
    const int err = plan.error_fd < 0 ? out : above_stdio(plan.error_fd);
    if (in < 0 && (in = ::open("/dev/null", O_RDONLY)) < 0) fail(launch_plan::stdio);
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) fail(launch_plan::stdio);
    cloexec_from_3();
    if (plan.work_dir != nullptr && ::chdir(plan.work_dir) != 0) fail(launch_plan::work_dir_step);
    ::sigprocmask(SIG_SETMASK, plan.restore_mask, nullptr);
    ::execve(plan.path, plan.argv, plan.envp);
    fail(launch_plan::exec);
    ::_exit(127);  // not reached
}

// vfork rather than fork: the child borrows the server's memory until it execs, so a
// start costs the same however large the server is (fork copies the page tables of the
// whole server, and Asio's fork handlers rebuild its reactor in the child). A function of
// its own, so no local of the caller lives across the vfork.
[[gnu::noinline]] pid_t vfork_and_exec(launch_plan& plan) {
    const pid_t pid = ::vfork();
    if (pid == 0) exec_child(plan);
    return pid;
}

// For an argument over the kernel's per-argument limit, which argument and what to do,
// since "Argument list too long" alone suggests too many arguments.
std::string explain_too_long(const process_spec& spec) {
    // Linux's MAX_ARG_STRLEN, 32 pages: execve refuses any single argument or environment
    // entry this long or longer (counting its terminating NUL) with E2BIG.
    const std::size_t max_single_argument_bytes = 32 * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::size_t longest = 0;
    for (const auto& a : spec.arguments) longest = std::max(longest, a.size());
    if (longest >= max_single_argument_bytes) {
        return " (an argument of " + std::to_string(longest) + " bytes is over the kernel's limit of " +
               std::to_string(max_single_argument_bytes - 1) + " bytes per argument; pass less data in one argument)";
    }
    return " (the arguments and environment together are over the kernel's limit; pass less data)";
}

// Starts the child described by `plan`; on failure returns -1 with `error` set, having
// reaped any child it made.
pid_t launch(launch_plan& plan, const process_spec& spec, std::string& error) {
    // Every signal blocked across the vfork, so none is handled on the child's side of the
    // shared memory before the child has reset its handlers; it restores this mask itself.
    sigset_t all;
    sigset_t previous;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &previous);
    plan.restore_mask = &previous;
    const pid_t pid = vfork_and_exec(plan);
    const int vfork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (pid < 0) {
        error = std::string("starting a process: ") + std::strerror(vfork_errno);
        return -1;
    }
    if (plan.failed_step == launch_plan::none) return pid;

    // The child has already exited: reap it now, or every failed exec (E2BIG, ENOENT,
    // EACCES) leaves a zombie.
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
    const int child_errno = plan.error;
    switch (plan.failed_step) {
        case launch_plan::exec:
            error = std::strerror(child_errno);
            if (child_errno == E2BIG) error += explain_too_long(spec);
            break;
        case launch_plan::work_dir_step:
            error = "changing to the working directory \"" + spec.work_dir + "\": " + std::strerror(child_errno);
            break;
        default: error = std::string("preparing the child process: ") + std::strerror(child_errno); break;
    }
    return -1;
}

// What execve takes for `spec`: the executable (a bare name looked up on $PATH, as Go's
// exec.LookPath does) and the argv and envp arrays. The arrays point into `spec` and into
// `exe`, so the image cannot be copied or moved, and `spec` must outlive it unchanged.
struct exec_image {
    std::string exe;
    std::vector<char*> argv;
    std::vector<char*> envp;
    std::string error;  // Go's text when the executable is not found; the arrays are then empty

    explicit exec_image(process_spec& spec) : exe(spec.executable) {
        if (spec.executable.find('/') == std::string::npos) {
            exe = bp2::environment::find_executable(spec.executable).string();
            if (exe.empty()) {
                error = "exec: \"" + spec.executable + "\": executable file not found in $PATH";
                return;
            }
        }
        argv.reserve(spec.arguments.size() + 2);
        argv.push_back(exe.data());
        for (auto& a : spec.arguments) argv.push_back(a.data());
        argv.push_back(nullptr);
        envp.reserve(spec.environment.size() + 1);
        for (auto& e : spec.environment) envp.push_back(e.data());
        envp.push_back(nullptr);
    }
    exec_image(const exec_image&) = delete;
    exec_image& operator=(const exec_image&) = delete;

    // A launch of this image with `spec`'s working directory; the caller adds the descriptors.
    [[nodiscard]] launch_plan plan(const process_spec& spec) const {
        launch_plan p;
        p.path = exe.c_str();
        p.argv = argv.data();
        p.envp = envp.data();
        p.work_dir = spec.work_dir.empty() ? nullptr : spec.work_dir.c_str();
        p.parent = ::getpid();
        return p;
    }
};

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

std::vector<std::string> scrubbed_environment(const std::vector<std::string>& extra_secret_names,
                                              const std::string& work_dir) {
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
        if (!work_dir.empty() && name == "PWD") continue;
        env.emplace_back(entry);
    }
    if (!work_dir.empty()) env.push_back("PWD=" + work_dir);
    env.emplace_back("LLMFORMAT=1");
    return env;
}

piped_child start_piped_child(process_spec spec, std::string& error) {
    piped_child child;
    const exec_image image(spec);
    if (!image.error.empty()) {
        error = image.error;
        return child;
    }

    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};
    const auto close_all = [&] {
        for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
            if (fd >= 0) ::close(fd);
        }
    };
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        error = std::string("creating the child's pipes: ") + std::strerror(errno);
        close_all();
        return child;
    }
    launch_plan plan = image.plan(spec);
    plan.input_fd = in[0];
    plan.output_fd = out[1];
    plan.error_fd = err[1];
    const pid_t pid = launch(plan, spec, error);
    // The child holds its own copies of its ends; ours would keep the pipes open forever.
    for (int* fd : {&in[0], &out[1], &err[1]}) {
        ::close(*fd);
        *fd = -1;
    }
    if (pid < 0) {
        close_all();
        return child;
    }
    child.pid = pid;
    child.stdin_fd = in[1];
    child.stdout_fd = out[0];
    child.stderr_fd = err[0];
    return child;
}

asio::awaitable<process_result> run_process(process_spec spec) {
    // Cleanup (killing and reaping the group) must still run after a cancellation, so
    // operations after it must not throw.
    co_await asio::this_coro::throw_if_cancelled(false);
    auto ex = co_await asio::this_coro::executor;
    auto cancel_state = co_await asio::this_coro::cancellation_state;

    process_result result;

    const exec_image image(spec);
    if (!image.error.empty()) {
        result.error = image.error;
        co_return result;
    }

    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        result.error = std::string("creating the output pipe: ") + std::strerror(errno);
        co_return result;
    }
    asio::readable_pipe reader(ex);
    boost::system::error_code assign_ec;
    reader.assign(pipe_fds[0], assign_ec);
    if (assign_ec) {
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        result.error = "watching the output pipe: " + assign_ec.message();
        co_return result;
    }

    launch_plan plan = image.plan(spec);
    plan.output_fd = pipe_fds[1];
    const pid_t pid = launch(plan, spec, result.error);
    ::close(pipe_fds[1]);  // the child holds its own copy; ours would keep the pipe open forever
    if (pid < 0) co_return result;

    // From here on the child is ours to kill and reap on every path: the normal one below,
    // an early return, an exception, or this frame destroyed unfinished (its io_context
    // torn down mid-call). The child made its own group, whose id is its pid; the group is
    // killed before the leader is reaped, so that id cannot have been reused by then.
    struct child_guard {
        pid_t pid;
        int status = 0;
        bool reaped = false;
        void reap() {
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            reaped = true;
        }
        ~child_guard() {
            if (reaped) return;
            kill_group(pid);
            reap();  // after SIGKILL the leader exits at once
        }
    } child{pid};
    const pid_t pgid = pid;

    child_exit_watch exit_watch(ex);
    if (auto failed = exit_watch.watch(pid)) {
        result.error = std::move(*failed);
        co_return result;
    }

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
            // Past a head-only cap the result is refused whatever follows, so a child that
            // floods is stopped now rather than drained until it exits or times out.
            if (spec.capture == capture_mode::head_only && capture.exceeded()) kill_group(pgid);
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
        auto first = co_await (exit_watch.exited() || deadline.async_wait(tuple_awaitable));
        if (first.index() == 0) {
            exited = std::get<0>(first);
        } else {
            timed_out = !std::get<0>(std::get<1>(first));
        }
        // Whatever ended the wait, nothing of the group may outlive the call. The leader is
        // reaped only after the group is killed, so its pid (the group's id) cannot have
        // been reused by then.
        kill_group(pgid);
        if (!exited) co_await exit_watch.exited();
        child.reap();
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
        result.exit_code = WIFEXITED(child.status) ? WEXITSTATUS(child.status) : -1;
    }
    co_return result;
}

}  // namespace fiskai::toolkit
