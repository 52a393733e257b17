#pragma once
// Whether a process still runs anything, for tests that prove a process group was killed.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/types.h>
#include <unistd.h>
#include <vector>

namespace fiskai::test {

// The process's state letter from /proc/<pid>/stat (R, S, T, Z, ...); 0 when it is gone.
inline char process_state(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return 0;
    std::string content((std::istreambuf_iterator<char>(stat)), {});
    const auto close = content.rfind(')');
    return close != std::string::npos && content.size() > close + 2 ? content[close + 2] : 0;
}

// Gone, or a zombie waiting for its reaper (which runs nothing any more).
inline bool process_gone(pid_t pid) {
    const char state = process_state(pid);
    return state == 0 || state == 'Z';
}

// Children of this process that have exited and wait unreaped (state Z), found by walking
// /proc: a leak shows up here however the child was forked.
inline std::vector<pid_t> zombie_children() {
    std::vector<pid_t> zombies;
    const pid_t self = ::getpid();
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
        const auto name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string content((std::istreambuf_iterator<char>(stat)), {});
        const auto close = content.rfind(')');
        if (close == std::string::npos || content.size() < close + 2) continue;
        std::istringstream rest(content.substr(close + 2));
        char state = 0;
        pid_t parent = 0;
        rest >> state >> parent;
        if (parent == self && state == 'Z') zombies.push_back(static_cast<pid_t>(std::stoi(name)));
    }
    return zombies;
}

}  // namespace fiskai::test
