#pragma once
// Waiting for a child of this process to exit without reaping it: the caller kills the
// child's process group first and reaps the leader after, so the group's id (the leader's
// pid) cannot have been reused in between.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>

namespace fiskai::toolkit {

class child_exit_watch {
public:
    explicit child_exit_watch(boost::asio::any_io_executor ex);
    ~child_exit_watch();
    child_exit_watch(const child_exit_watch&) = delete;
    child_exit_watch& operator=(const child_exit_watch&) = delete;

    // Starts watching `pid`, a child of this process not yet reaped. Through a pidfd where
    // the kernel gives one; where it refuses (ENOSYS before Linux 5.3 and under valgrind,
    // EPERM from a seccomp profile such as Docker's before 20.10) by polling. An error text
    // only when neither can watch it.
    [[nodiscard]] std::optional<std::string> watch(int pid);

    // Completes with true once the child has exited (it stays a zombie for the caller to
    // reap), with false when the wait was cancelled.
    boost::asio::awaitable<bool> exited();

    // Whether the exit is found by polling (the fallback) rather than through a pidfd.
    [[nodiscard]] bool polling() const noexcept;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace fiskai::toolkit
