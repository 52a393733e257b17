// The floor for a tool call's CPU: a bare posix_spawn + read + waitpid of the same command
// a tool call runs, one after another, in a process that does nothing else. Prints one
// JSON object: CPU (user + system, this process and its reaped children) and wall time per
// call.
//   spawn_floor <calls> <executable> [arguments...]

#include "../support/bare_spawn.hpp"

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
    std::vector<std::string> args;
    for (char** a = argv + 1; *a != nullptr; ++a) args.emplace_back(*a);
    const auto r = fiskai::bench::bare_spawn(argv[0], args);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) std::abort();
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
