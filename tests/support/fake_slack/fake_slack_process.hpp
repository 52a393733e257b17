#pragma once
// Runs fiskai-fake-slack as a child process for a test: starts it, reads the port from its
// `fake-slack listening on 127.0.0.1:<port>` line (bounded wait), and stops it (SIGTERM,
// then reaped) when destroyed.

#include <chrono>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace fiskai::test {

class fake_slack_process {
public:
    explicit fake_slack_process(const std::string& binary, std::vector<std::string> args = {}) {
        int out[2];
        if (::pipe(out) != 0) throw std::runtime_error("fake-slack: pipe failed");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        args.insert(args.begin(), {binary, "--port", "0", "--exit-with-parent"});
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        if (rc != 0) {
            ::close(out[0]);
            throw std::runtime_error("fake-slack: cannot start " + binary + ": " + std::strerror(rc));
        }
        const std::string prefix = "fake-slack listening on 127.0.0.1:";
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (line.find('\n') == std::string::npos) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            pollfd fd{out[0], POLLIN, 0};
            if (left.count() <= 0 || ::poll(&fd, 1, static_cast<int>(left.count())) <= 0) break;
            char buffer[256];
            const auto n = ::read(out[0], buffer, sizeof buffer);
            if (n <= 0) break;
            line.append(buffer, static_cast<std::size_t>(n));
        }
        ::close(out[0]);
        if (line.rfind(prefix, 0) != 0) {
            stop();
            throw std::runtime_error("fake-slack did not start: " + line);
        }
        port_ = std::stoi(line.substr(prefix.size()));
    }
    ~fake_slack_process() { stop(); }
    fake_slack_process(const fake_slack_process&) = delete;
    fake_slack_process& operator=(const fake_slack_process&) = delete;

    [[nodiscard]] int port() const { return port_; }

    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }

private:
    pid_t pid_ = -1;
    int port_ = 0;
};

}  // namespace fiskai::test
