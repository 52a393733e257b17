#include <fiskai/toolkit/child_exit.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fiskai::toolkit {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct child_exit_watch::impl {
    explicit impl(asio::any_io_executor ex) : pidfd(ex), poll_timer(ex) {}
    asio::posix::stream_descriptor pidfd;  // readable once the child has exited
    asio::steady_timer poll_timer;
    int pid = -1;
    bool polling = false;
};

child_exit_watch::child_exit_watch(asio::any_io_executor ex) : impl_(std::make_unique<impl>(ex)) {}
child_exit_watch::~child_exit_watch() = default;

std::optional<std::string> child_exit_watch::watch(int pid) {
    impl_->pid = pid;
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) {
        if (errno == ENOSYS || errno == EPERM || errno == EACCES) {
            impl_->polling = true;
            return std::nullopt;
        }
        return std::string("watching the child process: ") + std::strerror(errno);
    }
    boost::system::error_code ec;
    impl_->pidfd.assign(fd, ec);
    if (ec) {
        ::close(fd);
        return "watching the child process: " + ec.message();
    }
    return std::nullopt;
}

namespace {

// Whether `pid` has exited, asked of the kernel without reaping it (WNOWAIT leaves the
// zombie). ECHILD (not a child, or already reaped) counts as exited: nothing is left to
// wait for.
bool has_exited(int pid) {
    for (;;) {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
            return info.si_pid == pid;
        }
        if (errno != EINTR) return true;
    }
}

}  // namespace

asio::awaitable<bool> child_exit_watch::exited() {
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    if (!impl_->polling) {
        // The pidfd's readiness is a reason to look, not the answer. Asio completes a wait on
        // any readiness its reactor hands the descriptor's slot, and a slot is recycled with
        // readiness still queued for the descriptor that held it before: when descriptors
        // close and a child is watched in the same turn (tools ending and starting together
        // on one io_context), the pidfd's wait completes while the child runs. Taken for an
        // exit, that had the caller kill a running tool. The kernel's answer decides.
        for (;;) {
            if (has_exited(impl_->pid)) co_return true;
            auto [ec] = co_await impl_->pidfd.async_wait(asio::posix::stream_descriptor::wait_read, tuple_awaitable);
            if (ec) co_return false;
        }
    }
    // The interval starts short, so a quick tool is seen at once, and grows, so a
    // long-lived child costs a wake-up every 50 ms.
    auto interval = std::chrono::milliseconds(1);
    for (;;) {
        if (has_exited(impl_->pid)) co_return true;
        impl_->poll_timer.expires_after(interval);
        auto [ec] = co_await impl_->poll_timer.async_wait(tuple_awaitable);
        if (ec) co_return false;
        interval = std::min<std::chrono::milliseconds>(interval * 2, 50ms);
    }
}

bool child_exit_watch::polling() const noexcept { return impl_->polling; }

}  // namespace fiskai::toolkit
