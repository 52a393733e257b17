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

asio::awaitable<bool> child_exit_watch::exited() {
    constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
    if (!impl_->polling) {
        auto [ec] = co_await impl_->pidfd.async_wait(asio::posix::stream_descriptor::wait_read, tuple_awaitable);
        co_return !ec;
    }
    // WNOWAIT reports the exit and leaves the zombie. The interval starts short, so a quick
    // tool is seen at once, and grows, so a long-lived child costs a wake-up every 50 ms.
    auto interval = std::chrono::milliseconds(1);
    for (;;) {
        siginfo_t info{};
        const int r = ::waitid(P_PID, static_cast<id_t>(impl_->pid), &info, WEXITED | WNOHANG | WNOWAIT);
        if (r == 0 && info.si_pid == impl_->pid) co_return true;
        // ECHILD: not our child or already reaped; nothing is left to wait for.
        if (r < 0 && errno != EINTR) co_return true;
        impl_->poll_timer.expires_after(interval);
        auto [ec] = co_await impl_->poll_timer.async_wait(tuple_awaitable);
        if (ec) co_return false;
        interval = std::min<std::chrono::milliseconds>(interval * 2, 50ms);
    }
}

bool child_exit_watch::polling() const noexcept { return impl_->polling; }

}  // namespace fiskai::toolkit
