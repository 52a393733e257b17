#pragma once
// A test server run as a child process (fiskai-fake-llm, fiskai-fake-slack): starts it with
// its stdout on a pipe, reads the port from its first line, `<name> listening on
// 127.0.0.1:<port>` (bounded wait), and stops it (SIGTERM, then reaped) when destroyed.

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

class listening_child {
public:
    // `args` without the program name; `name` is the prefix of the listening line.
    listening_child(std::string name, const std::string& binary, std::vector<std::string> args,
                    std::chrono::milliseconds startup = std::chrono::seconds(10)) {
        int out[2];
        if (::pipe(out) != 0) throw std::runtime_error(name + ": pipe failed");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        args.insert(args.begin(), binary);
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(out[1]);
        if (rc != 0) {
            ::close(out[0]);
            throw std::runtime_error(name + ": cannot start " + binary + ": " + std::strerror(rc));
        }
        const std::string prefix = name + " listening on 127.0.0.1:";
        std::string line;
        const auto deadline = std::chrono::steady_clock::now() + startup;
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
            throw std::runtime_error(name + " did not start: " + line);
        }
        port_ = std::stoi(line.substr(prefix.size()));
    }
    ~listening_child() { stop(); }
    listening_child(const listening_child&) = delete;
    listening_child& operator=(const listening_child&) = delete;

    [[nodiscard]] int port() const { return port_; }
    [[nodiscard]] pid_t pid() const { return pid_; }

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
