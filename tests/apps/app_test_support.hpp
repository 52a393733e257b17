#pragma once
// Running the executables under test and writing scratch files.

#include "async_test.hpp"

#include <fiskai/toolkit/process.hpp>

#include <csignal>
#include <chrono>
#include <fcntl.h>
#include <functional>
#include <iterator>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

extern char** environ;

namespace fiskai::test {

struct command_output {
    int exit_code = -1;
    std::string out;  // stdout and stderr as the chosen redirections leave them
};

// Runs a shell command line (so tests can redirect streams) with a deadline.
inline command_output run_shell(const std::string& script, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    toolkit::process_spec s;
    s.executable = "/bin/sh";
    s.arguments = {"-c", script};
    s.environment = toolkit::scrubbed_environment();
    s.timeout = timeout;
    s.output_cap = 16 * 1024 * 1024;
    auto r = run_awaitable(toolkit::run_process(s), timeout + std::chrono::seconds(10));
    if (r.state != toolkit::process_result::status::exited)
        throw std::runtime_error("command did not finish: " + script);
    return {r.exit_code, r.output};
}

struct scratch_dir {
    std::filesystem::path path;
    scratch_dir() {
        char tmpl[] = "/tmp/fiskai-app-test-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~scratch_dir() { std::filesystem::remove_all(path); }
    std::string write(const std::string& name, const std::string& content) const {
        const auto p = path / name;
        std::ofstream(p) << content;
        return p.string();
    }
};

// A long-lived child beside the test (a worker, a served example).
inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A child with stdout and stderr in files; killed and reaped when destroyed.
class child {
public:
    child(std::vector<std::string> argv, const std::vector<std::string>& extra_env, std::filesystem::path out,
          std::filesystem::path err)
        : out_(std::move(out)), err_(std::move(err)) {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        std::vector<std::string> env(extra_env);
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        std::vector<char*> envp;
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
    }
    ~child() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    child(const child&) = delete;
    child& operator=(const child&) = delete;

    [[nodiscard]] std::string out() const { return slurp(out_); }
    [[nodiscard]] std::string err() const { return slurp(err_); }
    void signal(int sig) const { ::kill(pid_, sig); }

    // The exit code (128 + signal when killed), or -1 when it did not end within `limit`.
    int wait(std::chrono::milliseconds limit) {
        int code = -1;
        wait_until(
            [&] {
                int status = 0;
                if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
                pid_ = -1;
                code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                return true;
            },
            limit);
        return code;
    }

private:
    pid_t pid_ = -1;
    std::filesystem::path out_;
    std::filesystem::path err_;
};

}  // namespace fiskai::test
