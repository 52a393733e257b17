#pragma once
// Whether a process still runs anything, for tests that prove a process group was killed.

#include <fstream>
#include <iterator>
#include <string>
#include <sys/types.h>

namespace fiskai::test {

// Gone, or a zombie waiting for its reaper (which runs nothing any more).
inline bool process_gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string content((std::istreambuf_iterator<char>(stat)), {});
    const auto close = content.rfind(')');
    return close != std::string::npos && content.size() > close + 2 && content[close + 2] == 'Z';
}

}  // namespace fiskai::test
