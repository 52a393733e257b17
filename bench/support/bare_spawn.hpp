#pragma once
// The spawn floor every runner is measured against: posix_spawn with stdout and stderr
// on one pipe, read it all, reap. No process group, no timeout, no environment scrub:
// what any way of running a command pays at least.

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace fiskai::bench {

struct bare_run {
    std::string output;
    int status = 0;  // as waitpid reports it
};

inline bare_run bare_spawn(const std::string& exe, const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ) != 0) std::abort();
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    bare_run r;
    char buf[4096];
    for (ssize_t got; (got = ::read(fds[0], buf, sizeof buf)) > 0;) r.output.append(buf, static_cast<std::size_t>(got));
    ::close(fds[0]);
    ::waitpid(pid, &r.status, 0);
    return r;
}

}  // namespace fiskai::bench
