#pragma once
// The file journal's durable points as bare system calls, for benchmark floors: what the
// file backend has to do at the least for one more record and for a new session.

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <string_view>

namespace fiskai::bench {

// One write of `text` at the end of `fd`, then fdatasync. False when either fails.
inline bool write_synced(int fd, std::string_view text) {
    return ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fdatasync(fd) == 0;
}

// A new session's file: created (O_EXCL) with `first` written and synced, then `dir` synced
// so that the new name survives a crash too. Its descriptor, or -1 when a step fails.
inline int create_synced(const std::string& path, const std::string& dir, std::string_view first) {
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    const int dir_fd = write_synced(fd, first) ? ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    const bool synced = dir_fd >= 0 && ::fsync(dir_fd) == 0;
    if (dir_fd >= 0) ::close(dir_fd);
    if (!synced) {
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace fiskai::bench
