#pragma once
// The CPU time each process of a bench spends, per task. A task that hops between five
// processes on two cores is as fast as the other processes leave the critical path alone,
// so the bench prints who uses the cores beside its latencies, rather than leaving that to
// a profile taken by hand.

#include <fmt/format.h>

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace fiskai::bench {

// A process's CPU time so far, in clock ticks, from /proc/<pid>/stat: its own threads' (user
// + system, the exited ones included) and that of the children it has reaped.
struct process_ticks {
    std::uint64_t own = 0;
    std::uint64_t children = 0;
};

inline std::optional<process_ticks> read_process_ticks(pid_t pid) {
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // The command name (field 2) is in parentheses and may hold spaces: count from its end.
    const auto close = line.rfind(')');
    if (close == std::string::npos) return std::nullopt;
    std::istringstream fields(line.substr(close + 2));
    // Fields 3.. : state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime.
    std::string skip;
    for (int i = 3; i <= 13; ++i) fields >> skip;
    std::uint64_t utime = 0, stime = 0, cutime = 0, cstime = 0;
    if (!(fields >> utime >> stime >> cutime >> cstime)) return std::nullopt;
    return process_ticks{utime + stime, cutime + cstime};
}

// Accumulates, for each watched process, the CPU time of the intervals between start() and
// stop(); a process's reaped children can be watched as a party of their own (the tools of a
// worker). Ticks are 10 ms; over a few hundred tasks the rounding of each interval's ends
// averages out to well under a tenth of a millisecond a task.
class cpu_meter {
public:
    void watch(std::string name, pid_t pid, bool children = false) {
        parties_.push_back({std::move(name), pid, children, 0, {}});
    }
    void start() {
        for (auto& p : parties_) p.begin = read_process_ticks(p.pid);
    }
    void stop() {
        for (auto& p : parties_) {
            const auto end = read_process_ticks(p.pid);
            if (!p.begin || !end) continue;
            p.ticks += p.children ? end->children - p.begin->children : end->own - p.begin->own;
            p.begin.reset();
        }
    }
    [[nodiscard]] std::size_t size() const noexcept { return parties_.size(); }
    [[nodiscard]] const std::string& name(std::size_t i) const { return parties_[i].name; }
    // Milliseconds of CPU a task: the measured intervals' time over the tasks they held.
    [[nodiscard]] double ms_per_task(std::size_t i, std::size_t tasks) const {
        if (tasks == 0) return 0;
        static const double ms_per_tick = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
        return static_cast<double>(parties_[i].ticks) * ms_per_tick / static_cast<double>(tasks);
    }

private:
    struct party {
        std::string name;
        pid_t pid;
        bool children;
        std::uint64_t ticks;
        std::optional<process_ticks> begin;
    };
    std::vector<party> parties_;
};

}  // namespace fiskai::bench
