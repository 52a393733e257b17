#pragma once
// How much of the machine's CPU time the hypervisor gave to someone else (the `steal` column
// of /proc/stat) while a bench ran. On a shared VM that share moves from one hour to the
// next, and a task that hops between five processes suffers from it far more than any part
// measured alone, so a bench prints it beside its figures.

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace fiskai::bench {

struct cpu_times {
    std::uint64_t total = 0;  // every column of the aggregate `cpu` line, in clock ticks
    std::uint64_t steal = 0;
};

// The aggregate line of /proc/stat, or nothing where there is none (not Linux).
inline std::optional<cpu_times> read_cpu_times() {
    std::ifstream in("/proc/stat");
    std::string line;
    if (!std::getline(in, line) || line.rfind("cpu ", 0) != 0) return std::nullopt;
    std::istringstream fields(line.substr(4));
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
    cpu_times t;
    std::uint64_t v = 0;
    for (int column = 0; column < 8 && fields >> v; ++column) {
        t.total += v;
        if (column == 7) t.steal = v;
    }
    return t;
}

// Accumulates the ticks of the intervals between start() and stop().
class steal_meter {
public:
    void start() { begin_ = read_cpu_times(); }
    void stop() {
        const auto end = read_cpu_times();
        if (!begin_ || !end) return;
        total_ += end->total - begin_->total;
        steal_ += end->steal - begin_->steal;
        begin_.reset();
    }
    // Percent of the CPU time in the measured intervals, or nothing if none was measured.
    [[nodiscard]] std::optional<double> percent() const {
        if (total_ == 0) return std::nullopt;
        return 100.0 * static_cast<double>(steal_) / static_cast<double>(total_);
    }

private:
    std::optional<cpu_times> begin_;
    std::uint64_t total_ = 0;
    std::uint64_t steal_ = 0;
};

}  // namespace fiskai::bench
