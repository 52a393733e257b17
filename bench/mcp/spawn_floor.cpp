// The floor for a tool call's CPU: a bare posix_spawn + read + waitpid of the same command
// a tool call runs, one after another, in a process that does nothing else. Prints one
// JSON object: CPU (user + system, this process and its reaped children) and wall time per
// call.
//   spawn_floor <calls> <executable> [arguments...]

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern char** environ;

namespace {

double cpu_seconds(int who) {
    rusage u{};
    ::getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void run_once(char** argv) {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &fa, nullptr, argv, environ) != 0) std::abort();
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    char buf[4096];
    while (::read(fds[0], buf, sizeof buf) > 0) {
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::abort();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: spawn_floor <calls> <executable> [arguments...]\n");
        return 2;
    }
    const int calls = std::atoi(argv[1]);
    char** command = argv + 2;
    for (int i = 0; i < 20; ++i) run_once(command);  // warm the page cache and the loader
    const double cpu0 = cpu_seconds(RUSAGE_SELF) + cpu_seconds(RUSAGE_CHILDREN);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) run_once(command);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds(RUSAGE_SELF) + cpu_seconds(RUSAGE_CHILDREN) - cpu0;
    std::printf("{\"calls\":%d,\"cpu_us_per_call\":%.1f,\"wall_us_per_call\":%.1f}\n", calls, cpu * 1e6 / calls,
                wall * 1e6 / calls);
    return 0;
}
