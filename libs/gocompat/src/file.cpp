#include <fiskai/gocompat/file.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace fiskai::gocompat {

file_outcome check_regular_file(int fd, std::uint64_t max_bytes) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return {file_check::failed, errno, 0};
    if (!S_ISREG(st.st_mode)) return {file_check::not_regular, 0, 0};
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes) return {file_check::too_large, 0, size};
    return {file_check::ok, 0, size};
}

file_outcome read_regular_file(int fd, std::uint64_t max_bytes, std::string& out) {
    const auto checked = check_regular_file(fd, max_bytes);
    if (checked.status != file_check::ok) return checked;
    // One byte of slack, so the read that finds the end needs no regrowth (a copy of it all).
    out.resize(static_cast<std::size_t>(checked.size) + 1);
    std::size_t done = 0;
    while (true) {
        if (done == out.size()) {
            // The file grew while it was read.
            if (done > max_bytes) return {file_check::too_large, 0, done};
            out.resize(out.size() + 4096);
        }
        const auto n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            return {file_check::failed, errno, 0};
        }
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    if (done > max_bytes) return {file_check::too_large, 0, done};
    out.resize(done);
    return {file_check::ok, 0, done};
}

}  // namespace fiskai::gocompat
