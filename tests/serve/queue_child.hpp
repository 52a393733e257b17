#pragma once
// A queue worker in a process of its own (queue_worker_child): started with its arguments,
// ready once it prints `ready`, stopped with a signal as a supervisor would (SIGKILL for a
// crash, SIGTERM for a drain).

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace queue_test {

class child_worker {
public:
    explicit child_worker(std::vector<std::string> args) {
        int out[2];
        REQUIRE(::pipe(out) == 0);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        args.insert(args.begin(), QUEUE_WORKER_CHILD);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, QUEUE_WORKER_CHILD, &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        REQUIRE(rc == 0);
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
            pollfd fd{out[0], POLLIN, 0};
            if (::poll(&fd, 1, 200) <= 0) continue;
            char buffer[64];
            const auto n = ::read(out[0], buffer, sizeof buffer);
            if (n <= 0) break;
            line.append(buffer, static_cast<std::size_t>(n));
        }
        ::close(out[0]);
        REQUIRE(line == "ready\n");
    }
    ~child_worker() { kill(); }
    child_worker(const child_worker&) = delete;
    child_worker& operator=(const child_worker&) = delete;

    void kill() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }

    // The first SIGTERM: the worker drains (serve.md §5.5).
    void terminate() const {
        if (pid_ > 0) ::kill(pid_, SIGTERM);
    }

    // The exit code once the worker exits by itself within `deadline`; nullopt if it did
    // not (it is then killed) or died of a signal.
    std::optional<int> wait_exit(std::chrono::steady_clock::duration deadline) {
        if (pid_ <= 0) return std::nullopt;
        const auto end = std::chrono::steady_clock::now() + deadline;
        for (;;) {
            int status = 0;
            const pid_t r = ::waitpid(pid_, &status, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                if (WIFEXITED(status)) return WEXITSTATUS(status);
                return std::nullopt;
            }
            if (std::chrono::steady_clock::now() >= end) {
                kill();
                return std::nullopt;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

private:
    pid_t pid_ = -1;
};

}  // namespace queue_test
